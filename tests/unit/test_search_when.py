"""Time expressions in questions, trimming around matches, irregular word forms."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.history.lexicon import forms
from gateway.history.query import parse_query
from gateway.history.recall import trim
from gateway.history.when import extract

NOW = datetime(2024, 6, 15, 12, 0, tzinfo=UTC).timestamp()  # a Saturday


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("what did I say yesterday?", date(2024, 6, 14), date(2024, 6, 14)),
        ("the day before yesterday", date(2024, 6, 13), date(2024, 6, 13)),
        ("two days ago I mentioned a cat", date(2024, 6, 12), date(2024, 6, 14)),
        ("what did we discuss last week", date(2024, 6, 3), date(2024, 6, 9)),
        ("last month", date(2024, 5, 1), date(2024, 5, 31)),
        ("the museum trip in May 2023", date(2023, 5, 1), date(2023, 5, 31)),
        ("in May", date(2024, 5, 1), date(2024, 5, 31)),
        ("in September", date(2023, 9, 1), date(2023, 9, 30)),
        ("on May 2nd", date(2024, 5, 2), date(2024, 5, 2)),
        ("on 4 April 2022", date(2022, 4, 4), date(2022, 4, 4)),
        ("2024-01-31", date(2024, 1, 31), date(2024, 1, 31)),
        ("昨天说的", date(2024, 6, 14), date(2024, 6, 14)),
        ("前天", date(2024, 6, 13), date(2024, 6, 13)),
        ("上个月我买了什么", date(2024, 5, 1), date(2024, 5, 31)),
        ("上周", date(2024, 6, 3), date(2024, 6, 9)),
        ("三天前", date(2024, 6, 11), date(2024, 6, 13)),
        ("我在5月2日去了博物馆", date(2024, 5, 2), date(2024, 5, 2)),
        ("2023年5月", date(2023, 5, 1), date(2023, 5, 31)),
        ("去年", date(2023, 1, 1), date(2023, 12, 31)),
    ],
)
def test_time_expressions_resolve_against_now(text: str, first: date, last: date) -> None:
    _, span = extract(text, NOW)
    assert span is not None and (span.first, span.last) == (first, last)


def test_time_words_leave_the_query_and_plain_words_stay() -> None:
    parsed = parse_query("What did I tell you about the museum trip in May?", NOW)
    assert parsed.span is not None and parsed.span.label() == "2024-05-01..2024-05-31"
    assert "may" not in parsed.expression and '"museum"' in parsed.expression
    assert extract("I may go, it might rain", NOW)[1] is None  # "may" the verb
    no_such_day = extract("on February 30th", NOW)[1]  # falls back to the month
    assert no_such_day is not None and no_such_day.label() == "2024-02-01..2024-02-29"
    assert parse_query("yesterday", None).span is None  # without now: ordinary words


@given(st.text(max_size=200))
def test_extract_never_raises(text: str) -> None:
    rest, span = extract(text, NOW)
    assert isinstance(rest, str)
    assert span is None or span.first <= span.last


def test_irregular_forms_join_and_reach_the_query() -> None:
    assert "ran" in forms("run") and "run" in forms("ran")
    assert forms("deploy") == ("deploy",)
    assert forms("eat") == ("eat", "eaten")  # one group per line; "ate" would stem to "at"
    assert forms("fall") == ("fall", "fell", "fallen")
    parsed = parse_query("how far did I run?")
    assert '"ran"' in parsed.expression and "ran" in parsed.needles


def test_trim_keeps_the_parts_around_matches() -> None:
    text = (
        "start " + "filler " * 80 + "the otter swam " + "more " * 80 + "a heron landed " + "x" * 50
    )
    pattern = re.compile("otter|heron")
    out = trim(text, pattern, 120)
    assert "otter" in out and "heron" in out and "…" in out
    assert len(out) <= 128
    assert trim("short text", pattern, 120) == "short text"
    assert trim("y" * 500, None, 100).endswith("…") and len(trim("y" * 500, None, 100)) == 100


@given(st.text(max_size=3000), st.integers(min_value=20, max_value=800))
def test_trim_is_bounded(text: str, size: int) -> None:
    assert len(trim(text, re.compile("a|的"), size)) <= size + 8


def test_a_question_pasted_in_quotes_is_still_a_question() -> None:
    parsed = parse_query('"What kind of music do I like?"')
    assert parsed.natural and parsed.expression == '"music"'
    assert not parse_query('"new script"').natural  # a phrase stays a phrase


def test_a_quoted_title_inside_a_question_is_one_exact_term() -> None:
    parsed = parse_query('I shared a film called "Taxi Driver" with you, what is it about?', NOW)
    assert parsed.natural
    assert '"taxi driver"' in parsed.terms and '"shared"' not in parsed.expression
    assert '"s"' not in parse_query("what's the plan?").expression


def test_dates_are_read_outside_quotes_only() -> None:
    parsed = parse_query('what did "Last Week Tonight" say yesterday?', NOW)
    assert parsed.span is not None and parsed.span.label() == "2024-06-14"
    assert '"last week tonight"' in parsed.terms
