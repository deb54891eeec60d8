"""Processed platform updates: each update is handled once, across restarts.

A handler *claims* an update before working on it and *finishes* it after the reply was
sent. A claim held by an earlier process (it died mid-turn) is taken over, so the message
is answered after a restart; a claim of this process means the update is already being
handled (a platform retry), and a finished update is skipped.
"""

from __future__ import annotations

import secrets
import sqlite3
import time

from gateway.history.db import Database, migration, run_script
from gateway.tenants import TenantId


@migration(6, "processed platform updates")
def _v6(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE processed_updates (
            platform    TEXT NOT NULL,
            update_id   TEXT NOT NULL,
            tenant_id   TEXT NOT NULL,
            owner       TEXT NOT NULL,
            state       TEXT NOT NULL,
            received_at REAL NOT NULL,
            finished_at REAL,
            PRIMARY KEY (platform, update_id)
        );
        CREATE INDEX processed_updates_by_tenant ON processed_updates(tenant_id);
        CREATE INDEX processed_updates_by_time ON processed_updates(received_at);
        """,
    )


class UpdateLedger:
    """Claims and finishes updates for one gateway process (``owner`` is per process)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.owner = secrets.token_hex(8)

    def claim(self, tenant: TenantId, platform: str, update_id: str) -> bool:
        """True when this process should handle the update now."""

        def write(conn: sqlite3.Connection) -> bool:
            row = conn.execute(
                "SELECT tenant_id, owner, state FROM processed_updates "
                "WHERE platform = ? AND update_id = ?",
                (platform, update_id),
            ).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO processed_updates (platform, update_id, tenant_id, owner, state,"
                    " received_at) VALUES (?, ?, ?, ?, 'started', ?)",
                    (platform, update_id, str(tenant), self.owner, time.time()),
                )
                return True
            if row["state"] == "done" or row["owner"] == self.owner:
                return False
            if row["tenant_id"] != str(tenant):
                return False  # the same id from someone else: never act on it
            conn.execute(
                "UPDATE processed_updates SET owner = ?, received_at = ? "
                "WHERE platform = ? AND update_id = ? AND tenant_id = ?",
                (self.owner, time.time(), platform, update_id, str(tenant)),
            )
            return True

        return self.db.write(write)

    def finish(self, tenant: TenantId, platform: str, update_id: str) -> None:
        self.db.write(
            lambda conn: conn.execute(
                "UPDATE processed_updates SET state = 'done', finished_at = ? "
                "WHERE platform = ? AND update_id = ? AND tenant_id = ?",
                (time.time(), platform, update_id, str(tenant)),
            )
        )

    def release(self, tenant: TenantId, platform: str, update_id: str) -> None:
        """Give a claim up (handling failed before anything was sent): a redelivery retries."""
        self.db.write(
            lambda conn: conn.execute(
                "DELETE FROM processed_updates WHERE platform = ? AND update_id = ? "
                "AND tenant_id = ? AND state = 'started'",
                (platform, update_id, str(tenant)),
            )
        )

    def prune(self, older_than_s: float = 7 * 86400) -> int:
        """Forget finished updates older than a week (platforms never redeliver that late)."""
        cutoff = time.time() - older_than_s
        return self.db.write(
            lambda conn: (
                conn.execute(
                    "DELETE FROM processed_updates WHERE state = 'done' AND received_at < ?",
                    (cutoff,),
                ).rowcount
            )
        )
