"""Message-level recall over a real state.db: planted facts, answer shape, budget, hostile input."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.history.db import Database
from gateway.history.search import MIN_BUDGET_CHARS, SessionSearch
from gateway.history.search_tool import search_answer
from gateway.history.store import NewMessage, SessionStore
from gateway.tenants import TenantId

pytestmark = pytest.mark.integration

ALICE = TenantId.parse("telegram:2001")
NOW = datetime(2024, 6, 15, 12, 0, tzinfo=UTC).timestamp()
DAY = 86_400.0
FILLER = [
    "I had a long day at work today.",
    "The weather is grey again.",
    "My sister sent me photos from her holiday.",
    "Dinner was pasta, nothing special.",
    "我今天工作很累。",
    "晚饭吃了面条。",
]


class World:
    def __init__(self, path: Path) -> None:
        self.db = Database(path)
        self.store = SessionStore(self.db)
        self.search = SessionSearch(self.db)
        self.count = 0

    def session(self, days_ago: float, texts: list[str], title: str | None = None) -> list[int]:
        """A DM session of alternating user/assistant messages; their ids."""
        self.count += 1
        started = NOW - days_ago * DAY
        record = self.store.create_session(
            ALICE,
            session_key=f"k{self.count}",
            source="telegram",
            system_prompt="",
            tools_json="[]",
            scope_key=ALICE.namespace,
            chat_type="dm",
            title=title,
            started_at=started,
        )
        messages = [
            NewMessage(
                "user" if i % 2 == 0 else "assistant",
                text,
                name="Alice" if i % 2 == 0 else None,
                timestamp=started + 60 * i,
            )
            for i, text in enumerate(texts)
        ]
        stored = self.store.append_messages(ALICE, record.id, messages)
        return list(stored)

    def answer(self, query: str, budget: int | None = None) -> dict:
        search = self.search if budget is None else SessionSearch(self.db, budget_chars=budget)
        return search_answer(
            search, ALICE, query, scope_key=ALICE.namespace, chat_type="dm", now=NOW
        )


def shown(answer: dict) -> list[int]:
    return [m["id"] for s in answer["sessions"] for m in s["messages"]]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path / "state.db")
    # a long history of small talk around the planted facts
    for day in range(60, 3, -2):
        w.session(day, [FILLER[(day + i) % len(FILLER)] for i in range(10)])
    yield w
    w.db.close()


def test_planted_facts_are_found_in_english_chinese_and_mixed(world: World) -> None:
    sister = world.session(40, ["My sister Mira just moved to Porto for a new job.", "Nice!"])
    cat = world.session(25, ["我们领养了一只小猫，取名叫年糕。", "好可爱！"])
    mixed = world.session(12, ["我用Python写了部署脚本 for the release.", "好的"])
    assert sister[0] in shown(world.answer("Which city did my sister move to?"))
    assert cat[0] in shown(world.answer("我们家的小猫叫什么？"))
    assert mixed[0] in shown(world.answer("python部署脚本在哪？"))
    for word in ("猫", "小猫", "部署脚本"):  # 1-, 2- and 3+-character words
        found = world.answer(word)
        assert (cat[0] if "猫" in word else mixed[0]) in shown(found), word


def test_coverage_beats_repetition(world: World) -> None:
    repeat = world.session(30, ["garden garden garden garden", "ok"])
    both = world.session(31, ["In the garden I planted tomatoes along the fence.", "ok"])
    ids = shown(world.answer("what did I plant in the garden?"))
    assert ids.index(both[0]) < ids.index(repeat[0])


def test_time_expressions_pick_the_mention_of_that_period(world: World) -> None:
    old = world.session(50, ["I ran 5 kilometres in the park.", "Well done"])
    recent = world.session(1, ["I ran 12 kilometres in the park this morning.", "Wow"])
    answer = world.answer("How far did I run yesterday?")
    assert answer["when"] == "2024-06-14"
    assert shown(answer)[0] == recent[0]  # boosted above the same words 50 days ago
    assert old[0] in shown(answer)
    # the words of the question need not be the words of that day
    dinner = world.session(2, ["Tried the new Thai place with Ben.", "Sounds tasty"])
    assert dinner[0] in shown(world.answer("Where did I eat two days ago?"))
    assert dinner[0] in shown(world.answer("我前天在哪儿吃的？"))


def test_several_windows_per_session_merge_and_never_repeat(world: World) -> None:
    texts = [f"note {i} about nothing" for i in range(30)]
    texts[4] = "the walrus arrived"
    texts[5] = "a walrus, really?"
    texts[20] = "the walrus left again"
    ids = world.session(20, texts, title="Walrus watch")
    answer = world.answer("walrus")
    assert len(answer["sessions"]) == 1
    session = answer["sessions"][0]
    got = [m["id"] for m in session["messages"]]
    assert got == sorted(set(got))  # in order, no repeats
    assert {ids[4], ids[5], ids[20]} <= set(got)
    assert session["title"] == "Walrus watch"
    # the windows are apart: what lies between is counted, not shown
    after_gap = next(m for m in session["messages"] if m["id"] == ids[20])
    assert after_gap["skipped"] == 20 - 6


def test_answer_shape_is_compact_and_stable(tmp_path: Path) -> None:
    w = World(tmp_path / "golden.db")
    ids = w.session(3, ["We chose the blue heron logo.", "Great choice."])
    ids2 = w.session(1, ["Is the heron logo final?", "Yes, final."])
    answer = w.answer("heron logo")
    for s in answer["sessions"]:
        s.pop("id")  # generated ids
    assert answer == {
        "query": "heron logo",
        "sessions": [
            {
                "date": "2024-06-14",
                "messages": [
                    {
                        "id": ids2[0],
                        "role": "user",
                        "name": "Alice",
                        "time": "12:00",
                        "text": "Is the heron logo final?",
                    },
                    {"id": ids2[1], "role": "assistant", "time": "12:01", "text": "Yes, final."},
                ],
            },
            {
                "date": "2024-06-12",
                "messages": [
                    {
                        "id": ids[0],
                        "role": "user",
                        "name": "Alice",
                        "time": "12:00",
                        "text": "We chose the blue heron logo.",
                    },
                    {"id": ids[1], "role": "assistant", "time": "12:01", "text": "Great choice."},
                ],
            },
        ],
    }
    dated = w.answer("what did we say yesterday?")
    assert dated["when"] == "2024-06-14" and shown(dated) == ids2
    empty = w.answer("zebra")
    assert empty == {"query": "zebra", "sessions": [], "hint": empty["hint"]}
    w.db.close()


def test_long_messages_are_trimmed_around_the_match(world: World) -> None:
    long = "Background. " * 100 + "The otter lives by the river. " + "More words. " * 100
    ids = world.session(9, [long, "ok"])
    message = next(
        m for s in world.answer("otter")["sessions"] for m in s["messages"] if m["id"] == ids[0]
    )
    assert "otter" in message["text"] and message["text"].startswith("…")
    assert len(message["text"]) < 400


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.sampled_from(
        ["sister", "garden OR 面条", "what did I say last week?", "晚饭", "work"]
    ),
    budget=st.integers(min_value=MIN_BUDGET_CHARS, max_value=6000),
)
def test_budget_is_never_exceeded(world: World, query: str, budget: int) -> None:
    answer = world.answer(query, budget=budget)
    assert len(json.dumps(answer, ensure_ascii=False)) <= budget
    assert shown(answer), query


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=300))
def test_hostile_queries_never_raise(world: World, query: str) -> None:
    answer = world.answer(query)
    assert len(json.dumps(answer, ensure_ascii=False)) <= world.search.budget_chars
