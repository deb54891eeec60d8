"""/metrics, /healthz and /readyz of real ``mnemogate run`` and ``mnemogate worker`` processes.

Real Redis and RQ, the fake Telegram Bot API and the fake LLM over HTTP; metrics are parsed
with prometheus_client's parser. The worker forks a work horse per job, so the provider
calls counted in its scrape came back from the horses.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis

from gateway.settings import load_settings
from gateway.tenants import TenantId
from tests.conftest import cli_env
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script
from tests.fakes.telegram_server import TOKEN, FakeTelegram
from tests.integration.conftest import RedisServer, free_port
from tests.integration.metrics_harness import (
    gateway_env,
    get,
    ready,
    scrape,
    start,
    stop,
    value,
    wait_for,
)
from workers.queues import JOBS, JobQueues

pytestmark = pytest.mark.integration
JOB_KINDS = tuple(JOBS)
ALICE = 4242
SECRET_TEXT = "my plan is to visit the lighthouse"


@pytest.fixture
def tg() -> FakeTelegram:
    with FakeTelegram() as fake:
        yield fake  # type: ignore[misc]


def _listen() -> tuple[str, str]:
    port = free_port()
    return f"127.0.0.1:{port}", f"http://127.0.0.1:{port}"


def test_turn_and_every_job_kind_move_the_counters(
    home: Path, tg: FakeTelegram, fake_llm: FakeLLM, redis_url: str, redis_prefix: str
) -> None:
    fake_llm.handler = Script(fallback=lambda body: "Noted, have a good trip.")
    listen, gw = _listen()
    env = gateway_env(
        home,
        tg,
        fake_llm,
        redis_url,
        redis_prefix,
        listen,
        MNEMOGATE_ACCESS__ALLOWED_USERS=f"telegram:{ALICE}",
        MNEMOGATE_MEMORY__PROVIDER="reference",
        MNEMOGATE_MEMORY__NUDGE_INTERVAL="1",
        MNEMOGATE_RECALL__FIRST_TURN_BUDGET_S="0",
        MNEMOGATE_LOG__FORMAT="json",
        MNEMOGATE_LOG_LEVEL="INFO",
    )
    gateway = start("run", env)
    worker = None
    try:
        wait_for(lambda: ready(gw), "the gateway to be ready")
        assert get(f"{gw}/healthz") == (200, "ok\n")
        tg.push_message(ALICE, ALICE, SECRET_TEXT)
        tg.wait_for_sent(1, timeout=30)
        samples = scrape(gw)
        assert value(samples, "mnemogate_turns_total", platform="telegram", outcome="ok") == 1
        assert value(samples, "mnemogate_turn_seconds_count", part="total") == 1
        assert value(samples, "mnemogate_turn_seconds_count", part="overhead") == 1
        assert value(samples, "mnemogate_llm_tokens_total", model="fake-model", kind="in") > 0
        assert value(samples, "mnemogate_recall_lookups_total", result="miss") == 1
        assert value(samples, "mnemogate_queue_depth", queue="sync") == 1
        assert value(samples, "mnemogate_outbox_backlog") >= 1
        assert value(samples, "mnemogate_ready", role="gateway") == 1

        # flush, compress and the session hooks are not due after one short turn: enqueue
        # them as the gateway would
        settings = load_settings(home=home, redis_url=redis_url, redis_prefix=redis_prefix)
        session_id = _session_id(home)
        connection = redis.Redis.from_url(redis_url)
        queues = JobQueues(connection, settings)
        tenant = TenantId.of("telegram", str(ALICE))
        for kind in ("flush", "compress"):
            queues.enqueue(kind, tenant, session_id)
        queues.enqueue("session_end", tenant, session_id, reason="new")
        queues.enqueue("session_switch", tenant, session_id, previous="s0", reason="new")
        connection.close()

        wlisten, wk = _listen()
        worker = start("worker", {**env, "MNEMOGATE_METRICS__LISTEN": wlisten})
        wait_for(lambda: ready(wk), "the worker to be ready")

        def all_kinds_counted() -> bool:
            got = scrape(wk)
            return all(value(got, "mnemogate_jobs_total", kind=k) >= 1 for k in JOB_KINDS)

        wait_for(all_kinds_counted, "a job of every kind", timeout=60)
        samples = scrape(wk)
        for kind in JOB_KINDS:
            assert value(samples, "mnemogate_job_seconds_count", kind=kind) >= 1
        # counted inside forked work horses, replayed by the worker that serves /metrics
        assert (
            value(
                samples,
                "mnemogate_provider_calls_total",
                provider="reference",
                op="sync_turn",
                outcome="ok",
            )
            == 1
        )
        assert value(samples, "mnemogate_provider_call_seconds_count", op="recall") >= 1
        assert value(samples, "mnemogate_llm_tokens_total", kind="out") > 0  # title, review
        wait_for(lambda: value(scrape(gw), "mnemogate_queue_depth") == 0, "empty queues")
        wait_for(lambda: value(scrape(gw), "mnemogate_workers", state="idle") == 1, "idle worker")
        assert value(scrape(gw), "mnemogate_workers", state="dead") == 0
    finally:
        worker_err = stop(worker) if worker is not None else ""
        err = stop(gateway)
    assert gateway.returncode == 0, err
    assert worker is not None and worker.returncode == 0, worker_err
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert lines and all({"time", "level", "logger", "message"} <= set(e) for e in lines), err
    assert any(e.get("namespace") == f"telegram-{ALICE}" and "session" in e for e in lines), err
    assert SECRET_TEXT not in err + worker_err  # message text never logged at INFO
    assert TOKEN not in err + worker_err
    worker_lines = [json.loads(x) for x in worker_err.splitlines() if x.startswith("{")]
    assert any(e.get("job", "").startswith("sync-") for e in worker_lines), worker_err


def _session_id(home: Path) -> str:
    import sqlite3

    conn = sqlite3.connect(home / "state.db")
    try:
        return str(conn.execute("SELECT id FROM sessions").fetchone()[0])
    finally:
        conn.close()


def test_readyz_follows_redis_down_and_back(
    home: Path, tg: FakeTelegram, fake_llm: FakeLLM, private_redis: RedisServer
) -> None:
    listen, gw = _listen()
    env = gateway_env(home, tg, fake_llm, private_redis.url(), "mnemogate", listen)
    gateway = start("run", env)
    try:
        wait_for(lambda: ready(gw), "ready")
        private_redis.stop()
        wait_for(lambda: not ready(gw), "unready without Redis")
        status, reason = get(f"{gw}/readyz")
        assert status == 503 and reason.startswith("redis unreachable"), reason
        assert get(f"{gw}/healthz")[0] == 200  # alive all the same: no restart wanted
        assert value(scrape(gw), "mnemogate_ready", role="gateway") == 0
        private_redis.start()
        wait_for(lambda: ready(gw), "ready again")
    finally:
        err = stop(gateway)
    assert gateway.returncode == 0, err


def test_run_stays_up_unready_while_telegram_is_unreachable(
    home: Path, tg: FakeTelegram, fake_llm: FakeLLM, redis_url: str, redis_prefix: str
) -> None:
    fake_llm.handler = Script(["hello again"])
    tg.fail_next("getMe", status=502, retry_after=None)  # Telegram down at start
    listen, gw = _listen()
    env = gateway_env(
        home,
        tg,
        fake_llm,
        redis_url,
        redis_prefix,
        listen,
        MNEMOGATE_ACCESS__ALLOWED_USERS=f"telegram:{ALICE}",
        MNEMOGATE_JOBS__MODE="inline",
    )
    gateway = start("run", env)
    try:
        wait_for(lambda: len(tg.calls("getMe", ok_only=False)) >= 1, "a first connection try")
        wait_for(lambda: ready(gw), "connected on a later try")
        assert gateway.poll() is None
        tg.push_message(ALICE, ALICE, "hi")
        assert tg.wait_for_sent(1, timeout=30)[-1].params["text"] == "hello again"
        # inline mode: the gateway runs the title job itself and counts it
        wait_for(
            lambda: value(scrape(gw), "mnemogate_jobs_total", kind="title", outcome="ok") == 1,
            "the inline title job counted",
        )
    finally:
        err = stop(gateway)
    assert gateway.returncode == 0, err
    assert "telegram could not connect" in err


def test_run_without_a_platform_stays_up_and_unready(home: Path, redis_url: str) -> None:
    listen, gw = _listen()
    env = cli_env(home, MNEMOGATE_REDIS_URL=redis_url, MNEMOGATE_METRICS__LISTEN=listen)
    gateway = start("run", env)
    try:
        wait_for(lambda: get_or_none(f"{gw}/healthz") == 200, "the endpoint")
        status, reason = get(f"{gw}/readyz")
        assert status == 503 and "no platform configured" in reason
        assert gateway.poll() is None
    finally:
        err = stop(gateway)
    assert gateway.returncode == 0, err
    assert "no platform configured: set TELEGRAM_BOT_TOKEN" in err


def get_or_none(url: str) -> int | None:
    try:
        return get(url)[0]
    except OSError:
        return None
