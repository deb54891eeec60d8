"""``mnemogate memory``: operator view and edit of a tenant's curated memory.

Edits go through the same :class:`~gateway.memory.store.MemoryStore` rules and error texts
as the model's tool, tagged with origin ``operator``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import click

from gateway.cli.common import settings_or_exit, tenant_option
from gateway.errors import MnemogateError
from gateway.memory.entries import format_usage, percent, preview
from gateway.memory.operations import Operation
from gateway.memory.store import HEADINGS, TARGETS, Entry, MemoryStore, Target
from gateway.tenants import PLATFORMS, GroupId, MemoryScope, TenantId

F = TypeVar("F", bound=Callable[..., Any])


def _parse_group(
    _ctx: click.Context | None, _param: click.Parameter | None, value: str | None
) -> GroupId | None:
    if value is None:
        return None
    platform, sep, chat = value.strip().partition(":")
    if not sep or platform not in PLATFORMS or not chat:
        raise click.BadParameter(
            f"{value!r} must look like <platform>:<chat id>, e.g. telegram:-1001234"
        )
    if any(ch.isspace() or ord(ch) < 32 for ch in chat):
        raise click.BadParameter("a group chat id may not contain spaces or control characters")
    return GroupId(platform, chat)


group_option = click.option(
    "--group",
    "group",
    default=None,
    callback=_parse_group,
    metavar="PLATFORM:CHAT_ID",
    help="Address the tenant's isolated scope in this group chat instead of the private one.",
)


def _target_option(*, required: bool) -> Callable[[F], F]:
    return click.option(
        "--target",
        "target",
        type=click.Choice(TARGETS),
        required=required,
        help="memory = MEMORY.md (agent notes), user = USER.md (user profile)"
        + ("." if required else "; default both."),
    )


def _scope(tenant: TenantId, group: GroupId | None) -> MemoryScope:
    if group is not None and group.platform != tenant.platform:
        raise click.BadParameter(
            f"group {group} is not on the tenant's platform ({tenant.platform})",
            param_hint="--group",
        )
    return MemoryScope(tenant, group)


def _store() -> MemoryStore:
    settings = settings_or_exit()
    return MemoryStore(settings.home, settings.memory)


def _targets(target: Target | None) -> tuple[Target, ...]:
    return TARGETS if target is None else (target,)


def _when(stamp: float | None, style: str = "%Y-%m-%dT%H:%M:%SZ") -> str | None:
    if stamp is None:
        return None
    return datetime.fromtimestamp(stamp, UTC).strftime(style)


def _entry_json(entry: Entry) -> dict[str, Any]:
    return {
        "text": entry.text,
        "origin": entry.origin,
        "created_at": _when(entry.created_at),
        "updated_at": _when(entry.updated_at),
    }


def _describe(
    store: MemoryStore, scope: MemoryScope, targets: tuple[Target, ...], *, raw: bool
) -> dict[str, Any]:
    described: dict[str, Any] = {}
    for target in targets:
        entries = store.read(scope, target)
        used, limit = store.usage(scope, target)
        described[target] = {
            "file": str(store.path(scope, target)),
            "usage": format_usage(used, limit),
            "chars": used,
            "limit": limit,
            "entries": [_entry_json(entry) for entry in entries],
        }
        if raw:
            described[target]["raw"] = store.raw_text(scope, target)
    group = None if scope.group is None else str(scope.group)
    return {"tenant": str(scope.tenant), "group": group, "targets": described}


def _edit(tenant: TenantId, group: GroupId | None, target: Target, operation: Operation) -> None:
    scope = _scope(tenant, group)
    store = _store()
    try:
        result = store.apply(scope, target, [operation], origin="operator")
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    if not result.success:
        reason = result.error or "the memory write failed"
        if result.current_entries:
            shown = "; ".join(
                f"{n}) {preview(entry)!r}" for n, entry in enumerate(result.current_entries, 1)
            )
            reason += f" Current entries: {shown}"
        raise click.ClickException(reason)
    count = result.entry_count
    click.echo(
        f"{result.message} Now {result.usage} chars in {count} entr{'y' if count == 1 else 'ies'}."
    )


@click.group()
def memory() -> None:
    """Show or edit a tenant's curated memory (MEMORY.md / USER.md)."""


@memory.command()
@tenant_option
@_target_option(required=False)
@group_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def show(tenant: TenantId, target: Target | None, group: GroupId | None, as_json: bool) -> None:
    """Show entries with their usage, origin and last update."""
    scope = _scope(tenant, group)
    store = _store()
    try:
        if as_json:
            described = _describe(store, scope, _targets(target), raw=False)
            click.echo(json.dumps(described, ensure_ascii=False, indent=2))
            return
        click.echo(f"Curated memory of {scope}")
        for name in _targets(target):
            _print_target(store, scope, name)
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None


def _print_target(store: MemoryStore, scope: MemoryScope, target: Target) -> None:
    used, limit = store.usage(scope, target)
    click.echo(
        f"\n{HEADINGS[target]} [{percent(used, limit)}% — {format_usage(used, limit)} chars]"
    )
    entries = store.read(scope, target)
    if not entries:
        click.echo("  (empty)")
    for number, entry in enumerate(entries, 1):
        first, *rest = entry.text.splitlines()
        click.echo(f"{number:>3}. {first}")
        for line in rest:
            click.echo(f"     {line}")
        updated = _when(entry.updated_at, "%Y-%m-%d %H:%M UTC") or "time unknown"
        click.echo(f"     ({entry.origin}, updated {updated})")


@memory.command()
@tenant_option
@_target_option(required=True)
@group_option
@click.argument("content")
def add(tenant: TenantId, target: Target, group: GroupId | None, content: str) -> None:
    """Add CONTENT as a new entry."""
    _edit(tenant, group, target, Operation("add", content=content))


@memory.command()
@tenant_option
@_target_option(required=True)
@group_option
@click.argument("old_text")
@click.argument("content")
def replace(
    tenant: TenantId, target: Target, group: GroupId | None, old_text: str, content: str
) -> None:
    """Replace the one entry containing OLD_TEXT with CONTENT."""
    _edit(tenant, group, target, Operation("replace", content=content, old_text=old_text))


@memory.command()
@tenant_option
@_target_option(required=True)
@group_option
@click.argument("old_text")
def remove(tenant: TenantId, target: Target, group: GroupId | None, old_text: str) -> None:
    """Remove the one entry containing OLD_TEXT."""
    _edit(tenant, group, target, Operation("remove", old_text=old_text))


@memory.command()
@tenant_option
@_target_option(required=False)
@group_option
@click.option("--json", "as_json", is_flag=True, help="JSON with entries and their metadata.")
def export(tenant: TenantId, target: Target | None, group: GroupId | None, as_json: bool) -> None:
    """Print the raw Markdown (each file under a '==> NAME <==' line when both are shown)."""
    scope = _scope(tenant, group)
    store = _store()
    targets = _targets(target)
    try:
        if as_json:
            described = _describe(store, scope, targets, raw=True)
            click.echo(json.dumps(described, ensure_ascii=False, indent=2))
            return
        texts = [(store.path(scope, name).name, store.raw_text(scope, name)) for name in targets]
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    if len(texts) == 1:
        click.echo(texts[0][1], nl=False)
        return
    for index, (name, text) in enumerate(texts):
        click.echo(f"{'' if index == 0 else chr(10)}==> {name} <==")
        click.echo(text, nl=False)


@memory.command()
@tenant_option
@_target_option(required=True)
@group_option
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def reset(tenant: TenantId, target: Target, group: GroupId | None, yes: bool) -> None:
    """Empty one memory file; its previous content is kept in a backup file."""
    scope = _scope(tenant, group)
    store = _store()
    name = store.path(scope, target).name
    if not yes:
        click.confirm(f"Empty {name} of {scope}?", abort=True)
    try:
        backup = store.reset(scope, target)
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    kept = f"; the previous content is in {backup}" if backup else ""
    click.echo(f"Emptied {name} of {scope}{kept}.")
