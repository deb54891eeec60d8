"""The provider scope registry on state.db: which backend keys each tenant has used.

:class:`providers.scoping.ScopeRegistry` on SQLite. The memory manager records a scope the
first time a process uses it; erasure reads the records so a provider can erase every scope
of a tenant (DM and each group), then drops them. :func:`provider_services` also lends
providers read access to session transcripts (:class:`StoredTranscripts`).
"""

from __future__ import annotations

import sqlite3
import time

from gateway.errors import NotFound
from gateway.history.db import Database, migration, run_script
from gateway.history.store import SessionStore
from gateway.holographic_facts import SqliteFactStore
from gateway.provider_turns import SqliteTurnLedger
from gateway.tenants import TenantId
from providers.base import ProviderServices
from providers.scoping import ScopeRecord


@migration(7, "provider scope registry")
def _v7(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE provider_scopes (
            tenant_id   TEXT NOT NULL,
            provider    TEXT NOT NULL,
            scope_key   TEXT NOT NULL,
            backend_key TEXT NOT NULL,
            created_at  REAL NOT NULL,
            PRIMARY KEY (tenant_id, provider, scope_key)
        );
        """,
    )


class SqliteScopeRegistry:
    """Scope records in ``provider_scopes``; every call names the tenant."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def record(self, record: ScopeRecord) -> None:
        self.db.write(
            lambda c: c.execute(
                "INSERT OR IGNORE INTO provider_scopes "
                "(tenant_id, provider, scope_key, backend_key, created_at) VALUES (?, ?, ?, ?, ?)",
                (
                    str(record.tenant),
                    record.provider,
                    record.scope_key,
                    record.backend_key,
                    time.time(),
                ),
            )
        )

    def scopes(self, tenant: TenantId, provider: str) -> list[ScopeRecord]:
        rows = self.db.read(
            lambda c: c.execute(
                "SELECT scope_key, backend_key FROM provider_scopes "
                "WHERE tenant_id = ? AND provider = ? ORDER BY scope_key",
                (str(tenant), provider),
            ).fetchall()
        )
        return [ScopeRecord(tenant, provider, r["scope_key"], r["backend_key"]) for r in rows]

    def forget(self, tenant: TenantId, provider: str) -> int:
        return self.db.write(
            lambda c: (
                c.execute(
                    "DELETE FROM provider_scopes WHERE tenant_id = ? AND provider = ?",
                    (str(tenant), provider),
                ).rowcount
            )
        )

    def forget_tenant(self, tenant: TenantId) -> int:
        """Drop the tenant's records for every provider (erasure, once nothing is left)."""
        return self.db.write(
            lambda c: (
                c.execute(
                    "DELETE FROM provider_scopes WHERE tenant_id = ?", (str(tenant),)
                ).rowcount
            )
        )


class StoredTranscripts:
    """:class:`providers.base.SessionTranscripts` on the session store (user/assistant text)."""

    def __init__(self, db: Database) -> None:
        self.sessions = SessionStore(db)

    def messages(self, tenant: TenantId, session_id: str) -> list[tuple[str, str]]:
        """The session's user/assistant text; none when it is gone (erased, pruned)."""
        try:
            stored = self.sessions.messages(tenant, session_id)
        except NotFound:
            return []
        return [
            (message.role, message.content)
            for message in stored
            if message.role in ("user", "assistant") and message.content
        ]


def provider_services(db: Database) -> ProviderServices:
    """What a provider in this process may use: scopes, turn ledger, transcripts, facts."""
    return ProviderServices(
        scopes=SqliteScopeRegistry(db),
        turns=SqliteTurnLedger(db),
        transcripts=StoredTranscripts(db),
        facts=SqliteFactStore(db),
    )
