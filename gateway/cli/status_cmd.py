"""``mnemogate status``: queues, workers, outbox, provider and leader; exit 1 when degraded."""

from __future__ import annotations

import json

import click

from gateway.cli.common import settings_or_exit
from gateway.observability.status import gather, render


@click.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of text.")
def status(as_json: bool) -> None:
    """Show the deployment's health: per queue depth, oldest job and failed jobs; workers
    (alive, busy, host, current job); outbox backlog; provider health; the leading gateway.

    Exit code 0 when healthy, 1 when degraded (the reasons are listed as problems).
    """
    settings = settings_or_exit()
    report = gather(settings)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, default=str))
    else:
        click.echo(render(report))
    raise SystemExit(0 if report.healthy else 1)
