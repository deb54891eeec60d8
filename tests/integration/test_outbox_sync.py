"""Outbox → relay → RQ → provider sync: every turn reaches the provider once, in order,
also when jobs are duplicated and when a worker is SIGKILLed in the middle of a job."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import redis
from rq import Queue
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry, StartedJobRegistry

from gateway import outbox
from gateway.history.store import SessionStore
from gateway.outbox import Relay
from gateway.settings import Settings
from gateway.tenants import TenantId
from providers.manager import MemoryManager
from tests.integration import background as bg
from tests.integration.gated_provider import GatedProvider, gate_key, write_entry_point
from workers.context import WorkerContext
from workers.jobs import JobFailed, sync_body
from workers.queues import JobQueues

pytestmark = pytest.mark.integration

ALICE = TenantId.of("telegram", "1")
BOB = TenantId.of("telegram", "12")


@pytest.fixture
def settings(home: Path, redis_url: str, redis_prefix: str) -> Settings:
    return bg.make_settings(home, redis_url, redis_prefix)


@pytest.fixture
def ctx(settings: Settings) -> Iterator[WorkerContext]:
    with bg.installed_context(settings) as built:
        yield built


@pytest.fixture
def queues(ctx: WorkerContext) -> JobQueues:
    return JobQueues(ctx.redis, ctx.settings)


def turns_of(settings: Settings, tenant: TenantId, session_id: str) -> list[tuple[str, int]]:
    return [
        (t.user, t.deliveries)
        for t in bg.reference(settings).synced_turns(tenant.namespace, session_id)
    ]


def open_rows(ctx: WorkerContext) -> list[int]:
    rows = ctx.db.read(
        lambda c: c.execute("SELECT id FROM outbox WHERE done_at IS NULL ORDER BY id").fetchall()
    )
    return [int(r[0]) for r in rows]


def pointer(ctx: WorkerContext, tenant: TenantId, session_id: str) -> int:
    row = ctx.db.read(
        lambda c: c.execute(
            "SELECT provider_synced_upto FROM sessions WHERE tenant_id = ? AND id = ?",
            (str(tenant), session_id),
        ).fetchone()
    )
    return int(row[0])


def test_turns_reach_the_provider_once_in_order(
    ctx: WorkerContext, queues: JobQueues, redis_client: redis.Redis
) -> None:
    store = SessionStore(ctx.db)
    alice, bob = bg.new_session(store, ALICE), bg.new_session(store, BOB)
    relay = Relay(ctx.db, queues, ctx.settings.jobs)
    ids = [bg.write_turn(ctx.db, ALICE, alice.id, f"alice {n}", f"reply {n}") for n in range(3)]
    ids.append(bg.write_turn(ctx.db, BOB, bob.id, "bob 0", "reply"))

    assert relay.enqueue_rows(bg.rows(ctx.db, ids)) == 4
    assert outbox.pending(ctx.db, 10, redeliver_after_s=60) == []
    sync_queue = queues.queue("sync")
    assert sync_queue.name == f"{ctx.settings.redis_prefix}-sync"
    job = Job.fetch(sync_queue.job_ids[0], connection=redis_client)
    assert job.meta["tenant"] == "telegram-1"
    assert job.id.startswith("sync-telegram-1-")

    assert bg.burst(redis_client, ctx.settings)

    assert turns_of(ctx.settings, ALICE, alice.id) == [(f"alice {n}", 1) for n in range(3)]
    assert turns_of(ctx.settings, BOB, bob.id) == [("bob 0", 1)]
    assert open_rows(ctx) == []
    last = store.messages(ALICE, alice.id)[-1].id
    assert pointer(ctx, ALICE, alice.id) == last


def test_duplicate_jobs_still_deliver_each_turn_once(
    ctx: WorkerContext, queues: JobQueues, redis_client: redis.Redis
) -> None:
    store = SessionStore(ctx.db)
    session = bg.new_session(store, ALICE)
    first = bg.write_turn(ctx.db, ALICE, session.id, "one", "r1")
    second = bg.write_turn(ctx.db, ALICE, session.id, "two", "r2")
    relay = Relay(ctx.db, queues, ctx.settings.jobs)

    rows = bg.rows(ctx.db, [first, second])
    relay.enqueue_rows(rows)
    relay.enqueue_rows(rows)  # the fast path and the relay loop both got there
    again = queues.enqueue("sync", ALICE, session.id, dedup=str(rows[0].payload["upto"]))
    assert again.outcome == "active"
    assert queues.queue("sync").count == 2  # one job per row, not per enqueue
    extra = queues.enqueue("sync", ALICE, session.id)  # a distinct job for the same work
    assert extra.outcome == "enqueued"

    bg.burst(redis_client, ctx.settings)
    assert turns_of(ctx.settings, ALICE, session.id) == [("one", 1), ("two", 1)]
    assert sync_body(ctx, ALICE, session.id) == 0  # nothing left behind the pointer
    assert queues.enqueue(
        "sync", ALICE, session.id, dedup=str(rows[0].payload["upto"])
    ).outcome == ("finished")


def test_outbox_row_lifecycle(ctx: WorkerContext) -> None:
    session = bg.new_session(SessionStore(ctx.db), ALICE)
    other = bg.new_session(SessionStore(ctx.db), BOB)
    with pytest.raises(ValueError, match="kind"):
        ctx.db.write(lambda c: outbox.add(c, ALICE, session.id, cast(Any, "bogus"), {}))
    with pytest.raises(ValueError, match="primitives"):
        ctx.db.write(lambda c: outbox.add(c, ALICE, session.id, "title", cast(Any, {"x": [1]})))
    title = ctx.db.write(lambda c: outbox.add(c, ALICE, session.id, "title", {"n": 1}))
    theirs = ctx.db.write(lambda c: outbox.add(c, BOB, other.id, "title"))
    assert [r.id for r in outbox.pending(ctx.db, 10, redeliver_after_s=60)] == [title, theirs]
    assert bg.rows(ctx.db, [title])[0].payload == {"n": 1}

    assert outbox.mark_done(ctx.db, BOB, [title]) == 0  # not Bob's row: untouched
    outbox.mark_enqueued(ctx.db, [title])
    assert [r.id for r in outbox.pending(ctx.db, 10, redeliver_after_s=60)] == [theirs]
    later = time.time() + 120
    assert [r.id for r in outbox.pending(ctx.db, 10, redeliver_after_s=60, now=later)] == [
        title,
        theirs,
    ]
    assert outbox.mark_done(ctx.db, ALICE, [title]) == 1
    [row] = bg.rows(ctx.db, [title])
    assert row.attempts == 1 and row.done_at is not None
    assert outbox.purge_done(ctx.db, older_than=row.done_at) == 0
    assert outbox.purge_done(ctx.db, older_than=row.done_at + 1) == 1
    assert ctx.db.write(lambda c: outbox.forget_tenant(c, BOB)) == 1
    assert outbox.pending(ctx.db, 10, redeliver_after_s=0) == []


def test_sync_waits_for_the_session_lock(ctx: WorkerContext, redis_client: redis.Redis) -> None:
    session = bg.new_session(SessionStore(ctx.db), ALICE)
    bg.write_turn(ctx.db, ALICE, session.id, "one", "r1")
    lock_key = ctx.keys.sync_lock(ALICE, session.id)
    redis_client.set(lock_key, "another job", px=30_000)  # a sync of this session is running
    with pytest.raises(JobFailed, match="busy"):
        sync_body(ctx, ALICE, session.id)
    assert turns_of(ctx.settings, ALICE, session.id) == []
    redis_client.delete(lock_key)
    assert sync_body(ctx, ALICE, session.id) == 1
    assert redis_client.exists(lock_key) == 0  # released after the pass


def test_incognito_sessions_are_never_synced(
    ctx: WorkerContext, queues: JobQueues, redis_client: redis.Redis
) -> None:
    store = SessionStore(ctx.db)
    session = bg.new_session(store, ALICE, incognito=True)
    row = bg.write_turn(ctx.db, ALICE, session.id, "secret", "ok")
    Relay(ctx.db, queues, ctx.settings.jobs).enqueue_rows(bg.rows(ctx.db, [row]))
    bg.burst(redis_client, ctx.settings)
    assert turns_of(ctx.settings, ALICE, session.id) == []
    assert bg.reference(ctx.settings).calls(ALICE.namespace) == []
    assert open_rows(ctx) == []


def test_failures_land_in_the_failed_registry_with_the_namespace(
    settings: Settings, redis_client: redis.Redis
) -> None:
    settings = bg.make_settings(
        settings.home, settings.redis_url, settings.redis_prefix, jobs={"retries": 1}
    )
    manager = MemoryManager(2.0)
    manager.register(GatedProvider(settings.home, settings.redis_url, settings.redis_prefix))
    redis_client.set(gate_key(settings.redis_prefix, "mode"), "fail")
    with bg.installed_context(settings, manager=manager) as ctx:
        session = bg.new_session(SessionStore(ctx.db), ALICE)
        row = bg.write_turn(ctx.db, ALICE, session.id, "hello", "hi")
        queues = JobQueues(ctx.redis, settings)
        Relay(ctx.db, queues, settings.jobs).enqueue_rows(bg.rows(ctx.db, [row]))
        bg.burst(redis_client, settings)
        failed = FailedJobRegistry(queue=queues.queue("sync"))
        [job_id] = failed.get_job_ids()
        job = Job.fetch(job_id, connection=redis_client)
        assert job.meta["tenant"] == "telegram-1"
        assert "JobFailed" in job.meta["error"]
        assert redis_client.llen(gate_key(settings.redis_prefix, "entered")) == 2  # 1 + retry
        assert open_rows(ctx) == [row]  # still owed: the relay hands it over again later
        # RQ gave up on a job that is safe to repeat: the relay replaces it with a fresh one.
        redis_client.set(gate_key(settings.redis_prefix, "mode"), "open")
        relay = Relay(ctx.db, queues, settings.jobs, redeliver_after_s=0.001)
        assert relay.run_once() == 1
        bg.burst(redis_client, settings)
        assert turns_of(settings, ALICE, session.id) == [("hello", 1)]
        assert open_rows(ctx) == []
    manager.shutdown()


# --- a worker process killed with SIGKILL in the middle of a sync job ---------------------


@pytest.fixture
def gated(settings: Settings, tmp_path: Path) -> tuple[Settings, Path]:
    plugin_dir = write_entry_point(tmp_path / "plugins")
    gated_settings = bg.make_settings(
        settings.home, settings.redis_url, settings.redis_prefix, memory={"provider": "gated"}
    )
    return gated_settings, plugin_dir


def _prepare(settings: Settings) -> tuple[str, list[int]]:
    """Two turns of ALICE written and enqueued by this process (the gateway's part)."""
    with bg.installed_context(settings, manager=MemoryManager(2.0)) as ctx:
        session = bg.new_session(SessionStore(ctx.db), ALICE)
        ids = [bg.write_turn(ctx.db, ALICE, session.id, f"turn {n}", "ok") for n in range(2)]
        relay = Relay(ctx.db, JobQueues(ctx.redis, settings), settings.jobs)
        assert relay.enqueue_rows(bg.rows(ctx.db, ids)) == 2
        return session.id, ids


def _entered(client: redis.Redis, settings: Settings) -> tuple[int, str]:
    """Block until the provider, inside a worker, reaches the gate: (its pid, turn id)."""
    popped = cast(
        "list[bytes] | None", client.blpop([gate_key(settings.redis_prefix, "entered")], 30)
    )
    assert popped is not None, "the worker never reached the provider"
    pid, turn_id = popped[1].decode().split()
    return int(pid), turn_id


def test_killed_work_horse_is_retried_and_each_turn_synced_once(
    gated: tuple[Settings, Path], redis_client: redis.Redis
) -> None:
    settings, plugin_dir = gated
    session_id, _ = _prepare(settings)
    process = bg.worker_process(settings, "--burst", plugin_dir=plugin_dir)
    try:
        horse, _turn = _entered(redis_client, settings)
        assert horse != process.pid  # the job runs in a forked child
        redis_client.set(gate_key(settings.redis_prefix, "mode"), "open")
        os.kill(horse, signal.SIGKILL)  # what the OOM killer does
        status, output = bg.finish(process)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert status == 0, output
    assert "Work-horse terminated unexpectedly" in output
    assert turns_of(settings, ALICE, session_id) == [("turn 0", 1), ("turn 1", 1)]


def test_killed_worker_job_is_recovered_and_each_turn_synced_once(
    gated: tuple[Settings, Path], redis_client: redis.Redis
) -> None:
    settings, plugin_dir = gated
    session_id, row_ids = _prepare(settings)
    process = bg.worker_process(settings, plugin_dir=plugin_dir)
    horse, _turn = _entered(redis_client, settings)
    # The whole worker dies at once (machine or container lost): parent first, then horse.
    os.killpg(process.pid, signal.SIGKILL)
    os.kill(horse, signal.SIGKILL)
    process.communicate(timeout=10)

    queue = Queue(f"{settings.redis_prefix}-sync", connection=redis_client)
    started = StartedJobRegistry(queue=queue)
    [stuck] = started.get_job_ids(cleanup=False)
    assert Job.fetch(stuck, connection=redis_client).get_status() == JobStatus.STARTED
    # RQ declares the job abandoned once its heartbeat lapses (≥ 60 s) and a worker's
    # maintenance cleans the registry; run that cleanup as of a time after the lapse.
    started.cleanup(timestamp=time.time() + 3600)
    assert stuck in queue.job_ids  # retried: back on the queue, same id

    redis_client.set(gate_key(settings.redis_prefix, "mode"), "open")
    status, output = bg.finish(bg.worker_process(settings, "--burst", plugin_dir=plugin_dir))
    assert status == 0, output
    assert turns_of(settings, ALICE, session_id) == [("turn 0", 1), ("turn 1", 1)]
    with bg.installed_context(settings, manager=MemoryManager(2.0)) as ctx:
        assert open_rows(ctx) == []
    assert row_ids
