"""``mnemogate chat``: talk to the agent in the terminal."""

from __future__ import annotations

import click


@click.command()
@click.option("--user", "user", default="local", show_default=True, help="Console user name.")
def chat(user: str) -> None:
    """Chat as tenant console:USER (interactive, or one message per stdin line)."""
    raise click.ClickException("not built yet")
