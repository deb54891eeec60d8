"""A session's end and switch reach the provider through the background plane, never inline.

Queue mode with real Redis/RQ (an in-process SimpleWorker) and a provider whose
``on_session_end`` blocks until the test lets it go; inline mode with the reference provider
for ``/new``, ``/resume``, compression and idle expiry.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from rq.job import Job

from gateway.agent.dispatch import dispatch
from gateway.app import App
from gateway.history.db import Database
from gateway.outbox import Relay
from gateway.routing import Conversation
from gateway.settings import Settings
from providers.reference import ReferenceProvider
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script
from tests.integration import slow_provider
from tests.integration.background import make_settings, reference, work
from tests.integration.test_sessions_flow import route
from workers.queues import JobQueues

pytestmark = pytest.mark.integration
ALICE = Conversation.console("alice")
HOOKS = ("sync_turn", "on_session_end", "on_session_switch")


@pytest.fixture
def slow_end(tmp_path: Path) -> Iterator[None]:
    directory = slow_provider.install_slow_end(tmp_path / "plugins")
    sys.path.insert(0, str(directory))
    slow_provider.END_ENTERED.clear()
    slow_provider.END_RELEASE.clear()
    slow_provider.END_REASONS.clear()
    try:
        yield
    finally:
        slow_provider.END_RELEASE.set()
        sys.path.remove(str(directory))


def queue_settings(home: Path, redis_url: str, prefix: str, fake_llm: FakeLLM) -> Settings:
    return make_settings(
        home,
        redis_url,
        prefix,
        llm={"base_url": fake_llm.base_url, "model": "m", "max_retries": 0},
        memory={"provider": "slow-end"},
        recall={"first_turn_budget_s": 0.2},
        jobs={"mode": "queue"},
    )


def hook_calls(provider: ReferenceProvider) -> list[tuple[str, str | None]]:
    namespace = ALICE.tenant.namespace
    return [(c.method, c.session_id) for c in provider.calls(namespace) if c.method in HOOKS]


def outbox_rows(db: Database, kind: str) -> list[tuple[str, dict[str, Any], bool]]:
    rows = db.read(
        lambda c: c.execute(
            "SELECT session_id, payload, done_at FROM outbox WHERE kind = ? ORDER BY id", (kind,)
        ).fetchall()
    )
    return [(r[0], json.loads(r[1]), r[2] is not None) for r in rows]


def release_when_entered(seen: list[list[tuple[str, str | None]]], settings: Settings) -> None:
    """In a helper thread (the worker needs the main thread): once the provider is inside
    ``on_session_end``, note what it had received by then and let it go on."""
    if slow_provider.END_ENTERED.wait(30):
        seen.append(hook_calls(reference(settings)))
    slow_provider.END_RELEASE.set()


async def start_over(settings: Settings, fake_llm: FakeLLM) -> tuple[str, str, str | None]:
    """Two turns, then /new: (old session, new session, the reply to /new)."""
    fake_llm.handler = Script(fallback=lambda body: "noted")
    async with App(settings) as app:
        old = (await app.agent.run_turn(ALICE, "I keep bees in Lyon")).session_id
        await app.agent.run_turn(ALICE, "and goats in Porto")
        reply = await dispatch(app.agent, ALICE, "/new")
        entered = slow_provider.END_ENTERED.is_set()
        live = app.sessions.live_session(ALICE.tenant, ALICE.session_key)
        assert live is not None and live.id != old
    assert not entered, "/new waited for the provider's on_session_end"
    return old, live.id, reply


def test_new_answers_at_once_and_the_worker_ends_the_session_after_its_sync(
    slow_end: None, home: Path, redis_url: str, redis_prefix: str, fake_llm: FakeLLM
) -> None:
    settings = queue_settings(home, redis_url, redis_prefix, fake_llm)
    old, new, reply = asyncio.run(start_over(settings, fake_llm))
    assert reply is not None and reply.startswith("Started a new conversation")
    seen: list[list[tuple[str, str | None]]] = []
    helper = threading.Thread(target=release_when_entered, args=(seen, settings))
    helper.start()
    work(settings)
    helper.join(30)
    assert seen == [[("sync_turn", old), ("sync_turn", old)]]  # every turn before the end
    assert hook_calls(reference(settings)) == [
        ("sync_turn", old),
        ("sync_turn", old),
        ("on_session_end", old),
        ("on_session_switch", new),
    ]
    assert slow_provider.END_REASONS == ["new"]
    db = Database(settings.state_db)
    assert outbox_rows(db, "session_end") == [(old, {"reason": "new"}, True)]
    assert outbox_rows(db, "session_switch") == [(new, {"previous": old, "reason": "new"}, True)]
    # A relay pass over everything and another worker run tell the provider nothing again.
    connection = redis.Redis.from_url(settings.redis_url)
    try:
        Relay(db, JobQueues(connection, settings), settings.jobs).run_once(redeliver_after_s=0)
    finally:
        connection.close()
    work(settings)
    assert [m for m, _ in hook_calls(reference(settings))].count("on_session_end") == 1


def test_the_end_job_syncs_the_session_itself_when_its_sync_jobs_are_gone(
    slow_end: None, home: Path, redis_url: str, redis_prefix: str, fake_llm: FakeLLM
) -> None:
    settings = queue_settings(home, redis_url, redis_prefix, fake_llm)
    slow_provider.END_RELEASE.set()
    old, _, _ = asyncio.run(start_over(settings, fake_llm))
    connection = redis.Redis.from_url(settings.redis_url)
    try:  # the sync jobs vanish (e.g. Redis lost them); only the end job is left
        queue = JobQueues(connection, settings).queue("sync")
        for job_id in queue.job_ids:
            job = Job.fetch(job_id, connection=connection)
            if job.meta.get("kind") == "sync":
                queue.remove(job)
                job.delete()
        assert queue.count == 2  # session_end, session_switch
    finally:
        connection.close()
    work(settings)
    calls = hook_calls(reference(settings))
    assert calls[:3] == [("sync_turn", old), ("sync_turn", old), ("on_session_end", old)]
    assert all(done for *_, done in outbox_rows(Database(settings.state_db), "sync"))


async def test_resume_compression_and_private_sessions_inline(
    make_settings: Any, fake_llm: FakeLLM
) -> None:
    fake_llm.handler = route(["Kyoto plans"])
    settings = make_settings(
        memory={"provider": "reference"},
        sessions={"protect_first": 1, "protect_last": 2, "compression_threshold": 0.11},
        llm={"base_url": fake_llm.base_url, "model": "fake", "context_window": 1024},
    )
    async with App(settings) as app:
        first = await app.agent.run_turn(ALICE, "I want to visit Kyoto")
        await app.drain()
        await app.agent.run_turn(ALICE, "What about the temples near Arashiyama?")
        await app.drain()
        child = app.sessions.live_session(ALICE.tenant, ALICE.session_key)
        assert child is not None and child.parent_id == first.session_id  # compressed
        await dispatch(app.agent, ALICE, "/new private")
        await app.drain()
        private = app.sessions.live_session(ALICE.tenant, ALICE.session_key)
        assert private is not None and private.incognito
        await dispatch(app.agent, ALICE, f"/resume {child.id}")
        await app.drain()
        ends = outbox_rows(app.db, "session_end")
        switches = outbox_rows(app.db, "session_switch")
        calls = hook_calls(ReferenceProvider(settings.home))
    parent = first.session_id
    assert ends == [(parent, {"reason": "compression"}, True), (child.id, {"reason": "new"}, True)]
    # Nothing about the private session: not its start, not its end.
    assert switches == [(child.id, {"previous": parent, "reason": "compression"}, True)]
    assert ("on_session_end", parent) in calls and ("on_session_end", child.id) in calls
    assert ("on_session_switch", child.id) in calls
    assert all(session != private.id for _, session in calls)


async def test_idle_sessions_end_with_reason_idle(make_settings: Any, fake_llm: FakeLLM) -> None:
    fake_llm.handler = Script(fallback=lambda body: "ok")
    settings = make_settings(memory={"provider": "reference"}, sessions={"idle_minutes": 60})
    async with App(settings) as app:
        swept = (await app.agent.run_turn(ALICE, "hello")).session_id
        await app.drain()
        assert await app.agent.expire_idle(now=time.time() + 59 * 60) == 0
        assert await app.agent.expire_idle(now=time.time() + 61 * 60) == 1
        await app.drain()
        assert app.sessions.get_session(ALICE.tenant, swept).end_reason == "idle"
        # Found idle by the next message: it goes to a new session, the old one ends.
        aged = (await app.agent.run_turn(ALICE, "hello again")).session_id
        assert aged != swept
        age(app.db, aged, 2 * 3600)
        fresh = (await app.agent.run_turn(ALICE, "back after two hours")).session_id
        await app.drain()
        assert fresh != aged
        assert app.sessions.get_session(ALICE.tenant, aged).end_reason == "idle"
        ends = outbox_rows(app.db, "session_end")
        switches = outbox_rows(app.db, "session_switch")
        calls = hook_calls(ReferenceProvider(settings.home))
    assert ends == [(swept, {"reason": "idle"}, True), (aged, {"reason": "idle"}, True)]
    assert switches == [(fresh, {"previous": aged, "reason": "new"}, True)]
    assert calls.count(("on_session_end", swept)) == 1
    assert calls.count(("on_session_end", aged)) == 1


async def test_a_resumed_old_session_is_not_taken_for_an_idle_one(
    make_settings: Any, fake_llm: FakeLLM
) -> None:
    fake_llm.handler = Script(fallback=lambda body: "ok")
    settings = make_settings(sessions={"idle_minutes": 60})
    async with App(settings) as app:
        old = (await app.agent.run_turn(ALICE, "an old chat")).session_id
        await dispatch(app.agent, ALICE, "/new")
        age(app.db, old, 3 * 24 * 3600)
        await dispatch(app.agent, ALICE, f"/resume {old}")
        assert (await app.agent.run_turn(ALICE, "where were we?")).session_id == old
        assert await app.agent.expire_idle() == 0


def age(db: Database, session_id: str, seconds: float) -> None:
    """Move a session and its messages ``seconds`` into the past."""

    def write(conn: Any) -> None:
        conn.execute(
            "UPDATE sessions SET started_at = started_at - ? WHERE id = ?", (seconds, session_id)
        )
        conn.execute(
            "UPDATE messages SET timestamp = timestamp - ? WHERE session_id = ?",
            (seconds, session_id),
        )

    db.write(write)
