"""Benchmark of recall: does session_search put the evidence in front of the model, compactly?

    .venv/bin/python -m tests.benchmarks.bench_recall [--users 10] [--sessions 36]

For the synthetic histories of :mod:`tests.benchmarks.recall_data` (tune and held-out parts,
English and Chinese) and the labelled MemoryBank probing questions
(``tests/data/memorybank_evidence.jsonl``, when the data set is found), each history is
imported through :func:`gateway.history.transfer.import_jsonl` (what ``mnemogate sessions
import`` runs) and each question is asked through
:func:`gateway.history.search_tool.search_answer` (what ``sessions search --json`` prints),
with default settings. Printed per part and language: evidence reached (any / all of a
question's evidence messages appear in the answer) and characters per answer (the JSON
exactly as the model reads it), beside a plain FTS5 baseline measured in the same run: the
question's words OR-ed, FTS5 ``bm25()``, the top 3 sessions, ±5 messages around each
session's best hit. Goal: any ≥ 0.90, all ≥ 0.75, ≤ 4,000 characters per answer.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gateway.history.db import Database
from gateway.history.fts import CJK_RUN, TABLE, bigrams, tenant_match
from gateway.history.query import EN_STOP, ZH_STOP_RE
from gateway.history.search import SessionSearch
from gateway.history.search_tool import search_answer
from gateway.history.store import SessionStore
from gateway.history.transfer import format_timestamp, import_jsonl
from gateway.tenants import TenantId
from tests.benchmarks import recall_data
from tests.benchmarks.memorybank import MEMORYBANK, memorybank_cases


@dataclass
class Case:
    """One question to one imported history, with the ids of its evidence messages."""

    tenant: TenantId
    question: str
    evidence: set[int]
    now: float


@dataclass
class Score:
    questions: int = 0
    any: int = 0
    all: int = 0
    chars: int = 0

    def add(self, answer: str, evidence: set[int]) -> None:
        shown = _message_ids(json.loads(answer))
        self.questions += 1
        self.any += bool(shown & evidence)
        self.all += evidence <= shown
        self.chars += len(answer)

    def row(self) -> str:
        n = max(1, self.questions)
        return f"{self.any / n:.2f} / {self.all / n:.2f}   {self.chars / n:>6,.0f}"


def _message_ids(answer: dict[str, Any]) -> set[int]:
    return {m["id"] for s in answer.get("sessions", []) for m in s.get("messages", [])}


def session_lines(sessions: list[tuple[str, float, list[dict[str, Any]]]]) -> str:
    """Export-format JSONL for (id, started, messages) sessions."""
    lines = []
    for session_id, started, messages in sessions:
        last = max((m["ts"] for m in messages), default=started)
        lines.append(
            json.dumps(
                {
                    "id": session_id,
                    "title": None,
                    "started_at": format_timestamp(started),
                    "ended_at": format_timestamp(last),
                    "source": "console",
                    "parent_id": None,
                    "messages": [
                        {
                            "role": m["role"],
                            "content": m["text"],
                            "timestamp": format_timestamp(m["ts"]),
                            "name": m.get("name"),
                        }
                        for m in messages
                    ],
                },
                ensure_ascii=False,
            )
        )
    return "\n".join(lines) + "\n"


def import_history(store: SessionStore, tenant: TenantId, text: str) -> list[list[int]]:
    """Import like ``sessions import``; the stored message ids of each session, in order."""
    report = import_jsonl(store, tenant, text)
    ids = []
    for session_id in report.imported:

        def stored(conn: sqlite3.Connection, sid: str = session_id) -> list[int]:
            rows = conn.execute(
                "SELECT id FROM messages WHERE tenant_id = ? AND session_id = ? ORDER BY id",
                (str(tenant), sid),
            ).fetchall()
            return [r[0] for r in rows]

        ids.append(store.db.read(stored))
    return ids


def synthetic_cases(store: SessionStore, part: str, lang: str, users: int, n: int) -> list[Case]:
    cases = []
    for history in recall_data.generate(part, lang, users=users, sessions=n):
        tenant = TenantId.of("console", f"{part}-{history.user}")
        sessions = [
            (
                f"{part}-{history.user}-{i}",
                s.started,
                [{"role": m.role, "text": m.text, "ts": m.ts} for m in s.messages],
            )
            for i, s in enumerate(history.sessions)
        ]
        ids = import_history(store, tenant, session_lines(sessions))
        for q in history.questions:
            evidence = {ids[si][mi] for si, mi in q.located(history.sessions)}
            cases.append(Case(tenant, q.text, evidence, recall_data.NOW))
    return cases


def plain_terms(question: str) -> list[str]:
    """The question's words without stop-words (English words, Chinese bigrams), quoted."""
    terms = []
    for word in re.findall(r"[^\W_]+", question.lower()):
        if CJK_RUN.fullmatch(word) is None:
            if word not in EN_STOP:
                terms.append(f'"{word}"')
            continue
        for run in CJK_RUN.findall(word):
            for segment in ZH_STOP_RE.split(run):
                terms += [f'"{pair}"' for pair in bigrams(segment)] or (
                    [f'"{segment}"'] if segment else []
                )
    return list(dict.fromkeys(terms))


def baseline(conn: sqlite3.Connection, case: Case) -> str:
    """Plain FTS5: words OR-ed, bm25(), top 3 sessions, ±5 messages around the best hit."""
    expression = " OR ".join(plain_terms(case.question))
    sessions: dict[str, int] = {}
    if expression:
        rows = conn.execute(
            f"SELECT m.id, m.session_id FROM {TABLE} JOIN messages m ON m.id = {TABLE}.rowid "
            f"WHERE {TABLE} MATCH ? ORDER BY bm25({TABLE}) LIMIT 200",
            (tenant_match(case.tenant, expression),),
        ).fetchall()
        for message_id, session_id in rows:
            if session_id not in sessions and len(sessions) < 3:
                sessions[session_id] = message_id
    out = []
    for session_id, best in sessions.items():
        ids = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM messages WHERE session_id = ? ORDER BY id", (session_id,)
            )
        ]
        at = ids.index(best)
        window = ids[max(0, at - 5) : at + 6]
        messages = conn.execute(
            "SELECT id, role, name, content, timestamp FROM messages "
            "WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
            (json.dumps(window),),
        ).fetchall()
        out.append(
            {
                "session_id": session_id,
                "messages": [
                    {
                        "id": m[0],
                        "role": m[1],
                        "name": m[2],
                        "content": m[3],
                        "timestamp": datetime.fromtimestamp(m[4], UTC).isoformat(),
                    }
                    for m in messages
                ],
            }
        )
    return json.dumps({"query": case.question, "sessions": out}, ensure_ascii=False)


def evaluate(
    search: SessionSearch, conn: sqlite3.Connection, cases: list[Case]
) -> tuple[Score, Score]:
    ours, plain = Score(), Score()
    for case in cases:
        answer = search_answer(
            search,
            case.tenant,
            case.question,
            scope_key=case.tenant.namespace,
            chat_type="dm",
            now=case.now,
        )
        ours.add(json.dumps(answer, ensure_ascii=False), case.evidence)
        plain.add(baseline(conn, case), case.evidence)
    return ours, plain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10, help="synthetic users per part/language")
    parser.add_argument("--sessions", type=int, default=36, help="sessions per synthetic user")
    parser.add_argument("--parts", default="tune,heldout,memorybank")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "state.db")
        store = SessionStore(db)
        search = SessionSearch(db)
        conn = sqlite3.connect(Path(tmp) / "state.db")
        print(
            f"{'part':<11} {'lang':<4} {'n':>4}   mnemogate any/all  chars   "
            f"plain FTS5 any/all  chars"
        )
        for part in args.parts.split(","):
            for lang in ("en", "zh"):
                if part == "memorybank":
                    if not MEMORYBANK.is_dir():
                        print(f"{part:<11} {lang:<4} data set not found at {MEMORYBANK}")
                        continue
                    cases = [
                        Case(tenant, q, ev, now)
                        for tenant, q, ev, now in memorybank_cases(
                            store, lang, import_history, session_lines
                        )
                    ]
                else:
                    cases = synthetic_cases(store, part, lang, args.users, args.sessions)
                ours, plain = evaluate(search, conn, cases)
                print(
                    f"{part:<11} {lang:<4} {ours.questions:>4}   {ours.row()}   {plain.row()}",
                    flush=True,
                )
        conn.close()
        db.close()


if __name__ == "__main__":
    main()
