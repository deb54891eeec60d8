"""SessionSearch: find, read and list one tenant's past sessions for recall.

Every method takes the tenant first and binds it in every statement. Discovery ranks
messages with BM25 inside the tenant's own slice of the full-text index (see
:mod:`gateway.history.fts`) and spends a character budget on the best windows of messages,
from at most ``limit`` session lineages, never the caller's own (see
:mod:`gateway.history.retrieve`); :mod:`gateway.history.recall` is the answer's shape.
Scope follows SPEC §7: a direct-message search sees only the tenant's DM sessions; a group
search only the tenant's sessions of that group. Incognito sessions are never indexed,
listed or read back. All stored text that leaves this module goes through
:func:`gateway.security.fence.sanitize_recalled`.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, fields, is_dataclass
from datetime import UTC, datetime
from typing import Any

from gateway.errors import NotFound
from gateway.history.db import Database
from gateway.history.query import parse_query
from gateway.history.recall import SearchResult
from gateway.history.retrieve import VISIBLE, find_hits, lineage, lineage_roots, pack, scope_sql
from gateway.security.fence import sanitize_recalled
from gateway.tenants import TenantId

MAX_CONTENT_CHARS = 500
#: Default characters of one search answer (``sessions.search_budget_chars``) and the least
#: a caller may ask for (room for one trimmed message).
DEFAULT_BUDGET_CHARS = 3600
MIN_BUDGET_CHARS = 800
PREVIEW_CHARS = 120
MAX_LIMIT = 10
MAX_WINDOW = 50
_SUMMARY = (
    "SELECT s.id, s.title, s.started_at, s.ended_at, s.source, s.chat_type, s.parent_id, "
    "(SELECT COUNT(*) FROM messages m WHERE m.tenant_id = s.tenant_id AND m.session_id = s.id "
    "AND m.role IN ('user', 'assistant') AND m.content <> '') AS message_count, "
    "(SELECT m.content FROM messages m WHERE m.tenant_id = s.tenant_id AND m.session_id = s.id "
    "AND m.role = 'user' AND m.content <> '' ORDER BY m.id LIMIT 1) AS preview "
    "FROM sessions s WHERE s.tenant_id = ? AND s.incognito = 0"
)


@dataclass(frozen=True, slots=True)
class MessageView:
    """One message as recall shows it: sanitized and truncated to ``MAX_CONTENT_CHARS``."""

    id: int
    role: str
    name: str | None
    content: str
    timestamp: str | None

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)


@dataclass(frozen=True, slots=True)
class SessionSummary:
    session_id: str
    title: str | None
    started_at: str | None
    ended_at: str | None
    source: str
    chat_type: str
    parent_id: str | None
    message_count: int
    preview: str

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)


@dataclass(frozen=True, slots=True)
class SessionView:
    """A window of one session; scroll with the first or last message id shown."""

    session: SessionSummary
    messages: tuple[MessageView, ...]
    has_earlier: bool
    has_later: bool

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)


class SessionSearch:
    """Tenant-scoped recall over state.db (search, read/scroll, recent)."""

    def __init__(self, db: Database, *, budget_chars: int = DEFAULT_BUDGET_CHARS) -> None:
        self.db = db
        self.budget_chars = budget_chars

    def search(
        self,
        tenant: TenantId,
        query: str,
        *,
        scope_key: str,
        chat_type: str,
        current_session_id: str | None = None,
        limit: int | None = None,
        now: float | None = None,
        budget_chars: int | None = None,
    ) -> SearchResult:
        """The best windows of matching messages, from at most ``limit`` (1–10, default 10)
        session lineages, within ``budget_chars`` (default: this search's budget).

        ``now`` (default: the clock) anchors time expressions such as "last week".
        """
        parsed = parse_query(query, time.time() if now is None else now)
        when = parsed.span.label() if parsed.span else None
        if parsed.empty and parsed.span is None:
            return SearchResult(query, (), when)
        lineages = _clamp(limit if limit is not None else MAX_LIMIT, 1, MAX_LIMIT)
        budget = max(MIN_BUDGET_CHARS, budget_chars or self.budget_chars)

        def run(conn: sqlite3.Connection) -> SearchResult:
            scope = scope_sql(chat_type, scope_key)
            hits = find_hits(conn, tenant, parsed, scope)
            return pack(conn, tenant, parsed, hits, current_session_id, lineages, budget, when)

        return self.db.read(run)

    def read(
        self,
        tenant: TenantId,
        session_id: str,
        *,
        around_message_id: int | None = None,
        window: int = 10,
        scope_key: str | None = None,
        chat_type: str | None = None,
    ) -> SessionView:
        """``window`` (1–50) visible messages of one session, from the start or centred on
        ``around_message_id``. With ``chat_type`` the session must also be in that scope.

        Raises NotFound for a session that is not this tenant's (or not in scope, or
        incognito) and for a message id that is not in the session.
        """
        window = _clamp(window, 1, MAX_WINDOW)

        def run(conn: sqlite3.Connection) -> SessionView:
            where, scope_args = (
                ("1", ()) if chat_type is None else scope_sql(chat_type, scope_key or "")
            )
            row = conn.execute(
                f"{_SUMMARY} AND s.id = ? AND {where}", (str(tenant), session_id, *scope_args)
            ).fetchone()
            if row is None:
                raise NotFound(f"no session {session_id!r} for {tenant}")
            pivot = 0
            if around_message_id is not None:
                found = conn.execute(
                    "SELECT 1 FROM messages WHERE tenant_id = ? AND session_id = ? AND id = ?",
                    (str(tenant), session_id, around_message_id),
                ).fetchone()
                if found is None:
                    raise NotFound(f"no message {around_message_id} in session {session_id!r}")
                pivot = around_message_id
            after = _visible(conn, tenant, session_id, ">=", pivot, window + 1)
            before = (
                [] if pivot == 0 else _visible(conn, tenant, session_id, "<", pivot, window + 1)
            )
            n_before = min(len(before), max((window - 1) // 2, window - len(after)))
            n_after = min(len(after), window - n_before)
            shown = [*reversed(before[:n_before]), *after[:n_after]]
            return SessionView(
                _summary(row), tuple(shown), len(before) > n_before, len(after) > n_after
            )

        return self.db.read(run)

    def recent(
        self,
        tenant: TenantId,
        *,
        scope_key: str,
        chat_type: str,
        limit: int = 10,
        exclude_lineage_of: str | None = None,
    ) -> list[SessionSummary]:
        """The newest sessions in scope (``limit`` clamped to 1–50), newest first."""
        limit = _clamp(limit, 1, MAX_WINDOW)

        def run(conn: sqlite3.Connection) -> list[SessionSummary]:
            where, scope_args = scope_sql(chat_type, scope_key)
            excluded: list[str] = []
            if exclude_lineage_of is not None:
                root = lineage_roots(conn, tenant, {exclude_lineage_of}).get(exclude_lineage_of)
                excluded = lineage(conn, tenant, root) if root else []
            rows = conn.execute(
                f"{_SUMMARY} AND {where} AND s.id NOT IN (SELECT value FROM json_each(?)) "
                "ORDER BY s.started_at DESC, s.rowid DESC LIMIT ?",
                (str(tenant), *scope_args, json.dumps(excluded), limit),
            ).fetchall()
            return [_summary(r) for r in rows]

        return self.db.read(run)


def _visible(
    conn: sqlite3.Connection, tenant: TenantId, session_id: str, op: str, pivot: int, limit: int
) -> list[MessageView]:
    """Up to ``limit`` visible messages on one side of ``pivot``, nearest first."""
    order = "DESC" if op == "<" else "ASC"
    rows = conn.execute(
        "SELECT id, role, name, content, timestamp FROM messages "
        f"WHERE tenant_id = ? AND session_id = ? AND {VISIBLE} AND id {op} ? "
        f"ORDER BY id {order} LIMIT ?",
        (str(tenant), session_id, pivot, limit),
    ).fetchall()
    return [_view(r) for r in rows]


def _view(row: sqlite3.Row) -> MessageView:
    name = sanitize_recalled(row["name"]) if row["name"] else None
    return MessageView(
        row["id"],
        row["role"],
        name,
        _clip(row["content"], MAX_CONTENT_CHARS),
        _iso(row["timestamp"]),
    )


def _summary(row: sqlite3.Row) -> SessionSummary:
    title = sanitize_recalled(row["title"]) if row["title"] else None
    return SessionSummary(
        session_id=row["id"],
        title=title,
        started_at=_iso(row["started_at"]),
        ended_at=_iso(row["ended_at"]),
        source=row["source"],
        chat_type=row["chat_type"],
        parent_id=row["parent_id"],
        message_count=row["message_count"],
        preview=_clip(row["preview"] or "", PREVIEW_CHARS),
    )


def _clip(text: str, size: int) -> str:
    text = sanitize_recalled(text)
    return text if len(text) <= size else text[:size].rstrip() + "…"


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def _plain(value: Any) -> Any:
    """Dataclasses → dicts and tuples → lists, recursively (JSON-ready)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value
