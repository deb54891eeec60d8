"""The MemoryBank dialogues (../shared/data/memorybank) with our evidence labels, as cases.

Each person's history becomes one tenant; each dated day of it one session, a ``query`` the
user's message (sent under the person's name) and a ``response`` the assistant's. Questions
are asked "now" = the day after the last session. The labels live in
``tests/data/memorybank_evidence.jsonl``: per question the (date, turn, role) of each message
that holds the answer (see the file's first line for how they were made).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gateway.history.store import SessionStore
from gateway.tenants import TenantId

ROOT = Path(__file__).resolve().parents[2]
LABELS = ROOT / "tests" / "data" / "memorybank_evidence.jsonl"
MEMORYBANK = next(
    (
        parent / "shared" / "data" / "memorybank"
        for parent in ROOT.parents
        if (parent / "shared" / "data" / "memorybank").is_dir()
    ),
    ROOT.parent / "shared" / "data" / "memorybank",
)
FILES = {"en": "memory_bank_en.json", "zh": "memory_bank_cn.json"}
DAY = 86_400.0


def load_bank(lang: str) -> dict[str, Any]:
    with open(MEMORYBANK / FILES[lang], encoding="utf-8") as handle:
        return {person.strip(): data for person, data in json.load(handle).items()}


def load_labels(lang: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines()]
    return [r for r in rows if r.get("lang") == lang]


def _day(date: str) -> float:
    return datetime.fromisoformat(date).replace(tzinfo=UTC).timestamp()


def memorybank_cases(
    store: SessionStore,
    lang: str,
    import_history: Callable[[SessionStore, TenantId, str], list[list[int]]],
    session_lines: Callable[[list[tuple[str, float, list[dict[str, Any]]]]], str],
) -> Iterator[tuple[TenantId, str, set[int], float]]:
    """Import every person of ``lang`` and yield (tenant, question, evidence ids, now)."""
    bank = load_bank(lang)
    labels = load_labels(lang)
    for index, (person, data) in enumerate(bank.items()):
        tenant = TenantId.of("console", f"mb-{lang}-{index}")
        dates = sorted(data["history"])
        sessions = []
        for date in dates:
            start = _day(date) + 9 * 3600
            messages = []
            for turn, pair in enumerate(data["history"][date]):
                ts = start + turn * 120
                messages.append({"role": "user", "text": pair["query"], "ts": ts, "name": person})
                messages.append({"role": "assistant", "text": pair["response"], "ts": ts + 60})
            sessions.append((f"mb-{lang}-{index}-{date}", start, messages))
        ids = import_history(store, tenant, session_lines(sessions))
        now = _day(dates[-1]) + DAY + 12 * 3600
        for label in labels:
            if label["user"] != person:
                continue
            evidence = {
                ids[dates.index(date)][2 * turn + (role == "assistant")]
                for date, turn, role in label["evidence"]
            }
            if evidence:
                yield tenant, label["question"], evidence, now
