"""``mnemogate chat``: talk to the agent in the terminal."""

from __future__ import annotations

import asyncio

import click

from gateway.app import App, JobsMode
from gateway.cli.common import settings_or_exit
from gateway.console import run_console
from gateway.errors import MnemogateError, TenantError
from gateway.tenants import TenantId


@click.command()
@click.option(
    "--user",
    "user",
    default="local",
    show_default=True,
    help="Console user name; you talk as tenant console:USER.",
)
@click.option(
    "--jobs",
    "jobs_mode",
    type=click.Choice(["queue", "inline"]),
    default=None,
    help="Background work: 'queue' for RQ workers (mnemogate worker), 'inline' to run it in "
    "this process. Default: the jobs.mode setting.",
)
def chat(user: str, jobs_mode: str | None) -> None:
    """Chat as tenant console:USER (interactive, or one message per stdin line)."""
    try:
        TenantId.of("console", user)
    except TenantError as exc:
        raise click.BadParameter(str(exc), param_hint="--user") from None
    settings = settings_or_exit()
    if not settings.llm.configured:
        raise click.ClickException(
            "no language model configured: set MNEMOGATE_LLM__BASE_URL and "
            "MNEMOGATE_LLM__MODEL (run `mnemogate doctor` for details)"
        )

    async def main() -> None:
        modes: dict[str, JobsMode] = {"queue": "queue", "inline": "inline"}
        mode = modes[jobs_mode] if jobs_mode else None
        async with App(settings, jobs_mode=mode) as app:
            await run_console(app, user)

    try:
        asyncio.run(main())
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    except KeyboardInterrupt:
        click.echo()
