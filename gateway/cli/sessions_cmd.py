"""``mnemogate sessions``: list, show, search, export, import, rename, delete, prune."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from gateway.cli.common import CONTEXT_SETTINGS, parse_tenant, settings_or_exit, tenant_option
from gateway.errors import MnemogateError
from gateway.history.db import Database
from gateway.history.retention import prune as prune_sessions
from gateway.history.search import SessionSearch
from gateway.history.search_tool import search_answer
from gateway.history.store import SessionRecord, SessionStore
from gateway.history.transfer import (
    ON_CONFLICT,
    OnConflict,
    export_lines,
    exported_session,
    format_timestamp,
    import_jsonl,
)
from gateway.settings import Settings
from gateway.tenants import PLATFORMS, GroupId, MemoryScope, TenantId

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


@click.group(context_settings=CONTEXT_SETTINGS)
def sessions() -> None:
    """List, show, search, export, import, rename, delete or prune a tenant's sessions."""


@contextmanager
def _opened(settings: Settings | None = None) -> Iterator[SessionStore]:
    """state.db for one command; mnemogate errors become one-line CLI errors."""
    if settings is None:
        settings = settings_or_exit()
    db: Database | None = None
    try:
        db = Database(settings.state_db)
        yield SessionStore(db)
    except MnemogateError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        if db is not None:
            db.close()


def _write_stdout(text: str) -> None:
    """Exact UTF-8 bytes, whatever the locale of the terminal."""
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()


def _print_json(value: Any) -> None:
    _write_stdout(json.dumps(value, ensure_ascii=False) + "\n")


def _when(ts: float | None) -> str:
    return "-" if ts is None else format_timestamp(ts)[:16].replace("T", " ")


@sessions.command("list")
@tenant_option
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10_000))
@click.option("--offset", default=0, show_default=True, type=click.IntRange(0))
@json_option
def list_cmd(tenant: TenantId, limit: int, offset: int, as_json: bool) -> None:
    """The tenant's sessions, newest first."""
    with _opened() as store:
        found = store.list_sessions(tenant, limit=limit, offset=offset)
        counts = store.count_messages(tenant, [s.id for s in found])
    if as_json:
        _print_json([_listing(s, counts[s.id]) for s in found])
        return
    if not found:
        click.echo(f"{tenant} has no sessions.")
        return
    click.echo(
        f"{'ID':<22}  {'STARTED (UTC)':<16}  {'MSGS':>5}  {'SOURCE':<8}  {'PARENT':<22}  TITLE"
    )
    for s in found:
        click.echo(
            f"{s.id:<22}  {_when(s.started_at):<16}  {counts[s.id]:>5}  {s.source:<8}  "
            f"{s.parent_id or '-':<22}  {s.title or '(untitled)'}"
        )


def _listing(s: SessionRecord, messages: int) -> dict[str, Any]:
    return {
        "id": s.id,
        "title": s.title,
        "started_at": format_timestamp(s.started_at),
        "ended_at": None if s.ended_at is None else format_timestamp(s.ended_at),
        "messages": messages,
        "source": s.source,
        "parent_id": s.parent_id,
    }


@sessions.command()
@tenant_option
@click.argument("session_id")
@json_option
def show(tenant: TenantId, session_id: str, as_json: bool) -> None:
    """One session and its messages (--json: the export object)."""
    with _opened() as store:
        exported = exported_session(store, tenant, session_id)
    if as_json:
        _write_stdout(exported.to_json_line() + "\n")
        return
    data = exported.to_dict()
    click.echo(f"{data['id']}  {data['title'] or '(untitled)'}")
    click.echo(
        f"started {data['started_at']}  ended {data['ended_at'] or '-'}  "
        f"source {data['source']}  parent {data['parent_id'] or '-'}"
    )
    for msg in data["messages"]:
        who = msg["role"] + (f" ({msg['name']})" if msg["name"] else "")
        click.echo(f"\n[{msg['timestamp']}] {who}:\n{msg['content']}")


def _group_scope(tenant: TenantId, group: str) -> str:
    platform, sep, chat = group.partition(":")
    if not sep or platform not in PLATFORMS or not chat:
        raise click.BadParameter(
            "expected platform:chat_id, e.g. telegram:-100123", param_hint="--group"
        )
    return MemoryScope(tenant, GroupId(platform, chat)).key


@sessions.command()
@tenant_option
@click.argument("query")
@click.option(
    "--limit",
    default=None,
    type=click.IntRange(1, 10),
    help="At most this many sessions [default: as many as fit the budget].",
)
@click.option(
    "--group",
    "group",
    metavar="PLATFORM:CHAT_ID",
    help="Search the tenant's sessions in this group instead of direct messages.",
)
@click.option(
    "--now",
    "now",
    type=click.DateTime(formats=["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"]),
    default=None,
    help="Resolve 'last week', '昨天' … relative to this UTC time instead of the clock.",
)
@json_option
def search(
    tenant: TenantId,
    query: str,
    limit: int | None,
    group: str | None,
    now: datetime | None,
    as_json: bool,
) -> None:
    """Full-text search, as the session_search tool does it (--json: its exact answer)."""
    settings = settings_or_exit()
    scope_key, chat_type = tenant.namespace, "dm"
    if group is not None:
        scope_key, chat_type = _group_scope(tenant, group), "group"
    moment = None if now is None else now.replace(tzinfo=UTC).timestamp()
    with _opened(settings) as store:
        searcher = SessionSearch(store.db, budget_chars=settings.sessions.search_budget_chars)
        answer = search_answer(
            searcher,
            tenant,
            query,
            scope_key=scope_key,
            chat_type=chat_type,
            limit=limit,
            now=moment,
        )
    if as_json:
        _print_json(answer)
        return
    if not answer["sessions"]:
        click.echo("No matching sessions.")
        return
    for found in answer["sessions"]:
        click.echo(f"{found['id']}  {found.get('title') or '(untitled)'}  {found['date']}")
        for message in found["messages"]:
            who = message.get("name") or message["role"]
            click.echo(f"    [{message['id']}] {message['time']} {who}: {message['text']}")


@sessions.command()
@tenant_option
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file (mode 0600) instead of standard output.",
)
def export(tenant: TenantId, out: Path | None) -> None:
    """Every session of the tenant as JSONL, one session per line."""
    with _opened() as store:
        text = "".join(export_lines(store, tenant))
    if out is None:
        _write_stdout(text)
        return
    try:
        _write_private(out, text)
    except OSError as exc:
        raise click.ClickException(f"cannot write {out}: {exc.strerror or exc}") from None
    click.echo(f"exported {text.count(chr(10))} sessions of {tenant} to {out}", err=True)


def _write_private(path: Path, text: str) -> None:
    """Atomically replace ``path`` with a 0600 file, leaving its directory's mode alone."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@sessions.command("import")
@tenant_option
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option(
    "--on-conflict",
    "on_conflict",
    type=click.Choice(ON_CONFLICT),
    default="fail",
    show_default=True,
    help="When a session id or title is taken: refuse the file, skip those "
    "sessions, or give them a new id/title.",
)
def import_cmd(tenant: TenantId, file: Path, on_conflict: OnConflict) -> None:
    """Import sessions from a JSONL export (all or nothing); '-' reads standard input."""
    try:
        raw = sys.stdin.buffer.read() if str(file) == "-" else file.read_bytes()
        text = raw.decode("utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot read {file}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise click.ClickException(f"{file} is not UTF-8 text") from None
    with _opened() as store:
        report = import_jsonl(store, tenant, text, on_conflict=on_conflict)
    click.echo(
        f"imported {len(report.imported)} sessions ({report.messages} messages) "
        f"for {tenant}; skipped {len(report.skipped)}"
    )
    for old, new in report.renamed.items():
        click.echo(f"  id {old} → {new}")
    for old, title in report.retitled.items():
        click.echo(f"  title of {old} → {title!r}")
    for session_id in report.unlinked:
        click.echo(f"  {session_id}: parent was skipped, imported without it")


@sessions.command()
@tenant_option
@click.argument("session_id")
@click.argument("title")
def rename(tenant: TenantId, session_id: str, title: str) -> None:
    """Set a session's title (titles are unique per tenant)."""
    with _opened() as store:
        store.rename_session(tenant, session_id, title)
        final = store.get_session(tenant, session_id).title
    click.echo(f"renamed {session_id} to {final!r}")


@sessions.command()
@tenant_option
@click.argument("session_id")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def delete(tenant: TenantId, session_id: str, yes: bool) -> None:
    """Delete a session with its messages and search index rows."""
    with _opened() as store:
        session = store.get_session(tenant, session_id)
        if not yes:
            count = store.count_messages(tenant, [session_id])[session_id]
            click.confirm(
                f"Delete session {session_id} ({session.title or 'untitled'}, {count} "
                f"messages) of {tenant}? This cannot be undone",
                abort=True,
            )
        messages = store.delete_session(tenant, session_id)
    click.echo(f"deleted session {session_id} ({messages} messages)")


def _optional_tenant(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> TenantId | None:
    return None if value is None else parse_tenant(ctx, param, value)


@sessions.command()
@click.option(
    "--days",
    type=click.IntRange(1),
    default=None,
    help="Retention in days [default: sessions.retention_days].",
)
@click.option(
    "--tenant",
    "tenant",
    default=None,
    callback=_optional_tenant,
    help="Prune only this tenant (default: every tenant).",
)
@json_option
def prune(days: int | None, tenant: TenantId | None, as_json: bool) -> None:
    """Delete ended sessions older than the retention period, then vacuum state.db."""
    settings = settings_or_exit()
    days = days or settings.sessions.retention_days
    if days is None:
        raise click.ClickException(
            "no retention period: pass --days N or set sessions.retention_days "
            "(MNEMOGATE_SESSIONS__RETENTION_DAYS)"
        )
    with _opened(settings) as store:
        report = prune_sessions(
            store.db,
            store,
            retention_days=days,
            now=time.time(),
            tenants=None if tenant is None else [tenant],
        )
    if as_json:
        _print_json(
            {
                "cutoff": format_timestamp(report.cutoff),
                "tenants": report.tenants,
                "sessions": report.sessions,
                "messages": report.messages,
                "bytes_reclaimed": report.bytes_reclaimed,
            }
        )
        return
    click.echo(
        f"pruned {report.sessions} sessions ({report.messages} messages) of "
        f"{report.tenants} tenants that ended before {_when(report.cutoff)} UTC; "
        f"reclaimed {report.bytes_reclaimed} bytes"
    )
