"""Schema migrations of state.db. Add a new numbered function; never edit an applied one."""

from __future__ import annotations

import sqlite3

from gateway.history import fts
from gateway.history.db import migration, run_script


@migration(1, "tenants, sessions, messages")
def _v1(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE tenants (
            id          TEXT PRIMARY KEY,
            namespace   TEXT NOT NULL UNIQUE,
            created_at  REAL NOT NULL,
            display_name TEXT
        );
        CREATE TABLE sessions (
            id            TEXT PRIMARY KEY,
            tenant_id     TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
            session_key   TEXT NOT NULL,
            source        TEXT NOT NULL,
            chat_id       TEXT,
            chat_type     TEXT NOT NULL DEFAULT 'dm',
            scope_key     TEXT NOT NULL,
            title         TEXT,
            parent_id     TEXT REFERENCES sessions(id) ON DELETE SET NULL,
            started_at    REAL NOT NULL,
            ended_at      REAL,
            end_reason    TEXT,
            system_prompt TEXT NOT NULL,
            tools_json    TEXT NOT NULL,
            model         TEXT,
            incognito     INTEGER NOT NULL DEFAULT 0,
            prompt_tokens     INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            cached_tokens     INTEGER NOT NULL DEFAULT 0,
            user_turns    INTEGER NOT NULL DEFAULT 0,
            UNIQUE (tenant_id, title)
        );
        CREATE INDEX sessions_by_key ON sessions(tenant_id, session_key, started_at);
        CREATE INDEX sessions_by_time ON sessions(tenant_id, started_at);
        CREATE INDEX sessions_by_parent ON sessions(parent_id);
        CREATE TABLE messages (
            id          INTEGER PRIMARY KEY,
            session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            tenant_id   TEXT NOT NULL,
            role        TEXT NOT NULL,
            content     TEXT NOT NULL DEFAULT '',
            name        TEXT,
            tool_calls  TEXT,
            tool_call_id TEXT,
            timestamp   REAL NOT NULL,
            platform_message_id TEXT
        );
        CREATE INDEX messages_by_session ON messages(session_id, id);
        CREATE INDEX messages_by_tenant ON messages(tenant_id);
        """,
    )


@migration(2, "full-text index of messages")
def _v2(conn: sqlite3.Connection) -> None:
    # Ordinary (content-storing) FTS5 table: rows can be deleted by rowid, which SQLite
    # 3.40 cannot do for contentless tables. See gateway/history/fts.py for the columns.
    run_script(
        conn,
        """
        CREATE VIRTUAL TABLE messages_fts USING fts5(
            tenant_tok, body, sender,
            tokenize = 'porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER messages_fts_unindex AFTER DELETE ON messages BEGIN
            DELETE FROM messages_fts WHERE rowid = old.id;
        END;
        """,
    )
    fts.backfill(conn)


@migration(3, "transactional outbox; provider sync pointer and review counter")
def _v3(conn: sqlite3.Connection) -> None:
    # A row is open until done_at is set: by the job that handled it, or by the relay when
    # RQ reports the job finished or failed for good (see gateway/outbox.py).
    run_script(
        conn,
        """
        CREATE TABLE outbox (
            id          INTEGER PRIMARY KEY,
            tenant_id   TEXT NOT NULL,
            session_id  TEXT NOT NULL,
            kind        TEXT NOT NULL,
            payload     TEXT NOT NULL DEFAULT '{}',
            created_at  REAL NOT NULL,
            enqueued_at REAL,
            attempts    INTEGER NOT NULL DEFAULT 0,
            last_error  TEXT,
            done_at     REAL
        );
        CREATE INDEX outbox_open ON outbox(enqueued_at, id) WHERE done_at IS NULL;
        CREATE INDEX outbox_by_session ON outbox(tenant_id, session_id, kind, id);
        CREATE INDEX outbox_done ON outbox(done_at) WHERE done_at IS NOT NULL;
        ALTER TABLE sessions ADD COLUMN provider_synced_upto INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE sessions ADD COLUMN review_counter INTEGER NOT NULL DEFAULT 0;
        """,
    )


@migration(8, "pending-write ids numbered per tenant")
def _v8(conn: sqlite3.Connection) -> None:
    # Global ids told a tenant how many writes others had staged. Existing ids are unique
    # per tenant already, so they are kept (buttons already sent still work); new ones are
    # allocated per tenant by ApprovalStore.stage. ``seq`` is only the row's storage key.
    run_script(
        conn,
        """
        CREATE TABLE pending_writes_v8 (
            seq            INTEGER PRIMARY KEY,
            id             INTEGER NOT NULL,
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
            result         TEXT,
            UNIQUE (tenant_id, id)
        );
        INSERT INTO pending_writes_v8 (seq, id, tenant_id, scope_key, group_platform,
            group_chat, target, operations, origin, created_at, status, decided_at, result)
        SELECT id, id, tenant_id, scope_key, group_platform, group_chat, target, operations,
            origin, created_at, status, decided_at, result FROM pending_writes;
        DROP TABLE pending_writes;
        ALTER TABLE pending_writes_v8 RENAME TO pending_writes;
        CREATE INDEX pending_writes_by_tenant ON pending_writes(tenant_id, status, id);
        """,
    )


from gateway import access_schema, holographic_facts, provider_scopes  # noqa: E402,F401
from gateway.history import endings  # noqa: E402,F401
from gateway.identity import links  # noqa: E402,F401
from gateway.memory import approval_schema  # noqa: E402,F401
from gateway.platforms import ledger  # noqa: E402,F401
