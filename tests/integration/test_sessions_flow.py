"""Titles, /sessions, /resume, /title, incognito and compression, in process with the fake LLM."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.agent.compression import FLUSH_PROMPT, SUMMARY_PREFIX, SUMMARY_PROMPT
from gateway.agent.dispatch import dispatch
from gateway.agent.titles import TITLE_PROMPT
from gateway.app import App
from gateway.routing import Conversation
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script, chat_requests, tool_call

pytestmark = pytest.mark.integration

ALICE = Conversation.console("alice")


def route(titles: list[str], flush_fact: str | None = None) -> Any:
    """A fake-LLM handler that answers by request kind: title, summary, flush, or chat."""
    state = {"flushed": False}

    def handler(body: dict[str, Any]) -> Any:
        system = str(body["messages"][0]["content"])
        if system.startswith(TITLE_PROMPT):
            return titles.pop(0) if titles else "Another chat"
        if system.startswith(SUMMARY_PROMPT):
            return "- The user is planning a trip to Kyoto in April."
        if system.startswith(FLUSH_PROMPT):
            if flush_fact and not state["flushed"]:
                state["flushed"] = True
                return {
                    "tool_calls": [
                        ("memory", {"action": "add", "target": "user", "content": flush_fact})
                    ]
                }
            return "Nothing to save."
        last = body["messages"][-1]["content"]
        return f"echo: {last[:40]}"

    return handler


async def test_title_after_first_exchange_and_uniqueness(
    make_settings: Any, fake_llm: FakeLLM
) -> None:
    fake_llm.handler = route(["“Trip to Kyoto”.", "Trip to Kyoto"])
    async with App(make_settings()) as app:
        first = await app.agent.run_turn(ALICE, "Help me plan Kyoto")
        await app.drain()
        assert app.sessions.get_session(ALICE.tenant, first.session_id).title == "Trip to Kyoto"
        await dispatch(app.agent, ALICE, "/new")
        second = await app.agent.run_turn(ALICE, "Kyoto again")
        await app.drain()
        assert app.sessions.get_session(ALICE.tenant, second.session_id).title == (
            "Trip to Kyoto (2)"
        )
        listing = await dispatch(app.agent, ALICE, "/sessions")
        assert listing is not None
        assert "Trip to Kyoto (2)" in listing and first.session_id in listing


async def test_title_command_and_resume(make_settings: Any, fake_llm: FakeLLM) -> None:
    fake_llm.handler = route(["Budget review"])
    async with App(make_settings()) as app:
        old = await app.agent.run_turn(ALICE, "numbers please")
        await app.drain()
        assert await dispatch(app.agent, ALICE, "/title Q3 budget") == "Title set: Q3 budget"
        assert await dispatch(app.agent, ALICE, "/title") == "Title: Q3 budget"
        await dispatch(app.agent, ALICE, "/new")
        await app.agent.run_turn(ALICE, "something else")
        await app.drain()
        clash = await dispatch(app.agent, ALICE, "/title Q3 budget")
        assert clash is not None and "already" in clash
        assert await dispatch(app.agent, ALICE, "/resume Q3 budget") == "Resumed “Q3 budget”."
        again = await app.agent.run_turn(ALICE, "back to numbers")
        assert again.session_id == old.session_id
        missing = await dispatch(app.agent, ALICE, "/resume nothing-like-this")
        assert missing is not None and "No session" in missing
        # Another tenant cannot resume Alice's session by id.
        bob = Conversation.console("bob")
        refused = await dispatch(app.agent, bob, f"/resume {old.session_id}")
        assert refused is not None and "No session" in refused


async def test_private_session_has_no_memory_tool_and_is_not_indexed(
    make_settings: Any, fake_llm: FakeLLM
) -> None:
    fake_llm.handler = route([])
    async with App(make_settings()) as app:
        await dispatch(app.agent, ALICE, "/new private")
        result = await app.agent.run_turn(ALICE, "my secret zanzibar plan")
        await app.drain()
        body = fake_llm.requests[-1]
        assert "memory" not in [t["function"]["name"] for t in body["tools"]]
        session = app.sessions.get_session(ALICE.tenant, result.session_id)
        assert session.incognito and session.title is None
        await dispatch(app.agent, ALICE, "/new")
        found = app.search.search(
            ALICE.tenant, "zanzibar", scope_key=ALICE.search_scope_key(), chat_type="dm"
        )
        assert found.sessions == ()


async def test_compression_continues_in_child_with_flush(
    make_settings: Any, fake_llm: FakeLLM
) -> None:
    fact = "Planning a Kyoto trip in April"
    fake_llm.handler = route(["Kyoto plans"], flush_fact=fact)
    settings = make_settings(
        sessions={"protect_first": 1, "protect_last": 2, "compression_threshold": 0.11},
        memory={"flush_min_turns": 2},
        llm={"base_url": fake_llm.base_url, "model": "fake", "context_window": 1024},
    )
    async with App(settings) as app:
        t1 = await app.agent.run_turn(ALICE, "I want to visit Kyoto")
        await app.drain()
        t2 = await app.agent.run_turn(ALICE, "What about the temples near Arashiyama?")
        await app.drain()
        assert t1.session_id == t2.session_id
        parent = app.sessions.get_session(ALICE.tenant, t1.session_id)
        assert parent.ended_at is not None and parent.end_reason == "compressed"
        child = app.sessions.live_session(ALICE.tenant, ALICE.session_key)
        assert child is not None and child.parent_id == parent.id
        assert child.title == "Kyoto plans #2"
        # The flush saved the fact, and the child's frozen prompt already shows it.
        assert fact in child.system_prompt and fact not in parent.system_prompt
        history = app.sessions.messages(ALICE.tenant, child.id)
        assert any(m.content.startswith(SUMMARY_PREFIX) for m in history)
        assert history[0].content == "I want to visit Kyoto"
        assert history[-1].content.startswith("echo: What about the temples")
        t3 = await app.agent.run_turn(ALICE, "ok, and food?")
        await app.drain()
        assert t3.session_id == child.id
        # Old messages stay searchable.
        hits = app.search.search(
            ALICE.tenant, "Arashiyama", scope_key=ALICE.search_scope_key(), chat_type="dm"
        ).sessions
        assert hits and {found.id for found in hits} <= {parent.id, child.id}


async def test_search_tool_with_aux_summaries(make_settings: Any, fake_llm: FakeLLM) -> None:
    fake_llm.handler = Script(
        [
            "Arashiyama is lovely in April.",
            tool_call("session_search", {"query": "Arashiyama"}),
            "You asked about Arashiyama before.",
        ],
        review=["They talked about visiting Arashiyama temples in April."],
    )
    settings = make_settings(sessions={"summarize": True})
    async with App(settings) as app:
        await app.agent.run_turn(ALICE, "Tell me about Arashiyama temples")
        await dispatch(app.agent, ALICE, "/new")
        result = await app.agent.run_turn(ALICE, "what did we discuss last time?")
        await app.drain()
    assert result.reply == "You asked about Arashiyama before."
    tool_message = chat_requests(fake_llm.requests)[-1]["messages"][-1]
    assert tool_message["role"] == "tool"
    answer = json.loads(tool_message["content"])
    assert answer["sessions"][0]["summary"].startswith("They talked about visiting Arashiyama")


async def test_transcripts_follow_every_turn(make_settings: Any, fake_llm: FakeLLM) -> None:
    fake_llm.handler = Script(["first answer", "second answer"])
    settings = make_settings(sessions={"write_transcripts": True})
    async with App(settings) as app:
        await app.agent.run_turn(ALICE, "first question")
        result = await app.agent.run_turn(ALICE, "second question")
        await app.drain()
    path = (
        settings.home / "tenants" / "console-alice" / "transcripts" / f"{result.session_id}.jsonl"
    )
    line = json.loads(path.read_text(encoding="utf-8"))
    assert [m["content"] for m in line["messages"]] == [
        "first question",
        "first answer",
        "second question",
        "second answer",
    ]
    assert path.stat().st_mode & 0o777 == 0o600
