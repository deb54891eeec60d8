"""``mnemogate memory``: operator view and edit of a tenant's curated memory."""

from __future__ import annotations

import click


@click.group()
def memory() -> None:
    """Show or edit a tenant's curated memory (MEMORY.md / USER.md)."""
