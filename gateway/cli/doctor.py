"""``mnemogate doctor``: check configuration and dependencies, say how to fix them."""

from __future__ import annotations

import click

from gateway.cli.common import settings_or_exit
from gateway.doctor import run_checks


@click.command()
def doctor() -> None:
    """Check config, data directory, SQLite FTS5/trigram, Redis and the LLM endpoints."""
    checks = run_checks(settings_or_exit())
    for check in checks:
        click.echo(check.line())
    failed = [c.name for c in checks if c.status == "fail"]
    if failed:
        raise click.ClickException(f"{len(failed)} check(s) failed: {', '.join(failed)}")
    click.echo("all checks passed")
