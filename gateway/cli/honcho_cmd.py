"""``mnemogate honcho status|show|forget``: look at and erase what Honcho holds for tenants."""

from __future__ import annotations

import click

from gateway.cli.common import CONTEXT_SETTINGS, settings_or_exit, tenant_option
from gateway.errors import MnemogateError
from gateway.settings import Settings
from gateway.tenants import TenantId
from providers.honcho.identity import tenant_peer_id
from providers.honcho.provider import HonchoProvider

INCOMPLETE_EXIT = 3


def _provider(settings: Settings) -> HonchoProvider:
    try:
        provider = HonchoProvider.from_settings(settings)
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    if not provider.is_available():
        raise click.ClickException(
            "Honcho is not configured: set HONCHO_BASE_URL (and HONCHO_API_KEY if your server "
            "needs one)"
        )
    return provider


@click.group(context_settings=CONTEXT_SETTINGS)
def honcho() -> None:
    """The Honcho memory provider: server health, a tenant's profile, erasure."""


@honcho.command()
def status() -> None:
    """Reach the server and show the workspace, modes and how many peers it holds."""
    settings = settings_or_exit()
    provider = _provider(settings)
    try:
        peers = provider.client().peers()
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        provider.shutdown()
    config = settings.honcho
    click.echo(f"server: {config.base_url} (reachable)")
    click.echo(f"workspace: {config.workspace}, peers: {len(peers)}")
    click.echo(f"recall mode: {config.recall_mode}, observation: {config.observation}")
    click.echo(f"dialectic: depth {config.dialectic_depth}, cap {config.reasoning_level_cap}")


@honcho.command("show")
@tenant_option
def show(tenant: TenantId) -> None:
    """The tenant's peer: its sessions, profile cards and latest conclusions."""
    settings = settings_or_exit()
    provider = _provider(settings)
    peer = tenant_peer_id(tenant, settings.honcho)
    ai = settings.honcho.ai_peer
    try:
        client = provider.client()
        sessions = client.sessions({"metadata": {"tenant": str(tenant)}})
        own_card = client.get_card(peer)
        ai_card = client.get_card(ai, peer)
        conclusions = client.list_conclusions(ai, peer, limit=10)
        conclusions += client.list_conclusions(peer, peer, limit=10)
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        provider.shutdown()
    click.echo(f"peer: {peer}")
    click.echo(f"sessions: {len(sessions)}")
    for title, card in (("card (own)", own_card), (f"card (seen by {ai})", ai_card)):
        click.echo(f"{title}:" + ("" if card else " none"))
        for line in card:
            click.echo(f"  - {line}")
    click.echo("latest conclusions:" + ("" if conclusions else " none"))
    for item in conclusions:
        click.echo(f"  [{item.id}] {item.content}")


@honcho.command("forget")
@tenant_option
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def forget(tenant: TenantId, yes: bool) -> None:
    """Erase what Honcho's API allows for the tenant (sessions, conclusions, cards).

    Honcho cannot delete peers: they are listed and the exit status is 3.
    """
    settings = settings_or_exit()
    provider = _provider(settings)
    if not yes:
        click.confirm(f"Erase {tenant}'s data in Honcho? This cannot be undone.", abort=True)
    try:
        removed, stays = provider.erase(tenant)
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        provider.shutdown()
    click.echo(f"Erased in Honcho for {tenant}: {removed} items")
    for what in stays:
        click.echo(f"warning: could not erase {what}", err=True)
    if stays:
        raise SystemExit(INCOMPLETE_EXIT)
