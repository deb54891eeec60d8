"""``mnemogate status [--json]`` against real Redis/RQ, a real worker process and state.db."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
import redis
from rq import Queue, Worker

from gateway.history.db import Database
from gateway.history.store import SessionStore
from gateway.tenants import TenantId
from tests.conftest import run_cli
from tests.integration import background as bg
from tests.integration.metrics_harness import wait_for
from workers.queues import queue_name

pytestmark = pytest.mark.integration
FRED = TenantId.of("console", "fred")


def _status(settings_env: dict[str, str], home: Path, *args: str) -> tuple[int, str]:
    done = run_cli(["status", *args], home=home, **settings_env)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout


def test_status_reports_a_dead_worker_a_failed_job_and_the_outbox_backlog(
    home: Path, redis_url: str, redis_prefix: str, redis_client: redis.Redis
) -> None:
    settings = bg.make_settings(home, redis_url, redis_prefix, memory={"provider": None})
    env = bg.settings_env(settings)
    code, out = _status(env, home, "--json")
    report = json.loads(out)
    assert (code, report["healthy"], report["problems"]) == (0, True, [])
    assert [q["queue"] for q in report["queues"]] == ["sync", "recall", "review", "maint"]
    assert report["leader"] == "single gateway" and report["workers"] == []

    # a worker that is killed cannot unregister itself: RQ still lists it
    worker = bg.worker_process(settings, "--name", "doomed", "--queue", "maint")
    try:
        wait_for(
            lambda: any(
                w.name == "doomed" and w.get_state() == "idle"
                for w in Worker.all(connection=redis_client)
            ),
            "the worker to register and wait for jobs",
        )
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()
        worker.communicate()
    # a job that fails for good, and a turn whose sync row is still open
    sync = Queue(queue_name(redis_prefix, "sync"), connection=redis_client)
    sync.enqueue_call("workers.jobs.sync_session", args=("not-a-tenant", "s"), job_id="bad-1")
    bg.burst(redis_client, settings)
    db = Database(settings.state_db)
    session = bg.new_session(SessionStore(db), FRED)
    bg.write_turn(db, FRED, session.id, "hello", "hi")
    db.close()

    code, out = _status(env, home, "--json")
    report = json.loads(out)
    assert code == 1 and report["healthy"] is False
    [doomed] = report["workers"]
    assert (doomed["name"], doomed["alive"], doomed["state"]) == ("doomed", False, "idle")
    assert doomed["queues"] == [queue_name(redis_prefix, "maint")]
    by_queue = {q["queue"]: q for q in report["queues"]}
    assert by_queue["sync"]["failed"] == 1 and by_queue["sync"]["depth"] == 0
    assert report["outbox"]["backlog"] == 1 and report["outbox"]["oldest_age_s"] >= 0
    assert "worker doomed is registered but dead" in report["problems"]

    code, text = _status(env, home)
    assert code == 1
    assert "status: DEGRADED" in text and "worker doomed" in text and "DEAD" in text
    assert "outbox: 1 open" in text and "1 failed" in text


def test_status_says_when_redis_is_unreachable(home: Path) -> None:
    from tests.integration.conftest import free_port

    code, out = _status({"MNEMOGATE_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}, home)
    assert code == 1
    assert "redis unreachable" in out
