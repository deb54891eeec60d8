"""One process's metrics and health endpoint: readiness checks, gauges and the HTTP server.

``start_endpoint(settings, role, problem)`` does nothing when ``metrics.listen`` is unset.
Otherwise it serves ``/metrics``, ``/healthz`` and ``/readyz``; the process is ready when
Redis answers a PING, state.db answers a query and ``problem(redis)`` (the role's check:
platforms connected for ``run``, registered with RQ for ``worker``) returns None.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import suppress

from prometheus_client import REGISTRY
from redis import Redis
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.retry import Retry

from gateway.history.db import Database
from gateway.observability.collectors import PlaneCollector
from gateway.observability.server import HealthServer
from gateway.settings import Settings
from workers.queues import one_line

log = logging.getLogger(__name__)
# the role's own readiness check, given the probe's Redis client (fails fast)
Problem = Callable[[Redis], str | None]


def probe_client(url: str) -> Redis:
    """A Redis client that answers a probe within about two seconds, never retrying."""
    return Redis.from_url(
        url, socket_connect_timeout=1.0, socket_timeout=2.0, retry=Retry(NoBackoff(), 0)
    )


class Readiness:
    """Redis, state.db and the role's own check, in that order; the first problem wins."""

    def __init__(self, settings: Settings, problem: Problem) -> None:
        self.redis = probe_client(settings.redis_url)
        self.db = Database(settings.state_db)
        self.problem = problem

    def __call__(self) -> tuple[bool, str]:
        try:
            self.redis.ping()
        except (RedisError, OSError) as exc:
            return False, f"redis unreachable: {one_line(exc)}"
        try:
            self.db.read(lambda c: c.execute("SELECT 1").fetchone())
        except Exception as exc:
            return False, f"state.db unreadable: {one_line(exc)}"
        reason = self.problem(self.redis)
        return (False, reason) if reason else (True, "ready")

    def close(self) -> None:
        with suppress(Exception):
            self.redis.close()
        self.db.close()


class Endpoint:
    """The running server with its collector; :meth:`close` undoes :func:`start_endpoint`."""

    def __init__(self, server: HealthServer, collector: PlaneCollector, ready: Readiness) -> None:
        self.server = server
        self.collector = collector
        self.ready = ready

    @property
    def address(self) -> str:
        return self.server.address

    def close(self) -> None:
        self.server.stop()
        with suppress(KeyError):
            REGISTRY.unregister(self.collector)
        self.ready.close()


def start_endpoint(settings: Settings, role: str, problem: Problem) -> Endpoint | None:
    """Serve this process's endpoints if ``MNEMOGATE_METRICS__LISTEN`` is set."""
    listen = settings.metrics.listen
    if not listen:
        return None
    ready = Readiness(settings, problem)
    collector = PlaneCollector(role, settings.redis_prefix, ready.redis, ready.db, ready)
    try:
        server = HealthServer(listen, ready)
    except Exception:
        ready.close()
        raise
    REGISTRY.register(collector)
    return Endpoint(server.start(), collector, ready)
