"""``mnemogate worker`` through a Redis restart: it reconnects and recovers the lost jobs.

A private ``redis-server`` without persistence is stopped while a job runs and started again
empty, as after a crash: every queued job is gone, the running one fails mid-way. The
worker process must still be serving afterwards, and every turn must reach the provider
exactly once — with no ``run`` process around, whose relay used to be the only recovery.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from gateway.history.db import Database
from gateway.history.store import SessionStore
from gateway.outbox import Relay
from gateway.settings import Settings
from gateway.tenants import TenantId
from tests.integration import background as bg
from tests.integration.conftest import RedisServer
from tests.integration.gated_provider import gate_key, write_entry_point
from workers.queues import JobQueues

pytestmark = pytest.mark.integration

FRED = TenantId.of("console", "fred")
TURNS = 10


def eventually(check: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll a condition another process makes true (nothing to subscribe to across them)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met in time")
        time.sleep(0.2)


class LogLines:
    """The worker's stderr, read line by line in a thread, so a test can wait for a line."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self._lines: list[str] = []
        self._cond = threading.Condition()
        self._process = process
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._process.stderr is not None
        for line in self._process.stderr:
            with self._cond:
                self._lines.append(line)
                self._cond.notify_all()
        with self._cond:
            self._lines.append("<eof>")
            self._cond.notify_all()

    def wait_for(self, needle: str, timeout: float = 60.0) -> None:
        def seen() -> bool:
            return any(needle in line or line == "<eof>" for line in self._lines)

        with self._cond:
            if not self._cond.wait_for(seen, timeout):
                raise TimeoutError(f"{needle!r} not logged")
            assert any(needle in line for line in self._lines), "".join(self._lines[-30:])

    def close(self) -> None:
        """After the process ended: let the reader finish, then close both pipes."""
        self._reader.join(timeout=10)
        for pipe in (self._process.stdout, self._process.stderr):
            if pipe is not None:
                pipe.close()

    def text(self) -> str:
        with self._cond:
            return "".join(self._lines)


def queue_turns(settings: Settings, db: Database, texts: list[str]) -> str:
    session = bg.new_session(SessionStore(db), FRED)
    rows = [bg.write_turn(db, FRED, session.id, text, "ok") for text in texts]
    client = redis.Redis.from_url(settings.redis_url)
    try:
        Relay(db, JobQueues(client, settings), settings.jobs).enqueue_rows(bg.rows(db, rows))
    finally:
        client.close()
    return session.id


def test_worker_survives_a_redis_restart_mid_job_and_recovers_every_job(
    home: Path, private_redis: RedisServer, redis_prefix: str, tmp_path: Path
) -> None:
    plugin_dir = write_entry_point(tmp_path / "plugins")
    settings = bg.make_settings(
        home, private_redis.url(0), redis_prefix, memory={"provider": "gated"}
    )
    db = Database(settings.state_db)
    texts = [f"line {n}" for n in range(TURNS)]
    session_id = queue_turns(settings, db, texts)
    process = bg.worker_process(settings, "--simple", plugin_dir=plugin_dir)
    log = LogLines(process)
    client = redis.Redis.from_url(settings.redis_url)
    try:
        entered = client.blpop([gate_key(redis_prefix, "entered")], timeout=30)
        assert entered is not None, "no job started"
        private_redis.stop()  # mid-job: the job and the queue are lost with the data
        log.wait_for("reconnecting with backoff")  # the old worker exited here instead
        private_redis.start()
        client.set(gate_key(redis_prefix, "mode"), "open")
        reference = bg.reference(settings)
        eventually(lambda: len(reference.synced_turns(FRED.namespace, session_id)) == TURNS)
        assert process.poll() is None, "the worker exited"
        # Still serving: new work is picked up by the same process.
        later = queue_turns(settings, db, ["after the outage"])
        eventually(lambda: len(reference.synced_turns(FRED.namespace, later)) == 1)
        process.send_signal(signal.SIGTERM)
        status = process.wait(timeout=30)
        output = log.text()
    finally:
        client.close()
        db.close()
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()
    assert status == 0, output
    synced = reference.synced_turns(FRED.namespace, session_id)
    assert [(t.user, t.deliveries) for t in synced] == [(text, 1) for text in texts]
    assert output.count("reconnecting with backoff") == 1
    assert "Redis reachable again" in output


def test_a_worker_only_deployment_recovers_a_job_that_failed_for_good(
    home: Path, private_redis: RedisServer, redis_prefix: str, tmp_path: Path
) -> None:
    plugin_dir = write_entry_point(tmp_path / "plugins")
    settings = bg.make_settings(
        home, private_redis.url(0), redis_prefix, memory={"provider": "gated"}, jobs={"retries": 0}
    )
    db = Database(settings.state_db)
    client = redis.Redis.from_url(settings.redis_url)
    try:
        client.set(gate_key(redis_prefix, "mode"), "fail")
        session_id = queue_turns(settings, db, ["provider was down"])
        failing = bg.worker_process(settings, "--burst", "--simple", plugin_dir=plugin_dir)
        assert bg.finish(failing)[0] == 0
        assert bg.reference(settings).synced_turns(FRED.namespace, session_id) == []
        client.set(gate_key(redis_prefix, "mode"), "open")
        # No `run` process anywhere: the next worker itself hands the failed job to RQ again.
        again = bg.worker_process(settings, "--burst", "--simple", plugin_dir=plugin_dir)
        status, output = bg.finish(again)
    finally:
        client.close()
        db.close()
    assert status == 0, output
    synced = bg.reference(settings).synced_turns(FRED.namespace, session_id)
    assert [(t.user, t.deliveries) for t in synced] == [("provider was down", 1)]
