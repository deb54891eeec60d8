"""The background plane as an operator sees it: queues, workers and the outbox, read live.

Shared by the scrape-time gauges (``collectors.py``) and ``mnemogate status``. Queue depth is
the length of RQ's list ``rq:queue:<prefix>-<queue>`` (what KEDA's Redis trigger reads too);
the oldest job is the head of that list (RQ pushes at the tail and pops at the head).
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import asdict, dataclass
from typing import Any

from redis import Redis
from rq import Queue, Worker
from rq.exceptions import NoSuchJobError
from rq.job import Job
from rq.registry import FailedJobRegistry, ScheduledJobRegistry, StartedJobRegistry

from gateway import outbox
from gateway.history.db import Database
from workers.queues import QUEUE_ORDER, QueueName, queue_name

RQ_QUEUE_KEY_PREFIX = Queue.redis_queue_namespace_prefix  # "rq:queue:"


def queue_key(prefix: str, queue: QueueName) -> str:
    """The Redis list RQ keeps a queue's waiting job ids in (KEDA's ``listName``)."""
    return f"{RQ_QUEUE_KEY_PREFIX}{queue_name(prefix, queue)}"


@dataclass(frozen=True, slots=True)
class QueueStat:
    queue: QueueName
    name: str
    depth: int
    oldest_age_s: float | None
    started: int
    scheduled: int
    failed: int


@dataclass(frozen=True, slots=True)
class WorkerStat:
    name: str
    host: str | None
    pid: int | None
    state: str
    alive: bool
    current_job: str | None
    queues: tuple[str, ...]
    last_heartbeat_age_s: float | None

    @property
    def busy(self) -> bool:
        return self.state == "busy"


@dataclass(frozen=True, slots=True)
class OutboxStat:
    backlog: int
    oldest_age_s: float | None


def queue_stats(connection: Redis, prefix: str, *, now: float | None = None) -> list[QueueStat]:
    """Depth, oldest waiting job's age, running, scheduled (retry backoff) and failed jobs."""
    now = time.time() if now is None else now
    stats = []
    for short in QUEUE_ORDER:
        name = queue_name(prefix, short)
        queue = Queue(name, connection=connection)
        stats.append(
            QueueStat(
                queue=short,
                name=name,
                depth=queue.count,
                oldest_age_s=_oldest_age(queue, now),
                started=StartedJobRegistry(queue=queue).count,
                scheduled=ScheduledJobRegistry(queue=queue).count,
                failed=FailedJobRegistry(queue=queue).count,
            )
        )
    return stats


def _oldest_age(queue: Queue, now: float) -> float | None:
    for job_id in queue.get_job_ids(0, 0):
        try:
            job = Job.fetch(job_id, connection=queue.connection)
        except NoSuchJobError:
            return None
        if job.enqueued_at is not None:
            return max(0.0, now - job.enqueued_at.timestamp())
    return None


def worker_stats(connection: Redis, prefix: str, *, now: float | None = None) -> list[WorkerStat]:
    """RQ workers registered for any of this deployment's queues.

    A worker that stopped cleanly unregisters itself; one that was killed stays registered
    until its key expires (RQ's worker TTL), so on this host its pid is checked as well.
    """
    now = time.time() if now is None else now
    ours = {queue_name(prefix, q) for q in QUEUE_ORDER}
    here = socket.gethostname()
    found = []
    for worker in Worker.all(connection=connection):
        names = tuple(worker.queue_names())
        if not ours.intersection(names):
            continue
        heartbeat = worker.last_heartbeat
        state = worker.get_state()
        found.append(
            WorkerStat(
                name=worker.name,
                host=worker.hostname,
                pid=worker.pid,
                state=str(getattr(state, "value", state)),  # an enum in-process, str from Redis
                alive=_alive(worker.hostname, worker.pid, here),
                current_job=worker.get_current_job_id(),
                queues=names,
                last_heartbeat_age_s=(now - heartbeat.timestamp()) if heartbeat else None,
            )
        )
    return sorted(found, key=lambda w: w.name)


def _alive(host: str | None, pid: int | None, here: str) -> bool:
    if host != here or not pid:
        return True  # registered and not expired is all we can know about another host
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def outbox_stats(db: Database, *, now: float | None = None) -> OutboxStat:
    count, oldest = outbox.backlog(db)
    now = time.time() if now is None else now
    return OutboxStat(count, None if oldest is None else max(0.0, now - oldest))


def as_dict(stat: Any) -> dict[str, Any]:
    return asdict(stat)


def served_queues(workers: list[WorkerStat], prefix: str) -> set[QueueName]:
    """Queues at least one live worker listens on."""
    live = {name for w in workers if w.alive for name in w.queues}
    return {q for q in QUEUE_ORDER if queue_name(prefix, q) in live}
