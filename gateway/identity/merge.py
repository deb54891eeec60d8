"""Linking two accounts: the joining account's data moves into the issuer's tenant.

Whose data wins: the issuer's tenant (its namespace, preferences, provider peer) stays. In
one state.db transaction with the link itself: the joining tenant's sessions, messages and
their full-text index rows, open outbox rows and pending memory writes are re-tenanted (scope
keys rewritten, clashing session titles suffixed with the account, pending-write ids
renumbered after the tenant's own), and its open sessions are ended (``linked``), so the
next turn from either account starts a session whose prompt holds the merged memory.

Then the files: transcripts move; curated memory entries of every scope (private and each
group) are added to the same scope of the tenant within its limits. An entry the tenant
already holds is a duplicate (listed); one that does not fit is staged as a pending write
(``origin="import"``) for the user to approve after making room, or reject — nothing is
dropped silently. The joining account's memory files are removed only once each entry is
kept somewhere. Provider data cannot be re-keyed (the provider interface has no hook for
it): the report says it stays under the account's old key, where erasing that account still
reaches it.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from gateway.errors import MnemogateError
from gateway.history.db import Database
from gateway.history.fts import tenant_token
from gateway.identity.links import LinkStore
from gateway.memory import metadata
from gateway.memory.approval import ApprovalStore
from gateway.memory.store import TARGETS, MemoryStore, Operation
from gateway.tenants import GroupId, MemoryScope, TenantId, tenant_dir, unescape_id

log = logging.getLogger(__name__)


@dataclass(slots=True)
class LinkReport:
    """What linking moved, merged, staged for the user and could not move."""

    account: TenantId
    tenant: TenantId
    sessions: int = 0
    messages: int = 0
    pending_writes: int = 0
    merged: int = 0
    duplicates: list[str] = field(default_factory=list)
    staged: list[int] = field(default_factory=list)
    kept_back: list[str] = field(default_factory=list)
    provider_notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [
            f"Linked {self.account} to {self.tenant}: both now share one memory.",
            f"Moved {self.sessions} conversation(s) with {self.messages} message(s) and "
            f"{self.pending_writes} pending memory change(s); merged {self.merged} memory "
            "entr(y/ies).",
        ]
        if self.duplicates:
            out.append(f"Already in memory, not added twice ({len(self.duplicates)}):")
            out.extend(f"  • {text[:80]}" for text in self.duplicates)
        if self.staged:
            ids = ", ".join(f"#{i}" for i in self.staged)
            out.append(
                f"Did not fit in memory, kept as pending changes {ids}: make room with "
                "/memory, then approve or reject them (/memory pending)."
            )
        if self.kept_back:
            out.append(f"Could not be merged; left in {self.account}'s own memory files:")
            out.extend(f"  • {text[:80]}" for text in self.kept_back)
        out.extend(self.provider_notes)
        return out


def _rekey(scope_key: str, old: TenantId, new: TenantId) -> str:
    if scope_key == old.namespace or scope_key.startswith(old.namespace + "."):
        return new.namespace + scope_key[len(old.namespace) :]
    return scope_key


def _move_rows(conn: sqlite3.Connection, old: TenantId, new: TenantId, report: LinkReport) -> None:
    """Re-tenant ``old``'s rows to ``new`` (inside the link's transaction)."""
    now = time.time()
    conn.execute(
        "INSERT OR IGNORE INTO tenants (id, namespace, created_at) VALUES (?, ?, ?)",
        (str(new), new.namespace, now),
    )
    sessions = conn.execute(
        "SELECT id, title, scope_key FROM sessions WHERE tenant_id = ? ORDER BY started_at",
        (str(old),),
    ).fetchall()
    conn.execute(
        "UPDATE sessions SET ended_at = ?, end_reason = 'linked' "
        "WHERE tenant_id = ? AND ended_at IS NULL",
        (now, str(old)),
    )
    for row in sessions:
        title = row["title"]
        n = 1
        while (
            title is not None
            and conn.execute(
                "SELECT 1 FROM sessions WHERE tenant_id = ? AND title = ?", (str(new), title)
            ).fetchone()
        ):
            n += 1
            title = f"{row['title']} ({old})" + ("" if n == 2 else f" {n - 1}")
        conn.execute(
            "UPDATE sessions SET tenant_id = ?, title = ?, scope_key = ? WHERE id = ?",
            (str(new), title, _rekey(row["scope_key"], old, new), row["id"]),
        )
    report.sessions = len(sessions)
    conn.execute(
        "UPDATE messages_fts SET tenant_tok = ? "
        "WHERE rowid IN (SELECT id FROM messages WHERE tenant_id = ?)",
        (tenant_token(new), str(old)),
    )
    report.messages = conn.execute(
        "UPDATE messages SET tenant_id = ? WHERE tenant_id = ?", (str(new), str(old))
    ).rowcount
    conn.execute(
        "UPDATE outbox SET tenant_id = ? WHERE tenant_id = ? AND done_at IS NULL",
        (str(new), str(old)),
    )
    writes = conn.execute(
        "SELECT seq, scope_key FROM pending_writes WHERE tenant_id = ? ORDER BY id",
        (str(old),),
    ).fetchall()
    top = conn.execute(
        "SELECT COALESCE(MAX(id), 0) FROM pending_writes WHERE tenant_id = ?", (str(new),)
    ).fetchone()[0]
    for offset, row in enumerate(writes, start=1):
        conn.execute(
            "UPDATE pending_writes SET tenant_id = ?, id = ?, scope_key = ? WHERE seq = ?",
            (str(new), top + offset, _rekey(row["scope_key"], old, new), row["seq"]),
        )
    report.pending_writes = len(writes)
    providers = conn.execute(
        "SELECT DISTINCT provider FROM provider_scopes WHERE tenant_id = ? ORDER BY provider",
        (str(old),),
    ).fetchall()
    report.provider_notes = [
        f"Provider data for {old} ({r[0]}) stays under its old key: the provider cannot re-key it."
        for r in providers
    ]


def _scopes(home: Path, tenant: TenantId) -> list[MemoryScope]:
    """The tenant's private scope and every group scope that has a directory."""
    scopes = [MemoryScope.private(tenant)]
    groups = tenant_dir(home, tenant) / "groups"
    if groups.is_dir():
        for entry in sorted(groups.iterdir()):
            platform, _, chat = entry.name.partition("-")
            try:
                scopes.append(MemoryScope(tenant, GroupId(platform, unescape_id(chat))))
            except ValueError:
                log.warning("skipped %s: not a group directory", entry)
    return scopes


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def _merge_memory(
    home: Path,
    memory: MemoryStore,
    approvals: ApprovalStore,
    old: TenantId,
    new: TenantId,
    report: LinkReport,
) -> None:
    for scope in _scopes(home, old):
        target_scope = MemoryScope(new, scope.group)
        for target in TARGETS:
            entries = memory.read(scope, target)
            if not entries:
                continue
            have = {_normal(e.text) for e in memory.read(target_scope, target)}
            kept_all = True
            for entry in entries:
                if _normal(entry.text) in have:
                    report.duplicates.append(entry.text)
                    continue
                add = [Operation("add", content=entry.text)]
                result = memory.apply(target_scope, target, add, origin="import")
                if result.success:
                    report.merged += 1
                    have.add(_normal(entry.text))
                    continue
                try:
                    staged = approvals.stage(target_scope, target, add, origin="import")
                except MnemogateError as exc:
                    log.warning("entry of %s not merged: %s", old.namespace, exc)
                    report.kept_back.append(entry.text)
                    kept_all = False
                    continue
                report.staged.append(staged.id)
            if kept_all:
                path = memory.path(scope, target)
                path.unlink(missing_ok=True)
                metadata.sidecar_path(path).unlink(missing_ok=True)


def _move_transcripts(home: Path, old: TenantId, new: TenantId) -> None:
    source = tenant_dir(home, old) / "transcripts"
    if not source.is_dir():
        return
    dest = tenant_dir(home, new) / "transcripts"
    dest.mkdir(mode=0o700, parents=True, exist_ok=True)
    for path in source.glob("*.jsonl"):
        shutil.move(str(path), dest / path.name)


def link_accounts(
    db: Database,
    home: Path,
    memory: MemoryStore,
    issuer: TenantId,
    joining: TenantId,
    *,
    by: str,
) -> LinkReport:
    """Link ``joining`` into ``issuer``'s tenant and merge its data (see the module doc).

    UserInputError when the two cannot be linked (already sharing, or ``joining`` linked
    elsewhere). ``joining`` is resolved by the caller: it is an account that is its own
    tenant.
    """
    links = LinkStore(db)
    report = LinkReport(account=joining, tenant=links.resolve(issuer))

    def write(conn: sqlite3.Connection) -> None:
        report.tenant = links.link_in(conn, issuer, joining, by)
        _move_rows(conn, joining, report.tenant, report)

    db.write(write)
    _move_transcripts(home, joining, report.tenant)
    _merge_memory(home, memory, ApprovalStore(db), joining, report.tenant, report)
    log.info(
        "linked %s into %s: %d sessions, %d merged, %d duplicates, %d staged",
        joining.namespace,
        report.tenant.namespace,
        report.sessions,
        report.merged,
        len(report.duplicates),
        len(report.staged),
    )
    return report
