"""Full-text index of session messages: what goes into the FTS5 table and how it is scoped.

The index is the FTS5 table ``messages_fts`` (created by migration 2) with three columns:

``tenant_tok``
    one token naming the tenant (:func:`tenant_token`), never part of the score. Every
    search is ``tenant_tok : "<token>" AND {body sender} : (<query>)``, so FTS5 walks the
    tenant's own posting list and the cost of a query does not grow with other tenants'
    data. Ranking (:func:`rank`) is BM25 over the tenant's own rows for the same reason.
``body`` / ``sender``
    the message text and the sender's display name, *pre-tokenised*: each run of
    Chinese/Japanese/Korean characters is rewritten as its single characters followed by its
    overlapping character pairs (``部署脚本`` → ``部 署 脚 本 部署 署脚 脚本``). The
    ``porter unicode61`` tokenizer then sees CJK words of one character (unigrams) and of two
    or more characters (a phrase of adjacent bigrams), while English words are stemmed.

The table's rowid is ``messages.id``. A trigger removes index rows when messages are
deleted; :func:`unindex_session` and :func:`unindex_tenant` do it explicitly for erasure.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from gateway.tenants import TenantId

TABLE = "messages_fts"
TOKENIZER = "porter unicode61 remove_diacritics 2"
#: BM25 parameters; the sender column counts half as much as the text.
K1, B, SENDER_WEIGHT = 1.2, 0.75, 0.5
#: How many of the newest matching rows are ranked (bounds the cost for huge histories).
MAX_RANKED = 2000
#: Messages of other roles (tool results, system notes) and empty assistant turns that only
#: carry tool calls are not indexed: they are noise for recall.
INDEXED_ROLES = frozenset({"user", "assistant"})
#: Only this much of one message is indexed; longer pastes rarely need their tail found.
MAX_INDEXED_CHARS = 65_536

_CJK_RANGES = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\ua960-\ua97f"  # Hangul Jamo extended A
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # half-width Katakana
    "\U00020000-\U0003134f"  # CJK extensions B–G
)
CJK_RUN = re.compile(f"[{_CJK_RANGES}]+")
_CJK_CHAR = re.compile(f"[{_CJK_RANGES}]")
_TOKEN = re.compile(r"[^\W_]+")
_BODY_MARK, _SENDER_MARK = "\x02", "\x03"


class Ranking(NamedTuple):
    """BM25 score of each ranked row and how many distinct query terms it contains."""

    scores: dict[int, float]
    coverage: dict[int, int]


class IndexRow(NamedTuple):
    """One stored message as the indexer needs it."""

    message_id: int
    role: str
    content: str
    name: str | None


def is_cjk(char: str) -> bool:
    return _CJK_CHAR.match(char) is not None


def bigrams(run: str) -> list[str]:
    """Overlapping character pairs of a CJK run (empty for a single character)."""
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _expand_run(match: re.Match[str]) -> str:
    run = match.group(0)
    return " " + " ".join([*run, *bigrams(run)]) + " "


def pretokenize(text: str) -> str:
    """Rewrite CJK runs as unigrams then bigrams; everything else is left to unicode61."""
    return CJK_RUN.sub(_expand_run, text)


def cjk_phrase(run: str) -> str:
    """The FTS5 phrase that finds the CJK word ``run`` in pre-tokenised text.

    One character is its unigram; two or more are their adjacent bigrams, which sit next to
    each other in :func:`pretokenize` output exactly when the word occurs.
    """
    if len(run) == 1:
        return f'"{run}"'
    return '"' + " ".join(bigrams(run)) + '"'


def tenant_token(tenant: TenantId) -> str:
    """An alphanumeric token that names ``tenant`` and no other.

    Hex of the UTF-8 id is injective; the ``t`` prefix and ``z`` suffix keep the porter
    stemmer from trimming it (no English suffix ends in ``z`` or a digit run it rewrites).
    """
    return "t" + str(tenant).encode("utf-8").hex() + "z"


def tenant_match(tenant: TenantId, expression: str) -> str:
    """The full MATCH string: the tenant's token AND ``expression`` over the text columns.

    ``expression`` must come from :func:`gateway.history.query.parse_query`, which never
    emits a column filter; this is the only place a MATCH string is assembled.
    """
    if not expression:
        raise ValueError("an empty expression matches nothing; do not run it")
    return f'tenant_tok : "{tenant_token(tenant)}" AND {{body sender}} : ({expression})'


def rank(
    conn: sqlite3.Connection, tenant: TenantId, rowids: Sequence[int], terms: Sequence[str]
) -> Ranking:
    """BM25 score and term coverage of each of ``rowids`` (index rows of ``tenant``).

    FTS5's own ``bm25()`` counts every row of the table containing each term, whoever it
    belongs to, so its cost grows with all tenants' data (and other tenants' vocabulary
    would leak into this tenant's ranking). Here the statistics are the tenant's own:
    document frequencies come from tenant-scoped MATCH counts, term frequencies from
    ``highlight()`` on the candidate rows only, N from the tenant's message count.
    """
    if not rowids or not terms:
        return Ranking(dict.fromkeys(rowids, 0.0), dict.fromkeys(rowids, 0))
    wanted = json.dumps(list(rowids))
    n_docs = conn.execute(
        "SELECT count(*) FROM messages WHERE tenant_id = ?", (str(tenant),)
    ).fetchone()[0]
    lengths: dict[int, int] = {}
    freqs: list[tuple[float, dict[int, float]]] = []
    for term in terms:
        rows = conn.execute(
            f"SELECT rowid, CASE WHEN rowid IN (SELECT value FROM json_each(?)) THEN "
            f"highlight({TABLE}, 1, ?, '') || ' ' || highlight({TABLE}, 2, ?, '') END "
            f"FROM {TABLE} WHERE {TABLE} MATCH ?",
            (wanted, _BODY_MARK, _SENDER_MARK, tenant_match(tenant, term)),
        ).fetchall()
        df = len(rows)
        idf = math.log(1 + (max(n_docs, df) - df + 0.5) / (df + 0.5))
        tf: dict[int, float] = {}
        for rowid, marked in rows:
            if marked is None:
                continue
            tf[rowid] = marked.count(_BODY_MARK) + SENDER_WEIGHT * marked.count(_SENDER_MARK)
            if rowid not in lengths:
                lengths[rowid] = len(_TOKEN.findall(marked))
        freqs.append((idf, tf))
    avg = sum(lengths.values()) / len(lengths) if lengths else 1.0
    scores: dict[int, float] = dict.fromkeys(rowids, 0.0)
    coverage: dict[int, int] = dict.fromkeys(rowids, 0)
    for idf, tf in freqs:
        for rowid, f in tf.items():
            norm = K1 * (1 - B + B * lengths[rowid] / avg)
            scores[rowid] += idf * f * (K1 + 1) / (f + norm)
            coverage[rowid] += f > 0
    return Ranking(scores, coverage)


def should_index(role: str, content: str) -> bool:
    return role in INDEXED_ROLES and bool(content.strip())


def index_messages(conn: sqlite3.Connection, tenant: TenantId, rows: Iterable[IndexRow]) -> int:
    """Add index rows for ``rows`` (already inserted into ``messages``); returns how many.

    Call inside the transaction that inserted the messages. The caller decides whether the
    session is indexed at all (incognito sessions are not).
    """
    token = tenant_token(tenant)
    values = [
        (
            row.message_id,
            token,
            pretokenize(row.content[:MAX_INDEXED_CHARS]),
            pretokenize(row.name or ""),
        )
        for row in rows
        if should_index(row.role, row.content)
    ]
    conn.executemany(
        f"INSERT INTO {TABLE} (rowid, tenant_tok, body, sender) VALUES (?, ?, ?, ?)", values
    )
    return len(values)


def backfill(conn: sqlite3.Connection) -> int:
    """Index every stored message of every non-incognito session (used by migration 2)."""
    cursor = conn.execute(
        "SELECT m.id, m.tenant_id, m.role, m.content, m.name FROM messages m "
        "JOIN sessions s ON s.id = m.session_id AND s.tenant_id = m.tenant_id "
        "WHERE s.incognito = 0"
    )
    total = 0
    for msg_id, tenant_id, role, content, name in cursor:
        row = IndexRow(msg_id, role, content, name)
        total += index_messages(conn, TenantId.parse(tenant_id), [row])
    return total


def unindex_session(conn: sqlite3.Connection, tenant: TenantId, session_id: str) -> int:
    """Remove the index rows of one of ``tenant``'s sessions; call before deleting it."""
    cur = conn.execute(
        f"DELETE FROM {TABLE} WHERE rowid IN (SELECT id FROM messages "
        "WHERE tenant_id = ? AND session_id = ?)",
        (str(tenant), session_id),
    )
    return cur.rowcount


def unindex_tenant(conn: sqlite3.Connection, tenant: TenantId) -> int:
    """Remove every index row of ``tenant``, found by its token (orphans included)."""
    cur = conn.execute(
        f"DELETE FROM {TABLE} WHERE rowid IN (SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH ?)",
        (f'tenant_tok : "{tenant_token(tenant)}"',),
    )
    return cur.rowcount


def optimize(conn: sqlite3.Connection) -> None:
    """Merge the index b-trees into one (after erasure or bulk pruning)."""
    conn.execute(f"INSERT INTO {TABLE} ({TABLE}) VALUES ('optimize')")
