"""Benchmark of the turn: gateway overhead, throughput under concurrency, memory per tenant.

    .venv/bin/python -m tests.benchmarks.bench_turns [--turns 3000] [--tenants 10000]

Runs the real pipeline (App in queue mode: frozen prompt, history, recall-cache read, tool
schemas, the turn's SQLite transaction with outbox rows, enqueue to RQ on a warm Redis, the
a provider with no-op hooks, see ``bench_provider``) against an in-process model (``llm_stub``):

1. overhead: sequential turns with a zero-latency model; everything measured is gateway
   time. Target (SPEC §13): p50 ≤ 3 ms, p99 ≤ 15 ms.
2. throughput: N tenants talk at once to a model that takes 1 s per answer; turns/s for
   N = 10, 100, 1000 (no fixed thread-pool cap: it should grow with N).
3. memory: RSS after 1,000 … ``--tenants`` distinct tenants have each sent one message.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

import redis

from gateway.app import App
from gateway.routing import Conversation
from gateway.settings import Settings, load_settings
from tests.benchmarks import bench_provider
from tests.benchmarks.llm_stub import stub_transport

REDIS_URL = "redis://127.0.0.1:6379/12"


def settings_for(home: Path, prefix: str, provider: str | None = "bench") -> Settings:
    return load_settings(
        home=home,
        redis_url=REDIS_URL,
        redis_prefix=prefix,
        llm={"base_url": "http://model.invalid/v1", "model": "bench"},
        memory={"provider": provider, "nudge_interval": 0},
        jobs={"mode": "queue"},
        recall={"first_turn_budget_s": 0},
    )


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def overhead(settings: Settings, turns: int) -> None:
    label = settings.memory.provider or "no"
    async with App(settings, llm_transport=stub_transport(0.0)) as app:
        users = [Conversation.console(f"o{i}") for i in range(100)]
        for user in users:  # warm: sessions opened, prompts frozen, caches primed
            await app.agent.run_turn(user, "hello, this is a warm-up message")
        times = []
        for i in range(turns):
            started = time.perf_counter()
            await app.agent.run_turn(users[i % len(users)], f"message number {i} about deploys")
            times.append((time.perf_counter() - started) * 1000)
    print(
        f"overhead per turn ({label} provider, zero-latency model, {turns} turns): "
        f"p50 {pct(times, 0.5):.2f} ms, p95 {pct(times, 0.95):.2f} ms, "
        f"p99 {pct(times, 0.99):.2f} ms, mean {statistics.fmean(times):.2f} ms"
    )


async def throughput(settings: Settings, concurrency: int) -> None:
    async with App(settings, llm_transport=stub_transport(1.0)) as app:
        users = [Conversation.console(f"c{concurrency}-{i}") for i in range(concurrency)]
        started = time.perf_counter()
        await asyncio.gather(*(app.agent.run_turn(u, "a question") for u in users))
        wall = time.perf_counter() - started
    print(
        f"throughput with a 1 s model, {concurrency:>4} tenants at once: "
        f"{concurrency / wall:7.1f} turns/s (wall {wall:.2f} s)"
    )


async def memory(settings: Settings, tenants: int) -> None:
    async with App(settings, llm_transport=stub_transport(0.0)) as app:
        checkpoints = sorted({1000, tenants // 2, tenants})
        done = 0
        for mark in checkpoints:
            while done < mark:
                await app.agent.run_turn(Conversation.console(f"m{done}"), "hi")
                done += 1
            print(
                f"RSS after {done:>6} distinct tenants: {rss_mb():7.1f} MB "
                f"(locks held: {len(app.agent.locks)})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--tenants", type=int, default=10_000)
    parser.add_argument("--concurrency", default="10,100,1000")
    args = parser.parse_args()
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.RedisError as exc:
        raise SystemExit(f"the benchmark needs Redis at {REDIS_URL}: {exc}") from None
    with tempfile.TemporaryDirectory(prefix="mnemogate-bench-") as tmp:
        sys.path.insert(0, str(bench_provider.install(Path(tmp) / "plugins")))
        prefix = f"b{secrets.token_hex(3)}"
        settings = settings_for(Path(tmp), prefix)
        try:
            none = settings_for(Path(tmp) / "plain", prefix + "n", provider=None)
            asyncio.run(overhead(none, args.turns))
            asyncio.run(overhead(settings, args.turns))
            for n in (int(x) for x in args.concurrency.split(",")):
                asyncio.run(throughput(settings, n))
            asyncio.run(memory(settings, args.tenants))
        finally:
            client.flushdb()
            client.close()


if __name__ == "__main__":
    main()
