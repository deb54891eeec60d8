"""Write approval: memory writes staged in state.db until the user approves or rejects them.

When a tenant has write approval on (their ``/memory approval on|off`` choice, else the
operator's ``memory.write_approval``), the ``memory`` tool checks a call against the file
without writing it and hands it to :meth:`ApprovalStore.stage`. ``/memory approve`` later
applies it through :meth:`MemoryStore.apply` with the origin it was staged with; a write that
no longer applies (its ``old_text`` is gone, the file is full) is marked ``failed`` and keeps
the error, so nothing is dropped silently.

Ids are numbered per tenant (1, 2, 3 … for each tenant; migration 7), and every query binds
the tenant: an id says nothing about other tenants' writes, and an id that another tenant
also has is :class:`NotFound` for everyone else, exactly like an id that does not exist.
Ids arriving from chat or a button press go through :func:`parse_write_id` first. Staged
content is scanned when it is staged, so a blocked write never reaches the table.

An approval claims its row (``pending`` → ``applying``) before touching the file, so two
approvers never apply the same write twice; a claim left behind by a crashed process counts
as pending again after :data:`STALE_CLAIM_S`.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gateway.errors import MnemogateError, NotFound, StorageError, UserInputError
from gateway.history.db import Database
from gateway.memory.entries import preview
from gateway.memory.operations import ACTIONS, Operation, Scanner, WriteResult
from gateway.memory.store import ORIGINS, TARGETS, MemoryStore, Origin, Target
from gateway.memory.tool import MemoryTool
from gateway.security.scanner import scan
from gateway.tenants import GroupId, MemoryScope, TenantId

Status = Literal["pending", "applying", "approved", "rejected", "failed"]
Stager = Callable[[Target, list[Operation]], "PendingWrite"]
STALE_CLAIM_S = 120.0
#: The largest id SQLite can store; a longer digit string is refused before any query.
MAX_WRITE_ID = 2**63 - 1
_WRITE_ID = re.compile(r"[0-9]{1,19}")

_COLUMNS = (
    "id, tenant_id, group_platform, group_chat, target, operations, origin, created_at, "
    "status, decided_at, result"
)
# Rows an approval may take: pending ones, and claims abandoned by a crashed approver.
_OPEN = "(status = 'pending' OR (status = 'applying' AND decided_at < ?))"


def parse_write_id(text: str) -> int | None:
    """``"12"`` → 12; None for anything that is not an id we could have issued.

    ASCII digits only (``str.isdigit`` also accepts ``²`` and other scripts' digits) and at
    most :data:`MAX_WRITE_ID`, so a forged id is refused instead of overflowing SQLite.
    """
    if not _WRITE_ID.fullmatch(text):
        return None
    value = int(text)
    return value if 0 < value <= MAX_WRITE_ID else None


class StagingRefused(UserInputError):
    """Staged content was blocked by the security scan; ``rule`` says which rule matched."""

    def __init__(self, message: str, *, rule: str | None) -> None:
        super().__init__(message)
        self.rule = rule


@dataclass(frozen=True, slots=True)
class PendingWrite:
    """One staged ``memory`` call: where it goes, what it does, and what became of it."""

    id: int
    scope: MemoryScope
    target: Target
    operations: tuple[Operation, ...]
    origin: Origin
    created_at: float
    status: Status = "pending"
    decided_at: float | None = None
    result: str | None = None  # the message or error of applying it

    @property
    def tenant(self) -> TenantId:
        return self.scope.tenant

    def describe(self, width: int = 60) -> str:
        """``user: + "Prefers metric units"; − "Uses imperial"`` — one line per write."""
        return f"{self.target}: " + "; ".join(
            describe_operation(op, width) for op in self.operations
        )


def describe_operation(op: Operation, width: int = 60) -> str:
    """A short preview of one edit: ``+ "new"``, ``− "old"`` or ``~ "old" → "new"``."""
    content = preview(op.content or "", width)
    old = preview(op.old_text or "", width // 2)
    if op.action == "add":
        return f'+ "{content}"'
    if op.action == "remove":
        return f'− "{old}"'
    return f'~ "{old}" → "{content}"'


class ApprovalStore:
    """Staged memory writes and the per-tenant approval preference, in ``state.db``."""

    def __init__(
        self, db: Database, *, scanner: Scanner = scan, clock: Callable[[], float] = time.time
    ) -> None:
        self.db = db
        self._scan = scanner
        self._clock = clock

    # --- the preference --------------------------------------------------------------
    def enabled(self, tenant: TenantId, *, default: bool) -> bool:
        """Whether the tenant's memory writes wait for approval (``default`` if unset)."""
        row = self.db.read(
            lambda c: c.execute(
                "SELECT write_approval FROM tenant_prefs WHERE tenant_id = ?", (str(tenant),)
            ).fetchone()
        )
        if row is None or row["write_approval"] is None:
            return default
        return bool(row["write_approval"])

    def set_enabled(self, tenant: TenantId, on: bool) -> None:
        self.db.write(
            lambda c: c.execute(
                "INSERT INTO tenant_prefs (tenant_id, write_approval) VALUES (?, ?) "
                "ON CONFLICT(tenant_id) DO UPDATE SET write_approval = excluded.write_approval",
                (str(tenant), int(on)),
            )
        )

    # --- staging ---------------------------------------------------------------------
    def stage(
        self,
        scope: MemoryScope,
        target: Target,
        operations: Sequence[Operation],
        *,
        origin: Origin,
    ) -> PendingWrite:
        """Keep ``operations`` for the user's approval; raises :class:`StagingRefused` when
        the scan blocks their content and :class:`UserInputError` when they are malformed."""
        if target not in TARGETS:
            raise UserInputError(f"unknown memory target {target!r}: use 'memory' or 'user'")
        if origin not in ORIGINS:
            raise UserInputError(f"unknown memory origin {origin!r}; expected one of {ORIGINS}")
        if not operations:
            raise UserInputError("nothing to stage: no operation given")
        for op in operations:
            if op.action not in ACTIONS:
                raise UserInputError(f"unknown memory action {op.action!r}")
            if op.content is not None and op.action != "remove":
                scanned = self._scan(op.content.strip())
                if scanned.blocked:
                    raise StagingRefused(
                        f"refused by the security scan: {scanned.describe()}", rule=scanned.rule
                    )
        now = self._clock()
        group = scope.group
        body = json.dumps([_operation_json(op) for op in operations], ensure_ascii=False)

        def insert(conn: sqlite3.Connection) -> int:
            # The write transaction is BEGIN IMMEDIATE, so no other writer can take the same
            # next id between the SELECT and the INSERT; UNIQUE (tenant_id, id) backs it up.
            row = conn.execute(
                "SELECT COALESCE(MAX(id), 0) + 1 FROM pending_writes WHERE tenant_id = ?",
                (str(scope.tenant),),
            ).fetchone()
            write_id = int(row[0])
            conn.execute(
                "INSERT INTO pending_writes (id, tenant_id, scope_key, group_platform, "
                "group_chat, target, operations, origin, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    write_id,
                    str(scope.tenant),
                    scope.key,
                    group.platform if group else None,
                    group.chat if group else None,
                    target,
                    body,
                    origin,
                    now,
                ),
            )
            return write_id

        write_id = self.db.write(insert)
        return PendingWrite(write_id, scope, target, tuple(operations), origin, now)

    def stager(self, scope: MemoryScope, *, origin: Origin) -> Stager:
        """``stage`` bound to one scope and origin: what :class:`MemoryTool` calls."""

        def stage(target: Target, operations: list[Operation]) -> PendingWrite:
            return self.stage(scope, target, operations, origin=origin)

        return stage

    def staging_for(self, scope: MemoryScope, *, origin: Origin, default: bool) -> Stager | None:
        """A stager for ``scope`` when its tenant has write approval on, else None.

        ``default`` is the operator's ``memory.write_approval``.
        """
        if not self.enabled(scope.tenant, default=default):
            return None
        return self.stager(scope, origin=origin)

    def memory_tool(
        self, memory: MemoryStore, scope: MemoryScope, *, origin: Origin, default: bool
    ) -> MemoryTool:
        """The ``memory`` tool for ``scope``: staging when the tenant's approval is on."""
        stage = self.staging_for(scope, origin=origin, default=default)
        return MemoryTool(memory, scope, origin=origin, stage=stage)

    # --- reading ---------------------------------------------------------------------
    def pending(self, tenant: TenantId) -> list[PendingWrite]:
        """The tenant's writes awaiting a decision, all scopes, oldest first."""
        stale = self._clock() - STALE_CLAIM_S
        rows = self.db.read(
            lambda c: c.execute(
                f"SELECT {_COLUMNS} FROM pending_writes WHERE tenant_id = ? AND {_OPEN} "
                "ORDER BY id",
                (str(tenant), stale),
            ).fetchall()
        )
        return [_pending_write(tenant, row) for row in rows]

    def get(self, tenant: TenantId, write_id: int) -> PendingWrite:
        """One of the tenant's writes in any status; :class:`NotFound` otherwise."""
        row = self.db.read(
            lambda c: c.execute(
                f"SELECT {_COLUMNS} FROM pending_writes WHERE tenant_id = ? AND id = ?",
                (str(tenant), int(write_id)),
            ).fetchone()
        )
        if row is None:
            raise NotFound(f"You have no memory change #{write_id}.")
        return _pending_write(tenant, row)

    # --- deciding --------------------------------------------------------------------
    def approve(
        self, tenant: TenantId, write_id: int | Literal["all"], memory: MemoryStore
    ) -> list[tuple[PendingWrite, WriteResult]]:
        """Apply one pending write (or all, oldest first); each ends ``approved`` or ``failed``.

        Raises :class:`NotFound` for an id the tenant does not have and
        :class:`UserInputError` for one already decided.
        """
        if write_id == "all":
            chosen = self.pending(tenant)
        else:
            found = self.get(tenant, write_id)
            chosen = [found]
        done = []
        for write in chosen:
            if not self._claim(tenant, write):
                if write_id == "all":
                    continue  # another approver took it meanwhile
                raise _already_decided(self.get(tenant, write.id))
            result = self._apply(write, memory)
            status: Status = "approved" if result.success else "failed"
            decided = self._finish(tenant, write.id, status, result.message or result.error)
            done.append((decided, result))
        return done

    def reject(self, tenant: TenantId, write_id: int) -> PendingWrite:
        """Drop one pending write; :class:`NotFound` / :class:`UserInputError` as approve."""
        write = self.get(tenant, write_id)
        if not self._claim(tenant, write):
            raise _already_decided(self.get(tenant, write_id))
        return self._finish(tenant, write.id, "rejected", None)

    def erase(self, tenant: TenantId) -> int:
        """Forget every staged write and the preference of ``tenant``; rows deleted."""

        def delete(conn: sqlite3.Connection) -> int:
            count = conn.execute(
                "DELETE FROM pending_writes WHERE tenant_id = ?", (str(tenant),)
            ).rowcount
            conn.execute("DELETE FROM tenant_prefs WHERE tenant_id = ?", (str(tenant),))
            return int(count)

        return self.db.write(delete)

    def _claim(self, tenant: TenantId, write: PendingWrite) -> bool:
        now = self._clock()
        claimed = self.db.write(
            lambda c: (
                c.execute(
                    f"UPDATE pending_writes SET status = 'applying', decided_at = ? "
                    f"WHERE tenant_id = ? AND id = ? AND {_OPEN}",
                    (now, str(tenant), write.id, now - STALE_CLAIM_S),
                ).rowcount
            )
        )
        return bool(claimed)

    def _apply(self, write: PendingWrite, memory: MemoryStore) -> WriteResult:
        try:
            return memory.apply(write.scope, write.target, write.operations, origin=write.origin)
        except MnemogateError as exc:
            return WriteResult(success=False, usage="", entry_count=0, error=str(exc))
        except BaseException:
            self._release(write)
            raise

    def _release(self, write: PendingWrite) -> None:
        """Give a claimed write back (the approval crashed before deciding it)."""
        self.db.write(
            lambda c: c.execute(
                "UPDATE pending_writes SET status = 'pending', decided_at = NULL "
                "WHERE tenant_id = ? AND id = ? AND status = 'applying'",
                (str(write.tenant), write.id),
            )
        )

    def _finish(
        self, tenant: TenantId, write_id: int, status: Status, result: str | None
    ) -> PendingWrite:
        now = self._clock()
        self.db.write(
            lambda c: c.execute(
                "UPDATE pending_writes SET status = ?, decided_at = ?, result = ? "
                "WHERE tenant_id = ? AND id = ?",
                (status, now, result, str(tenant), write_id),
            )
        )
        return self.get(tenant, write_id)


def _already_decided(write: PendingWrite) -> UserInputError:
    verb = "being applied" if write.status == "applying" else write.status
    return UserInputError(f"Memory change #{write.id} was already {verb}.")


def _operation_json(op: Operation) -> dict[str, Any]:
    body: dict[str, Any] = {"action": op.action}
    if op.content is not None:
        body["content"] = op.content
    if op.old_text is not None:
        body["old_text"] = op.old_text
    return body


def _pending_write(tenant: TenantId, row: sqlite3.Row) -> PendingWrite:
    """A row read with ``tenant`` bound in the query (checked again: never another's)."""
    if row["tenant_id"] != str(tenant):
        raise StorageError(f"pending write #{row['id']} does not belong to {tenant}")
    group = None
    if row["group_platform"] is not None:
        group = GroupId(row["group_platform"], row["group_chat"])
    operations = tuple(
        Operation(item["action"], content=item.get("content"), old_text=item.get("old_text"))
        for item in json.loads(row["operations"])
    )
    return PendingWrite(
        id=int(row["id"]),
        scope=MemoryScope(tenant, group),
        target=row["target"],
        operations=operations,
        origin=row["origin"],
        created_at=float(row["created_at"]),
        status=row["status"],
        decided_at=row["decided_at"],
        result=row["result"],
    )
