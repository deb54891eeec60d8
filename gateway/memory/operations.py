"""Memory edit operations: validating them, applying a batch to entries, and the results.

Everything here is pure: :func:`plan` takes the entries read from a file and returns either
the new entries or a :class:`Rejection` whose text tells the model what went wrong and what
to do next. :class:`~gateway.memory.store.MemoryStore` does the file I/O around it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gateway.memory.entries import char_count, format_usage, preview, splits_into_several
from gateway.security.scanner import ScanResult

Action = Literal["add", "replace", "remove"]
ACTIONS: tuple[str, ...] = ("add", "replace", "remove")
Scanner = Callable[[str], ScanResult]

_RETRY_HINT = "Nothing was saved."
_BATCH_HINT = "Nothing was saved: a batch of operations is all-or-nothing."


@dataclass(frozen=True, slots=True)
class Operation:
    """One edit: ``add`` needs ``content``; ``replace`` needs ``old_text`` and ``content``;
    ``remove`` needs ``old_text`` (a substring of exactly one entry)."""

    action: Action
    content: str | None = None
    old_text: str | None = None


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why a batch was refused; ``show_entries`` when the model needs the current entries."""

    error: str
    show_entries: bool = False
    rule: str | None = None


@dataclass(frozen=True, slots=True)
class Plan:
    """The entries after a batch, which operations changed something, and a summary."""

    entries: list[str]
    applied: tuple[Operation, ...]
    replaced: dict[str, str]
    message: str


@dataclass(frozen=True, slots=True)
class WriteResult:
    """The outcome of one ``apply``; :meth:`to_json` is what the model sees."""

    success: bool
    usage: str
    entry_count: int
    message: str | None = None
    error: str | None = None
    current_entries: list[str] | None = None
    rule: str | None = None
    applied: tuple[Operation, ...] = ()
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        """Whether the file was rewritten (a duplicate add or identical replace is not)."""
        return self.success and bool(self.applied)

    def to_json(self) -> str:
        body: dict[str, Any]
        if self.success:
            body = {
                "success": True,
                "message": self.message,
                "usage": self.usage,
                "entry_count": self.entry_count,
            }
        else:
            body = {"success": False, "error": self.error, "usage": self.usage}
            if self.current_entries is not None:
                body["current_entries"] = self.current_entries
        return json.dumps(body, ensure_ascii=False)


def check(op: Operation, *, label: str, limit: int, scanner: Scanner) -> Rejection | None:
    """Refuse an operation that is malformed, too long or blocked by the security scan."""
    if op.action not in ACTIONS:
        return Rejection(f"Unknown action {op.action!r}: use add, replace or remove.")
    if op.action in ("add", "replace") and not (op.content or "").strip():
        verb = "add" if op.action == "add" else "put in place of the old one"
        return Rejection(f"content is empty: give the text of the entry to {verb}.")
    if op.action in ("replace", "remove") and not (op.old_text or "").strip():
        return Rejection(
            f"old_text is missing: give a short substring that occurs in exactly one entry "
            f"to {op.action}."
        )
    if op.content is None or op.action == "remove":
        return None
    content = op.content.strip()
    if len(content) > limit:
        return Rejection(
            f"The entry is {len(content):,} characters, but the {label} holds at most "
            f"{limit:,} characters in total. Rewrite it as a short summary of the key facts "
            f"and retry."
        )
    if splits_into_several(content):
        return Rejection(
            "content contains a line holding only '§', which separates entries. Save one "
            "entry per operation (use operations for several)."
        )
    scanned = scanner(content)
    if scanned.blocked:
        return Rejection(
            f"The content was refused by the security scan: {scanned.describe()}. Memory "
            f"must not hold instructions aimed at the assistant, hidden characters or "
            f"secrets. {_RETRY_HINT}",
            rule=scanned.rule,
        )
    return None


def _locate(entries: list[str], old_text: str, label: str) -> int | Rejection:
    exact = [i for i, entry in enumerate(entries) if entry == old_text]
    if exact:
        return exact[0]
    matches = [i for i, entry in enumerate(entries) if old_text in entry]
    if len(matches) == 1:
        return matches[0]
    shown = preview(old_text, 40)
    if not matches:
        return Rejection(
            f"No entry in the {label} contains {shown!r}. The entries as they are now are "
            f"listed in current_entries; retry with a substring copied from one of them.",
            show_entries=True,
        )
    previews = "; ".join(f"{n}) {preview(entries[i])!r}" for n, i in enumerate(matches, 1))
    return Rejection(
        f"{shown!r} is ambiguous: it occurs in {len(matches)} entries: {previews}. Retry "
        f"with a longer old_text that occurs in only one of them.",
        show_entries=True,
    )


def plan(
    entries: Sequence[str],
    operations: Sequence[Operation],
    *,
    label: str,
    limit: int,
    scanner: Scanner,
) -> Plan | Rejection:
    """Apply ``operations`` in order to a copy of ``entries``; all succeed or none.

    Every operation is checked (and its content scanned) before any is applied. The limit
    is checked on the final state, and a write that does not grow a file already over its
    limit (for instance after a hand edit) is allowed, so it can always be cleaned up.
    """
    if not operations:
        return Rejection("No operation given: pass action (with content/old_text) or operations.")
    batch = len(operations) > 1

    def located(n: int, rejection: Rejection) -> Rejection:
        if not batch:
            return rejection
        where = f"Operation {n} of {len(operations)} ({operations[n - 1].action}): "
        return Rejection(f"{where}{rejection.error} {_BATCH_HINT}", **_extra(rejection))

    for n, op in enumerate(operations, 1):
        refused = check(op, label=label, limit=limit, scanner=scanner)
        if refused is not None:
            return located(n, refused)

    current = list(entries)
    applied: list[Operation] = []
    replaced: dict[str, str] = {}
    counts = {"added": 0, "replaced": 0, "removed": 0, "unchanged": 0}
    for n, op in enumerate(operations, 1):
        content = (op.content or "").strip()
        if op.action == "add":
            if content in current:
                counts["unchanged"] += 1
                continue
            current.append(content)
            counts["added"] += 1
            applied.append(op)
            continue
        found = _locate(current, (op.old_text or "").strip(), label)
        if isinstance(found, Rejection):
            return located(n, found)
        old = current[found]
        if op.action == "remove":
            del current[found]
            counts["removed"] += 1
        elif content == old:
            counts["unchanged"] += 1
            continue
        elif content in current:
            # The new text is already another entry: the replace merges the two.
            del current[found]
            counts["replaced"] += 1
        else:
            current[found] = content
            replaced[content] = replaced.pop(old, old)
            counts["replaced"] += 1
        applied.append(op)

    before, after = char_count(entries), char_count(current)
    if after > limit and after > before:
        return Rejection(
            f"The {label} would hold {format_usage(after, limit)} characters after this "
            f"write, over its limit (it holds {format_usage(before, limit)} now). "
            f"{_RETRY_HINT} Make room first: merge related entries with replace or remove "
            f"outdated ones (a batch in operations can do both and then add), and retry in "
            f"this same turn.",
            show_entries=True,
        )
    return Plan(current, tuple(applied), replaced, _summary(counts, label))


def _extra(rejection: Rejection) -> dict[str, Any]:
    return {"show_entries": rejection.show_entries, "rule": rejection.rule}


def _summary(counts: dict[str, int], label: str) -> str:
    done = [f"{counts[key]} {key}" for key in ("added", "replaced", "removed") if counts[key]]
    if not done:
        return f"No change: the {label} already holds this."
    text = f"Saved to the {label}: " + ", ".join(done) + "."
    if counts["unchanged"]:
        text += f" {counts['unchanged']} unchanged (already there)."
    return text
