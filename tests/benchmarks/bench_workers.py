"""Benchmark of provider sync throughput: jobs/s for 1 and 2 ``mnemogate worker`` processes.

    .venv/bin/python -m tests.benchmarks.bench_workers [--jobs 400]

Writes ``--jobs`` sessions with one turn each (messages + sync outbox row, as the turn
does), enqueues them through the relay, then times real ``mnemogate worker --burst``
processes (forking workers by default, ``--simple`` too) until the queues are empty. The
reference provider stores each turn in SQLite, so a job does real work.
"""

from __future__ import annotations

import argparse
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

from gateway.history.db import Database
from gateway.history.store import SessionStore
from gateway.outbox import Relay
from gateway.settings import Settings
from gateway.tenants import TenantId
from providers.reference import ReferenceProvider
from tests.conftest import REPO, cli_env
from tests.integration.background import make_settings, new_session, rows, settings_env, write_turn
from workers.queues import JobQueues

REDIS_URL = "redis://127.0.0.1:6379/13"


def seed(settings: Settings, jobs: int) -> None:
    db = Database(settings.state_db)
    store = SessionStore(db)
    ids = []
    for i in range(jobs):
        tenant = TenantId.of("console", f"w{i}")
        session = new_session(store, tenant)
        ids.append(write_turn(db, tenant, session.id, f"hello {i}", f"hi {i}"))
    connection = redis.Redis.from_url(settings.redis_url)
    Relay(db, JobQueues(connection, settings), settings.jobs).enqueue_rows(rows(db, ids))
    connection.close()
    db.close()


def run(settings: Settings, workers: int, extra: list[str]) -> float:
    env = cli_env(settings.home, **settings_env(settings))
    started = time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "gateway.cli", "worker", "--burst", *extra],
            env=env,
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(workers)
    ]
    for proc in procs:
        if proc.wait(timeout=600) != 0:
            raise SystemExit("a worker failed")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=400)
    args = parser.parse_args()
    client = redis.Redis.from_url(REDIS_URL)
    try:
        for mode, extra in (("forking", []), ("simple", ["--simple"])):
            for workers in (1, 2):
                client.flushdb()
                with tempfile.TemporaryDirectory(prefix="mnemogate-bench-") as tmp:
                    settings = make_settings(Path(tmp), REDIS_URL, f"w{secrets.token_hex(3)}")
                    seed(settings, args.jobs)
                    wall = run(settings, workers, extra)
                    synced = sum(
                        len(ReferenceProvider(settings.home).synced_turns(f"console-w{i}"))
                        for i in range(args.jobs)
                    )
                print(
                    f"sync jobs, {workers} {mode} worker(s): {args.jobs / wall:7.1f} jobs/s "
                    f"({args.jobs} jobs in {wall:.1f} s incl. start-up; {synced} turns synced)"
                )
    finally:
        client.flushdb()
        client.close()


if __name__ == "__main__":
    main()
