"""Committing a turn: its messages, usage and outbox rows in one SQLite transaction.

A turn that finishes after its session was compressed (the background plane ended it and
opened a continuation meanwhile) is recorded in the newest continuation, so no message is
stranded in an ended parent.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gateway.history.records import NewMessage, SessionRecord, session_from_row
from gateway.history.store import SessionStore
from gateway.llm.types import Usage
from gateway.tenants import TenantId

# Called inside the transaction with the session the turn landed in and the new message
# ids; returns the ids of the outbox rows it added.
OutboxPlanner = Callable[[sqlite3.Connection, SessionRecord, list[int]], list[int]]


@dataclass(frozen=True, slots=True)
class CommittedTurn:
    session_id: str
    message_ids: list[int]
    outbox_ids: list[int]


def _continuation(conn: sqlite3.Connection, session: SessionRecord) -> SessionRecord:
    while session.ended_at is not None and session.end_reason == "compressed":
        row = conn.execute(
            "SELECT id FROM sessions WHERE tenant_id = ? AND parent_id = ? "
            "ORDER BY started_at DESC, rowid DESC LIMIT 1",
            (str(session.tenant), session.id),
        ).fetchone()
        if row is None:
            break
        session = session_from_row(SessionStore.require(conn, session.tenant, row["id"]))
    return session


def commit_turn(
    store: SessionStore,
    tenant: TenantId,
    session_id: str,
    messages: Sequence[NewMessage],
    usage: Usage,
    plan: OutboxPlanner | None = None,
) -> CommittedTurn:
    def write(conn: sqlite3.Connection) -> CommittedTurn:
        found = session_from_row(SessionStore.require(conn, tenant, session_id))
        session = _continuation(conn, found)
        ids = store.insert_messages(conn, session, messages)
        user_turns = sum(1 for m in messages if m.role == "user")
        conn.execute(
            "UPDATE sessions SET prompt_tokens = prompt_tokens + ?, "
            "completion_tokens = completion_tokens + ?, cached_tokens = cached_tokens + ?, "
            "user_turns = user_turns + ? WHERE tenant_id = ? AND id = ?",
            (
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.cached_tokens,
                user_turns,
                str(tenant),
                session.id,
            ),
        )
        outbox_ids = plan(conn, session, ids) if plan is not None else []
        return CommittedTurn(session.id, ids, outbox_ids)

    return store.db.write(write)
