"""The provider turn ledger on state.db: which turns a provider has delivered to its service.

:class:`providers.ledger.TurnLedger` on SQLite, shared by the gateway and every worker
process. Rows carry the tenant id, so erasure sweeps them with the tenant's other rows.
"""

from __future__ import annotations

import sqlite3
import time

from gateway.history.db import Database, migration, run_script
from providers.ledger import STALE_AFTER_S, Claim, TurnKey


@migration(22, "provider turn ledger")
def _v22(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE provider_turns (
            tenant_id   TEXT NOT NULL,
            provider    TEXT NOT NULL,
            backend_key TEXT NOT NULL,
            session_id  TEXT NOT NULL,
            turn_id     TEXT NOT NULL,
            state       TEXT NOT NULL CHECK (state IN ('sending', 'done')),
            updated_at  REAL NOT NULL,
            PRIMARY KEY (provider, backend_key, session_id, turn_id)
        );
        CREATE INDEX provider_turns_tenant ON provider_turns (tenant_id);
        """,
    )


_WHERE = "provider = ? AND backend_key = ? AND session_id = ? AND turn_id = ?"


def _params(key: TurnKey) -> tuple[str, str, str, str]:
    return (key.provider, key.backend_key, key.session_id, key.turn_id)


class SqliteTurnLedger:
    """Turn claims in ``provider_turns``; each claim is one write transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def claim(self, key: TurnKey, stale_after_s: float = STALE_AFTER_S) -> Claim:
        def write(conn: sqlite3.Connection) -> Claim:
            now = time.time()
            row = conn.execute(
                f"SELECT state, updated_at FROM provider_turns WHERE {_WHERE}", _params(key)
            ).fetchone()
            if row is not None and row["state"] == "done":
                return "done"
            if row is not None and now - row["updated_at"] < stale_after_s:
                return "busy"
            conn.execute(
                "INSERT OR REPLACE INTO provider_turns (tenant_id, provider, backend_key, "
                "session_id, turn_id, state, updated_at) VALUES (?, ?, ?, ?, ?, 'sending', ?)",
                (str(key.tenant), *_params(key), now),
            )
            return "claimed"

        return self.db.write(write)

    def finish(self, key: TurnKey) -> None:
        self.db.write(
            lambda c: c.execute(
                f"UPDATE provider_turns SET state = 'done', updated_at = ? WHERE {_WHERE}",
                (time.time(), *_params(key)),
            )
        )

    def release(self, key: TurnKey) -> None:
        self.db.write(
            lambda c: c.execute(
                f"DELETE FROM provider_turns WHERE state = 'sending' AND {_WHERE}", _params(key)
            )
        )
