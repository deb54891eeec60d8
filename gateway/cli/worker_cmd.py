"""``mnemogate worker``: an RQ worker serving the gateway's background queues."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import click
from redis import Redis
from redis.exceptions import RedisError
from rq.worker import BaseWorker

from gateway.cli.common import settings_or_exit
from gateway.errors import ConfigError
from gateway.observability.endpoint import start_endpoint
from gateway.redaction import safe_url
from workers import context, logs
from workers.queues import QUEUE_ORDER, one_line
from workers.serve import WorkerOptions, serve


@click.command()
@click.option(
    "--queue",
    "queues",
    multiple=True,
    type=click.Choice(QUEUE_ORDER),
    help="Serve only this queue (repeatable). Default: sync, recall, review, maint, in that "
    "order of priority.",
)
@click.option("--burst", is_flag=True, help="Work until the queues are empty, then exit.")
@click.option("--name", default=None, help="Worker name shown by `rq info` (default: random).")
@click.option(
    "--simple",
    is_flag=True,
    help="Run jobs inside this process (RQ SimpleWorker) instead of forking a child per job.",
)
def worker(queues: tuple[str, ...], burst: bool, name: str | None, simple: bool) -> None:
    """Serve the background queues with an RQ worker.

    By default RQ's standard forking Worker runs each job in a fresh child process (one job
    per fork), so a job that crashes or leaks cannot take the worker down; --simple runs
    jobs in this process instead, which is faster but shares its fate. SIGTERM or Ctrl+C is
    a warm shutdown: the running job finishes, then the worker exits; a second signal stops
    the job at once. Failed jobs are retried with backoff and finally kept in RQ's failed
    job registry (`rq info`, `rq requeue`).

    When Redis goes away the worker waits for it with backoff and carries on. Every worker
    also runs the outbox recovery pass, so jobs lost with a restarted Redis or failed for
    good are handed to RQ again without a `run` process.
    """
    settings = settings_or_exit()
    for logger in ("gateway", "workers", "providers"):
        logging.getLogger(logger).setLevel(settings.log_level)
    connection = Redis.from_url(settings.redis_url, socket_connect_timeout=5)
    try:
        connection.ping()
    except RedisError as exc:
        connection.close()
        raise click.ClickException(
            f"cannot reach Redis at {safe_url(settings.redis_url)}: {one_line(exc)}"
        ) from None
    chosen = [q for q in QUEUE_ORDER if not queues or q in queues]
    logs.install()
    context.configure(settings)
    started: list[BaseWorker] = []  # the RQ workers serve() ran, the live one last

    # Ready while RQ knows the live worker: registered at start, gone at a clean stop.
    def registered(probe: Redis) -> str | None:
        if started and probe.exists(started[-1].key):
            return None
        return "not registered with RQ (yet)"

    with tempfile.TemporaryDirectory(prefix="mnemogate-metrics-") as spool:
        try:
            endpoint = start_endpoint(settings, "worker", registered)
        except ConfigError as exc:
            connection.close()
            raise click.ClickException(str(exc)) from None
        options = WorkerOptions(
            chosen,
            burst=burst,
            name=name,
            simple=simple,
            spool=Path(spool) if endpoint is not None else None,
        )
        try:
            serve(connection, settings, options, track=started.append)
        except ValueError as exc:  # e.g. a live worker already has this name
            raise click.ClickException(one_line(exc)) from None
        finally:
            if endpoint is not None:
                endpoint.close()
            context.reset()
            connection.close()
