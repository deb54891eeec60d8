"""Honcho end to end: real turns → outbox → Redis → RQ worker → HonchoProvider → fake Honcho.

The gateway runs in queue mode with ``memory.provider = "honcho"``; the model is the fake LLM
over HTTP; jobs run in an in-process ``SimpleWorker``. What the fake Honcho "derives" from a
message is the conclusion ``"<peer> said: <message>"``, so recall can be traced to the turn
it came from.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from rq.registry import FailedJobRegistry

from gateway.app import App
from gateway.keys import RedisKeys
from gateway.outbox import Relay
from gateway.recall import RecallCache
from gateway.routing import Conversation
from gateway.security.fence import FENCE_CLOSE, FENCE_OPEN
from gateway.settings import Settings
from providers.base import ProviderContext
from tests.fakes.honcho_payloads import MessageRec
from tests.fakes.honcho_server import FakeHoncho
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script, chat_requests
from tests.integration.background import burst, installed_context, turns, work
from tests.integration.conftest import free_port
from tests.integration.honcho_harness import (
    BUDGET,
    honcho_session,
    honcho_settings,
    last_user_message,
    world,
)
from workers.queues import JobQueues

pytestmark = pytest.mark.integration

ALICE = Conversation.console("alice")
BOB = Conversation.console("bob")
AI = "mnemogate__console-alice"  # the assistant peer that talks with alice
Build = Callable[..., Settings]


@pytest.fixture
def fake() -> Iterator[FakeHoncho]:
    with FakeHoncho(port=free_port()) as server:  # a fixed port: the outage test restarts it
        yield server


@pytest.fixture
def settings_for(
    home: Path, redis_url: str, redis_prefix: str, fake_llm: FakeLLM, fake: FakeHoncho
) -> Build:
    def build(**overrides: dict[str, Any]) -> Settings:
        return honcho_settings(home, redis_url, redis_prefix, fake_llm, fake, **overrides)

    return build


def said(fake: FakeHoncho, conversation: Conversation) -> list[tuple[str, str]]:
    session = honcho_session(conversation)
    return [(m.peer_id, m.content) for m in world(fake).messages if m.session_id == session]


def outbox_payloads(settings: Settings, kind: str) -> list[dict[str, Any]]:
    async def read() -> list[dict[str, Any]]:
        async with App(settings) as app:
            rows = app.db.read(
                lambda c: c.execute(
                    "SELECT payload, done_at FROM outbox WHERE kind = ? ORDER BY id", (kind,)
                ).fetchall()
            )
        return [{**json.loads(row["payload"]), "done": row["done_at"] is not None} for row in rows]

    return asyncio.run(read())


def test_turns_reach_the_right_peer_and_session_exactly_once(
    settings_for: Build, fake: FakeHoncho, fake_llm: FakeLLM
) -> None:
    settings = settings_for()
    fake_llm.handler = Script(["a1", "a2", "a3"])
    assert turns(settings, ALICE, ["one", "two", "three"]) == ["a1", "a2", "a3"]
    work(settings)
    expected = [
        ("console-alice", "one"),
        (AI, "a1"),
        ("console-alice", "two"),
        (AI, "a2"),
        ("console-alice", "three"),
        (AI, "a3"),
    ]
    assert said(fake, ALICE) == expected
    session = world(fake).sessions[honcho_session(ALICE)]
    assert session.metadata["tenant"] == "console:alice"
    assert set(session.members) == {"console-alice", AI}

    async def sync_twice_more() -> None:
        async with App(settings) as app:
            live = app.sessions.live_session(ALICE.tenant, ALICE.session_key)
            assert live is not None
            # As if the pointer update after each post had been lost: only Honcho's turn
            # keys stand between the turns and a second copy.
            app.db.write(
                lambda c: c.execute(
                    "UPDATE sessions SET provider_synced_upto = 0 WHERE id = ?", (live.id,)
                )
            )
            for dedup in ("again-1", "again-2"):
                app.queues.enqueue("sync", ALICE.tenant, live.id, dedup=dedup)

    asyncio.run(sync_twice_more())
    work(settings)
    assert said(fake, ALICE) == expected
    assert len(fake.calls("POST", "/messages")) == 3  # one request per turn, ever


def test_next_turn_carries_the_recall_the_worker_computed(
    settings_for: Build, fake: FakeHoncho, fake_llm: FakeLLM
) -> None:
    settings = settings_for()
    fake_llm.handler = Script(["noted", "sure"])
    turns(settings, ALICE, ["I keep bees in Lyon"])
    assert last_user_message(fake_llm) == "I keep bees in Lyon"  # cold, nothing known yet
    work(settings)  # sync stores the turn; recall asks Honcho about it and caches the text
    assert fake.calls("POST", f"/peers/{AI}/chat"), "the worker ran the dialectic"
    turns(settings, ALICE, ["what do you know about my bees?"])
    last = last_user_message(fake_llm)
    assert last.startswith("what do you know about my bees?\n\n")
    assert last.count(FENCE_OPEN) == 1 and last.count(FENCE_CLOSE) == 1
    recalled = last.split(FENCE_OPEN, 1)[1]
    assert "## What Honcho reasons about this message" in recalled
    assert "console-alice said: I keep bees in Lyon" in recalled  # derived from turn 1


def test_context_cadence_writes_recall_every_second_turn(
    settings_for: Build, fake_llm: FakeLLM
) -> None:
    settings = settings_for(recall={"context_cadence": 2})
    fake_llm.handler = Script(fallback=lambda body: "ok")
    turns(settings, ALICE, ["t1", "t2", "t3", "t4", "t5"])
    # The row written by turn N prepares turn N+1: turns 3 and 5 are due (0-based 2 and 4).
    assert [row["query"] for row in outbox_payloads(settings, "recall")] == ["t2", "t4"]
    assert len(outbox_payloads(settings, "sync")) == 5


def test_first_turn_injection_only_on_a_sessions_first_turn(
    settings_for: Build, fake_llm: FakeLLM
) -> None:
    settings = settings_for(recall={"injection_frequency": "first-turn"})
    fake_llm.handler = Script(fallback=lambda body: "ok")
    turns(settings, ALICE, ["I keep bees in Lyon"])
    work(settings)

    async def start_over() -> None:
        async with App(settings) as app:
            await app.agent.new_session(ALICE)

    asyncio.run(start_over())
    turns(settings, ALICE, ["tell me about my bees"])
    assert "console-alice said: I keep bees in Lyon" in last_user_message(fake_llm)
    work(settings)
    cache = RecallCache(
        redis.Redis.from_url(settings.redis_url), RedisKeys(settings.redis_prefix), settings.recall
    )
    try:
        warm = cache.get(ALICE.tenant, ALICE.session_key)
    finally:
        cache.client.close()
    assert warm is not None and "bees" in warm.text  # recall was there to inject…
    turns(settings, ALICE, ["and what else about bees?"])
    assert last_user_message(fake_llm) == "and what else about bees?"  # …and was not


def test_a_slow_dialectic_never_holds_the_reply_past_the_budget(
    settings_for: Build, fake: FakeHoncho, fake_llm: FakeLLM
) -> None:
    settings = settings_for(honcho={"dialectic_timeout_s": 1.5})
    fake_llm.handler = Script(["hello"])
    fake.chat_gate = threading.Event()  # every dialectic hangs until released
    seen: dict[str, Any] = {}

    def gateway() -> None:
        async def run() -> None:
            async with App(settings) as app:
                started = time.monotonic()
                seen["reply"] = (await app.agent.run_turn(ALICE, "I keep bees in Lyon")).reply
                seen["done_at"] = time.monotonic()
                seen["elapsed"] = seen["done_at"] - started

        asyncio.run(run())

    thread = threading.Thread(target=gateway, name="gateway-turn")
    connection = redis.Redis.from_url(settings.redis_url)
    try:
        thread.start()
        with installed_context(settings):
            # The cold turn's recall job, stuck in the dialectic until its 1.5 s timeout.
            burst(connection, settings, burst=False, max_jobs=1, max_idle_time=10)
        worker_done_at = time.monotonic()
        thread.join(timeout=30)
    finally:
        fake.chat_gate.set()
        connection.close()
    assert seen["reply"] == "hello"
    assert seen["elapsed"] < BUDGET + 0.8, seen["elapsed"]
    assert seen["done_at"] < worker_done_at  # the reply was out while recall still ran
    fake.chat_gate = None
    work(settings)
    assert said(fake, ALICE) == [("console-alice", "I keep bees in Lyon"), (AI, "hello")]


def test_provider_tools_work_through_a_turn(
    settings_for: Build, fake: FakeHoncho, fake_llm: FakeLLM
) -> None:
    settings = settings_for()
    calls = [("honcho_profile", {"action": "read"}), ("honcho_search", {"query": "bees"})]
    fake_llm.handler = Script(["noted", {"tool_calls": calls}, "You keep bees in Lyon."])
    turns(settings, ALICE, ["I keep bees in Lyon"])
    work(settings)
    assert turns(settings, ALICE, ["what do I keep?"]) == ["You keep bees in Lyon."]
    requests = chat_requests(fake_llm.requests)
    offered = {tool["function"]["name"] for tool in requests[-1]["tools"]}
    assert {"honcho_profile", "honcho_search", "honcho_context"} <= offered
    results = [json.loads(m["content"]) for m in requests[-1]["messages"] if m["role"] == "tool"]
    assert len(results) == 2 and all(result["success"] for result in results)
    profile, search = results
    assert "console-alice said: I keep bees in Lyon" in [
        c["content"] for c in profile["conclusions"]
    ]
    assert "I keep bees in Lyon" in [message["text"] for message in search["messages"]]
    assert fake.calls("POST", "/peers/console-alice/search")


def test_outage_keeps_turns_answered_and_syncs_once_when_back(
    settings_for: Build, fake: FakeHoncho, fake_llm: FakeLLM
) -> None:
    settings = settings_for(jobs={"retries": 1})
    fake_llm.handler = Script(["r1", "r2"])
    fake.stop()
    assert turns(settings, ALICE, ["m1", "m2"]) == ["r1", "r2"]
    work(settings)  # each sync job fails, is retried once, fails again
    connection = redis.Redis.from_url(settings.redis_url)
    try:
        failed = FailedJobRegistry(queue=JobQueues(connection, settings).queue("sync"))
        assert len(failed.get_job_ids()) == 2
    finally:
        connection.close()
    assert not any(row["done"] for row in outbox_payloads(settings, "sync"))

    fake.start()  # Honcho is back, on the same port

    async def relay_now() -> int:
        async with App(settings) as app:
            return Relay(app.db, app.queues, settings.jobs, redeliver_after_s=0).run_once()

    assert asyncio.run(relay_now()) >= 2
    work(settings)
    assert said(fake, ALICE) == [
        ("console-alice", "m1"),
        (AI, "r1"),
        ("console-alice", "m2"),
        (AI, "r2"),
    ]
    assert all(row["done"] for row in outbox_payloads(settings, "sync"))


def test_two_tenants_peers_never_mix(
    settings_for: Build, fake: FakeHoncho, fake_llm: FakeLLM
) -> None:
    settings = settings_for()
    fake_llm.handler = Script(fallback=lambda body: "fine")
    turns(settings, ALICE, ["alice canary zebra-17"])
    turns(settings, BOB, ["bob canary okapi-42"])
    work(settings)
    turns(settings, BOB, ["which canary did I mention?"])
    recalled = last_user_message(fake_llm).split(FENCE_OPEN, 1)[1]
    assert "okapi-42" in recalled and "zebra" not in recalled

    ws = world(fake)
    for conversation, own, other in ((ALICE, "zebra", "okapi"), (BOB, "okapi", "zebra")):
        peer = conversation.tenant.namespace
        session = ws.sessions[honcho_session(conversation)]
        assert session.metadata["tenant"] == str(conversation.tenant)
        assert set(session.members) == {peer, f"mnemogate__{peer}"}  # no peer in common
        mine: list[MessageRec] = [m for m in ws.messages if m.session_id == session.id]
        assert any(own in m.content for m in mine) and not any(other in m.content for m in mine)
        about = [c.content for c in ws.conclusions if c.observed_id == peer]
        assert about and not any(other in text for text in about)


def test_warm_cache_recall_adds_about_a_redis_read_to_a_turn(
    settings_for: Build, fake_llm: FakeLLM
) -> None:
    settings = settings_for()
    fake_llm.handler = Script(fallback=lambda body: "ok")
    turns(settings, ALICE, ["I keep bees in Lyon"])
    work(settings)

    async def measure() -> list[float]:
        async with App(settings) as app:
            live = app.sessions.live_session(ALICE.tenant, ALICE.session_key)
            assert live is not None and app.agent.recall is not None
            ctx = ProviderContext.for_session(live, settings=settings)
            source = app.agent.recall
            warm = await source.for_turn(ctx, "and the bees?", turn_index=1)
            assert warm is not None and "bees in Lyon" in warm
            spent = []
            for _ in range(200):
                started = time.perf_counter()
                text = await source.for_turn(ctx, "and the bees?", turn_index=1)
                spent.append((time.perf_counter() - started) * 1000)
                assert text == warm
            return spent

    spent = asyncio.run(measure())
    p50 = statistics.median(spent)
    p95 = statistics.quantiles(spent, n=20)[-1]
    print(
        f"\nwarm-cache recall per turn over {len(spent)} reads: p50 {p50:.3f} ms, "
        f"p95 {p95:.3f} ms, max {max(spent):.3f} ms"
    )
    assert p50 < 50


def test_dialectic_cadence_skips_the_reasoning_call(
    settings_for: Build, fake_llm: FakeLLM, fake: FakeHoncho
) -> None:
    settings = settings_for(recall={"dialectic_cadence": 2})
    fake_llm.handler = Script(fallback=lambda body: "ok")
    for text in ["I keep bees in Lyon", "they make honey", "lots of honey", "in summer"]:
        turns(settings, ALICE, [text])
        work(settings)
    # Recall jobs ran after turns 1–4 (turn indexes 1..4): the dialectic only on 2 and 4.
    assert len(fake.calls("POST", "/chat")) == 2
