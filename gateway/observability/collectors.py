"""Scrape-time gauges: queue depth and age, workers, outbox backlog, up and ready.

Read live from Redis and state.db when Prometheus scrapes, so every process that serves
``/metrics`` (gateway and workers) reports the same shared figures; dashboards take ``max``
over instances. A store that does not answer leaves its gauges out of that scrape (and
``mnemogate_ready`` at 0) instead of failing the scrape.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from redis import Redis
from redis.exceptions import RedisError

from gateway.history.db import Database
from gateway.observability import plane

log = logging.getLogger(__name__)


class PlaneCollector(Collector):
    """Gauges of one deployment (``prefix``) and of this process (``role``)."""

    def __init__(
        self,
        role: str,
        prefix: str,
        connection: Redis,
        db: Database | None,
        ready: Callable[[], tuple[bool, str]],
    ) -> None:
        self.role = role
        self.prefix = prefix
        self.connection = connection
        self.db = db
        self.ready = ready

    def describe(self) -> Iterable[Metric]:
        return [_gauge(name, "") for name in _HELP]

    def collect(self) -> Iterable[Metric]:
        up = _gauge("mnemogate_up", _HELP["mnemogate_up"], ["role"])
        up.add_metric([self.role], 1)
        ready = _gauge("mnemogate_ready", _HELP["mnemogate_ready"], ["role"])
        ready.add_metric([self.role], 1 if self.ready()[0] else 0)
        yield from (up, ready)
        try:
            yield from self._queues()
        except (RedisError, OSError) as exc:
            log.debug("metrics: queues unreadable: %s", exc)
        if self.db is not None:
            try:
                stat = plane.outbox_stats(self.db)
            except Exception as exc:  # a locked or missing state.db: skip, don't fail the scrape
                log.debug("metrics: outbox unreadable: %s", exc)
            else:
                yield _value("mnemogate_outbox_backlog", stat.backlog)
                yield _value("mnemogate_outbox_oldest_age_seconds", stat.oldest_age_s or 0.0)

    def _queues(self) -> Iterable[Metric]:
        depth = _gauge("mnemogate_queue_depth", _HELP["mnemogate_queue_depth"], ["queue"])
        age = _gauge(
            "mnemogate_queue_oldest_job_age_seconds",
            _HELP["mnemogate_queue_oldest_job_age_seconds"],
            ["queue"],
        )
        failed = _gauge(
            "mnemogate_queue_failed_jobs", _HELP["mnemogate_queue_failed_jobs"], ["queue"]
        )
        for stat in plane.queue_stats(self.connection, self.prefix):
            depth.add_metric([stat.queue], stat.depth)
            age.add_metric([stat.queue], stat.oldest_age_s or 0.0)
            failed.add_metric([stat.queue], stat.failed)
        workers = _gauge("mnemogate_workers", _HELP["mnemogate_workers"], ["state"])
        found = plane.worker_stats(self.connection, self.prefix)
        workers.add_metric(["busy"], sum(1 for w in found if w.alive and w.busy))
        workers.add_metric(["idle"], sum(1 for w in found if w.alive and not w.busy))
        workers.add_metric(["dead"], sum(1 for w in found if not w.alive))
        return depth, age, failed, workers


_HELP = {
    "mnemogate_up": "This process is serving metrics",
    "mnemogate_ready": "This process is ready (its /readyz answer)",
    "mnemogate_queue_depth": "Jobs waiting in an RQ queue",
    "mnemogate_queue_oldest_job_age_seconds": "Age of the oldest waiting job (0 when none)",
    "mnemogate_queue_failed_jobs": "Jobs in the queue's failed-job registry",
    "mnemogate_workers": "RQ workers serving this deployment's queues, by state",
    "mnemogate_outbox_backlog": "Outbox rows whose job has not finished yet",
    "mnemogate_outbox_oldest_age_seconds": "Age of the oldest open outbox row (0 when none)",
}


def _gauge(name: str, documentation: str, labels: list[str] | None = None) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, labels=labels)


def _value(name: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, _HELP[name], value=value)
