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

import bisect
import json
import re
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
    """Spend ``budget`` characters on the windows of the best ``hits`` (see module doc)."""
    packer = Packer(parsed.text, when, budget)
    if not hits:
        return packer.result(0)
    roots = lineage_roots(conn, tenant, {h.session_id for h in hits} | {current_session_id or ""})
    skip = roots.get(current_session_id or "")
    chosen: list[str] = []
    sessions: dict[str, FoundSession | None] = {}
    pattern = parsed.needle_pattern()
    misses = 0
    repeats = _repeats(conn, tenant, hits)
    for hit in hits:
        root = roots.get(hit.session_id, hit.session_id)
        if misses >= MAX_MISSES:
            break
        if root == skip or packer.shown(hit.id):
            continue
        if root not in chosen and len(chosen) >= lineages:
            continue
        if hit.id in repeats:
            continue
        if hit.session_id not in sessions:
            sessions[hit.session_id] = _found_session(conn, tenant, hit.session_id)
        session = sessions[hit.session_id]
        window = _window(conn, tenant, hit, pattern)
        if session is None or not window:
            continue  # deleted after it was ranked
        core = [m for m in window if m.id == hit.id]
        if packer.add(session, window) or packer.add(session, core):
            misses = 0
            if root not in chosen:
                chosen.append(root)
        else:
            misses += 1
    for session in packer.sessions.values():
        _mark_skipped(conn, tenant, session)
    shown = sum(1 for h in hits if packer.shown(h.id))
    return packer.result(len(hits) - shown)


def _repeats(conn: sqlite3.Connection, tenant: TenantId, hits: list[Hit]) -> set[int]:
    """Hits whose text a better hit already has ("ok, thanks", a pasted template...):
    showing it again costs characters and tells nothing new."""
    rows = conn.execute(
        "SELECT id, content FROM messages WHERE tenant_id = ? "
        "AND id IN (SELECT value FROM json_each(?))",
        (str(tenant), json.dumps([h.id for h in hits])),
    ).fetchall()
    texts = {r["id"]: " ".join(r["content"].lower().split()) for r in rows}
    seen: set[str] = set()
    repeated = set()
    for hit in hits:
        text = texts.get(hit.id, "")
        if text in seen:
            repeated.add(hit.id)
        seen.add(text)
    return repeated


def _window(
    conn: sqlite3.Connection, tenant: TenantId, hit: Hit, pattern: re.Pattern[str] | None
) -> list[Shown]:
    """The hit and the other half of its exchange, as they will be shown."""
    op, order = (">", "ASC") if hit.role == "user" else ("<", "DESC")
    rows = conn.execute(
        "SELECT id, role, name, content, timestamp FROM messages "
        f"WHERE tenant_id = ? AND session_id = ? AND {VISIBLE} AND id = ? "
        f"UNION ALL SELECT * FROM (SELECT id, role, name, content, timestamp FROM messages "
        f"WHERE tenant_id = ? AND session_id = ? AND {VISIBLE} AND id {op} ? "
        f"ORDER BY id {order} LIMIT 1)",
        (str(tenant), hit.session_id, hit.id, str(tenant), hit.session_id, hit.id),
    ).fetchall()
    if not rows or rows[0]["id"] != hit.id:
        return []
    shown = []
    for row in rows:
        is_hit = row["id"] == hit.id
        text = trim(row["content"], pattern, HIT_CHARS if is_hit else CONTEXT_CHARS)
        name = sanitize_recalled(row["name"]) if row["name"] else None
        shown.append(Shown(row["id"], row["role"], name, row["timestamp"], text, is_hit))
    return sorted(shown, key=lambda m: m.id)


def _found_session(
    conn: sqlite3.Connection, tenant: TenantId, session_id: str
) -> FoundSession | None:
    row = conn.execute(
        "SELECT id, title, started_at FROM sessions WHERE tenant_id = ? AND id = ?",
        (str(tenant), session_id),
    ).fetchone()
    if row is None:
        return None
    title = sanitize_recalled(row["title"]) if row["title"] else None
    return FoundSession(row["id"], title, row["started_at"])


def _mark_skipped(conn: sqlite3.Connection, tenant: TenantId, session: FoundSession) -> None:
    """Count, for each shown message, the session's messages since the previous one shown."""
    ordered = session.ordered()
    rows = conn.execute(
        f"SELECT id FROM messages WHERE tenant_id = ? AND session_id = ? AND {VISIBLE} "
        "AND id < ? ORDER BY id",
        (str(tenant), session.id, ordered[-1].id),
    ).fetchall()
    ids = [r[0] for r in rows]
    previous = 0
    for message in ordered:
        at = bisect.bisect_left(ids, message.id)
        message.skipped = at - bisect.bisect_right(ids, previous)
        previous = message.id


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
