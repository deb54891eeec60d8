"""``mnemogate sessions``: list, search, export and prune a tenant's sessions."""

from __future__ import annotations

import click


@click.group()
def sessions() -> None:
    """List, show, search, export, import, rename, delete or prune a tenant's sessions."""
