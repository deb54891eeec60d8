"""Retention: prune ended sessions older than ``sessions.retention_days``, then vacuum.

Pruning runs tenant by tenant (each deletion binds its tenant); only the list of tenant ids
is read across tenants. Afterwards the full-text index is optimised and the file vacuumed
outside any transaction, so the freed pages go back to the file system.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from gateway.history import fts
from gateway.history.db import Database, retry_busy
from gateway.history.store import SessionStore
from gateway.tenants import TenantId

DAY_SECONDS = 86_400


@dataclass(frozen=True, slots=True)
class PruneReport:
    """What a prune removed and how much smaller state.db became."""

    cutoff: float
    tenants: int
    sessions: int
    messages: int
    bytes_before: int
    bytes_after: int

    @property
    def bytes_reclaimed(self) -> int:
        return max(0, self.bytes_before - self.bytes_after)


def prune(
    db: Database,
    store: SessionStore,
    *,
    retention_days: int,
    now: float,
    tenants: Sequence[TenantId] | None = None,
) -> PruneReport:
    """Delete sessions that ended more than ``retention_days`` before ``now``.

    ``tenants`` limits the prune to those tenants; by default every tenant is pruned.
    Live sessions are never touched, however old.
    """
    if retention_days < 1:
        raise ValueError("retention_days must be at least 1")
    cutoff = now - retention_days * DAY_SECONDS
    before = _file_bytes(db)
    targets = store.tenant_ids() if tenants is None else list(tenants)
    sessions = messages = touched = 0
    for tenant in targets:
        deleted = store.prune_ended_before(tenant, cutoff)
        sessions += deleted.sessions
        messages += deleted.messages
        touched += 1 if deleted.sessions else 0
    if sessions:
        db.write(fts.optimize)
    _vacuum(db.connection())
    return PruneReport(cutoff, touched, sessions, messages, before, _file_bytes(db))


@retry_busy
def _vacuum(conn: sqlite3.Connection) -> None:
    # VACUUM cannot run inside a transaction; the connection is in autocommit mode.
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _file_bytes(db: Database) -> int:
    """state.db plus its write-ahead log, as the file system sees them."""
    total = 0
    for path in (db.path, db.path.with_name(db.path.name + "-wal")):
        if path.exists():
            total += path.stat().st_size
    return total
