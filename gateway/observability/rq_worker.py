"""RQ workers that count their jobs and keep the metrics of forked jobs.

Both classes time each job in the process that lives across jobs (the worker itself) and
count it by kind (``job.meta["kind"]``) and outcome: ``ok``, ``failed`` (for good),
``retried`` (failed, a retry is scheduled) — a work horse killed by a signal or the timeout
counts too, since the parent records it after the horse is gone. Each job also runs inside a
log context (namespace, session, job id) for JSON logs.

:class:`MeteredWorker` forks a work horse per job: the horse records its hook calls
(provider calls, model tokens, memory writes) and writes them to ``spool/<job id>`` when the
job ends; the parent replays that file into the registry it serves (see ``metrics.py``).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from rq import SimpleWorker, Worker
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.job import Job, JobStatus
from rq.queue import Queue

from gateway.observability import metrics
from gateway.observability.logs import log_context

log = logging.getLogger(__name__)

_OUTCOMES = {
    JobStatus.FINISHED: "ok",
    JobStatus.FAILED: "failed",
    JobStatus.SCHEDULED: "retried",
    JobStatus.QUEUED: "retried",
}


def job_outcome(job: Job) -> str:
    try:
        status = job.get_status(refresh=True)
    except (InvalidJobOperation, NoSuchJobError):
        return "ok"  # finished and its result already expired
    return _OUTCOMES.get(status, str(status or "unknown"))


class _Metered:
    """Mixin for RQ worker classes (see module doc)."""

    spool: Path | None = None

    def execute_job(self, job: Job, queue: Queue) -> None:
        meta = job.meta or {}
        kind = str(meta.get("kind") or (job.func_name or "").rpartition(".")[2] or "unknown")
        started = time.monotonic()
        with log_context(namespace=meta.get("tenant"), session=meta.get("session"), job=job.id):
            try:
                super().execute_job(job, queue)  # type: ignore[misc]
            finally:
                if self.spool is not None:
                    metrics.replay(self.spool / job.id)
                metrics.job_done(kind, job_outcome(job), time.monotonic() - started)


class MeteredSimpleWorker(_Metered, SimpleWorker):
    """Runs jobs in this process: its hooks count directly."""


class MeteredWorker(_Metered, Worker):
    """Forks a work horse per job; the horse's hook calls come back through ``spool``."""

    def perform_job(self, job: Job, queue: Queue) -> Any:
        if not self._is_horse or self.spool is None:
            return super().perform_job(job, queue)
        metrics.record_events()
        try:
            return super().perform_job(job, queue)
        finally:
            try:
                metrics.write_events(self.spool / job.id)
            except OSError as exc:
                log.warning("job %s: metrics not handed back: %s", job.id, exc)
