"""Message-level retrieval: rank one tenant's matching messages, then pack the best windows.

:func:`find_hits` asks the full-text index for the strict expression (every term), and for
the broad one (any term) when that finds nothing (keywords) or fewer than
``MIN_STRICT_HITS`` (a question); BM25 over the
tenant's own rows is multiplied by the share of distinct query terms a message contains
(squared, so covering more terms beats repeating one) and boosted when the message falls in
the dates a time expression named. A question that is only a date ("what did we talk about
yesterday?") lists that period's messages instead.

:func:`pack` walks the hits best first: a hit brings its exchange (a user message with the
reply after it, an assistant message with the message before it), windows of the same
session merge, no message appears twice, a text shown once is not shown again, and at
most ``lineages`` session lineages (a compressed session and its continuations count once;
the caller's own lineage never) share the character budget (see :mod:`recall`).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from gateway.history.fts import MAX_RANKED, TABLE, rank, tenant_match
from gateway.history.query import ParsedQuery
from gateway.history.recall import (
    CONTEXT_CHARS,
    HIT_CHARS,
    FoundSession,
    Packer,
    SearchResult,
    Shown,
    trim,
)
from gateway.security.fence import sanitize_recalled
from gateway.tenants import TenantId

VISIBLE = "role IN ('user', 'assistant') AND content <> ''"
MIN_STRICT_HITS = 8
COVERAGE_POWER = 2.0
SPAN_BOOST = 3.0
#: Messages of a named period that match no term score this share of the best match; only
#: for periods of at most ``MAX_SPAN_DAYS`` (a month is still worth browsing, a year is not).
SPAN_SHARE = 0.3
MAX_SPAN_DAYS = 31
MAX_HITS = 60
#: Windows considered for one answer (the budget usually ends the walk much earlier).
MAX_WINDOWS = 40
#: A window that does not fit is skipped; after this many misses in a row, stop trying.
MAX_MISSES = 6
MAX_DEPTH = 64
Scope = tuple[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Hit:
    id: int
    session_id: str
    role: str
    score: float


def scope_sql(chat_type: str, scope_key: str) -> Scope:
    """SQL on ``sessions s`` for SPEC §7: DMs see DM sessions, a group only its own."""
    if chat_type == "dm":
        return "s.chat_type = 'dm'", ()
    return "s.chat_type <> 'dm' AND s.scope_key = ?", (scope_key,)


def find_hits(
    conn: sqlite3.Connection, tenant: TenantId, parsed: ParsedQuery, scope: Scope
) -> list[Hit]:
    """The tenant's matching messages in ``scope``, best first (at most ``MAX_HITS``)."""
    rows: dict[int, sqlite3.Row] = {}
    # Keywords are taken at their word unless nothing has them all; a question is broadened
    # whenever every term together finds little, since people word things differently.
    enough = MIN_STRICT_HITS if parsed.natural else 1
    for expression in (parsed.expression, parsed.fallback):
        if not expression or len(rows) >= enough:
            continue
        for row in _matching(conn, tenant, expression, scope):
            rows.setdefault(row["id"], row)
    span = parsed.span
    browse = span is not None and (not rows or span.days <= MAX_SPAN_DAYS)
    dated = _in_span(conn, tenant, parsed, scope) if browse else []
    if not rows:
        return dated
    ranking = rank(conn, tenant, list(rows), parsed.terms)
    n_terms = max(1, len(parsed.terms))
    hits = []
    for rowid, row in rows.items():
        share = (1 + ranking.coverage[rowid]) / (1 + n_terms)
        score = ranking.scores[rowid] * share**COVERAGE_POWER
        if parsed.span is not None and parsed.span.contains(row["timestamp"]):
            score *= SPAN_BOOST
        hits.append(Hit(rowid, row["session_id"], row["role"], score))
    if dated:
        # The period's own messages come after the good matches: the words of a question
        # about "yesterday" need not be the words used yesterday.
        floor = max(h.score for h in hits) * SPAN_SHARE
        hits += [
            Hit(h.id, h.session_id, h.role, floor * h.score) for h in dated if h.id not in rows
        ]
    hits.sort(key=lambda h: (-h.score, -h.id))
    return hits[:MAX_HITS]


def _matching(
    conn: sqlite3.Connection, tenant: TenantId, expression: str, scope: Scope
) -> list[sqlite3.Row]:
    t = str(tenant)
    return conn.execute(
        f"SELECT m.id, m.session_id, m.role, m.timestamp FROM {TABLE} "
        f"CROSS JOIN messages m ON m.id = {TABLE}.rowid "
        "JOIN sessions s ON s.id = m.session_id "
        f"WHERE {TABLE} MATCH ? AND m.tenant_id = ? AND s.tenant_id = ? "
        f"AND s.incognito = 0 AND {scope[0]} ORDER BY {TABLE}.rowid DESC LIMIT ?",
        (tenant_match(tenant, expression), t, t, *scope[1], MAX_RANKED),
    ).fetchall()


def _in_span(
    conn: sqlite3.Connection, tenant: TenantId, parsed: ParsedQuery, scope: Scope
) -> list[Hit]:
    """The period's messages in order, earliest ranked highest (a date-only question)."""
    assert parsed.span is not None
    t = str(tenant)
    rows = conn.execute(
        "SELECT m.id, m.session_id, m.role FROM messages m "
        "JOIN sessions s ON s.id = m.session_id AND s.tenant_id = m.tenant_id "
        f"WHERE m.tenant_id = ? AND s.tenant_id = ? AND s.incognito = 0 AND {scope[0]} "
        "AND m.role IN ('user', 'assistant') AND m.content <> '' "
        "AND m.timestamp >= ? AND m.timestamp < ? "
        "ORDER BY m.timestamp, m.id LIMIT ?",
        (t, t, *scope[1], parsed.span.start, parsed.span.end, MAX_HITS),
    ).fetchall()
    return [Hit(r["id"], r["session_id"], r["role"], 1.0 / (1 + i)) for i, r in enumerate(rows)]


def pack(
    conn: sqlite3.Connection,
    tenant: TenantId,
    parsed: ParsedQuery,
    hits: list[Hit],
    current_session_id: str | None,
    lineages: int,
    budget: int,
    when: str | None,
) -> SearchResult:
    """Spend ``budget`` characters on the windows of the best ``hits`` (see module doc).

    Two reads whatever the number of windows: the layout of the hits' sessions (which
    visible message follows which), then the text of every message a window may show.
    """
    packer = Packer(parsed.text, when, budget)
    roots = lineage_roots(conn, tenant, {h.session_id for h in hits} | {current_session_id or ""})
    skip = roots.get(current_session_id or "")
    hits = [h for h in hits if roots.get(h.session_id, h.session_id) != skip]
    total = len(hits)
    rows = _messages(conn, tenant, {h.id for h in hits})
    hits = _distinct(hits, rows)[:MAX_WINDOWS]
    if not hits:
        return packer.result(0)
    layout = _layout(conn, tenant, {h.session_id for h in hits})
    windows = {h.id: _window_ids(layout, h) for h in hits}
    rows |= _messages(conn, tenant, {i for ids in windows.values() for i in ids} - rows.keys())
    chosen: list[str] = []
    misses = 0
    for hit in hits:
        root = roots.get(hit.session_id, hit.session_id)
        found = layout.sessions.get(hit.session_id)
        ids = [i for i in windows[hit.id] if i in rows]
        if misses >= MAX_MISSES:
            break
        if found is None or hit.id not in ids or packer.shown(hit.id):
            continue  # deleted after it was ranked, or already shown
        if root not in chosen and len(chosen) >= lineages:
            continue
        window = [_shown(rows[i], i == hit.id, parsed) for i in ids]
        core = [m for m in window if m.hit]
        if packer.add(found, window) or packer.add(found, core):
            misses = 0
            if root not in chosen:
                chosen.append(root)
        else:
            misses += 1
    for session in packer.sessions.values():
        _mark_skipped(layout, session)
    shown = sum(1 for h in hits if packer.shown(h.id))
    return packer.result(total - shown)


def _distinct(hits: list[Hit], rows: dict[int, sqlite3.Row]) -> list[Hit]:
    """The hits without those whose text a better hit already has ("ok, thanks", a pasted
    template): showing it again costs characters and tells nothing new."""
    seen: set[str] = set()
    out = []
    for hit in hits:
        row = rows.get(hit.id)
        if row is None:
            continue  # deleted after it was ranked
        text = " ".join(row["content"].lower().split())
        if text not in seen:
            seen.add(text)
            out.append(hit)
    return out


@dataclass
class _Layout:
    """The visible message ids of some sessions, in order, and each message's position."""

    sessions: dict[str, FoundSession]
    order: dict[str, list[int]]
    position: dict[int, int]


def _layout(conn: sqlite3.Connection, tenant: TenantId, session_ids: set[str]) -> _Layout:
    rows = conn.execute(
        "SELECT m.id, m.session_id, s.title, s.started_at FROM messages m "
        "JOIN sessions s ON s.id = m.session_id AND s.tenant_id = m.tenant_id "
        "WHERE m.tenant_id = ? AND m.session_id IN (SELECT value FROM json_each(?)) "
        "AND m.role IN ('user', 'assistant') AND m.content <> '' ORDER BY m.session_id, m.id",
        (str(tenant), json.dumps(sorted(session_ids))),
    ).fetchall()
    layout = _Layout({}, {}, {})
    for row in rows:
        session_id = row["session_id"]
        if session_id not in layout.sessions:
            title = sanitize_recalled(row["title"]) if row["title"] else None
            layout.sessions[session_id] = FoundSession(session_id, title, row["started_at"])
            layout.order[session_id] = []
        layout.position[row["id"]] = len(layout.order[session_id])
        layout.order[session_id].append(row["id"])
    return layout


def _window_ids(layout: _Layout, hit: Hit) -> list[int]:
    """The hit and the other half of its exchange: the reply after a user message, the
    message before an assistant's."""
    at = layout.position.get(hit.id)
    if at is None:
        return []
    order = layout.order[hit.session_id]
    other = at + 1 if hit.role == "user" else at - 1
    return [order[i] for i in sorted({at, other}) if 0 <= i < len(order)]


def _messages(conn: sqlite3.Connection, tenant: TenantId, ids: set[int]) -> dict[int, sqlite3.Row]:
    rows = conn.execute(
        "SELECT id, role, name, content, timestamp FROM messages WHERE tenant_id = ? "
        "AND id IN (SELECT value FROM json_each(?))",
        (str(tenant), json.dumps(sorted(ids))),
    ).fetchall()
    return {r["id"]: r for r in rows}


def _shown(row: sqlite3.Row, hit: bool, parsed: ParsedQuery) -> Shown:
    size = HIT_CHARS if hit else CONTEXT_CHARS
    # the needle regex is built only for a message long enough to be trimmed
    pattern = parsed.needle_pattern() if len(row["content"]) > size else None
    text = trim(row["content"], pattern, size)
    name = sanitize_recalled(row["name"]) if row["name"] else None
    return Shown(row["id"], row["role"], name, row["timestamp"], text, hit)


def _mark_skipped(layout: _Layout, session: FoundSession) -> None:
    """Count, for each shown message, the session's messages since the previous one shown."""
    previous = -1
    for message in session.ordered():
        at = layout.position[message.id]
        message.skipped = at - previous - 1
        previous = at


def lineage_roots(conn: sqlite3.Connection, tenant: TenantId, ids: set[str]) -> dict[str, str]:
    """Lineage root of each of ``ids`` that is one of the tenant's sessions."""
    rows = conn.execute(
        "WITH RECURSIVE up(start, id, parent, depth) AS ("
        " SELECT id, id, parent_id, 0 FROM sessions"
        " WHERE tenant_id = ? AND id IN (SELECT value FROM json_each(?))"
        " UNION ALL SELECT up.start, s.id, s.parent_id, up.depth + 1 FROM up"
        " JOIN sessions s ON s.id = up.parent AND s.tenant_id = ? WHERE up.depth < ?)"
        " SELECT start, id FROM up ORDER BY start, depth",
        (str(tenant), json.dumps(sorted(ids)), str(tenant), MAX_DEPTH),
    ).fetchall()
    return {start: root for start, root in rows}  # the deepest ancestor comes last


def lineage(conn: sqlite3.Connection, tenant: TenantId, root: str) -> list[str]:
    """Every session of the lineage that starts at ``root``."""
    rows = conn.execute(
        "WITH RECURSIVE down(id, depth) AS ("
        " SELECT id, 0 FROM sessions WHERE tenant_id = ? AND id = ?"
        " UNION ALL SELECT s.id, down.depth + 1 FROM down"
        " JOIN sessions s ON s.parent_id = down.id AND s.tenant_id = ? WHERE down.depth < ?)"
        " SELECT id FROM down",
        (str(tenant), root, str(tenant), MAX_DEPTH),
    ).fetchall()
    return [r[0] for r in rows]
