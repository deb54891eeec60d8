"""The session_search query language: constructs, stop-words, hostile input → valid FTS5."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.history.fts import pretokenize, tenant_match, tenant_token
from gateway.history.query import parse_query
from gateway.tenants import TenantId

TENANT = TenantId.parse("telegram:42")
OTHER = TenantId.parse("telegram:43")
DOCS = {
    1: "We deploy the deployment script on Fridays",
    2: "The deploy script broke the staging build",
    3: "Buy milk and coffee",
    4: "Makefile targets for release",
    5: "我们讨论了部署脚本的问题",
    6: "明天去公园跑步，带上python脚本",
    7: "水",
    8: "Our e-mail server and gpt-4 notes",
}


@pytest.fixture(scope="module")
def fts() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE messages_fts USING fts5(tenant_tok, body, sender, "
        "tokenize = 'porter unicode61 remove_diacritics 2')"
    )
    for rowid, text in DOCS.items():
        conn.execute(
            "INSERT INTO messages_fts (rowid, tenant_tok, body, sender) VALUES (?, ?, ?, ?)",
            (rowid, tenant_token(TENANT), pretokenize(text), ""),
        )
    conn.execute(
        "INSERT INTO messages_fts (rowid, tenant_tok, body, sender) VALUES (?, ?, ?, ?)",
        (99, tenant_token(OTHER), "deploy script 部署 tenant tok", ""),
    )
    yield conn
    conn.close()


def search(conn: sqlite3.Connection, text: str) -> set[int]:
    """Rows of the strict expression, or of the fallback when the strict one finds none."""
    parsed = parse_query(text)
    found: set[int] = set()
    for expression in (parsed.expression, parsed.fallback):
        if expression and not found:
            rows = conn.execute(
                "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?",
                (tenant_match(TENANT, expression),),
            ).fetchall()
            found = {r[0] for r in rows}
    return found


def assert_safe(expression: str) -> None:
    """Outside quoted strings only our operators, parentheses and prefix stars remain."""
    outside = re.sub(r'"[^"]*"', " X ", expression)
    for token in re.split(r"[\s()]+", outside.replace("*", " ")):
        assert token in {"", "X", "AND", "OR", "NOT"}, (expression, token)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("deploy script", {1, 2}),
        ("deploying", {1, 2}),  # porter stemming on both sides
        ('"deploy script"', {2}),
        ('"script deploy"', set()),
        ("coffee OR makefile", {3, 4}),
        ("deploy NOT staging", {1}),
        ("deploy -staging", {1}),
        ("deplo*", {1, 2}),
        ("releas*", {4}),
        ("what did we decide about the deploy script?", {1, 2}),
        ("部", {5}),
        ("部署", {5}),
        ("部署脚本", {5}),
        ("脚本", {5, 6}),
        ("水", {7}),
        ("python脚本", {6}),
        ("python 公园", {6}),
        ("e-mail", {8}),
        ("gpt-4", {8}),
        ("我们之前讨论过部署脚本吗？", {5}),  # every term first: 6 has only 脚本
        ("我们之前讨论过部署脚本和合同吗？", {5, 6}),  # none has every term: any of them
        ("", set()),
    ],
)
def test_constructs(fts: sqlite3.Connection, query: str, expected: set[int]) -> None:
    assert search(fts, query) == expected


def test_other_tenant_never_matches(fts: sqlite3.Connection) -> None:
    assert 99 not in search(fts, "deploy OR 部署 OR tenant OR tok")
    assert search(fts, tenant_token(OTHER)) == set()


def test_and_first_then_or() -> None:
    keywords = parse_query("deploy script")
    assert keywords.expression == '"deploy" AND "script"'
    assert keywords.fallback == '"deploy" OR "script"'
    nl = parse_query("what did we decide about the deploy script?")
    assert nl.natural
    assert nl.expression == '"decide" AND "deploy" AND "script"'
    assert nl.fallback == '"decide" OR "deploy" OR "script"'
    # explicit operators are taken as written: no fallback
    assert parse_query("deploy OR script").fallback == ""
    assert parse_query("deploy -script").fallback == ""


def test_or_binds_tighter_than_implicit_and() -> None:
    assert parse_query("deploy script OR makefile").expression == (
        '"deploy" AND ("script" OR "makefile")'
    )


def test_chinese_stop_words_dropped() -> None:
    parsed = parse_query("我曾经和你推荐过一部科幻电影，它的名字是？")
    assert parsed.natural
    assert set(parsed.needles) == {"推荐", "科幻电影"}
    for word in ("曾经", "你", "一部", "它", "名字"):
        assert word not in parsed.expression


@pytest.mark.parametrize(
    "text",
    [
        "the of and",
        "？",
        "?!?",
        "我们的吗",
        "what is it?",
        "NOT",
        "OR",
        "AND",
        "NOT OR AND",
        "()",
        '""',
        "😀🎉",
        "-",
        "*",
        "NOT deploy",
    ],
)
def test_nothing_searchable_is_empty(fts: sqlite3.Connection, text: str) -> None:
    parsed = parse_query(text)
    assert parsed.empty
    assert search(fts, text) == set()


HOSTILE = [
    'tenant_tok : "t74z"',
    "tenant:xyz",
    "tenant_tok:deploy",
    "{tenant_tok body}: deploy",
    "{a b}:c",
    "body:deploy",
    "NEAR(deploy script, 2)",
    "NEAR(",
    "deploy NEAR script",
    '"unbalanced quote',
    'deploy" script"',
    "((deploy OR (script",
    "deploy)) OR",
    "^deploy ^script",
    "*deploy",
    "de*ploy",
    "deploy**",
    "-",
    "--deploy",
    "a-b-c-d",
    "x:y:z",
    "OR deploy OR",
    "deploy NOT NOT script",
    "AND AND deploy",
    "NOT",
    "'; DROP TABLE messages; --",
    "\x00deploy\x00",
    "deploy\u200bscript",
    "部署:脚本",
    "👨‍👩‍👧 deploy 🇯🇵",
    "deploy" * 3000,
    "部署" * 5000,
    " ".join(["deploy OR"] * 2000),
    '"' * 10_000,
    "(" * 10_000,
    "-" * 10_000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_inputs_are_safe(fts: sqlite3.Connection, text: str) -> None:
    parsed = parse_query(text)
    assert_safe(parsed.expression)
    assert "NEAR(" not in parsed.expression
    search(fts, text)  # would raise sqlite3.OperationalError on a syntax error


def test_column_filter_text_is_just_words(fts: sqlite3.Connection) -> None:
    assert parse_query("tenant:xyz").expression == '"tenant xyz"'
    assert search(fts, "body:deploy") == set()  # the phrase "body deploy" does not occur


_PIECES = st.sampled_from(
    [
        '"',
        "(",
        ")",
        "OR",
        "NOT",
        "AND",
        "NEAR(",
        "*",
        "-",
        "^",
        ":",
        "{",
        "}",
        "tenant_tok",
        "body",
        "sender",
        "部署",
        "脚本",
        "水",
        "deploy",
        "script",
        "the",
        "?",
        "？",
        " ",
        "  ",
        "😀",
        "\u200d",
        "'",
        ",",
        "+",
        "\\",
        "\x00",
        "é",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(max_size=300),
        st.lists(_PIECES, max_size=40).map("".join),
        st.lists(_PIECES, max_size=40).map(" ".join),
    )
)
def test_any_text_parses_to_valid_fts(text: str) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE messages_fts USING fts5(tenant_tok, body, sender, "
        "tokenize = 'porter unicode61 remove_diacritics 2')"
    )
    parsed = parse_query(text)
    assert_safe(parsed.expression)
    if not parsed.empty:
        conn.execute(
            "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?",
            (tenant_match(TENANT, parsed.expression),),
        ).fetchall()
    conn.close()


def test_tenant_tokens_are_alphanumeric_and_distinct() -> None:
    ids = [
        "telegram:1",
        "telegram:11",
        "discord:1",
        "console:a_b",
        "console:a-b",
        "console:é",
        "console:ab",
    ]
    tokens = {tenant_token(TenantId.parse(i)) for i in ids}
    assert len(tokens) == len(ids)
    assert all(t.isalnum() and t.isascii() for t in tokens)


def test_pretokenize_cjk_unigrams_then_bigrams() -> None:
    assert pretokenize("用python部署脚本!").split() == [
        "用",
        "python",
        "部",
        "署",
        "脚",
        "本",
        "部署",
        "署脚",
        "脚本",
        "!",
    ]


def test_snippet_centres_on_the_match_and_marks_it() -> None:
    text = "intro " * 60 + "we were deploying the new script yesterday " + "outro " * 60
    snippet = parse_query("deploys").snippet(text, size=80)
    assert snippet.startswith("…") and snippet.endswith("…")
    assert "**deploying**" in snippet
    assert len(snippet) <= 80 + 2 + 4


def test_snippet_cjk_and_no_match() -> None:
    text = "今天" * 100 + "我们讨论了部署脚本的问题" + "明天" * 100
    snippet = parse_query("部署脚本").snippet(text, size=40)
    assert "**部署脚本**" in snippet and snippet.startswith("…")
    assert parse_query("absent").snippet("short text") == "short text"
