"""The reference provider: a simple, observable provider for tests and contract checks.

It keeps everything in one SQLite file, ``<home>/reference-provider.db`` (WAL), so a gateway
and RQ worker processes share it. Every row carries the tenant namespace (and facts the
memory scope), so two tenants never mix. Besides the provider interface it offers read-only
inspection for tests: the turns it stored (in arrival order, with how many times each was
delivered, to check exactly-once sync), the facts it holds, and every call it received.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from gateway.history.db import retry_busy
from gateway.tenants import TenantId
from providers.base import (
    Delegation,
    MemoryProvider,
    MemoryWriteEvent,
    ProviderContext,
    RecallQuery,
    SessionEnd,
    SessionSwitch,
    SyncedTurn,
    TurnStart,
    tool_error,
)
from providers.scoping import ScopeRecord

if TYPE_CHECKING:
    from gateway.settings import Settings

DB_NAME = "reference-provider.db"
RECALL_LIMIT = 5
_WORD = re.compile(r"\w{3,}")
_SCHEMA = """
PRAGMA journal_mode = WAL;
CREATE TABLE IF NOT EXISTS turns (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace TEXT NOT NULL, session_id TEXT NOT NULL, turn_id TEXT NOT NULL,
    user_text TEXT NOT NULL, assistant_text TEXT NOT NULL, timestamp TEXT NOT NULL,
    deliveries INTEGER NOT NULL DEFAULT 1,
    UNIQUE (namespace, session_id, turn_id)
);
CREATE TABLE IF NOT EXISTS facts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace TEXT NOT NULL, scope_key TEXT NOT NULL, session_id TEXT NOT NULL,
    source TEXT NOT NULL, text TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS calls (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    method TEXT NOT NULL, namespace TEXT, session_id TEXT, at TEXT NOT NULL
);
"""
RECALL_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "reference_recall",
        "description": "Look up facts this user mentioned in past conversations.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "Words to look for."}},
            "required": ["query"],
        },
    },
}


@dataclass(frozen=True, slots=True)
class StoredTurn:
    session_id: str
    turn_id: str
    user: str
    assistant: str
    deliveries: int  # how many times sync_turn delivered it; 1 means exactly once


@dataclass(frozen=True, slots=True)
class RecordedCall:
    method: str
    namespace: str | None
    session_id: str | None


class ReferenceProvider(MemoryProvider):
    """Stores synced turns and memory writes as facts; recall finds facts sharing query words."""

    name = "reference"

    def __init__(self, home: Path) -> None:
        self.path = home / DB_NAME
        self._ready = False
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls(settings.home)

    def is_available(self) -> bool:
        return True

    def initialize(self, ctx: ProviderContext) -> None:
        self._record("initialize", ctx)

    def tool_schemas(self) -> list[dict[str, Any]]:
        return [json.loads(json.dumps(RECALL_TOOL))]

    def system_prompt_block(self) -> str:
        return "Use reference_recall to look up facts the user mentioned in past conversations."

    def recall(self, ctx: ProviderContext, query: RecallQuery) -> str:
        self._record("recall", ctx)
        return "\n".join(f"- {fact}" for fact in self._search(ctx, query.text))

    def sync_turn(self, ctx: ProviderContext, turn: SyncedTurn) -> None:
        self._record("sync_turn", ctx)
        row = (ctx.namespace, turn.session_id, turn.turn_id, turn.user, turn.assistant)
        with self._db() as db:
            cursor = db.execute(
                "INSERT INTO turns (namespace, session_id, turn_id, user_text, assistant_text,"
                " timestamp) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (*row, turn.timestamp.isoformat()),
            )
            if cursor.rowcount == 0:
                db.execute(
                    "UPDATE turns SET deliveries = deliveries + 1"
                    " WHERE namespace = ? AND session_id = ? AND turn_id = ?",
                    (ctx.namespace, turn.session_id, turn.turn_id),
                )
            elif turn.user.strip():
                self._add_fact(db, ctx, "turn", turn.user.strip())

    def handle_tool_call(self, ctx: ProviderContext, name: str, args: dict[str, Any]) -> str:
        self._record("handle_tool_call", ctx)
        if name != "reference_recall":
            return tool_error(f"unknown tool {name!r}; this provider offers reference_recall")
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return tool_error("'query' must be a non-empty string")
        return json.dumps({"success": True, "facts": self._search(ctx, query)})

    def on_turn_start(self, ctx: ProviderContext, turn: TurnStart) -> None:
        self._record("on_turn_start", ctx)

    def on_session_end(self, ctx: ProviderContext, end: SessionEnd) -> None:
        self._record("on_session_end", ctx)

    def on_session_switch(self, ctx: ProviderContext, switch: SessionSwitch) -> None:
        self._record("on_session_switch", ctx)

    def on_pre_compress(self, ctx: ProviderContext, messages: Sequence[Mapping[str, Any]]) -> str:
        self._record("on_pre_compress", ctx)
        count = len(self.facts(ctx.namespace, ctx.memory_scope_key))
        return f"The reference provider holds {count} facts about this user."

    def on_memory_write(self, ctx: ProviderContext, event: MemoryWriteEvent) -> None:
        self._record("on_memory_write", ctx)
        with self._db() as db:
            if event.previous is not None:
                db.execute(
                    "DELETE FROM facts WHERE namespace = ? AND scope_key = ? AND text = ?",
                    (ctx.namespace, ctx.memory_scope_key, event.previous),
                )
            if event.content.strip():
                self._add_fact(db, ctx, "memory-write", event.content.strip())

    def on_delegation(self, ctx: ProviderContext, delegation: Delegation) -> None:
        self._record("on_delegation", ctx)

    def shutdown(self) -> None:
        self._record("shutdown", None)

    def erase(self, tenant: TenantId, scopes: Sequence[ScopeRecord] = ()) -> tuple[int, list[str]]:
        removed = 0
        with self._db() as db:
            for table in ("turns", "facts", "calls"):
                removed += db.execute(
                    f"DELETE FROM {table} WHERE namespace = ?", (tenant.namespace,)
                ).rowcount
        return removed, []

    # Inspection for tests.

    def synced_turns(self, namespace: str, session_id: str | None = None) -> list[StoredTurn]:
        """Turns of ``namespace`` in the order they first arrived."""
        with self._db() as db:
            rows = db.execute(
                "SELECT session_id, turn_id, user_text, assistant_text, deliveries FROM turns"
                " WHERE namespace = ? AND (? IS NULL OR session_id = ?) ORDER BY seq",
                (namespace, session_id, session_id),
            ).fetchall()
        return [StoredTurn(*row) for row in rows]

    def facts(self, namespace: str, scope_key: str | None = None) -> list[str]:
        """Facts of ``namespace`` (in one scope, if given), oldest first."""
        with self._db() as db:
            rows = db.execute(
                "SELECT text FROM facts WHERE namespace = ? AND (? IS NULL OR scope_key = ?)"
                " ORDER BY seq",
                (namespace, scope_key, scope_key),
            ).fetchall()
        return [text for (text,) in rows]

    def calls(self, namespace: str | None = None) -> list[RecordedCall]:
        """Every call received (for one namespace, if given), oldest first."""
        with self._db() as db:
            rows = db.execute(
                "SELECT method, namespace, session_id FROM calls"
                " WHERE (? IS NULL OR namespace = ?) ORDER BY seq",
                (namespace, namespace),
            ).fetchall()
        return [RecordedCall(*row) for row in rows]

    # Storage.

    def _search(self, ctx: ProviderContext, text: str) -> list[str]:
        wanted = set(_WORD.findall(text.casefold()))
        if not wanted:
            return []
        with self._db() as db:
            rows = db.execute(
                "SELECT text FROM facts WHERE namespace = ? AND scope_key = ? ORDER BY seq DESC",
                (ctx.namespace, ctx.memory_scope_key),
            )
            found = [fact for (fact,) in rows if wanted & set(_WORD.findall(fact.casefold()))]
        return found[:RECALL_LIMIT]

    def _add_fact(
        self, db: sqlite3.Connection, ctx: ProviderContext, source: str, text: str
    ) -> None:
        db.execute(
            "INSERT INTO facts (namespace, scope_key, session_id, source, text)"
            " VALUES (?, ?, ?, ?, ?)",
            (ctx.namespace, ctx.memory_scope_key, ctx.session_id, source, text),
        )

    def _record(self, method: str, ctx: ProviderContext | None) -> None:
        namespace, session_id = (ctx.namespace, ctx.session_id) if ctx else (None, None)
        with self._db() as db:
            db.execute(
                "INSERT INTO calls (method, namespace, session_id, at) VALUES (?, ?, ?, ?)",
                (method, namespace, session_id, datetime.now(UTC).isoformat()),
            )

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """A connection for one transaction (committed on success); the schema made once."""
        if not self._ready:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path, timeout=30)) as db:
            if not self._ready:
                with self._lock:
                    # Switching to WAL does not wait on a busy database: retry instead.
                    retry_busy(db.executescript)(_SCHEMA)
                    self._ready = True
            with db:
                yield db
