"""Which background work a turn leaves behind: outbox rows written with the turn.

Decided inside the turn's transaction, so a turn and its follow-up work commit together:
provider sync and next-turn recall, the memory-review counter (reset when the model itself
wrote memory; a review every ``nudge_interval`` user turns), the title after the first
exchange, and compression when the context window is nearly full.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from gateway import outbox
from gateway.agent.compression import needs_compression
from gateway.history.records import SessionRecord
from gateway.history.turns import OutboxPlanner
from gateway.settings import Settings
from workers.queues import JobKind, Primitive


@dataclass(frozen=True, slots=True)
class TurnFacts:
    """What the turn learned that decides its follow-up work."""

    user_text: str
    model_wrote_memory: bool
    prompt_tokens: int
    provider_active: bool
    recall_due: bool
    memory_enabled: bool


def planner(settings: Settings, facts: TurnFacts) -> OutboxPlanner:
    def plan(conn: sqlite3.Connection, session: SessionRecord, ids: list[int]) -> list[int]:
        tenant, rows = session.tenant, list[int]()

        def add(kind: JobKind, payload: dict[str, Primitive] | None = None) -> None:
            rows.append(outbox.add(conn, tenant, session.id, kind, payload or {}))

        if not session.incognito:
            if facts.provider_active:
                add("sync", {"upto": ids[-1]})
                if facts.recall_due:
                    add("recall", {"query": facts.user_text[:4000]})
            interval = settings.memory.nudge_interval
            if (
                facts.memory_enabled
                and interval > 0
                and _review_due(conn, session, facts, interval)
            ):
                add("review")
            if session.title is None and session.user_turns == 0:
                add("title")
        window = settings.llm.context_window
        if needs_compression(facts.prompt_tokens, window, settings.sessions.compression_threshold):
            add("compress")
        return rows

    return plan


def _review_due(
    conn: sqlite3.Connection, session: SessionRecord, facts: TurnFacts, interval: int
) -> bool:
    """Advance the session's review counter; True (and reset) when a review is due."""
    row = conn.execute(
        "SELECT review_counter FROM sessions WHERE tenant_id = ? AND id = ?",
        (str(session.tenant), session.id),
    ).fetchone()
    counter = 0 if facts.model_wrote_memory else int(row["review_counter"]) + 1
    due = counter >= interval
    conn.execute(
        "UPDATE sessions SET review_counter = ? WHERE tenant_id = ? AND id = ?",
        (0 if due else counter, str(session.tenant), session.id),
    )
    return due
