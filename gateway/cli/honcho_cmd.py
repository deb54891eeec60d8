"""``mnemogate honcho …``: the operator's view of Honcho, its recall mode, and erasure.

``status``, ``peers``, ``sessions [--tenant T]`` and ``peer TENANT`` only read; ``mode``
writes ``recall_mode`` to the config file; ``forget --tenant T`` erases. The Honcho SDK is
imported when one of these commands runs, not for every ``mnemogate`` command.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from gateway.cli.common import CONTEXT_SETTINGS, parse_tenant, settings_or_exit, tenant_option
from gateway.config_file import update_config
from gateway.errors import MnemogateError
from gateway.settings import Settings, config_file_path, load_settings
from gateway.tenants import TenantId

if TYPE_CHECKING:
    from providers.honcho.provider import HonchoProvider

INCOMPLETE_EXIT = 3
RECENT_CONCLUSIONS = 10
MODES = ("hybrid", "context", "tools")


@contextmanager
def connected(settings: Settings) -> Iterator[HonchoProvider]:
    """The configured provider; every failure inside becomes a one-line ClickException."""
    from providers.honcho.provider import HonchoProvider

    try:
        provider = HonchoProvider.from_settings(settings)
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    if not provider.is_available():
        raise click.ClickException(
            "Honcho is not configured: set HONCHO_BASE_URL (and HONCHO_API_KEY if your server "
            "needs one)"
        )
    try:
        yield provider
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        provider.shutdown()


def _optional_tenant(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> TenantId | None:
    return None if value is None else parse_tenant(ctx, param, value)


def _listing(title: str, items: list[str], empty: str, marks: dict[str, str]) -> None:
    if not items:
        click.echo(empty)
        return
    click.echo(title)
    for item in items:
        click.echo(f"  {item}{marks.get(item, '')}")


def _assistant_marks(ai_peer: str, peers: list[str]) -> dict[str, str]:
    """Labels for the assistant peers: one per user peer, and the shared one of old versions."""
    marks = {ai_peer: "  (the assistant shared by every tenant before per-user assistants)"}
    for peer in peers:
        if peer.startswith(f"{ai_peer}__"):
            marks[peer] = f"  (the assistant of {peer.removeprefix(ai_peer + '__')})"
    return marks


@click.group(context_settings=CONTEXT_SETTINGS)
def honcho() -> None:
    """The Honcho memory provider: server, peers, sessions, recall mode, erasure."""


@honcho.command()
def status() -> None:
    """Reach the server; show the workspace, modes and how many peers and sessions it holds."""
    settings = settings_or_exit()
    with connected(settings) as provider:
        client = provider.client()
        peer_ids, session_ids = client.peers(), client.sessions()
    config = settings.honcho
    click.echo(f"server: {config.base_url} (reachable)")
    click.echo(
        f"workspace: {config.workspace}, peers: {len(peer_ids)}, sessions: {len(session_ids)}"
    )
    click.echo(f"recall mode: {config.recall_mode}, observation: {config.observation}")
    click.echo(f"dialectic: depth {config.dialectic_depth}, cap {config.reasoning_level_cap}")


@honcho.command()
def peers() -> None:
    """List the peers of the workspace (one per tenant, group peers, the assistant)."""
    settings = settings_or_exit()
    with connected(settings) as provider:
        found = provider.client().peers()
    workspace = settings.honcho.workspace
    _listing(
        f"{len(found)} peer(s) in workspace {workspace}:",
        found,
        f"no peers in workspace {workspace}",
        _assistant_marks(settings.honcho.ai_peer, found),
    )


@honcho.command()
@click.option("--tenant", "tenant", callback=_optional_tenant, help="Only this tenant's.")
def sessions(tenant: TenantId | None) -> None:
    """List Honcho sessions (one per conversation), optionally only a tenant's (--tenant)."""
    settings = settings_or_exit()
    filters: dict[str, object] | None = {"metadata": {"tenant": str(tenant)}} if tenant else None
    with connected(settings) as provider:
        found = provider.client().sessions(filters)
    where = f"workspace {settings.honcho.workspace}" + (f" for {tenant}" if tenant else "")
    _listing(f"{len(found)} session(s) in {where}:", found, f"no sessions in {where}", {})


@honcho.command()
@click.argument("tenant", callback=parse_tenant, metavar="TENANT")
def peer(tenant: TenantId) -> None:
    """The DM peer of TENANT (e.g. telegram:123): cards, representation, recent conclusions."""
    from providers.honcho.client import HonchoCallError
    from providers.honcho.identity import assistant_peer_id, configured_flags, tenant_peer_id

    settings = settings_or_exit()
    config = settings.honcho
    peer_id = tenant_peer_id(tenant, config)
    ai = assistant_peer_id(config.ai_peer, peer_id)
    user_flags, ai_flags = configured_flags(config)
    # The perspective recall reads from: the assistant's view when it observes the user.
    ai_observes = bool(ai_flags.others) and user_flags.me is not False
    observer, target = (ai, peer_id) if ai_observes else (peer_id, None)
    with connected(settings) as provider:
        client = provider.client()
        try:
            own_card = client.get_card(peer_id) or []
            # The assistant peer exists once the tenant's session was joined since the
            # upgrade to per-user assistants; the user peer may be older.
            ai_exists = ai in client.peers({"id": ai})
            ai_card = (client.get_card(ai, peer_id) or []) if ai_exists else []
        except HonchoCallError as exc:
            if not exc.not_found:
                raise
            raise click.ClickException(
                f"no Honcho peer {peer_id!r} for {tenant} in workspace {config.workspace} "
                "(it is created with the tenant's first synced turn)"
            ) from None
        seen = ai_exists or observer != ai
        representation = client.representation(observer, target) if seen else ""
        session_ids = client.sessions({"metadata": {"tenant": str(tenant)}})
        conclusions = client.list_conclusions(ai, peer_id, limit=RECENT_CONCLUSIONS)
        conclusions += client.list_conclusions(peer_id, peer_id, limit=RECENT_CONCLUSIONS)
    click.echo(f"peer: {peer_id} ({tenant}, workspace {config.workspace})")
    click.echo(f"sessions: {len(session_ids)}")
    for title, card in (("card (own)", own_card), (f"card (seen by {ai})", ai_card)):
        click.echo(f"{title}:" + ("" if card else " none"))
        for line in card:
            click.echo(f"  - {line}")
    click.echo(f"representation (seen by {observer}):" + ("" if representation else " none"))
    for line in representation.strip().splitlines():
        click.echo(f"  {line}" if line.strip() else "")
    click.echo("recent conclusions:" + ("" if conclusions else " none"))
    for item in conclusions:
        click.echo(f"  [{item.id}] {item.content}  (by {item.observer_id})")


@honcho.command()
@click.argument("mode", type=click.Choice(MODES))
def mode(mode: str) -> None:
    """Set recall_mode: hybrid (recall and tools), context (recall only), tools (tools only)."""
    settings = settings_or_exit()
    try:
        path = config_file_path() or settings.home / "config.toml"
        update_config(path, "honcho", {"recall_mode": mode})
        effective = load_settings().honcho.recall_mode
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"recall_mode = {mode!r} written to [honcho] in {path}")
    if effective != mode:
        raise click.ClickException(
            f"the configuration still resolves to {effective!r}: "
            "MNEMOGATE_HONCHO__RECALL_MODE in the environment overrides the file"
        )
    click.echo(
        "Restart the gateway (`mnemogate run`) and the workers (`mnemogate worker`): running "
        "processes read the configuration once, at start."
    )


@honcho.command("forget")
@tenant_option
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def forget(tenant: TenantId, yes: bool) -> None:
    """Erase what Honcho's API allows for the tenant (sessions, conclusions, cards).

    Honcho cannot delete peers: they are listed and the exit status is 3.
    """
    settings = settings_or_exit()
    with connected(settings) as provider:
        if not yes:
            click.confirm(f"Erase {tenant}'s data in Honcho? This cannot be undone.", abort=True)
        removed, stays = provider.erase(tenant)
    click.echo(f"Erased in Honcho for {tenant}: {removed} items")
    for what in stays:
        click.echo(f"warning: could not erase {what}", err=True)
    if stays:
        raise SystemExit(INCOMPLETE_EXIT)
