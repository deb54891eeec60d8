"""A Honcho outage costs one WARNING line per failed call in a real ``mnemogate worker``.

Honcho is a loopback port nothing listens on; two tenants have a turn to sync and a recall
to compute (four jobs, each retried). The worker's whole output is read: no traceback, no
line from the SDK's or httpx's own loggers, and about one line per failed provider call.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import redis

from gateway.history.store import SessionStore
from gateway.outbox import Relay
from gateway.tenants import TenantId
from providers.manager import MemoryManager
from tests.conftest import REPO, cli_env
from tests.integration import background as bg
from tests.integration.conftest import free_port
from workers.queues import JobQueues

pytestmark = pytest.mark.integration

TENANTS = (TenantId.of("console", "carol"), TenantId.of("console", "bob"))
RETRIES = 2


def test_outage_logs_one_warning_per_failed_call(
    home: Path, redis_url: str, redis_prefix: str, redis_client: redis.Redis
) -> None:
    settings = bg.make_settings(
        home,
        redis_url,
        redis_prefix,
        memory={"provider": "honcho"},
        honcho={"base_url": f"http://127.0.0.1:{free_port()}", "workspace": "down"},
        jobs={"retries": RETRIES, "retry_intervals_s": [0]},
    )
    with bg.installed_context(settings, manager=MemoryManager(5.0)) as ctx:
        queues = JobQueues(ctx.redis, settings)
        for tenant in TENANTS:
            session = bg.new_session(SessionStore(ctx.db), tenant)
            row = bg.write_turn(ctx.db, tenant, session.id, "hello there", "hi")
            Relay(ctx.db, queues, settings.jobs).enqueue_rows(bg.rows(ctx.db, [row]))
            queues.enqueue("recall", tenant, session.id, query="what do you know about me?")
    env = {
        **bg.settings_env(settings),
        "HONCHO_BASE_URL": settings.honcho.base_url or "",
        "HONCHO_WORKSPACE": "down",
    }
    done = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "worker", "--burst"],
        env=cli_env(settings.home, **env),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = (done.stdout + done.stderr).splitlines()
    # Each sync job fails at its first provider call, RETRIES + 1 times; a recall job does
    # not try the recall once the session could not be joined.
    failed_calls = 2 * (1 + RETRIES) + 2
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert not [line for line in lines if "httpx" in line or "honcho." in line.split(":")[0]]
    warnings = [line for line in lines if line.startswith("WARNING")]
    assert len(warnings) == failed_calls, "\n".join(warnings)
    assert all("Connection refused" in line for line in warnings)
    errors = [line for line in lines if line.startswith("ERROR")]
    assert len(errors) == 2 and all("sync" in line for line in errors)  # failed for good
    assert len(lines) < 100, len(lines)
