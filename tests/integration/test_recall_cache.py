"""Recall computed by a worker into Redis, read by the gateway without waiting; the cold
first turn's bounded wait; cadences; Redis outages answered with None."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis

from gateway.history.store import SessionRecord, SessionStore
from gateway.keys import RedisKeys
from gateway.recall import AsyncRecallCache, Cadence, RecallSource, async_redis_client
from gateway.settings import Settings
from gateway.tenants import TenantId
from providers.base import ProviderContext
from tests.integration import background as bg
from tests.integration.conftest import RedisServer
from workers.context import WorkerContext
from workers.jobs import sync_body
from workers.queues import JobQueues, redis_client

pytestmark = pytest.mark.integration

DAN = TenantId.of("telegram", "1")
ERIN = TenantId.of("telegram", "12")


def make(settings: Settings, client: redis.asyncio.Redis, queues: JobQueues) -> RecallSource:
    cache = AsyncRecallCache(client, RedisKeys(settings.redis_prefix), settings.recall)
    return RecallSource(cache, queues, settings.recall)


@pytest.fixture
def settings(home: Path, redis_url: str, redis_prefix: str) -> Settings:
    return bg.make_settings(home, redis_url, redis_prefix, recall={"first_turn_budget_s": 0.3})


@pytest.fixture
def ctx(settings: Settings) -> Iterator[WorkerContext]:
    with bg.installed_context(settings) as built:
        yield built


@pytest.fixture
async def aclient(redis_url: str) -> AsyncIterator[redis.asyncio.Redis]:
    client = async_redis_client(redis_url)
    yield client
    await client.aclose()


def remembered(ctx: WorkerContext, tenant: TenantId) -> tuple[SessionRecord, ProviderContext]:
    """A session whose provider already holds one synced turn about hiking."""
    session = bg.new_session(SessionStore(ctx.db), tenant)
    bg.write_turn(ctx.db, tenant, session.id, "I love hiking in the Alps", "Nice!")
    assert sync_body(ctx, tenant, session.id) == 1
    return session, ctx.provider_context(tenant, session)


async def test_worker_fills_the_cache_and_the_turn_reads_it_without_waiting(
    ctx: WorkerContext, aclient: redis.asyncio.Redis, redis_client: redis.Redis
) -> None:
    session, pctx = remembered(ctx, DAN)
    queues = JobQueues(ctx.redis, ctx.settings)
    source = make(ctx.settings, aclient, queues)
    assert await source.cache.get(DAN, session.session_key) is None  # never computed

    queues.enqueue("recall", DAN, session.id, query="any hiking plans?")
    bg.burst(redis_client, ctx.settings)  # main thread: RQ installs signal handlers
    cached = await source.cache.get(DAN, session.session_key)
    assert cached is not None and "hiking in the Alps" in cached.text

    started = time.monotonic()
    text = await source.for_turn(pctx, "what about this weekend?", turn_index=0)
    assert time.monotonic() - started < 0.25
    assert text is not None and "hiking in the Alps" in text
    assert queues.queue("recall").count == 0  # served from the cache, no job
    # Another tenant's turn on a session key of the same shape sees nothing of it.
    other = bg.new_session(SessionStore(ctx.db), ERIN)
    assert await source.cache.get(ERIN, other.session_key) is None


async def test_computed_empty_is_not_waited_for(
    ctx: WorkerContext, aclient: redis.asyncio.Redis
) -> None:
    session = bg.new_session(SessionStore(ctx.db), DAN)
    source = make(ctx.settings, aclient, JobQueues(ctx.redis, ctx.settings))
    await source.cache.put(DAN, session.session_key, "", turn_index=0)
    cached = await source.cache.get(DAN, session.session_key)
    assert cached is not None and cached.text == ""
    started = time.monotonic()
    pctx = ctx.provider_context(DAN, session)
    assert await source.for_turn(pctx, "hello", turn_index=0) is None
    assert time.monotonic() - started < 0.25


async def test_cold_first_turn_gives_up_after_the_budget(
    ctx: WorkerContext, aclient: redis.asyncio.Redis
) -> None:
    session = bg.new_session(SessionStore(ctx.db), DAN)
    queues = JobQueues(ctx.redis, ctx.settings)
    source = make(ctx.settings, aclient, queues)
    started = time.monotonic()
    text = await source.for_turn(ctx.provider_context(DAN, session), "hello", turn_index=0)
    elapsed = time.monotonic() - started
    assert text is None
    assert 0.25 <= elapsed < 0.3 + 0.4
    assert queues.queue("recall").count == 1  # it asked; a worker will fill the cache later
    # A later turn with nothing cached does not wait at all.
    started = time.monotonic()
    assert await source.for_turn(ctx.provider_context(DAN, session), "again", turn_index=1) is None
    assert time.monotonic() - started < 0.25


def test_cold_first_turn_gets_recall_from_a_serving_worker(
    home: Path, redis_url: str, redis_prefix: str, redis_client: redis.Redis
) -> None:
    settings = bg.make_settings(home, redis_url, redis_prefix, recall={"first_turn_budget_s": 5})
    with bg.installed_context(settings) as ctx:
        _session, pctx = remembered(ctx, DAN)
        result: dict[str, object] = {}

        async def turn() -> None:
            client = async_redis_client(redis_url)
            try:
                source = make(settings, client, JobQueues(ctx.redis, settings))
                started = time.monotonic()
                result["text"] = await source.for_turn(pctx, "hiking tips?", turn_index=0)
                result["elapsed"] = time.monotonic() - started
            finally:
                await client.aclose()

        gateway = threading.Thread(target=asyncio.run, args=(turn(),))
        gateway.start()
        # The worker serves from this (main) thread: it blocks until the turn's job arrives,
        # runs it and stops (max_jobs=1), so nothing here waits on a timer.
        assert bg.burst(redis_client, settings, burst=False, max_jobs=1, max_idle_time=10)
        gateway.join(timeout=10)
        assert not gateway.is_alive()
        text = result["text"]
        assert isinstance(text, str) and "hiking in the Alps" in text
        assert isinstance(result["elapsed"], float) and result["elapsed"] < 5


def test_cadences_and_injection(settings: Settings) -> None:
    every = Cadence(
        settings.recall.model_copy(update={"context_cadence": 3, "dialectic_cadence": 2})
    )
    assert [i for i in range(7) if every.recall_due(i)] == [0, 3, 6]
    assert [i for i in range(7) if every.dialectic_due(i)] == [0, 2, 4, 6]
    assert all(every.inject(i) for i in range(5))
    first = Cadence(settings.recall.model_copy(update={"injection_frequency": "first-turn"}))
    assert [i for i in range(4) if first.inject(i)] == [0]


async def test_redis_down_means_no_recall_and_no_error(
    home: Path, private_redis: RedisServer, redis_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    settings = bg.make_settings(home, private_redis.url(), redis_prefix)
    with bg.installed_context(settings) as ctx:
        session = bg.new_session(SessionStore(ctx.db), DAN)
        pctx = ctx.provider_context(DAN, session)
        client = async_redis_client(settings.redis_url)
        queues = JobQueues(redis_client(settings.redis_url), settings)
        source = make(settings, client, queues)
        await source.cache.put(DAN, session.session_key, "cached fact", turn_index=0)
        try:
            private_redis.stop()
            with caplog.at_level(logging.DEBUG, logger="gateway.recall"):
                for index in range(3):
                    assert await source.for_turn(pctx, "hi", turn_index=index) is None
            levels = [r.levelno for r in caplog.records if r.name == "gateway.recall"]
            assert levels == [logging.WARNING, logging.DEBUG, logging.DEBUG]
            private_redis.start()
            await source.cache.put(DAN, session.session_key, "cached fact", turn_index=0)
            with caplog.at_level(logging.INFO, logger="gateway.recall"):
                assert await source.for_turn(pctx, "hi", turn_index=1) == "cached fact"
            assert "reachable again" in caplog.records[-1].getMessage()
        finally:
            await client.aclose()
            queues.connection.close()


async def test_recall_keys_stay_inside_the_tenant_pattern(
    ctx: WorkerContext, aclient: redis.asyncio.Redis, redis_client: redis.Redis
) -> None:
    keys = RedisKeys(ctx.settings.redis_prefix)
    for tenant in (DAN, ERIN):
        ctx.recall_cache.put(tenant, f"telegram:dm:{tenant.user}", "x", turn_index=0)
    found = {k.decode() for k in redis_client.scan_iter(match=keys.tenant_pattern(DAN))}
    assert found == {keys.recall(DAN, "telegram:dm:1")}
