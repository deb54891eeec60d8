"""``mnemogate run``: the gateway for every configured platform."""

from __future__ import annotations

import asyncio
import logging

import click

from gateway.cli.common import settings_or_exit
from gateway.errors import MnemogateError
from gateway.runner import serve


@click.command()
def run() -> None:
    """Start every platform whose token is set (Telegram, Discord); stop with SIGTERM."""
    settings = settings_or_exit()
    logging.getLogger().setLevel(settings.log_level)
    logging.getLogger("httpx").setLevel(max(logging.WARNING, logging.getLogger().level))
    try:
        asyncio.run(serve(settings))
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
