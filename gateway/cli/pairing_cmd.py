"""``mnemogate pairing``: list pending pairing codes, approve one, revoke a tenant's access.

The operator approves as the admin ``operator``: wrong codes count towards the same lockout
as an admin's in chat.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import click

from gateway.access import OPERATOR, AccessPolicy
from gateway.cli.common import CONTEXT_SETTINGS, parse_tenant, settings_or_exit
from gateway.errors import MnemogateError
from gateway.history.db import Database
from gateway.history.transfer import format_timestamp
from gateway.tenants import TenantId


@click.group(context_settings=CONTEXT_SETTINGS)
def pairing() -> None:
    """Access control: pending pairing codes, approvals and revocations."""


@contextmanager
def _policy() -> Iterator[AccessPolicy]:
    """The access policy over state.db; mnemogate errors become one-line CLI errors."""
    settings = settings_or_exit()
    db: Database | None = None
    try:
        db = Database(settings.state_db)
        yield AccessPolicy(settings, db)
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        if db is not None:
            db.close()


def _when(ts: float) -> str:
    return format_timestamp(ts)[:16].replace("T", " ")


@pairing.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_cmd(as_json: bool) -> None:
    """Pending pairing codes and the tenants allowed at run time."""
    with _policy() as policy:
        pending = policy.list_pending()
        grants = policy.grants()
        allow_all = policy.allow_all
    if as_json:
        data = {
            "allow_all": allow_all,
            "pending": [
                {
                    "code": p.code,
                    "tenant": str(p.tenant),
                    "display_name": p.display_name,
                    "chat_id": p.chat_id,
                    "created_at": format_timestamp(p.created_at),
                    "expires_at": format_timestamp(p.expires_at),
                }
                for p in pending
            ],
            "granted": [
                {
                    "tenant": str(g.tenant),
                    "granted_by": g.granted_by,
                    "granted_at": format_timestamp(g.granted_at),
                }
                for g in grants
            ],
        }
        click.echo(json.dumps(data, ensure_ascii=False))
        return
    if allow_all:
        click.echo("Note: access.allow_all is on — everyone may talk to the bot.")
    click.echo("Pending pairing codes:" if pending else "No pending pairing codes.")
    for p in pending:
        name = f" ({p.display_name})" if p.display_name else ""
        click.echo(f"  {p.code}  {p.tenant}{name}  expires {_when(p.expires_at)} UTC")
    click.echo("Allowed at run time:" if grants else "Nobody is allowed at run time.")
    for g in grants:
        click.echo(f"  {g.tenant}  by {g.granted_by or '-'} on {_when(g.granted_at)} UTC")


@pairing.command("approve")
@click.argument("code")
def approve_cmd(code: str) -> None:
    """Approve a pairing CODE: its tenant may talk to the bot from now on."""
    with _policy() as policy:
        approved = policy.approve(code, OPERATOR)
    name = f" ({approved.display_name})" if approved.display_name else ""
    click.echo(f"Approved {approved.tenant}{name}: they can talk to the bot now.")


@pairing.command("revoke")
@click.argument("tenant", callback=parse_tenant)
def revoke_cmd(tenant: TenantId) -> None:
    """Withdraw the runtime access of TENANT (e.g. telegram:123) and its pending code."""
    with _policy() as policy:
        revoked = policy.revoke(tenant, OPERATOR)
    if revoked:
        click.echo(f"Revoked: {tenant} may no longer talk to the bot.")
    else:
        click.echo(f"{tenant} had no access granted at run time; nothing changed.")
