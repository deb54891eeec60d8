"""Per-entry metadata (created/updated time, origin) kept in a JSON file beside the Markdown.

The Markdown stays plain text the user can edit; metadata is keyed by a hash of each entry's
text, so a hand edit of one entry only loses that entry's metadata (it then reads as
``manual``) and never misattributes another's.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.fsutil import atomic_write_text

log = logging.getLogger(__name__)

MANUAL = "manual"
_VERSION = 1


@dataclass(frozen=True, slots=True)
class EntryMeta:
    """Where an entry came from and when it was written."""

    created_at: float
    updated_at: float
    origin: str


def entry_key(text: str) -> str:
    """The sidecar key of an entry: the SHA-256 of its text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sidecar_path(memory_file: Path) -> Path:
    """``.MEMORY.md.meta.json`` beside ``MEMORY.md``."""
    return memory_file.with_name(f".{memory_file.name}.meta.json")


def load(path: Path) -> dict[str, EntryMeta]:
    """The metadata in ``path``; a missing or unreadable sidecar means no metadata.

    A damaged sidecar is logged and ignored rather than refused: it only loses origins and
    times, never memory, and the next write replaces it.
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("ignoring unreadable memory metadata %s: %s", path, exc)
        return {}
    records = raw.get("entries") if isinstance(raw, dict) else None
    if not isinstance(records, dict):
        log.warning("ignoring memory metadata %s: no 'entries' object", path)
        return {}
    found: dict[str, EntryMeta] = {}
    for key, record in records.items():
        meta = _record(record)
        if meta is not None:
            found[key] = meta
    return found


def _record(record: Any) -> EntryMeta | None:
    if not isinstance(record, dict):
        return None
    created, updated, origin = (record.get(k) for k in ("created_at", "updated_at", "origin"))
    if (
        isinstance(created, int | float)
        and isinstance(updated, int | float)
        and isinstance(origin, str)
    ):
        return EntryMeta(float(created), float(updated), origin)
    return None


def save(path: Path, entries: Sequence[str], metadata: Mapping[str, EntryMeta]) -> None:
    """Write the metadata of ``entries`` (and nothing else) atomically, 0600."""
    records = {}
    for entry in entries:
        meta = metadata.get(entry_key(entry))
        if meta is not None:
            records[entry_key(entry)] = {
                "created_at": meta.created_at,
                "updated_at": meta.updated_at,
                "origin": meta.origin,
            }
    body = {"version": _VERSION, "entries": records}
    atomic_write_text(path, json.dumps(body, indent=1, sort_keys=True) + "\n")


def updated(
    previous: Mapping[str, EntryMeta],
    before: Sequence[str],
    after: Sequence[str],
    replaced: Mapping[str, str],
    *,
    origin: str,
    now: float,
) -> dict[str, EntryMeta]:
    """Metadata after a write from ``before`` to ``after``.

    Entries that were already there keep what they had (or stay ``manual``); a replacement
    keeps the creation time of the entry it replaced; new text is stamped ``origin``/``now``.
    """
    kept = set(before)
    result: dict[str, EntryMeta] = {}
    for entry in after:
        key = entry_key(entry)
        if entry in kept:
            if key in previous:
                result[key] = previous[key]
            continue
        source = previous.get(entry_key(replaced[entry])) if entry in replaced else None
        created = source.created_at if source is not None else now
        result[key] = EntryMeta(created, now, origin)
    return result
