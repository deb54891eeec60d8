"""``mnemogate worker`` as a real process: burst mode, unreachable Redis, warm shutdown."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import redis
from rq.job import Job, JobStatus

from gateway.history.store import SessionStore
from gateway.outbox import Relay
from gateway.tenants import TenantId
from providers.manager import MemoryManager
from tests.conftest import run_cli
from tests.integration import background as bg
from tests.integration.conftest import free_port
from tests.integration.gated_provider import gate_key, write_entry_point
from workers.queues import JobQueues

pytestmark = pytest.mark.integration

FRED = TenantId.of("console", "fred")


def test_burst_processes_queued_jobs_and_exits_zero(
    home: Path, redis_url: str, redis_prefix: str, redis_client: redis.Redis
) -> None:
    settings = bg.make_settings(home, redis_url, redis_prefix)
    with bg.installed_context(settings, manager=MemoryManager(2.0)) as ctx:
        session = bg.new_session(SessionStore(ctx.db), FRED)
        rows = [bg.write_turn(ctx.db, FRED, session.id, f"line {n}", "ok") for n in range(2)]
        Relay(ctx.db, JobQueues(ctx.redis, settings), settings.jobs).enqueue_rows(
            bg.rows(ctx.db, rows)
        )
    done = bg.run_worker(settings, "--burst", "--queue", "sync")
    assert done.returncode == 0, done.stderr
    synced = bg.reference(settings).synced_turns(FRED.namespace, session.id)
    assert [(t.user, t.deliveries) for t in synced] == [("line 0", 1), ("line 1", 1)]
    assert JobQueues(redis_client, settings).queue("sync").count == 0


def test_unreachable_redis_is_a_one_line_error(home: Path) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    done = run_cli(["worker", "--burst"], home=home, MNEMOGATE_REDIS_URL=url)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("Error: cannot reach Redis at redis://127.0.0.1:")


def test_help_says_how_jobs_run(home: Path) -> None:
    done = run_cli(["worker", "--help"], home=home)
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "one job per fork" in text and "--simple" in text and "warm shutdown" in text


def test_sigterm_lets_the_running_job_finish(
    home: Path, redis_url: str, redis_prefix: str, redis_client: redis.Redis, tmp_path: Path
) -> None:
    plugin_dir = write_entry_point(tmp_path / "plugins")
    settings = bg.make_settings(home, redis_url, redis_prefix, memory={"provider": "gated"})
    with bg.installed_context(settings, manager=MemoryManager(2.0)) as ctx:
        session = bg.new_session(SessionStore(ctx.db), FRED)
        row = bg.write_turn(ctx.db, FRED, session.id, "slow one", "ok")
        [enqueued] = [
            JobQueues(ctx.redis, settings).enqueue_payload(
                r.kind, r.tenant, r.session_id, r.payload, outbox_id=r.id
            )
            for r in bg.rows(ctx.db, [row])
        ]
    process = bg.worker_process(settings, plugin_dir=plugin_dir)  # not burst: serves forever
    try:
        popped = redis_client.blpop([gate_key(settings.redis_prefix, "entered")], timeout=30)
        assert popped is not None, "the job never started"
        process.send_signal(signal.SIGTERM)  # warm shutdown requested mid-job
        redis_client.rpush(gate_key(settings.redis_prefix, "pass"), "go")
        status, output = bg.finish(process, timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert status == 0, output
    assert "warm shut down requested" in output
    job = Job.fetch(enqueued.job_id, connection=redis_client)
    assert job.get_status() == JobStatus.FINISHED
    synced = bg.reference(settings).synced_turns(FRED.namespace, session.id)
    assert [(t.user, t.deliveries) for t in synced] == [("slow one", 1)]
