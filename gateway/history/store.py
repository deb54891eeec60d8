"""SessionStore: sessions and their messages, always addressed through a tenant.

Every method takes the tenant first and binds it in every query, so there is no call that
can read or change another tenant's rows.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from gateway.errors import NotFound, UserInputError
from gateway.history.db import Database
from gateway.history.fts import IndexRow, index_messages, unindex_session
from gateway.history.lineage import check_title, title_taken
from gateway.history.records import (
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    Deleted,
    NewMessage,
    NewSession,
    SessionRecord,
    StoredMessage,
    message_from_row,
    new_session_id,
    session_from_row,
)
from gateway.llm.types import Usage
from gateway.tenants import TenantId

if TYPE_CHECKING:
    from gateway.history.transfer import ExportedSession

IdOwner = Literal["free", "mine", "other"]
__all__ = ["Deleted", "NewMessage", "SessionRecord", "SessionStore", "StoredMessage", "Usage"]


class SessionStore:
    """Tenant-scoped reads and writes of sessions and messages."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # --- tenants -------------------------------------------------------------------------
    def ensure_tenant(
        self, conn: sqlite3.Connection, tenant: TenantId, display_name: str | None = None
    ) -> None:
        conn.execute(
            "INSERT INTO tenants (id, namespace, created_at, display_name) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET display_name = COALESCE(excluded.display_name, "
            "tenants.display_name)",
            (str(tenant), tenant.namespace, time.time(), display_name),
        )

    # --- sessions ------------------------------------------------------------------------
    def create_session(
        self,
        tenant: TenantId,
        *,
        session_key: str,
        source: str,
        system_prompt: str,
        tools_json: str,
        scope_key: str,
        chat_id: str | None = None,
        chat_type: str = "dm",
        model: str | None = None,
        parent_id: str | None = None,
        title: str | None = None,
        incognito: bool = False,
        started_at: float | None = None,
    ) -> SessionRecord:
        """Open a session in its own transaction."""
        spec = NewSession(
            session_key=session_key,
            source=source,
            system_prompt=system_prompt,
            tools_json=tools_json,
            scope_key=scope_key,
            chat_id=chat_id,
            chat_type=chat_type,
            model=model,
            parent_id=parent_id,
            title=title,
            incognito=incognito,
            started_at=started_at if started_at is not None else time.time(),
        )
        session_id = self.db.write(lambda conn: self.insert_session(conn, tenant, spec))
        return self.get_session(tenant, session_id)

    def insert_session(self, conn: sqlite3.Connection, tenant: TenantId, spec: NewSession) -> str:
        """Insert a session row inside the caller's transaction; returns its id."""
        session_id = new_session_id(spec.started_at)
        self.ensure_tenant(conn, tenant)
        if spec.parent_id is not None:
            self.require(conn, tenant, spec.parent_id)
        conn.execute(
            "INSERT INTO sessions (id, tenant_id, session_key, source, chat_id, chat_type, "
            "scope_key, title, parent_id, started_at, system_prompt, tools_json, model, "
            "incognito) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                session_id,
                str(tenant),
                spec.session_key,
                spec.source,
                spec.chat_id,
                spec.chat_type,
                spec.scope_key,
                spec.title,
                spec.parent_id,
                spec.started_at,
                spec.system_prompt,
                spec.tools_json,
                spec.model,
                int(spec.incognito),
            ),
        )
        return session_id

    def get_session(self, tenant: TenantId, session_id: str) -> SessionRecord:
        row = self.db.read(lambda c: self.require(c, tenant, session_id))
        return session_from_row(row)

    def live_session(self, tenant: TenantId, session_key: str) -> SessionRecord | None:
        """The newest session of this key that has not ended, if any."""
        row = self.db.read(
            lambda c: c.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions WHERE tenant_id = ? AND session_key = ? "
                "AND ended_at IS NULL ORDER BY started_at DESC, rowid DESC LIMIT 1",
                (str(tenant), session_key),
            ).fetchone()
        )
        return session_from_row(row) if row else None

    def end_session(self, tenant: TenantId, session_id: str, reason: str) -> None:
        """Mark the session ended, nothing more (tools, tests). The gateway's end paths use
        :mod:`gateway.history.endings`, which also tells the provider."""

        def update(conn: sqlite3.Connection) -> None:
            self.require(conn, tenant, session_id)
            conn.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ? "
                "WHERE tenant_id = ? AND id = ? AND ended_at IS NULL",
                (time.time(), reason, str(tenant), session_id),
            )

        self.db.write(update)

    # --- messages ------------------------------------------------------------------------
    def record_turn(
        self,
        tenant: TenantId,
        session_id: str,
        messages: Sequence[NewMessage],
        usage: Usage = Usage(),  # noqa: B008  (immutable)
    ) -> list[int]:
        """Append one turn's messages and its usage in a single transaction (no outbox)."""
        from gateway.history.turns import commit_turn  # turns builds on this module

        return commit_turn(self, tenant, session_id, messages, usage).message_ids

    def append_messages(
        self, tenant: TenantId, session_id: str, messages: Sequence[NewMessage]
    ) -> list[int]:
        def write(conn: sqlite3.Connection) -> list[int]:
            session = session_from_row(self.require(conn, tenant, session_id))
            return self.insert_messages(conn, session, messages)

        return self.db.write(write)

    def messages(self, tenant: TenantId, session_id: str) -> list[StoredMessage]:
        def query(conn: sqlite3.Connection) -> list[sqlite3.Row]:
            self.require(conn, tenant, session_id)
            return conn.execute(
                f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE tenant_id = ? AND session_id = ? "
                "ORDER BY id",
                (str(tenant), session_id),
            ).fetchall()

        return [message_from_row(r) for r in self.db.read(query)]

    # --- transaction building blocks (also used by gateway.history.turns) ---
    def insert_messages(
        self, conn: sqlite3.Connection, session: SessionRecord, messages: Sequence[NewMessage]
    ) -> list[int]:
        ids: list[int] = []
        for msg in messages:
            cur = conn.execute(
                "INSERT INTO messages (session_id, tenant_id, role, content, name, tool_calls, "
                "tool_call_id, timestamp, platform_message_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session.id,
                    str(session.tenant),
                    msg.role,
                    msg.content,
                    msg.name,
                    json.dumps(msg.tool_calls, ensure_ascii=False) if msg.tool_calls else None,
                    msg.tool_call_id,
                    msg.timestamp,
                    msg.platform_message_id,
                ),
            )
            assert cur.lastrowid is not None
            ids.append(cur.lastrowid)
        if not session.incognito:
            pairs = zip(ids, messages, strict=True)
            index_messages(
                conn, session.tenant, (IndexRow(i, m.role, m.content, m.name) for i, m in pairs)
            )
        return ids

    @staticmethod
    def require(conn: sqlite3.Connection, tenant: TenantId, session_id: str) -> sqlite3.Row:
        row: sqlite3.Row | None = conn.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE tenant_id = ? AND id = ?",
            (str(tenant), session_id),
        ).fetchone()
        if row is None:
            raise NotFound(f"no session {session_id!r} for {tenant}")
        return row

    # --- listing, renaming, deleting (operator commands) ---------------------------------
    def list_sessions(
        self, tenant: TenantId, *, limit: int, offset: int = 0, oldest_first: bool = False
    ) -> list[SessionRecord]:
        """A page of the tenant's sessions, newest first (or oldest first, for export)."""
        order = "ASC" if oldest_first else "DESC"
        rows = self.db.read(
            lambda c: c.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions WHERE tenant_id = ? "
                f"ORDER BY started_at {order}, id {order} LIMIT ? OFFSET ?",
                (str(tenant), limit, offset),
            ).fetchall()
        )
        return [session_from_row(r) for r in rows]

    def count_messages(self, tenant: TenantId, session_ids: Sequence[str]) -> dict[str, int]:
        """How many messages each of the tenant's ``session_ids`` holds (absent ids: 0)."""
        if not session_ids:
            return {}
        marks = ", ".join("?" * len(session_ids))
        rows = self.db.read(
            lambda c: c.execute(
                "SELECT session_id, COUNT(*) FROM messages WHERE tenant_id = ? "
                f"AND session_id IN ({marks}) GROUP BY session_id",
                (str(tenant), *session_ids),
            ).fetchall()
        )
        counts = dict.fromkeys(session_ids, 0)
        counts.update({row[0]: int(row[1]) for row in rows})
        return counts

    def rename_session(self, tenant: TenantId, session_id: str, title: str) -> None:
        """Set a title; titles are unique per tenant, so a clash is refused."""
        title = check_title(" ".join(title.split()))

        def update(conn: sqlite3.Connection) -> None:
            self.require(conn, tenant, session_id)
            if title_taken(conn, tenant, title, session_id):
                raise UserInputError(f"{tenant} already has a session titled {title!r}")
            conn.execute(
                "UPDATE sessions SET title = ? WHERE tenant_id = ? AND id = ?",
                (title, str(tenant), session_id),
            )

        self.db.write(update)

    def delete_session(self, tenant: TenantId, session_id: str) -> int:
        """Delete a session, its messages and index rows; returns the messages deleted.

        Children keep existing: the foreign key sets their ``parent_id`` to NULL.
        """

        def delete(conn: sqlite3.Connection) -> int:
            self.require(conn, tenant, session_id)
            return self._delete(conn, tenant, [session_id]).messages

        return self.db.write(delete)

    def prune_ended_before(self, tenant: TenantId, cutoff_ts: float) -> Deleted:
        """Delete the tenant's sessions that ended before ``cutoff_ts`` (live ones stay)."""

        def delete(conn: sqlite3.Connection) -> Deleted:
            rows = conn.execute(
                "SELECT id FROM sessions WHERE tenant_id = ? AND ended_at IS NOT NULL "
                "AND ended_at < ?",
                (str(tenant), cutoff_ts),
            ).fetchall()
            return self._delete(conn, tenant, [str(r[0]) for r in rows])

        return self.db.write(delete)

    def tenant_ids(self) -> list[TenantId]:
        """Every tenant's id — the one cross-tenant listing, for operator-wide commands."""
        rows = self.db.read(lambda c: c.execute("SELECT id FROM tenants ORDER BY id").fetchall())
        return [TenantId.parse(r[0]) for r in rows]

    # --- import ---------------------------------------------------------------------------
    def import_session(self, tenant: TenantId, record: ExportedSession) -> str:
        """Store one exported session under its own id, title and parent, or refuse."""

        def insert(conn: sqlite3.Connection) -> str:
            if self.id_owner(conn, tenant, record.id) != "free":
                raise UserInputError(f"session id {record.id!r} is already in use")
            if record.title is not None and title_taken(conn, tenant, record.title):
                raise UserInputError(f"{tenant} already has a session titled {record.title!r}")
            if record.parent_id is not None:
                self.require(conn, tenant, record.parent_id)
            self.insert_imported(
                conn,
                tenant,
                record,
                session_id=record.id,
                title=record.title,
                parent_id=record.parent_id,
            )
            return record.id

        return self.db.write(insert)

    @staticmethod
    def id_owner(conn: sqlite3.Connection, tenant: TenantId, session_id: str) -> IdOwner:
        """Whether a session id is free, the tenant's, or another tenant's.

        Session ids are a global primary key, so this is the one lookup that cannot be scoped
        to the tenant; it answers only which of the three cases holds, never any row data.
        """
        row = conn.execute(
            "SELECT tenant_id = ? FROM sessions WHERE id = ?", (str(tenant), session_id)
        ).fetchone()
        if row is None:
            return "free"
        return "mine" if row[0] else "other"

    def insert_imported(
        self,
        conn: sqlite3.Connection,
        tenant: TenantId,
        record: ExportedSession,
        *,
        session_id: str,
        title: str | None,
        parent_id: str | None,
    ) -> int:
        """Insert an ended session and its (indexed) messages inside the caller's transaction.

        The caller has checked the id, title and parent. The session gets an empty system
        prompt and no tools: it is history to search and read; resuming it freezes a fresh
        prompt first (``SessionOpener.refreeze``).
        """
        self.ensure_tenant(conn, tenant)
        messages = record.new_messages()
        ended = record.ended_ts
        if ended is None:
            ended = messages[-1].timestamp if messages else record.started_ts
        conn.execute(
            "INSERT INTO sessions (id, tenant_id, session_key, source, chat_type, scope_key, "
            "title, parent_id, started_at, ended_at, end_reason, system_prompt, tools_json, "
            "user_turns) VALUES (?, ?, ?, ?, 'dm', ?, ?, ?, ?, ?, 'imported', '', '[]', ?)",
            (
                session_id,
                str(tenant),
                f"import:{session_id}",
                record.source,
                tenant.namespace,
                title,
                parent_id,
                record.started_ts,
                ended,
                sum(1 for m in messages if m.role == "user"),
            ),
        )
        session = session_from_row(self.require(conn, tenant, session_id))
        return len(self.insert_messages(conn, session, messages))

    def _delete(
        self, conn: sqlite3.Connection, tenant: TenantId, session_ids: Sequence[str]
    ) -> Deleted:
        messages = 0
        for session_id in session_ids:
            unindex_session(conn, tenant, session_id)
            messages += conn.execute(
                "DELETE FROM messages WHERE tenant_id = ? AND session_id = ?",
                (str(tenant), session_id),
            ).rowcount
            conn.execute(
                "DELETE FROM sessions WHERE tenant_id = ? AND id = ?", (str(tenant), session_id)
            )
        return Deleted(len(session_ids), messages)
