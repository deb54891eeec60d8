"""Curated memory files (MEMORY.md / USER.md) of a memory scope: read, write, snapshot.

Writes take a per-file lock (a ``filelock`` lock file beside the memory file, so threads
and processes exclude each other), re-read the file under it, apply the operations to an
in-memory copy, and replace the file atomically (temp file, fsync, rename) together with
its metadata sidecar. A hand-edited file that does not parse back into the same text is
copied to ``<name>.bak-<UTC time>`` before it is rewritten; a file that is not UTF-8 is
backed up and refused with :class:`~gateway.errors.MemoryFileCorrupt`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from filelock import FileLock, Timeout

from gateway import fsutil
from gateway.errors import MemoryFileCorrupt, MemoryStoreError, UserInputError
from gateway.memory import metadata
from gateway.memory.entries import (
    char_count,
    format_usage,
    is_canonical,
    join_entries,
    parse_entries,
    percent,
    render_file,
)
from gateway.memory.operations import Operation, Plan, Rejection, Scanner, WriteResult, plan
from gateway.security.scanner import scan
from gateway.settings import MemorySettings
from gateway.tenants import MemoryScope

Target = Literal["memory", "user"]
Origin = Literal["user-chat", "background-review", "operator", "import"]
TARGETS: tuple[Target, ...] = ("memory", "user")
ORIGINS: tuple[str, ...] = ("user-chat", "background-review", "operator", "import")

FILE_NAMES: dict[str, str] = {"memory": "MEMORY.md", "user": "USER.md"}
# How the model and the operator see each target named.
LABELS: dict[str, str] = {"memory": "memory (MEMORY.md)", "user": "user profile (USER.md)"}
HEADINGS: dict[str, str] = {
    "memory": "MEMORY (your notes about this user)",
    "user": "USER PROFILE (who this user is)",
}
LOCK_TIMEOUT_S = 30.0
log = logging.getLogger(__name__)

__all__ = [
    "ORIGINS",
    "TARGETS",
    "Entry",
    "MemoryStore",
    "Operation",
    "Origin",
    "Target",
    "WriteResult",
]


@dataclass(frozen=True, slots=True)
class Entry:
    """One memory entry with its metadata; ``origin`` is ``manual`` when none is recorded."""

    text: str
    created_at: float | None
    updated_at: float | None
    origin: str


class MemoryStore:
    """The curated memory of every scope under ``home``; safe to share between threads."""

    def __init__(
        self,
        home: Path,
        limits: MemorySettings,
        scanner: Scanner = scan,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._home = home
        self._limits = {"memory": limits.memory_char_limit, "user": limits.user_char_limit}
        self._scan = scanner
        self._clock = clock

    def path(self, scope: MemoryScope, target: Target) -> Path:
        """The Markdown file of ``target`` in ``scope``."""
        return scope.directory(self._home) / FILE_NAMES[_checked_target(target)]

    def limit(self, target: Target) -> int:
        return self._limits[_checked_target(target)]

    def read(self, scope: MemoryScope, target: Target) -> list[Entry]:
        """The entries of the file with their metadata (no lock: files are replaced whole)."""
        path = self.path(scope, target)
        entries = parse_entries(self._read_text(path))
        known = metadata.load(metadata.sidecar_path(path))
        result = []
        for text in entries:
            meta = known.get(metadata.entry_key(text))
            if meta is None:
                result.append(Entry(text, None, None, metadata.MANUAL))
            else:
                result.append(Entry(text, meta.created_at, meta.updated_at, meta.origin))
        return result

    def raw_text(self, scope: MemoryScope, target: Target) -> str:
        """The file's text exactly as stored ("" when it does not exist)."""
        return self._read_text(self.path(scope, target))

    def usage(self, scope: MemoryScope, target: Target) -> tuple[int, int]:
        """(characters used, limit) of ``target``."""
        entries = parse_entries(self._read_text(self.path(scope, target)))
        return char_count(entries), self.limit(target)

    def apply(
        self,
        scope: MemoryScope,
        target: Target,
        operations: Sequence[Operation],
        *,
        origin: Origin,
    ) -> WriteResult:
        """Apply ``operations`` all-or-nothing; errors come back in the result, not raised.

        Raises :class:`MemoryFileCorrupt` when the file is not UTF-8 and
        :class:`MemoryStoreError` when the lock cannot be taken.
        """
        if origin not in ORIGINS:
            raise UserInputError(f"unknown memory origin {origin!r}; expected one of {ORIGINS}")
        path = self.path(scope, target)
        with self._locked(scope, path):
            raw = self._read_text(path)
            before = parse_entries(raw)
            outcome = self._plan(target, before, operations)
            if isinstance(outcome, Rejection):
                return self._rejected(target, before, outcome)
            message = outcome.message
            backup = None
            if outcome.entries != before:
                if not is_canonical(raw):
                    backup = self._backup(path, raw.encode("utf-8"))
                    message += (
                        f" The file had been edited by hand and did not parse back cleanly; "
                        f"its previous text was kept in {backup.name}."
                    )
                self._write(path, before, outcome.entries, outcome.replaced, origin)
        return self._accepted(target, outcome, message, backup)

    def preview(
        self, scope: MemoryScope, target: Target, operations: Sequence[Operation]
    ) -> WriteResult:
        """What :meth:`apply` would answer against the file as it is now, without writing.

        Same checks, scan and errors as ``apply``; on success ``usage`` and ``entry_count``
        describe the file as it would be, ``applied`` lists the operations that would change
        it, and ``message`` is the summary ``apply`` would give. No lock is taken (files are
        replaced whole), so a later ``apply`` may still fail if the file changes meanwhile.
        """
        before = parse_entries(self._read_text(self.path(scope, target)))
        outcome = self._plan(target, before, operations)
        if isinstance(outcome, Rejection):
            return self._rejected(target, before, outcome)
        return self._accepted(target, outcome, outcome.message, None)

    def _plan(
        self, target: Target, before: list[str], operations: Sequence[Operation]
    ) -> Plan | Rejection:
        return plan(
            before, operations, label=LABELS[target], limit=self.limit(target), scanner=self._scan
        )

    def _rejected(self, target: Target, before: list[str], rejection: Rejection) -> WriteResult:
        return WriteResult(
            success=False,
            usage=format_usage(char_count(before), self.limit(target)),
            entry_count=len(before),
            error=rejection.error,
            current_entries=list(before) if rejection.show_entries else None,
            rule=rejection.rule,
        )

    def _accepted(
        self, target: Target, outcome: Plan, message: str, backup: Path | None
    ) -> WriteResult:
        return WriteResult(
            success=True,
            usage=format_usage(char_count(outcome.entries), self.limit(target)),
            entry_count=len(outcome.entries),
            message=message,
            applied=outcome.applied,
            backup=backup,
        )

    def reset(self, scope: MemoryScope, target: Target) -> Path | None:
        """Empty the file; returns the backup of its previous content (None if it was empty).

        Works on a corrupt (non-UTF-8) file too: this is how an operator clears one.
        """
        path = self.path(scope, target)
        with self._locked(scope, path):
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                data = b""
            backup = self._backup(path, data) if data.strip() else None
            fsutil.atomic_write_text(path, "")
            metadata.save(metadata.sidecar_path(path), [], {})
        return backup

    def render_block(self, scope: MemoryScope, target: Target) -> str:
        """The frozen-snapshot block of ``target`` for the system prompt.

        Entries the security scan blocks are shown as a placeholder but stay in the file.
        A file edited by hand beyond its limit contributes only its leading entries that fit
        (whole), a note says how many were left out, and a warning is logged for the
        operator. The output depends only on the file's content.
        """
        heading = HEADINGS[_checked_target(target)]
        limit = self.limit(target)
        try:
            entries = parse_entries(self._read_text(self.path(scope, target)))
        except MemoryFileCorrupt as exc:
            return (
                f"{heading} [unreadable]\n[UNREADABLE: {exc.path.name} is {exc.reason}; "
                f"the operator has to fix or reset it]"
            )
        used = char_count(entries)
        header = f"{heading} [{percent(used, limit)}% — {format_usage(used, limit)} chars]"
        if not entries:
            return f"{header}\n(empty)"
        fitting = _within_limit(entries, limit)
        left_out = len(entries) - len(fitting)
        if left_out:
            # Only a hand edit gets a file over its limit (writes are checked): keep the
            # prompt within what the operator configured, and say so in the log.
            log.warning(
                "%s of %s holds %s chars, over its limit (%d%%); %d of %d entries left out "
                "of the prompt — trim it with `mnemogate memory show/remove --tenant %s`",
                FILE_NAMES[target],
                scope,
                format_usage(used, limit),
                percent(used, limit),
                left_out,
                len(entries),
                scope.tenant,
            )
        shown = []
        for entry in fitting:
            scanned = self._scan(entry)
            if scanned.blocked:
                shown.append(
                    f"[BLOCKED: {scanned.rule} — entry kept in the file for the user to review]"
                )
            else:
                shown.append(entry)
        if left_out:
            shown.append(
                f"[{left_out} more entries not shown: the file is over its limit; "
                "the user can review them with /memory]"
            )
        return f"{header}\n{join_entries(shown)}"

    def render_snapshot(self, scope: MemoryScope) -> str:
        """Both blocks (memory, then user profile) separated by a blank line."""
        return "\n\n".join(self.render_block(scope, target) for target in TARGETS)

    def audit(self) -> list[str]:
        """Problems of every memory file under ``home`` an operator should fix: files that
        are not UTF-8 and files over their limit (both only happen after edits by hand)."""
        problems: list[str] = []
        tenants = self._home / "tenants"
        if not tenants.is_dir():
            return problems
        for target, name in FILE_NAMES.items():
            limit = self._limits[target]
            for path in sorted(tenants.glob(f"*/memories/{name}")) + sorted(
                tenants.glob(f"*/groups/*/memories/{name}")
            ):
                where = path.relative_to(self._home)
                try:
                    text = path.read_bytes().decode("utf-8")
                except UnicodeDecodeError as exc:
                    problems.append(f"{where}: not valid UTF-8 (offset {exc.start})")
                    continue
                except OSError as exc:
                    problems.append(f"{where}: cannot read ({exc.strerror or exc})")
                    continue
                used = char_count(parse_entries(text))
                if used > limit:
                    problems.append(
                        f"{where}: {format_usage(used, limit)} chars, over its limit "
                        f"({percent(used, limit)}%)"
                    )
        return problems

    # -- files ------------------------------------------------------------------------

    def _read_text(self, path: Path) -> str:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return ""
        except OSError as exc:
            raise MemoryStoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            backup = self._backup(path, data)
            reason = f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
            raise MemoryFileCorrupt(path, backup, reason) from None

    def _write(
        self,
        path: Path,
        before: list[str],
        after: list[str],
        replaced: dict[str, str],
        origin: str,
    ) -> None:
        sidecar = metadata.sidecar_path(path)
        stamped = metadata.updated(
            metadata.load(sidecar), before, after, replaced, origin=origin, now=self._clock()
        )
        fsutil.atomic_write_text(path, render_file(after))
        metadata.save(sidecar, after, stamped)

    def _backup(self, path: Path, data: bytes) -> Path:
        """Copy ``data`` to ``<name>.bak-<UTC time>`` (0600) unless an identical copy exists."""
        for existing in sorted(path.parent.glob(f"{path.name}.bak-*")):
            try:
                if existing.read_bytes() == data:
                    return existing
            except OSError:
                continue
        stamp = datetime.fromtimestamp(self._clock(), UTC).strftime("%Y%m%dT%H%M%SZ")
        for attempt in range(1000):
            suffix = "" if attempt == 0 else f"-{attempt}"
            target = path.with_name(f"{path.name}.bak-{stamp}{suffix}")
            try:
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, fsutil.FILE_MODE)
            except FileExistsError:
                continue
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            return target
        raise MemoryStoreError(f"could not choose a backup name for {path}")

    @contextmanager
    def _locked(self, scope: MemoryScope, path: Path) -> Iterator[None]:
        """Hold the file's lock; file-system failures inside become MemoryStoreError."""
        try:
            self._ensure_dirs(scope)
            lock = FileLock(
                path.with_name(f".{path.name}.lock"), timeout=LOCK_TIMEOUT_S, mode=fsutil.FILE_MODE
            )
            lock.acquire()
        except Timeout as exc:
            raise MemoryStoreError(
                f"{path.name} stayed locked for {LOCK_TIMEOUT_S:.0f} s; another writer is stuck"
            ) from exc
        except OSError as exc:
            raise MemoryStoreError(f"cannot lock {path}: {exc.strerror or exc}") from exc
        try:
            yield
        except OSError as exc:
            raise MemoryStoreError(f"cannot write {path}: {exc.strerror or exc}") from exc
        finally:
            lock.release()

    def _ensure_dirs(self, scope: MemoryScope) -> None:
        """Create every directory from ``home`` down to the scope's, each 0700."""
        self._home.mkdir(mode=fsutil.DIR_MODE, parents=True, exist_ok=True)
        current = self._home
        for part in scope.directory(self._home).relative_to(self._home).parts:
            current = fsutil.ensure_private_dir(current / part)


def _within_limit(entries: list[str], limit: int) -> list[str]:
    """The leading entries that fit in ``limit`` characters, each whole (at least none)."""
    kept: list[str] = []
    for entry in entries:
        if char_count([*kept, entry]) > limit:
            break
        kept.append(entry)
    return kept


def _checked_target(target: str) -> Target:
    if target == "memory":
        return "memory"
    if target == "user":
        return "user"
    raise UserInputError(f"unknown memory target {target!r}: use 'memory' or 'user'")
