"""SessionSearch: find, read and list one tenant's past sessions for recall.

Every method takes the tenant first and binds it in every statement. Discovery ranks
messages with BM25 inside the tenant's own slice of the full-text index (see
:mod:`gateway.history.fts`), groups the hits by session lineage (a compressed session and
its continuations count once, under the lineage root), skips the caller's own lineage and
returns the best sessions with context. Scope follows SPEC §7: a direct-message search sees
only the tenant's DM sessions; a group search only the tenant's sessions of that group.
Incognito sessions are never indexed, listed or read back. All stored text that leaves this
module goes through :func:`gateway.security.fence.sanitize_recalled`.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, fields, is_dataclass
from datetime import UTC, datetime
from typing import Any

from gateway.errors import NotFound
from gateway.history.db import Database
from gateway.history.fts import MAX_RANKED, TABLE, rank, tenant_match
from gateway.history.query import ParsedQuery, parse_query
from gateway.security.fence import sanitize_recalled
from gateway.tenants import TenantId

MAX_CONTENT_CHARS = 500
SNIPPET_CHARS = 200
PREVIEW_CHARS = 120
MAX_LIMIT = 10
MAX_WINDOW = 50
_MAX_DEPTH = 64
_VISIBLE = "role IN ('user', 'assistant') AND content <> ''"
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
class SessionHit:
    """The best-matching session of one lineage, with the match in context."""

    session: SessionSummary
    lineage_root: str
    match_message_id: int
    matches: int
    snippet: str
    around: tuple[MessageView, ...]
    first: tuple[MessageView, ...]
    last: tuple[MessageView, ...]

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)


@dataclass(frozen=True, slots=True)
class SearchResult:
    query: str
    sessions: tuple[SessionHit, ...]

    def to_dict(self) -> dict[str, Any]:
        hits = [hit.to_dict() for hit in self.sessions]
        return {"query": self.query, "count": len(hits), "sessions": hits}


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

    def __init__(self, db: Database) -> None:
        self.db = db

    def search(
        self,
        tenant: TenantId,
        query: str,
        *,
        scope_key: str,
        chat_type: str,
        current_session_id: str | None = None,
        limit: int = 3,
    ) -> SearchResult:
        """Top sessions (``limit`` clamped to 1–10) whose messages match ``query``."""
        parsed = parse_query(query)
        if parsed.empty:
            return SearchResult(query, ())
        limit = _clamp(limit, 1, MAX_LIMIT)

        def run(conn: sqlite3.Connection) -> SearchResult:
            scope_sql, scope_args = _scope(chat_type, scope_key)
            t = str(tenant)
            rows = conn.execute(
                f"SELECT m.id, m.session_id FROM {TABLE} "
                f"CROSS JOIN messages m ON m.id = {TABLE}.rowid "
                "JOIN sessions s ON s.id = m.session_id "
                f"WHERE {TABLE} MATCH ? AND m.tenant_id = ? AND s.tenant_id = ? "
                f"AND s.incognito = 0 AND {scope_sql} ORDER BY {TABLE}.rowid DESC LIMIT ?",
                (tenant_match(tenant, parsed.expression), t, t, *scope_args, MAX_RANKED),
            ).fetchall()
            scores = rank(conn, tenant, [r["id"] for r in rows], parsed.terms)
            rows.sort(key=lambda r: (-scores[r["id"]], -r["id"]))
            sessions = {r["session_id"] for r in rows}
            roots = _roots(conn, tenant, sessions | {current_session_id or ""})
            skip = roots.get(current_session_id or "")
            groups: dict[str, list[sqlite3.Row]] = {}
            for row in rows:
                root = roots.get(row["session_id"], row["session_id"])
                if root != skip:
                    groups.setdefault(root, []).append(row)
            best = list(groups.items())[:limit]
            hits = (
                self._hit(conn, tenant, root, group[0], len(group), parsed) for root, group in best
            )
            return SearchResult(query, tuple(hit for hit in hits if hit is not None))

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
            scope_sql, scope_args = (
                ("1", ()) if chat_type is None else _scope(chat_type, scope_key or "")
            )
            row = conn.execute(
                f"{_SUMMARY} AND s.id = ? AND {scope_sql}", (str(tenant), session_id, *scope_args)
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
            scope_sql, scope_args = _scope(chat_type, scope_key)
            excluded: list[str] = []
            if exclude_lineage_of is not None:
                root = _roots(conn, tenant, {exclude_lineage_of}).get(exclude_lineage_of)
                excluded = _lineage(conn, tenant, root) if root else []
            rows = conn.execute(
                f"{_SUMMARY} AND {scope_sql} AND s.id NOT IN (SELECT value FROM json_each(?)) "
                "ORDER BY s.started_at DESC, s.rowid DESC LIMIT ?",
                (str(tenant), *scope_args, json.dumps(excluded), limit),
            ).fetchall()
            return [_summary(r) for r in rows]

        return self.db.read(run)

    def _hit(
        self,
        conn: sqlite3.Connection,
        tenant: TenantId,
        root: str,
        best: sqlite3.Row,
        matches: int,
        parsed: ParsedQuery,
    ) -> SessionHit | None:
        """None when the session or message was deleted after it was ranked."""
        session_id, message_id = best["session_id"], best["id"]
        summary = conn.execute(f"{_SUMMARY} AND s.id = ?", (str(tenant), session_id)).fetchone()
        hit = conn.execute(
            "SELECT id, role, name, content, timestamp FROM messages "
            "WHERE tenant_id = ? AND session_id = ? AND id = ?",
            (str(tenant), session_id, message_id),
        ).fetchone()
        if summary is None or hit is None:
            return None
        before = _visible(conn, tenant, session_id, "<", message_id, 2)
        after = _visible(conn, tenant, session_id, ">", message_id, 2)
        first = _visible(conn, tenant, session_id, ">", 0, 2)
        last = [
            m for m in reversed(_visible(conn, tenant, session_id, "<", 2**62, 2)) if m not in first
        ]
        return SessionHit(
            session=_summary(summary),
            lineage_root=root,
            match_message_id=message_id,
            matches=matches,
            snippet=parsed.snippet(sanitize_recalled(hit["content"]), SNIPPET_CHARS),
            around=(*reversed(before), _view(hit), *after),
            first=tuple(first),
            last=tuple(last),
        )


def _scope(chat_type: str, scope_key: str) -> tuple[str, tuple[str, ...]]:
    if chat_type == "dm":
        return "s.chat_type = 'dm'", ()
    return "s.chat_type <> 'dm' AND s.scope_key = ?", (scope_key,)


def _roots(conn: sqlite3.Connection, tenant: TenantId, ids: set[str]) -> dict[str, str]:
    """Lineage root of each of ``ids`` that is one of the tenant's sessions."""
    rows = conn.execute(
        "WITH RECURSIVE up(start, id, parent, depth) AS ("
        " SELECT id, id, parent_id, 0 FROM sessions"
        " WHERE tenant_id = ? AND id IN (SELECT value FROM json_each(?))"
        " UNION ALL SELECT up.start, s.id, s.parent_id, up.depth + 1 FROM up"
        " JOIN sessions s ON s.id = up.parent AND s.tenant_id = ? WHERE up.depth < ?)"
        " SELECT start, id FROM up ORDER BY start, depth",
        (str(tenant), json.dumps(sorted(ids)), str(tenant), _MAX_DEPTH),
    ).fetchall()
    return {start: root for start, root in rows}  # the deepest ancestor comes last


def _lineage(conn: sqlite3.Connection, tenant: TenantId, root: str) -> list[str]:
    rows = conn.execute(
        "WITH RECURSIVE down(id, depth) AS ("
        " SELECT id, 0 FROM sessions WHERE tenant_id = ? AND id = ?"
        " UNION ALL SELECT s.id, down.depth + 1 FROM down"
        " JOIN sessions s ON s.parent_id = down.id AND s.tenant_id = ? WHERE down.depth < ?)"
        " SELECT id FROM down",
        (str(tenant), root, str(tenant), _MAX_DEPTH),
    ).fetchall()
    return [r[0] for r in rows]


def _visible(
    conn: sqlite3.Connection, tenant: TenantId, session_id: str, op: str, pivot: int, limit: int
) -> list[MessageView]:
    """Up to ``limit`` visible messages on one side of ``pivot``, nearest first."""
    order = "DESC" if op == "<" else "ASC"
    rows = conn.execute(
        "SELECT id, role, name, content, timestamp FROM messages "
        f"WHERE tenant_id = ? AND session_id = ? AND {_VISIBLE} AND id {op} ? "
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
