"""Supermemory end to end: turns → /new ingests the session → RQ recall → the next turn.

The gateway runs in queue mode with ``memory.provider = "supermemory"`` against the stateful
fake Supermemory; the model is the fake LLM; jobs run in an in-process worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.app import App
from gateway.privacy import forget_tenant
from gateway.routing import Conversation
from gateway.security.fence import FENCE_OPEN
from gateway.settings import Settings
from providers.contract import make_context
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script, chat_requests, tool_call
from tests.fakes.supermemory_server import FakeSupermemory
from tests.integration.background import make_settings, turns, work
from tests.integration.conftest import free_port

pytestmark = pytest.mark.integration

ALICE = Conversation.console("alice")
BOB = Conversation.console("bob")
Build = Callable[..., Settings]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSupermemory]:
    with FakeSupermemory(port=free_port()) as fake:
        monkeypatch.setenv("SUPERMEMORY_API_KEY", fake.api_key)
        yield fake


@pytest.fixture
def settings_for(
    home: Path, redis_url: str, redis_prefix: str, fake_llm: FakeLLM, server: FakeSupermemory
) -> Build:
    def build(**overrides: dict[str, Any]) -> Settings:
        values: dict[str, dict[str, Any]] = {
            "llm": {"base_url": fake_llm.base_url, "model": "fake-model", "max_retries": 0},
            "memory": {"provider": "supermemory"},
            "supermemory": {"base_url": server.base_url, "timeout_s": 2},
            "recall": {"first_turn_budget_s": 0.3},
            "jobs": {"mode": "queue"},
        }
        for key, value in overrides.items():
            values[key] = {**values.get(key, {}), **value}
        return make_settings(home, redis_url, redis_prefix, **values)

    return build


def new_session(settings: Settings, conversation: Conversation, *, private: bool = False) -> None:
    """``/new``, then the worker runs what it left: the session-end job ingests the session."""

    async def run() -> None:
        async with App(settings) as app:
            await app.agent.new_session(conversation, incognito=private)

    asyncio.run(run())
    work(settings)


def last_user_message(fake_llm: FakeLLM) -> str:
    return str(chat_requests(fake_llm.requests)[-1]["messages"][-1]["content"])


def test_a_fact_is_recalled_after_the_session_ends_and_never_reaches_another_tenant(
    settings_for: Build, fake_llm: FakeLLM, server: FakeSupermemory, home: Path
) -> None:
    settings = settings_for()
    fake_llm.handler = Script(fallback=lambda body: "noted")
    turns(settings, ALICE, ["I keep bees in Lyon, canary zebra-17"])
    turns(settings, BOB, ["I keep goats in Porto, canary okapi-42"])
    assert server.calls("POST", "/v4/conversations") == []  # nothing is sent per turn
    new_session(settings, ALICE)  # the session ends: ingested once, under its id
    new_session(settings, BOB)
    posts = server.calls("POST", "/v4/conversations")
    assert len(posts) == 2
    alice_tag = make_context(home, "alice").backend_key
    assert posts[0].body["containerTags"] == [alice_tag]
    assert [m["content"] for m in posts[0].body["messages"]] == [
        "I keep bees in Lyon, canary zebra-17",
        "noted",
    ]
    work(settings)  # the recall job asks the profile of each tenant's container
    turns(settings, ALICE, ["what do you know about my bees in Lyon?"])
    recalled = last_user_message(fake_llm).split(FENCE_OPEN, 1)[1]
    assert "zebra-17" in recalled and "okapi" not in recalled
    before = len(fake_llm.requests)
    turns(settings, BOB, ["what do you know about my bees in Lyon?"])
    bobs = chat_requests(fake_llm.requests[before:])
    assert bobs and not any("zebra-17" in str(request) for request in bobs)


def test_a_private_session_is_never_ingested(
    settings_for: Build, fake_llm: FakeLLM, server: FakeSupermemory
) -> None:
    settings = settings_for()
    fake_llm.handler = Script(fallback=lambda body: "ok")
    new_session(settings, ALICE, private=True)
    turns(settings, ALICE, ["this stays between us: canary quokka-3"])
    new_session(settings, ALICE)
    assert server.calls("POST", "/v4/conversations") == []


def test_tools_work_through_a_turn(
    settings_for: Build, fake_llm: FakeLLM, server: FakeSupermemory
) -> None:
    settings = settings_for()
    store = tool_call("supermemory_store", {"content": "Allergic to peanuts"})
    search = tool_call("supermemory-search", {"query": "peanuts"})
    fake_llm.handler = Script([store, "Saved.", search, "You are allergic to peanuts."])
    assert turns(settings, ALICE, ["remember I am allergic to peanuts"]) == ["Saved."]
    assert turns(settings, ALICE, ["what am I allergic to?"]) == ["You are allergic to peanuts."]
    last = chat_requests(fake_llm.requests)[-1]
    results = [m["content"] for m in last["messages"] if m["role"] == "tool"]
    assert "Allergic to peanuts" in results[-1]
    assert server.memory_texts(make_context(Path("/"), "alice").backend_key) == [
        "Allergic to peanuts"
    ]


def test_an_outage_leaves_turns_answered_and_the_session_is_ingested_later(
    settings_for: Build, fake_llm: FakeLLM, server: FakeSupermemory, home: Path
) -> None:
    settings = settings_for()
    fake_llm.handler = Script(["r1", "r2"])
    server.__exit__(None, None, None)
    assert turns(settings, ALICE, ["I sail on the lake on Sundays"]) == ["r1"]
    work(settings)
    new_session(settings, ALICE)  # the ingest fails; /new still starts a session
    assert turns(settings, ALICE, ["and I swim"]) == ["r2"]
    server.__enter__()  # back, on the same port
    work(settings)  # the new session's sync posts the session that could not be ingested
    posted = server.calls("POST", "/v4/conversations")
    assert len(posted) == 1
    sailing = "I sail on the lake on Sundays"
    assert [m["content"] for m in posted[0].body["messages"]] == [sailing, "r1"]
    assert server.memory_texts(make_context(home, "alice").backend_key) == [sailing]


def test_tenants_forget_erases_the_tenants_containers(
    settings_for: Build, fake_llm: FakeLLM, server: FakeSupermemory, home: Path
) -> None:
    settings = settings_for()
    fake_llm.handler = Script(fallback=lambda body: "noted")
    for conversation, text in ((ALICE, "I keep bees in Lyon"), (BOB, "I keep goats in Porto")):
        turns(settings, conversation, [text])
        new_session(settings, conversation)
    alice_tag = make_context(home, "alice").backend_key
    bob_tag = make_context(home, "bob").backend_key
    assert server.memory_texts(alice_tag) == ["I keep bees in Lyon"]
    report = forget_tenant(settings, ALICE.tenant)
    assert report.complete, report.lines()
    assert report.erased["provider items"] == 1
    assert alice_tag not in server.containers
    assert server.memory_texts(bob_tag) == ["I keep goats in Porto"]
