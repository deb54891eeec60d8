"""The ``mnemogate`` command line: one click group, one module per command family."""

from __future__ import annotations

import logging

import click

from gateway.cli.common import CONTEXT_SETTINGS
from gateway.observability.logs import TEXT_FORMAT


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(package_name="mnemogate")
def cli() -> None:
    """mnemogate — a chat-bot gateway whose memory is private to each user."""
    logging.basicConfig(level=logging.WARNING, format=TEXT_FORMAT)
    # httpx logs request URLs at INFO, and Telegram's URLs contain the bot token.
    logging.getLogger("httpx").setLevel(logging.WARNING)


def _register() -> None:
    from gateway.cli import (
        chat,
        doctor,
        honcho_cmd,
        memory_cmd,
        pairing_cmd,
        provider_cmd,
        run_cmd,
        sessions_cmd,
        status_cmd,
        tenants_cmd,
        worker_cmd,
    )

    for command in (
        chat.chat,
        doctor.doctor,
        honcho_cmd.honcho,
        memory_cmd.memory,
        pairing_cmd.pairing,
        run_cmd.run,
        sessions_cmd.sessions,
        status_cmd.status,
        tenants_cmd.tenants,
        worker_cmd.worker,
    ):
        cli.add_command(command)
    memory_cmd.memory.add_command(provider_cmd.setup)
    memory_cmd.memory.add_command(provider_cmd.status)


_register()


def main() -> None:
    cli(prog_name="mnemogate")
