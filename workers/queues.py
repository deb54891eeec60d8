"""The RQ queues of the background plane: names, the job table, and enqueueing with safe ids.

Four plain RQ queues, named from ``settings.redis_prefix`` (``<prefix>-sync``,
``<prefix>-recall``, ``<prefix>-review``, ``<prefix>-maint``), so ``rq info``, ``rq requeue``
and the other ``rq`` tools work on them. :data:`JOBS` maps each job kind (the same names as
outbox kinds) to its queue and entry function. Jobs take primitive arguments only: the tenant
id string first, then the session id. Job ids are ``<kind>-<namespace>-<session>-<suffix>``
spelled with ``[A-Za-z0-9_-]``; a deterministic suffix makes a second enqueue of the same
work a no-op (RQ's atomic ``unique`` enqueue), which the outbox relay relies on.
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from types import MappingProxyType
from typing import Any, Literal

from redis import Redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry as RedisRetry
from rq import Queue, Retry
from rq.exceptions import DuplicateJobError, InvalidJobOperation, NoSuchJobError
from rq.job import Job, JobStatus

from gateway.errors import MnemogateError
from gateway.keys import RedisKeys
from gateway.settings import Settings
from gateway.tenants import TenantId, escape_id

QueueName = Literal["sync", "recall", "review", "maint"]
JobKind = Literal[
    "sync", "recall", "review", "title", "flush", "compress", "session_end", "session_switch"
]
Primitive = str | int | float | bool | None
Outcome = Literal["enqueued", "active", "finished", "failed"]

QUEUE_ORDER: tuple[QueueName, ...] = ("sync", "recall", "review", "maint")
JOB_ID = re.compile(r"^[A-Za-z0-9_-]+$")
RESULT_TTL_S = 60
FAILURE_TTL_S = 7 * 24 * 3600
_ACTIVE = frozenset(
    {JobStatus.CREATED, JobStatus.QUEUED, JobStatus.STARTED, JobStatus.SCHEDULED}
    | {JobStatus.DEFERRED}
)


class InvalidJobId(MnemogateError, ValueError):
    """A job id would contain characters outside ``[A-Za-z0-9_-]``."""


@dataclass(frozen=True, slots=True)
class JobSpec:
    """Where a kind of job runs and how an outbox payload becomes its arguments.

    ``args``: payload fields passed to the function as keyword arguments. ``dedup``: the
    payload field that names one unit of work (else the outbox row id does). ``idempotent``:
    a job that failed for good may simply be run again (the relay does so).
    """

    queue: QueueName
    func: str
    args: tuple[str, ...] = ()
    dedup: str | None = None
    idempotent: bool = False


JOBS: Mapping[JobKind, JobSpec] = MappingProxyType(
    {
        "sync": JobSpec("sync", "workers.jobs.sync_session", dedup="upto", idempotent=True),
        "recall": JobSpec("recall", "workers.jobs.recall_next", args=("query", "nonce")),
        "review": JobSpec("review", "workers.review.review_session"),
        "title": JobSpec("maint", "workers.maint.title_session"),
        "flush": JobSpec("maint", "workers.maint.flush_session"),
        "compress": JobSpec("maint", "workers.maint.compress_session"),
        # Provider hooks of a session's end: on the sync queue, the end after its last sync.
        "session_end": JobSpec("sync", "workers.session_hooks.end_session", args=("reason",)),
        "session_switch": JobSpec(
            "sync", "workers.session_hooks.switch_session", args=("previous", "reason")
        ),
    }
)


def queue_name(prefix: str, queue: QueueName) -> str:
    return f"{prefix}-{queue}"


def check_job_id(job_id: str) -> str:
    """``job_id`` if it matches ``^[A-Za-z0-9_-]+$``, else InvalidJobId."""
    if not JOB_ID.fullmatch(job_id):
        raise InvalidJobId(f"job id {job_id!r} must match {JOB_ID.pattern}")
    return job_id


def job_id(kind: JobKind, tenant: TenantId, session_id: str, suffix: str) -> str:
    """``<kind>-<namespace>-<escaped session id>-<suffix>``, validated."""
    return check_job_id(f"{kind}-{tenant.namespace}-{escape_id(session_id)}-{suffix}")


@dataclass(frozen=True, slots=True)
class Enqueued:
    """What happened to one enqueue: a new job, or the state of the job already there."""

    job_id: str
    outcome: Outcome


class ConnectionHealth:
    """Logs a Redis outage once: a warning at the first failure, debug while it lasts,
    info when Redis answers again."""

    def __init__(self, logger: logging.Logger, what: str) -> None:
        self._log = logger
        self._what = what
        self.healthy = True

    def failed(self, exc: BaseException) -> None:
        level = logging.WARNING if self.healthy else logging.DEBUG
        self._log.log(
            level, "%s: Redis unreachable (%s); carrying on without it", self._what, one_line(exc)
        )
        self.healthy = False

    def ok(self) -> None:
        if not self.healthy:
            self._log.info("%s: Redis reachable again", self._what)
        self.healthy = True


def redis_client(url: str) -> Redis:
    """A synchronous client that fails fast when Redis is down (the outbox keeps the work).

    redis-py's default retries a refused connection for seconds; a turn must not wait that.
    """
    return Redis.from_url(
        url,
        socket_connect_timeout=2,
        socket_timeout=30,
        retry=RedisRetry(ExponentialBackoff(cap=0.2, base=0.02), 1),
    )


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


class JobQueues:
    """The deployment's queues on one synchronous Redis connection (RQ needs raw bytes)."""

    def __init__(self, connection: Redis, settings: Settings) -> None:
        self.connection = connection
        self.settings = settings
        self.keys = RedisKeys(settings.redis_prefix)

    def name(self, queue: QueueName) -> str:
        return queue_name(self.settings.redis_prefix, queue)

    def queue(self, queue: QueueName) -> Queue:
        return Queue(self.name(queue), connection=self.connection)

    def queues(self, names: Sequence[QueueName] = QUEUE_ORDER) -> list[Queue]:
        return [self.queue(name) for name in names]

    def retry(self) -> Retry | None:
        jobs = self.settings.jobs
        if jobs.retries < 1:
            return None
        return Retry(max=jobs.retries, interval=list(jobs.retry_intervals_s) or 0)

    def enqueue(
        self,
        kind: JobKind,
        tenant: TenantId,
        session_id: str,
        *,
        dedup: str | int | None = None,
        outbox_ids: Sequence[int] = (),
        **args: Primitive,
    ) -> Enqueued:
        """Enqueue ``kind`` for the tenant's session, unless the same job is already known.

        ``dedup`` names the unit of work (the same value → the same job id); without it the
        job gets a random suffix. ``outbox_ids`` go into ``job.meta`` so the job marks those
        rows done when it succeeds. Raises ``redis.RedisError`` when Redis is unreachable.
        """
        spec = JOBS[kind]
        options = self._options(kind, tenant, session_id, dedup, outbox_ids, args)
        jid = options["job_id"]
        queue = self.queue(spec.queue)
        for _ in range(3):
            try:
                queue.enqueue_call(
                    spec.func, timeout=self.settings.jobs.job_timeout_s, unique=True, **options
                )
                return Enqueued(jid, "enqueued")
            except DuplicateJobError:
                outcome = self._existing(jid, spec)
                if outcome is not None:
                    return Enqueued(jid, outcome)
        return Enqueued(jid, "active")  # another enqueuer kept winning the race: it is there

    def schedule(
        self,
        kind: JobKind,
        tenant: TenantId,
        session_id: str,
        delay_s: float,
        *,
        dedup: str,
        **args: Primitive,
    ) -> str:
        """Enqueue ``kind`` ``delay_s`` seconds from now (RQ's scheduler, which ``mnemogate
        worker`` runs, moves it to its queue when due); the job id. No duplicate check."""
        spec = JOBS[kind]
        options = self._options(kind, tenant, session_id, dedup, (), args)
        self.queue(spec.queue).enqueue_in(
            timedelta(seconds=max(delay_s, 0.0)),
            spec.func,
            job_timeout=self.settings.jobs.job_timeout_s,
            **options,
        )
        return str(options["job_id"])

    def _options(
        self,
        kind: JobKind,
        tenant: TenantId,
        session_id: str,
        dedup: str | int | None,
        outbox_ids: Sequence[int],
        args: Mapping[str, Primitive],
    ) -> dict[str, Any]:
        """RQ's options for one job: arguments, id, ``job.meta``, TTLs, retries."""
        suffix = str(dedup) if dedup is not None else secrets.token_hex(6)
        meta: dict[str, object] = {"tenant": tenant.namespace, "kind": kind, "session": session_id}
        if outbox_ids:
            meta["outbox"] = [int(i) for i in outbox_ids]
        return {
            "args": (str(tenant), session_id),
            "kwargs": dict(args),
            "result_ttl": RESULT_TTL_S,
            "failure_ttl": FAILURE_TTL_S,
            "description": f"{kind} {tenant.namespace} {session_id}",
            "job_id": job_id(kind, tenant, session_id, suffix),
            "meta": meta,
            "retry": self.retry(),
        }

    def enqueue_payload(
        self,
        kind: JobKind,
        tenant: TenantId,
        session_id: str,
        payload: Mapping[str, Primitive],
        *,
        outbox_id: int,
    ) -> Enqueued:
        """The job of one outbox row: arguments from its payload, deduplicated per unit of work."""
        spec = JOBS[kind]
        args = {name: payload[name] for name in spec.args if name in payload}
        dedup = payload.get(spec.dedup) if spec.dedup else None
        key = f"o{outbox_id}" if dedup is None or dedup == "" else str(dedup)
        return self.enqueue(kind, tenant, session_id, dedup=key, outbox_ids=[outbox_id], **args)

    def _existing(self, jid: str, spec: JobSpec) -> Outcome | None:
        """The outcome for a job id that already exists; None when it is gone (enqueue again)."""
        try:
            job = Job.fetch(jid, connection=self.connection)
            status = job.get_status(refresh=True)
        except (NoSuchJobError, InvalidJobOperation):
            return None
        if status in _ACTIVE:
            return "active"
        if status == JobStatus.FINISHED:
            return "finished"
        if not spec.idempotent:
            return "failed"
        # Safe to run again (e.g. sync: the pointer skips what was stored): a fresh job with
        # a fresh retry budget replaces the failed one.
        job.delete()
        return None
