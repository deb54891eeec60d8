"""The ``mnemogate worker`` process: an RQ worker that outlives Redis outages, plus recovery.

**Reconnecting.** RQ's loop retries a dequeue while Redis is away, but a connection lost
anywhere else (finishing a job, the heartbeat, maintenance) ends ``Worker.work``. :func:`serve`
therefore runs RQ workers one after another: when one ends without a stop being asked for
(and, in burst mode, without the queues being drained), it waits for Redis with exponential
backoff (:data:`BACKOFF_S`, doubling up to :data:`MAX_BACKOFF_S`) and starts a fresh worker.
The outage is logged once (WARNING), the return once (INFO). SIGTERM/SIGINT keep their
meaning throughout: a warm shutdown while a job runs, an immediate exit while waiting.

**Recovery.** A deployment of workers only (no ``run``/``chat`` process, whose outbox relay
used to be the only one) must still recover jobs that exhausted their retries or vanished
from Redis. Each worker process runs the same :class:`~gateway.outbox.Relay` pass, in a
thread, every ``jobs.relay_interval_s``: several processes at once are safe (a Redis lock
lets one pass run at a time, and job ids are deterministic, so a row handed to RQ twice is
still one job). At start and after every reconnect one pass looks at *every* open row at
once, not only those older than the redelivery delay: a Redis that restarted without its
data lost every queued job, and waiting ``job_timeout_s + 120`` seconds for them helps no
one. A burst worker makes that one pass before it starts.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from redis import Redis
from redis.exceptions import RedisError
from rq.worker import BaseWorker

from gateway.history.db import Database
from gateway.observability.rq_worker import MeteredSimpleWorker, MeteredWorker
from gateway.outbox import Relay
from gateway.settings import Settings
from workers.jobs import tag_failure
from workers.queues import JobQueues, QueueName, one_line, redis_client

log = logging.getLogger(__name__)

BACKOFF_S = 1.0
MAX_BACKOFF_S = 30.0


class _StopAware(BaseWorker):
    """Remembers that a warm shutdown was asked for (RQ keeps that to itself)."""

    stop_asked = False

    def handle_warm_shutdown_request(self) -> None:
        self.stop_asked = True
        super().handle_warm_shutdown_request()


class ForkingWorker(_StopAware, MeteredWorker):
    """RQ's forking worker (one child per job, metered) that knows whether it was told to stop."""


class InProcessWorker(_StopAware, MeteredSimpleWorker):
    """RQ's SimpleWorker (jobs in this process, metered) that knows whether it was told to stop."""


class _StopServing(Exception):
    """A stop signal arrived while no RQ worker was running."""


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise _StopServing(signal.Signals(signum).name)


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    queues: Sequence[QueueName]
    burst: bool = False
    name: str | None = None
    simple: bool = False
    spool: Path | None = None  # where forked jobs leave their metric events (None: no metrics)


class RecoveryLoop:
    """The outbox relay pass in a daemon thread; :meth:`recover_all` asks for a full pass."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._redis = redis_client(settings.redis_url)
        self._db = Database(settings.state_db)
        self.relay = Relay(self._db, JobQueues(self._redis, settings), settings.jobs)
        self._stop = threading.Event()
        self._full = threading.Event()
        self._thread: threading.Thread | None = None

    def pass_once(self, *, everything: bool = False) -> int:
        """One relay pass; ``everything`` looks at every open row, however recent."""
        try:
            return self.relay.run_once(redeliver_after_s=0.0 if everything else None)
        except Exception:  # a pass must never take the worker down; the next one retries
            log.exception("outbox recovery pass failed")
            return 0

    def recover_all(self) -> None:
        self._full.set()

    def start(self) -> None:
        self._full.set()
        self._thread = threading.Thread(target=self._loop, name="mnemogate-recovery", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            everything = self._full.is_set()
            self._full.clear()
            settled = self.pass_once(everything=everything)
            if everything and settled:
                log.info("outbox recovery: %d open row(s) checked and handed to RQ", settled)
            self._full.wait(self._settings.jobs.relay_interval_s)

    def close(self) -> None:
        self._stop.set()
        self._full.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        self._redis.close()
        self._db.close()


def serve(
    connection: Redis,
    settings: Settings,
    options: WorkerOptions,
    *,
    track: Callable[[BaseWorker], None] | None = None,
) -> None:
    """Work the queues until stopped (or, in burst mode, until they are empty).

    ``track`` is told about each RQ worker as it starts (readiness follows the live one).
    """
    recovery = RecoveryLoop(settings)
    if options.burst:
        recovery.pass_once(everything=True)
    else:
        recovery.start()
    try:
        _work_until_done(connection, settings, options, recovery, track)
    finally:
        recovery.close()


def _work_until_done(
    connection: Redis,
    settings: Settings,
    options: WorkerOptions,
    recovery: RecoveryLoop,
    track: Callable[[BaseWorker], None] | None,
) -> None:
    queues = JobQueues(connection, settings)
    restarts = 0
    while True:
        worker_class = InProcessWorker if options.simple else ForkingWorker
        rq_worker = worker_class(
            queues.queues(options.queues),
            name=options.name,
            connection=connection,
            exception_handlers=[tag_failure],
            log_job_description=False,  # descriptions are safe, but keep job arguments out
        )
        rq_worker.spool = options.spool
        if track is not None:
            track(rq_worker)
        lost: BaseException | None = None
        try:
            rq_worker.work(
                burst=options.burst, with_scheduler=True, logging_level=settings.log_level
            )
        except RedisError as exc:
            lost = exc
        except ValueError as exc:  # a live worker already has this name
            if restarts == 0:
                raise
            lost = exc  # our own previous registration, not yet expired: wait and retry
        if rq_worker.stop_asked:
            return
        if lost is None and _drained(queues, options):
            return
        restarts += 1
        log.warning(
            "worker stopped on a Redis problem (%s); reconnecting with backoff",
            one_line(lost) if lost is not None else "the RQ loop ended",
        )
        _wait_for_redis(connection)
        log.info("Redis reachable again; restarting the worker")
        if options.burst:
            recovery.pass_once(everything=True)
        else:
            recovery.recover_all()


def _drained(queues: JobQueues, options: WorkerOptions) -> bool:
    """Whether a worker that ended by itself was done: burst mode and every queue empty."""
    if not options.burst:
        return False
    try:
        return all(queue.count == 0 for queue in queues.queues(options.queues))
    except RedisError:
        return False


def _wait_for_redis(connection: Redis) -> None:
    """Block until Redis answers; SIGTERM/SIGINT end the process meanwhile."""
    previous = {sig: signal.signal(sig, _raise_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    delay = BACKOFF_S
    try:
        while True:
            time.sleep(delay)
            try:
                connection.ping()
                return
            except RedisError:
                delay = min(delay * 2, MAX_BACKOFF_S)
    except _StopServing as stop:
        log.info("%s while waiting for Redis: stopping", stop)
        raise SystemExit(0) from None
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
