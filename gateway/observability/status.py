"""What ``mnemogate status`` reports: the deployment's health in one read, and its verdict.

Degraded (exit 1) when any of these holds: Redis or state.db does not answer; in queue mode,
a queue has waiting jobs and no live worker listens on it; a registered worker is dead
(killed without unregistering); a job has waited longer than :data:`STALE_S`; an outbox
row has been open longer than :data:`STALE_S`; the configured memory provider is
unavailable. Failed jobs are listed (RQ keeps them for a week) but do not make the
deployment degraded by themselves: a failure that matters shows up as one of the above.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from redis.exceptions import RedisError

from gateway.errors import MnemogateError
from gateway.history.db import Database
from gateway.observability import plane
from gateway.observability.endpoint import probe_client
from gateway.settings import Settings
from workers.queues import one_line

STALE_S = 600.0
SINGLE = "single gateway"


@dataclass
class Status:
    problems: list[str] = field(default_factory=list)
    redis: str = "ok"
    database: str = "ok"
    jobs_mode: str = "queue"
    queues: list[dict[str, Any]] = field(default_factory=list)
    workers: list[dict[str, Any]] = field(default_factory=list)
    outbox: dict[str, Any] | None = None
    provider: dict[str, Any] = field(default_factory=dict)
    leader: str = SINGLE

    @property
    def healthy(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"healthy": self.healthy, **asdict(self)}


def leader_key(prefix: str) -> str:
    """Where a gateway leader lease would live (none exists until several gateways run)."""
    return f"{prefix}:g:leader"


def gather(settings: Settings) -> Status:
    status = Status(jobs_mode=settings.jobs.mode)
    _database(settings, status)
    _redis(settings, status)
    _provider(settings, status)
    return status


def _database(settings: Settings, status: Status) -> None:
    try:
        db = Database(settings.state_db)
    except (MnemogateError, OSError) as exc:
        status.database = one_line(exc)
        status.problems.append(f"state.db unreadable: {status.database}")
        return
    try:
        stat = plane.outbox_stats(db)
    finally:
        db.close()
    status.outbox = asdict(stat)
    if stat.oldest_age_s is not None and stat.oldest_age_s > STALE_S:
        status.problems.append(
            f"outbox: oldest open row is {stat.oldest_age_s:.0f}s old ({stat.backlog} open)"
        )


def _redis(settings: Settings, status: Status) -> None:
    client = probe_client(settings.redis_url)
    prefix = settings.redis_prefix
    try:
        queues = plane.queue_stats(client, prefix)
        workers = plane.worker_stats(client, prefix)
        holder: bytes | None = client.get(leader_key(prefix))  # type: ignore[assignment]
    except (RedisError, OSError) as exc:
        status.redis = one_line(exc)
        status.problems.append(f"redis unreachable: {status.redis}")
        return
    finally:
        client.close()
    if holder is not None:
        status.leader = holder.decode("utf-8", "replace")
    status.queues = [asdict(q) for q in queues]
    status.workers = [{**asdict(w), "busy": w.busy} for w in workers]
    served = plane.served_queues(workers, prefix)
    for worker in workers:
        if not worker.alive:
            status.problems.append(f"worker {worker.name} is registered but dead")
    for queue in queues:
        if queue.depth and settings.jobs.mode == "queue" and queue.queue not in served:
            status.problems.append(f"queue {queue.name}: {queue.depth} waiting, no live worker")
        if queue.oldest_age_s is not None and queue.oldest_age_s > STALE_S:
            status.problems.append(
                f"queue {queue.name}: oldest job has waited {queue.oldest_age_s:.0f}s"
            )


def _provider(settings: Settings, status: Status) -> None:
    name = settings.memory.provider
    status.provider = {"name": name, "available": None}
    if name is None:
        return
    from providers.registry import load_provider

    try:
        instance = load_provider(name, settings)
        available = bool(instance.is_available())
        instance.shutdown()
    except Exception as exc:  # a broken plugin is a finding here, not a crash
        status.provider["error"] = one_line(exc)
        available = False
    status.provider["available"] = available
    if not available:
        status.problems.append(f"memory provider {name} unavailable")


def render(status: Status) -> str:
    """The text form: one block per part, problems last."""
    lines = [f"status: {'healthy' if status.healthy else 'DEGRADED'}"]
    lines.append(f"redis: {status.redis}; state.db: {status.database}; jobs: {status.jobs_mode}")
    for q in status.queues:
        age = f", oldest {q['oldest_age_s']:.0f}s" if q["oldest_age_s"] is not None else ""
        lines.append(
            f"queue {q['name']}: {q['depth']} waiting{age}, {q['started']} running, "
            f"{q['scheduled']} retrying, {q['failed']} failed"
        )
    if not status.workers and status.redis == "ok":
        lines.append("workers: none")
    for w in status.workers:
        state = w["state"] if w["alive"] else "DEAD"
        job = f" job {w['current_job']}" if w["current_job"] else ""
        lines.append(f"worker {w['name']} on {w['host']} pid {w['pid']}: {state}{job}")
    if status.outbox is not None:
        age = status.outbox["oldest_age_s"]
        oldest = f", oldest {age:.0f}s" if age is not None else ""
        lines.append(f"outbox: {status.outbox['backlog']} open{oldest}")
    provider = status.provider
    if provider.get("name") is None:
        lines.append("provider: none")
    else:
        lines.append(f"provider: {provider['name']} (available: {provider['available']})")
    lines.append(f"leader: {status.leader}")
    lines.extend(f"problem: {p}" for p in status.problems)
    return "\n".join(lines)
