"""Helpers shared by the CLI commands: settings loading, tenant parsing, errors."""

from __future__ import annotations

from typing import Any

import click

from gateway import redaction
from gateway.errors import MnemogateError
from gateway.observability import logs
from gateway.settings import Settings, load_settings
from gateway.tenants import TenantId

CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"]}


def settings_or_exit() -> Settings:
    """Load the configuration, or exit non-zero with the one-line reason."""
    try:
        settings = load_settings()
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    logs.configure(settings)
    redaction.install(settings)  # from here on, no configured secret reaches a log line
    return settings


def parse_tenant(
    _ctx: click.Context | None, _param: click.Parameter | None, value: str
) -> TenantId:
    """click callback: ``--tenant telegram:123``."""
    try:
        return TenantId.parse(value)
    except MnemogateError as exc:
        raise click.BadParameter(str(exc)) from None


tenant_option = click.option(
    "--tenant",
    "tenant",
    required=True,
    callback=parse_tenant,
    help="Tenant id: telegram:<id>, discord:<id> or console:<name>.",
)
