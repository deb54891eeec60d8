"""``mnemogate tenants``: list tenants, export one tenant's data, erase a tenant (SPEC §11),
link accounts into one tenant and unlink them (issue 16).

``forget`` exits 0 when everything was erased and 3 when something could not be (each
such store is printed as a ``warning:`` line on stderr, e.g. Redis unreachable); the other
stores are erased either way, and running it again later finishes the job.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import click

from gateway.cli.common import CONTEXT_SETTINGS, settings_or_exit, tenant_option
from gateway.errors import MnemogateError
from gateway.history.db import Database
from gateway.history.transfer import format_timestamp
from gateway.identity import LinkStore, link_accounts
from gateway.memory.store import FILE_NAMES, MemoryStore
from gateway.pairing import OPERATOR
from gateway.privacy import export_tenant, forget_tenant
from gateway.tenants import TenantId, tenant_dir

INCOMPLETE_EXIT = 3


@click.group(context_settings=CONTEXT_SETTINGS)
def tenants() -> None:
    """List tenants, export a tenant's data, or erase a tenant."""


def _memory_bytes(home: Path, tenant: TenantId) -> int:
    """Bytes of the tenant's memory files across all its scopes."""
    root = tenant_dir(home, tenant)
    return sum(
        path.stat().st_size
        for name in FILE_NAMES.values()
        for path in root.rglob(name)
        if path.is_file() and not path.is_symlink()
    )


def _summaries(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    # The one listing across tenants, for the operator.
    return conn.execute(
        "SELECT t.id, t.created_at, (SELECT COUNT(*) FROM sessions s WHERE s.tenant_id = t.id) "
        "AS sessions FROM tenants t ORDER BY t.id"
    ).fetchall()


@tenants.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_cmd(as_json: bool) -> None:
    """Every tenant: id, when first seen, sessions, memory size in bytes."""
    settings = settings_or_exit()
    try:
        db = Database(settings.state_db)
        try:
            rows = db.read(_summaries)
            links = {str(link.account): str(link.tenant) for link in LinkStore(db).all_links()}
        finally:
            db.close()
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    found: list[dict[str, Any]] = []
    for row in rows:
        tenant = TenantId.parse(row["id"])
        found.append(
            {
                "tenant": str(tenant),
                "created_at": format_timestamp(row["created_at"]),
                "sessions": int(row["sessions"]),
                "memory_bytes": _memory_bytes(settings.home, tenant),
                "linked_to": links.get(str(tenant)),
            }
        )
    seen = {item["tenant"] for item in found}
    for account, owner in sorted(links.items()):
        if account not in seen:  # linked by the operator before it ever wrote
            tenant = TenantId.parse(account)
            found.append(
                {
                    "tenant": account,
                    "created_at": "",
                    "sessions": 0,
                    "memory_bytes": _memory_bytes(settings.home, tenant),
                    "linked_to": owner,
                }
            )
    if as_json:
        click.echo(json.dumps(found, ensure_ascii=False))
        return
    if not found:
        click.echo("No tenants yet.")
        return
    click.echo(f"{'TENANT':<32}  {'CREATED (UTC)':<16}  {'SESSIONS':>8}  {'MEMORY':>8}  LINKED TO")
    for item in found:
        created = item["created_at"][:16].replace("T", " ")
        click.echo(
            f"{item['tenant']:<32}  {created:<16}  {item['sessions']:>8}  "
            f"{item['memory_bytes']:>8}  {item['linked_to'] or '-'}"
        )


@tenants.command("export")
@tenant_option
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Directory to write into, or the archive's file name (default: a private temp dir).",
)
def export_cmd(tenant: TenantId, out: Path | None) -> None:
    """Write one zip archive (0600) with everything stored for the tenant; prints its path."""
    settings = settings_or_exit()
    try:
        path = export_tenant(settings, tenant, out=out)
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(str(path))


@tenants.command("forget")
@tenant_option
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def forget_cmd(tenant: TenantId, yes: bool) -> None:
    """Erase the tenant from every store: memory files, sessions and their index, outbox,
    pending writes, access records, Redis keys and queued jobs.

    Exit status 3 when something could not be erased (listed as warnings); run it again
    once the cause is fixed.
    """
    settings = settings_or_exit()
    if not yes:
        click.confirm(f"Erase everything stored for {tenant}? This cannot be undone.", abort=True)
    try:
        report = forget_tenant(settings, tenant)
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"Erased for {tenant}:")
    for what, count in report.erased.items():
        click.echo(f"  {what}: {count}")
    for what, why in report.not_erased.items():
        click.echo(f"warning: could not erase {what}: {why}", err=True)
    if not report.complete:
        raise SystemExit(INCOMPLETE_EXIT)


def _account(_ctx: click.Context, _param: click.Parameter, value: str) -> TenantId:
    try:
        return TenantId.parse(value)
    except MnemogateError as exc:
        raise click.BadParameter(str(exc)) from None


@tenants.command("link")
@click.argument("owner", callback=_account)
@click.argument("account", callback=_account)
def link_cmd(owner: TenantId, account: TenantId) -> None:
    """Link ACCOUNT into OWNER's tenant: ACCOUNT's sessions move there and its memory entries
    are merged (those that do not fit become pending changes). Access is not granted."""
    settings = settings_or_exit()
    try:
        db = Database(settings.state_db)
        try:
            memory = MemoryStore(settings.home, settings.memory)
            report = link_accounts(db, settings.home, memory, owner, account, by=OPERATOR)
        finally:
            db.close()
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    for line in report.lines():
        click.echo(line)


@tenants.command("unlink")
@click.argument("account", callback=_account)
def unlink_cmd(account: TenantId) -> None:
    """Detach ACCOUNT: its future turns use its own tenant; history stays where it is."""
    settings = settings_or_exit()
    try:
        db = Database(settings.state_db)
        try:
            was = LinkStore(db).unlink(account)
        finally:
            db.close()
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    if was is None:
        click.echo(f"{account} is not linked.")
    else:
        click.echo(f"Unlinked {account} from {was}.")
