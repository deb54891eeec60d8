"""``mnemogate doctor``: check configuration and dependencies, say how to fix them."""

from __future__ import annotations

import click


@click.command()
def doctor() -> None:
    """Check config, SQLite FTS5/trigram, Redis and the LLM endpoint."""
    raise click.ClickException("not built yet")
