"""The compact answer: shape rules and the character budget, whatever the messages hold."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from gateway.history.recall import FoundSession, Packer, SearchResult, Shown
from gateway.history.search import MIN_BUDGET_CHARS

DAY = 1_717_200_000.0  # 2024-06-01 00:00 UTC

messages = st.lists(
    st.tuples(
        st.sampled_from(["user", "assistant"]),
        st.one_of(st.none(), st.text(max_size=40)),
        st.text(max_size=400),
        st.floats(min_value=0, max_value=5 * 86_400),
    ),
    max_size=40,
)


@given(messages, st.integers(min_value=MIN_BUDGET_CHARS, max_value=5000), st.integers(0, 3))
def test_the_budget_is_never_exceeded(rows: list, budget: int, sessions: int) -> None:
    packer = Packer("query " * 50, "2024-06-01..2024-06-30", budget)
    found = [FoundSession(f"s{i}", f"title {i}" if i % 2 else None, DAY) for i in range(4)]
    for i, (role, name, text, offset) in enumerate(rows):
        window = [Shown(i + 1, role, name, DAY + offset, text, hit=True)]
        packer.add(found[i % (sessions + 1)], window)
    result = packer.result(more=7)
    assert len(result.to_json()) <= budget
    ids = [m["id"] for s in result.to_dict()["sessions"] for m in s["messages"]]
    assert len(ids) == len(set(ids))


def test_fields_that_say_nothing_are_left_out() -> None:
    session = FoundSession("s1", None, DAY + 3600)
    session.messages[5] = Shown(5, "assistant", None, DAY + 7200, "hi", hit=False)
    session.messages[9] = Shown(9, "user", "Ann", DAY + 86_400 + 60, "later", hit=True, skipped=3)
    answer = SearchResult("q", (session,)).to_dict()
    assert answer == {
        "query": "q",
        "sessions": [
            {
                "id": "s1",
                "date": "2024-06-01",
                "messages": [
                    {"id": 5, "role": "assistant", "time": "02:00", "text": "hi"},
                    {
                        "id": 9,
                        "role": "user",
                        "name": "Ann",
                        "time": "2024-06-02 00:01",
                        "text": "later",
                        "skipped": 3,
                    },
                ],
            }
        ],
    }
    assert json.loads(SearchResult("q" * 500, ()).to_json())["query"].endswith("…")
