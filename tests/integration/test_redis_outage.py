"""Redis down during traffic: turns keep their outbox rows, the relay replays them, and the
provider still gets every turn exactly once."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
import redis

from gateway import outbox
from gateway.history.store import SessionStore
from gateway.outbox import Relay
from gateway.tenants import TenantId
from tests.integration import background as bg
from tests.integration.conftest import RedisServer
from workers.queues import JobQueues, redis_client

pytestmark = pytest.mark.integration

CAROL = TenantId.of("discord", "77")


def test_outbox_replays_turns_written_while_redis_was_down(
    home: Path, private_redis: RedisServer, redis_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    settings = bg.make_settings(home, private_redis.url(), redis_prefix)
    with bg.installed_context(settings) as ctx:
        queues = JobQueues(redis_client(settings.redis_url), settings)
        relay = Relay(ctx.db, queues, settings.jobs)
        session = bg.new_session(SessionStore(ctx.db), CAROL)

        first = bg.write_turn(ctx.db, CAROL, session.id, "turn 0", "ok")
        assert relay.enqueue_rows(bg.rows(ctx.db, [first])) == 1
        # Redis goes away — without persistence, so the queued job is lost with it.
        private_redis.stop()
        with caplog.at_level(logging.DEBUG, logger="gateway.outbox"):
            later = []
            for n in range(1, 5):
                row = bg.write_turn(ctx.db, CAROL, session.id, f"turn {n}", "ok")
                assert relay.enqueue_rows(bg.rows(ctx.db, [row])) == 0  # never raises
                later.append(row)
            assert relay.run_once() == 0
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1 and "Redis unreachable" in warnings[0].getMessage()

        stuck = bg.rows(ctx.db, later)
        assert all(r.enqueued_at is None and r.attempts >= 1 for r in stuck)
        assert all(r.last_error and r.last_error.startswith("redis:") for r in stuck)
        assert [r.id for r in outbox.pending(ctx.db, 10, redeliver_after_s=60)] == later

        private_redis.start()
        # The first row counts as enqueued, but its job vanished with Redis: a relay pass
        # that looks at enqueued rows again puts it back (same job id), with the rest.
        replay = Relay(ctx.db, queues, settings.jobs, redeliver_after_s=0.001)
        with caplog.at_level(logging.INFO, logger="gateway.outbox"):
            assert replay.run_once() == 5
        assert queues.queue("sync").count == 5

        worker_conn = redis.Redis.from_url(settings.redis_url)
        try:
            bg.burst(worker_conn, settings)
        finally:
            worker_conn.close()
        synced = bg.reference(settings).synced_turns(CAROL.namespace, session.id)
        assert [(t.user, t.deliveries) for t in synced] == [(f"turn {n}", 1) for n in range(5)]
        assert outbox.pending(ctx.db, 10, redeliver_after_s=0) == []
        queues.connection.close()


def test_relay_recovery_is_logged_once(
    home: Path, private_redis: RedisServer, redis_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    settings = bg.make_settings(home, private_redis.url(), redis_prefix)
    with bg.installed_context(settings) as ctx:
        queues = JobQueues(redis_client(settings.redis_url), settings)
        relay = Relay(ctx.db, queues, settings.jobs)
        session = bg.new_session(SessionStore(ctx.db), CAROL)
        private_redis.stop()
        row = bg.write_turn(ctx.db, CAROL, session.id, "hello", "ok")
        assert relay.enqueue_rows(bg.rows(ctx.db, [row])) == 0
        private_redis.start()
        with caplog.at_level(logging.INFO, logger="gateway.outbox"):
            assert relay.run_once() == 1
            assert relay.run_once() == 0
        recovered = [r for r in caplog.records if "reachable again" in r.getMessage()]
        assert len(recovered) == 1
        queues.connection.close()


async def test_relay_loop_passes_until_stopped_and_respects_the_lock(
    home: Path, redis_url: str, redis_prefix: str
) -> None:
    settings = bg.make_settings(home, redis_url, redis_prefix, jobs={"relay_interval_s": 0.05})
    with bg.installed_context(settings) as ctx:
        queues = JobQueues(redis_client(settings.redis_url), settings)
        relay = Relay(ctx.db, queues, settings.jobs)
        session = bg.new_session(SessionStore(ctx.db), CAROL)
        held = queues.connection.lock(queues.keys.relay_lock(), timeout=30)
        assert held.acquire(blocking=False)
        first = bg.write_turn(ctx.db, CAROL, session.id, "one", "ok")
        assert relay.run_once() == 0  # another gateway holds the relay lock
        held.release()

        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(0.3, stop.set)
        await relay.run_forever(stop)  # first pass at once, then one per interval
        assert bg.rows(ctx.db, [first])[0].enqueued_at is not None
        assert queues.queue("sync").count == 1
        queues.connection.close()
