"""Ending sessions: the end marker and the provider's end/switch work, in one transaction.

Every path that ends a session — ``/new``, ``/reset``, ``/resume`` of another session,
compression into a continuation, idle expiry — calls :func:`end` inside the transaction that
ends it. Besides ``ended_at``/``end_reason`` it writes outbox rows: ``session_end`` for the
ended session (its job syncs the session's last turns first, then calls the provider's
``on_session_end``) and ``session_switch`` for the session that took over. So the provider
hears of every end exactly once, from the background plane, and no reply waits on it. A
private session gets no rows: nothing of it may reach a provider.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Literal

from gateway import outbox
from gateway.errors import NotFound
from gateway.history.db import Database, migration, run_script
from gateway.tenants import TenantId


@migration(40, "session activity for idle expiry")
def _v40(conn: sqlite3.Connection) -> None:
    # ``active_at``: when a session was last made live again (``/resume``), so an old session
    # the user just resumed is not taken for an idle one. Idle sweeps read live sessions.
    run_script(
        conn,
        """
        ALTER TABLE sessions ADD COLUMN active_at REAL;
        CREATE INDEX sessions_live ON sessions(started_at) WHERE ended_at IS NULL;
        """,
    )


Reason = Literal["new", "reset", "idle", "resume", "compression"]

# What ``sessions.end_reason`` says (the names stored before these hooks existed are kept).
STORED: dict[Reason, str] = {
    "new": "new",
    "reset": "reset",
    "idle": "idle",
    "resume": "resumed-other",
    "compression": "compressed",
}
# The provider's SessionSwitch reason for the session that took over.
SWITCH: dict[Reason, str] = {
    "new": "new",
    "reset": "new",
    "idle": "new",
    "resume": "resume",
    "compression": "compression",
}


def end(
    conn: sqlite3.Connection,
    tenant: TenantId,
    session_id: str,
    reason: Reason,
    *,
    notify: bool,
    successor: str | None = None,
    now: float | None = None,
) -> list[int]:
    """End the tenant's session inside the caller's transaction; the outbox row ids.

    ``notify``: a provider is configured (without one there is nobody to tell).
    ``successor``: the session that replaces this one, which gets a ``session_switch``.
    A session that had already ended is left as it is (its rows were written then).
    """
    row = conn.execute(
        "SELECT incognito, ended_at FROM sessions WHERE tenant_id = ? AND id = ?",
        (str(tenant), session_id),
    ).fetchone()
    if row is None:
        raise NotFound(f"no session {session_id!r} for {tenant}")
    if row["ended_at"] is not None:
        return []
    conn.execute(
        "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE tenant_id = ? AND id = ?",
        (time.time() if now is None else now, STORED[reason], str(tenant), session_id),
    )
    if not notify or row["incognito"]:
        return []
    ids = [outbox.add(conn, tenant, session_id, "session_end", {"reason": reason})]
    if successor is not None and not _incognito(conn, tenant, successor):
        ids.append(
            outbox.add(
                conn,
                tenant,
                successor,
                "session_switch",
                {"previous": session_id, "reason": SWITCH[reason]},
            )
        )
    return ids


def _incognito(conn: sqlite3.Connection, tenant: TenantId, session_id: str) -> bool:
    row = conn.execute(
        "SELECT incognito FROM sessions WHERE tenant_id = ? AND id = ?", (str(tenant), session_id)
    ).fetchone()
    return row is None or bool(row["incognito"])


# When a session last saw anything: its newest message, its start, or its resumption.
_ACTIVITY = (
    "MAX(COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.tenant_id = s.tenant_id "
    "AND m.session_id = s.id), 0), s.started_at, COALESCE(s.active_at, 0))"
)


def idle_sessions(db: Database, cutoff: float, limit: int = 200) -> list[tuple[TenantId, str, str]]:
    """Live sessions of every tenant that saw nothing since ``cutoff``: (tenant, session id,
    session key), oldest first."""
    rows = db.read(
        lambda c: c.execute(
            f"SELECT s.tenant_id, s.id, s.session_key FROM sessions s WHERE s.ended_at IS NULL "
            f"AND {_ACTIVITY} < ? ORDER BY s.started_at LIMIT ?",
            (cutoff, limit),
        ).fetchall()
    )
    return [(TenantId.parse(r[0]), str(r[1]), str(r[2])) for r in rows]


def last_activity(conn: sqlite3.Connection, tenant: TenantId, session_id: str) -> float | None:
    """When the session last saw anything (see ``_ACTIVITY``); None if there is no such session."""
    row = conn.execute(
        f"SELECT {_ACTIVITY} FROM sessions s WHERE s.tenant_id = ? AND s.id = ?",
        (str(tenant), session_id),
    ).fetchone()
    return None if row is None else float(row[0])
