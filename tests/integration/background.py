"""Helpers for background-plane tests: settings, turns with outbox rows, workers.

``write_turn`` does what the turn does after the reply: the messages and their outbox row in
one transaction. Workers run in-process (RQ ``SimpleWorker`` in burst mode) or as real
``mnemogate worker`` processes.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis
from rq import SimpleWorker

from gateway import outbox
from gateway.app import App
from gateway.history.db import Database
from gateway.history.store import SessionRecord, SessionStore
from gateway.outbox import OutboxRow
from gateway.routing import Conversation
from gateway.settings import Settings, load_settings
from gateway.tenants import TenantId
from providers.reference import ReferenceProvider
from tests.conftest import REPO, cli_env
from workers import context
from workers.context import WorkerContext
from workers.jobs import tag_failure
from workers.queues import JobQueues

# Fast retries and short lock waits so recovery paths finish within a test's time.
FAST: dict[str, Any] = {
    "jobs": {"retries": 8, "retry_intervals_s": [0], "sync_lock_timeout_s": 1, "job_timeout_s": 60},
    "recall": {"provider_timeout_s": 2},
}


def make_settings(home: Path, redis_url: str, prefix: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"home": home, "redis_url": redis_url, "redis_prefix": prefix}
    values.update({k: dict(v) for k, v in FAST.items()})
    values["memory"] = {"provider": "reference"}
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(values.get(key), dict):
            values[key] = {**values[key], **value}
        else:
            values[key] = value
    return load_settings(**values)


def settings_env(settings: Settings) -> dict[str, str]:
    """The MNEMOGATE_* environment that reproduces ``settings`` in a worker process."""
    jobs, recall = settings.jobs, settings.recall
    env = {
        "MNEMOGATE_HOME": str(settings.home),
        "MNEMOGATE_REDIS_URL": settings.redis_url,
        "MNEMOGATE_REDIS_PREFIX": settings.redis_prefix,
        "MNEMOGATE_JOBS__RETRIES": str(jobs.retries),
        "MNEMOGATE_JOBS__RETRY_INTERVALS_S": ",".join(map(str, jobs.retry_intervals_s)),
        "MNEMOGATE_JOBS__SYNC_LOCK_TIMEOUT_S": str(jobs.sync_lock_timeout_s),
        "MNEMOGATE_JOBS__JOB_TIMEOUT_S": str(jobs.job_timeout_s),
        "MNEMOGATE_RECALL__PROVIDER_TIMEOUT_S": str(recall.provider_timeout_s),
    }
    if settings.memory.provider:
        env["MNEMOGATE_MEMORY__PROVIDER"] = settings.memory.provider
    return env


def new_session(store: SessionStore, tenant: TenantId, *, incognito: bool = False) -> SessionRecord:
    return store.create_session(
        tenant,
        session_key=f"{tenant.platform}:dm:{tenant.user}",
        source=tenant.platform,
        system_prompt="You are a test.",
        tools_json="[]",
        scope_key=tenant.namespace,
        chat_id=tenant.user,
        incognito=incognito,
    )


def write_turn(db: Database, tenant: TenantId, session_id: str, user: str, reply: str) -> int:
    """One turn's messages and its sync outbox row, committed together; the row id."""

    def write(conn: Any) -> int:
        ids = []
        for role, content in (("user", user), ("assistant", reply)):
            cur = conn.execute(
                "INSERT INTO messages (session_id, tenant_id, role, content, timestamp) "
                "VALUES (?, ?, ?, ?, ?)",
                (session_id, str(tenant), role, content, time.time()),
            )
            ids.append(cur.lastrowid)
        return outbox.add(conn, tenant, session_id, "sync", {"upto": ids[-1]})

    return db.write(write)


def turns(settings: Settings, conversation: Conversation, texts: list[str]) -> list[str]:
    """Real turns through an App (its own event loop); the replies."""

    async def run() -> list[str]:
        async with App(settings) as app:
            return [(await app.agent.run_turn(conversation, t)).reply for t in texts]

    return asyncio.run(run())


def work(settings: Settings) -> None:
    """Run every queued job with an in-process worker using ``settings``."""
    connection = redis.Redis.from_url(settings.redis_url)
    try:
        with installed_context(settings):
            burst(connection, settings)
    finally:
        connection.close()


def rows(db: Database, ids: list[int]) -> list[OutboxRow]:
    return outbox.get_rows(db, ids)


def reference(settings: Settings) -> ReferenceProvider:
    """A reader of what the (reference or gated) provider stored, from any process."""
    return ReferenceProvider(settings.home)


@contextmanager
def installed_context(settings: Settings, **kwargs: Any) -> Iterator[WorkerContext]:
    """Make ``settings`` this process's worker context (in-process workers, job bodies)."""
    ctx = WorkerContext(settings, **kwargs)
    context.configure(context=ctx)
    try:
        yield ctx
    finally:
        context.reset()


def burst(connection: redis.Redis, settings: Settings, **work: Any) -> bool:
    """Run an in-process SimpleWorker over every queue until they are empty."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        worker = SimpleWorker(
            JobQueues(connection, settings).queues(),
            connection=connection,
            exception_handlers=[tag_failure],
        )
        return worker.work(burst=work.pop("burst", True), **work)
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def worker_process(
    settings: Settings, *args: str, plugin_dir: Path | None = None, **env: str
) -> subprocess.Popen[str]:
    """``mnemogate worker ARGS`` as a real process, in its own session (for killpg)."""
    extra: Mapping[str, str] = {**settings_env(settings), **env}
    full_env = cli_env(settings.home, **extra)
    if plugin_dir is not None:
        full_env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(plugin_dir)])
    return subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "worker", *args],
        env=full_env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def run_worker(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    """``mnemogate worker ARGS`` to completion (burst mode), with ``settings``' environment."""
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", "worker", *args],
        env=cli_env(settings.home, **settings_env(settings)),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def finish(process: subprocess.Popen[str], timeout: float = 60) -> tuple[int, str]:
    """Wait for a worker process; its exit status and combined output."""
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out + err
