"""Cached recall is computed again once Honcho has derived the turn, never on the reply path.

The fake Honcho's deriver holds new messages (as the real deriver's queue does) and reports
them as pending until it catches up. A recall computed meanwhile cannot know the turn; the
recall job sees the pending work in Honcho's queue status and schedules a follow-up, which
recomputes and overwrites the cache once the queue is drained.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from rq.job import Job
from rq.registry import ScheduledJobRegistry

from gateway.keys import RedisKeys
from gateway.recall import RecallCache
from gateway.routing import Conversation
from gateway.security.fence import FENCE_OPEN
from gateway.settings import Settings
from tests.fakes.honcho_server import FakeHoncho
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script
from tests.integration.background import turns, work
from tests.integration.honcho_harness import honcho_settings, last_user_message
from workers.queues import JobQueues

pytestmark = pytest.mark.integration

ALICE = Conversation.console("alice")
LEARNED = "console-alice said: I keep bees in Lyon"


@pytest.fixture
def fake() -> Iterator[FakeHoncho]:
    with FakeHoncho() as server:
        server.world.deriver.hold = True  # derivation lags behind, as on a busy server
        yield server


def settings_for(
    home: Path, redis_url: str, prefix: str, fake_llm: FakeLLM, fake: FakeHoncho, **recall: Any
) -> Settings:
    fake_llm.handler = Script(fallback=lambda body: "ok")
    # No cold-turn recall job: the polls below are the recall job's and its follow-ups'.
    options = {"first_turn_budget_s": 0, **recall}
    return honcho_settings(home, redis_url, prefix, fake_llm, fake, recall=options)


def cached(settings: Settings) -> str:
    client = redis.Redis.from_url(settings.redis_url)
    try:
        entry = RecallCache(client, RedisKeys(settings.redis_prefix), settings.recall).get(
            ALICE.tenant, ALICE.session_key
        )
    finally:
        client.close()
    assert entry is not None
    return entry.text


def test_recall_is_refreshed_once_honcho_has_derived_the_turn(
    home: Path, redis_url: str, redis_prefix: str, fake_llm: FakeLLM, fake: FakeHoncho
) -> None:
    settings = settings_for(home, redis_url, redis_prefix, fake_llm, fake, refresh_delay_s=0)
    fake.world.deriver.release_after_polls = 2  # pending twice, then the queue is drained
    turns(settings, ALICE, ["I keep bees in Lyon"])
    work(settings)  # sync; recall (pending); follow-up 1 (pending); follow-up 2 (drained)
    status = fake.calls("GET", "/queue/status")
    assert len(status) == 3 and all("session_id" in r.query for r in status)
    assert LEARNED in cached(settings)
    turns(settings, ALICE, ["what do you know about my bees?"])
    recalled = last_user_message(fake_llm).split(FENCE_OPEN, 1)[1]
    assert LEARNED in recalled


def test_follow_ups_wait_their_delay_give_up_and_never_overwrite_a_newer_turn(
    home: Path,
    redis_url: str,
    redis_prefix: str,
    redis_client: redis.Redis,
    fake_llm: FakeLLM,
    fake: FakeHoncho,
) -> None:
    settings = settings_for(home, redis_url, redis_prefix, fake_llm, fake, refresh_delay_s=30)
    turns(settings, ALICE, ["I keep bees in Lyon"])
    work(settings)
    assert LEARNED not in cached(settings)  # computed while Honcho was still deriving
    queue = JobQueues(redis_client, settings).queue("recall")
    registry = ScheduledJobRegistry(queue=queue)
    [scheduled] = registry.get_job_ids()
    assert scheduled.endswith("-r1-1")  # in 30 s, by the worker's scheduler: not now

    fake.world.deriver.drain(fake.world.workspaces["e2e"])  # Honcho catches up on turn 1…
    quick = settings_for(home, redis_url, redis_prefix, fake_llm, fake, refresh_delay_s=0)
    turns(quick, ALICE, ["they make honey"])  # …and holds turn 2 for good
    polls = len(fake.calls("GET", "/queue/status"))
    work(quick)
    # Turn 2's recall saw pending work; refresh_attempts (3) follow-ups polled, gave up.
    assert len(fake.calls("GET", "/queue/status")) - polls == 1 + 3
    newest = cached(quick)
    assert LEARNED in newest and "honey" not in newest

    # Turn 1's follow-up comes due after turn 2 had its own recall: it changes nothing.
    job = Job.fetch(scheduled, connection=redis_client)
    registry.remove(job)
    queue.enqueue_job(job)
    polls = len(fake.calls("GET", "/queue/status"))
    work(quick)
    assert len(fake.calls("GET", "/queue/status")) == polls and cached(quick) == newest
