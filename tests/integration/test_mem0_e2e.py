"""Mem0 (oss mode, the real ``mem0ai``) end to end: turns → outbox → Redis → RQ → Mem0.

The chat model is one fake LLM; Mem0's own LLM and embedder (the auxiliary endpoint) are a
second one that answers extraction and embeddings, so an outage of Mem0's side can be staged
while the chat stays up. The local Qdrant store lives under the test's home.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from rq.registry import FailedJobRegistry

from gateway.app import App
from gateway.outbox import Relay
from gateway.privacy import forget_tenant
from gateway.routing import Conversation
from gateway.security.fence import FENCE_OPEN
from gateway.settings import Settings
from providers.base import RecallQuery
from providers.contract import make_context
from providers.mem0.provider import Mem0Provider
from tests.fakes import mem0_llm
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script, chat_requests, tool_call
from tests.integration.background import make_settings, turns, work
from tests.integration.conftest import free_port
from workers.queues import JobQueues

pytestmark = pytest.mark.integration

ALICE = Conversation.console("alice")
BOB = Conversation.console("bob")
Build = Callable[..., Settings]


@pytest.fixture
def aux() -> Iterator[FakeLLM]:
    with FakeLLM(port=free_port()) as server:  # a fixed port: the outage test restarts it
        server.handler = mem0_llm.handler
        yield server


@pytest.fixture
def settings_for(
    home: Path, redis_url: str, redis_prefix: str, fake_llm: FakeLLM, aux: FakeLLM
) -> Build:
    def build(**overrides: dict[str, Any]) -> Settings:
        values: dict[str, dict[str, Any]] = {
            "llm": {"base_url": fake_llm.base_url, "model": "fake-model", "max_retries": 0},
            "aux_llm": {"base_url": aux.base_url, "model": "extract-model"},
            "memory": {"provider": "mem0"},
            "mem0": {"embedding_dims": 32, "timeout_s": 5},
            "recall": {"first_turn_budget_s": 0.3, "provider_timeout_s": 20},
            "jobs": {"mode": "queue"},
        }
        for key, value in overrides.items():
            values[key] = {**values.get(key, {}), **value}
        return make_settings(home, redis_url, redis_prefix, **values)

    return build


def last_user_message(fake_llm: FakeLLM) -> str:
    return str(chat_requests(fake_llm.requests)[-1]["messages"][-1]["content"])


def test_a_fact_is_recalled_in_the_next_turn_and_never_reaches_another_tenant(
    settings_for: Build, fake_llm: FakeLLM
) -> None:
    settings = settings_for()
    fake_llm.handler = Script(fallback=lambda body: "noted")
    turns(settings, ALICE, ["I keep bees in Lyon, canary zebra-17"])
    turns(settings, BOB, ["I keep goats in Porto, canary okapi-42"])
    work(settings)  # sync adds each turn to its own user_id; recall prepares the next turn
    turns(settings, ALICE, ["what do you know about my bees in Lyon?"])
    recalled = last_user_message(fake_llm).split(FENCE_OPEN, 1)[1]
    assert "I keep bees in Lyon, canary zebra-17" in recalled and "okapi" not in recalled
    before = len(fake_llm.requests)
    turns(settings, BOB, ["what do you know about my bees in Lyon?"])
    bobs = chat_requests(fake_llm.requests[before:])
    assert bobs and not any("zebra-17" in str(request) for request in bobs)
    bob_seen = [str(r) for r in chat_requests(fake_llm.requests) if "okapi" in str(r)]
    assert bob_seen and not any("zebra-17" in request for request in bob_seen)


def test_turns_are_added_once_even_when_sync_runs_again(
    settings_for: Build, fake_llm: FakeLLM, aux: FakeLLM, home: Path
) -> None:
    settings = settings_for()
    fake_llm.handler = Script(fallback=lambda body: "noted")
    turns(settings, ALICE, ["My cat is called Miso"])
    work(settings)
    extractions = [r for r in aux.requests if mem0_llm.is_extraction(r)]

    async def sync_again() -> None:
        async with App(settings) as app:
            live = app.sessions.live_session(ALICE.tenant, ALICE.session_key)
            assert live is not None
            app.db.write(
                lambda c: c.execute(
                    "UPDATE sessions SET provider_synced_upto = 0 WHERE id = ?", (live.id,)
                )
            )
            app.queues.enqueue("sync", ALICE.tenant, live.id, dedup="again")

    asyncio.run(sync_again())
    work(settings)
    assert [r for r in aux.requests if mem0_llm.is_extraction(r)] == extractions  # skipped
    provider = Mem0Provider.from_settings(settings)
    try:
        ctx = make_context(home, "alice")
        hits = provider.backend.search(ctx.backend_key, "cat Miso", 10, 0.1)
        assert [hit.memory for hit in hits] == ["My cat is called Miso"]
    finally:
        provider.shutdown()


def test_tools_work_through_a_turn(settings_for: Build, fake_llm: FakeLLM) -> None:
    settings = settings_for()
    search = tool_call("mem0_search", {"query": "bees Lyon"})
    fake_llm.handler = Script(["noted", search, "You keep bees in Lyon."])
    turns(settings, ALICE, ["I keep bees in Lyon"])
    work(settings)
    assert turns(settings, ALICE, ["what do I keep?"]) == ["You keep bees in Lyon."]
    last = chat_requests(fake_llm.requests)[-1]
    offered = {tool["function"]["name"] for tool in last["tools"]}
    assert {"mem0_search", "mem0_add", "mem0_update", "mem0_delete"} <= offered
    results = [m["content"] for m in last["messages"] if m["role"] == "tool"]
    assert len(results) == 1 and "I keep bees in Lyon" in results[0]


def test_an_outage_of_mem0s_endpoint_leaves_turns_answered_and_syncs_later(
    settings_for: Build, fake_llm: FakeLLM, aux: FakeLLM, home: Path
) -> None:
    settings = settings_for(jobs={"retries": 1})
    fake_llm.handler = Script(["r1", "r2"])
    aux.stop()
    assert turns(settings, ALICE, ["I sail on Sundays", "and I swim"]) == ["r1", "r2"]
    work(settings)  # each sync job fails (no extraction endpoint), is retried once, fails
    connection = redis.Redis.from_url(settings.redis_url)
    try:
        failed = FailedJobRegistry(queue=JobQueues(connection, settings).queue("sync"))
        assert len(failed.get_job_ids()) == 2
    finally:
        connection.close()
    aux.start()

    async def relay_now() -> int:
        async with App(settings) as app:
            return Relay(app.db, app.queues, settings.jobs, redeliver_after_s=0).run_once()

    assert asyncio.run(relay_now()) >= 2
    work(settings)
    provider = Mem0Provider.from_settings(settings)
    try:
        recalled = provider.recall(make_context(home, "alice"), RecallQuery("sail Sundays swim"))
        assert "I sail on Sundays" in recalled and "and I swim" in recalled
    finally:
        provider.shutdown()


def test_tenants_forget_erases_the_tenants_memories(
    settings_for: Build, fake_llm: FakeLLM, home: Path
) -> None:
    settings = settings_for()
    fake_llm.handler = Script(fallback=lambda body: "noted")
    turns(settings, ALICE, ["I keep bees in Lyon"])
    turns(settings, BOB, ["I keep goats in Porto"])
    work(settings)
    report = forget_tenant(settings, ALICE.tenant)
    assert report.complete, report.lines()
    assert report.erased["provider items"] == 1
    provider = Mem0Provider.from_settings(settings)
    try:
        assert provider.recall(make_context(home, "alice"), RecallQuery("bees Lyon")) == ""
        assert "goats" in provider.recall(make_context(home, "bob"), RecallQuery("goats Porto"))
    finally:
        provider.shutdown()
