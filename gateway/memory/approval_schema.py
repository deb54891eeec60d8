"""Migration 4 of state.db: memory writes staged for the user's approval, per-tenant choice.

``pending_writes`` holds one row per staged ``memory`` call (its operations as JSON) until the
user approves or rejects it; ``status`` moves from ``pending`` (through ``applying`` while an
approval runs) to ``approved``, ``rejected`` or ``failed``, and ``result`` keeps what applying
it said. ``tenant_prefs.write_approval`` is the tenant's own choice; NULL means the operator
default (``memory.write_approval``).
"""

from __future__ import annotations

import sqlite3

from gateway.history.db import migration, run_script


@migration(4, "memory writes awaiting approval; per-tenant write-approval preference")
def _v4(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE pending_writes (
            id             INTEGER PRIMARY KEY,
            tenant_id      TEXT NOT NULL,
            scope_key      TEXT NOT NULL,
            group_platform TEXT,
            group_chat     TEXT,
            target         TEXT NOT NULL,
            operations     TEXT NOT NULL,
            origin         TEXT NOT NULL,
            created_at     REAL NOT NULL,
            status         TEXT NOT NULL DEFAULT 'pending',
            decided_at     REAL,
            result         TEXT
        );
        CREATE INDEX pending_writes_by_tenant ON pending_writes(tenant_id, status, id);
        CREATE TABLE tenant_prefs (
            tenant_id      TEXT PRIMARY KEY,
            write_approval INTEGER
        );
        """,
    )
