"""The text format of a curated memory file: entries separated by a line holding only ``§``.

Pure functions only: parsing a file's text into entries, rendering entries back to the
file's text, and the character accounting (delimiters count) shown to the model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

DELIMITER = "\n§\n"

# A delimiter is a line holding only "§"; hand edits that pad it with spaces still split,
# but such a file no longer renders back to the same text (see is_canonical).
_DELIMITER_LINE = re.compile(r"^[^\S\n]*§[^\S\n]*$", re.MULTILINE)
_BOM = "\ufeff"


def normalize_newlines(text: str) -> str:
    """Turn CRLF and lone CR line breaks into LF and drop a leading byte-order mark."""
    if text.startswith(_BOM):
        text = text[len(_BOM) :]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_entries(text: str) -> list[str]:
    """Split a memory file's text into entries.

    Each entry is stripped of surrounding whitespace; empty entries are dropped, and of
    duplicate entries only the first is kept.
    """
    seen: set[str] = set()
    entries: list[str] = []
    # Editors on some systems save a byte-order mark; it is encoding, not content.
    text = text.removeprefix("\ufeff")
    for chunk in _DELIMITER_LINE.split(normalize_newlines(text)):
        entry = chunk.strip()
        if entry and entry not in seen:
            seen.add(entry)
            entries.append(entry)
    return entries


def join_entries(entries: Iterable[str]) -> str:
    """The entries joined by the delimiter, without the file's final newline."""
    return DELIMITER.join(entries)


def render_file(entries: Sequence[str]) -> str:
    """The exact text a memory file holding ``entries`` is written with."""
    if not entries:
        return ""
    return join_entries(entries) + "\n"


def char_count(entries: Iterable[str]) -> int:
    """Characters the entries occupy against the limit, delimiters included."""
    return len(join_entries(entries))


def is_canonical(text: str) -> bool:
    """Whether ``text`` renders back from its own entries, ignoring trailing whitespace."""
    return render_file(parse_entries(text)).rstrip() == text.rstrip()


def splits_into_several(content: str) -> bool:
    """Whether ``content`` holds a delimiter line and would come back as several entries."""
    return _DELIMITER_LINE.search(normalize_newlines(content)) is not None


def format_usage(current: int, limit: int) -> str:
    """``"1,474/2,200"``."""
    return f"{current:,}/{limit:,}"


def percent(current: int, limit: int) -> int:
    """Whole percent of the limit in use, rounded down (100 only when truly full)."""
    if limit <= 0:
        return 100
    return current * 100 // limit


def preview(entry: str, width: int = 60) -> str:
    """A one-line preview of an entry, at most ``width`` characters."""
    flat = " ".join(entry.split())
    if len(flat) <= width:
        return flat
    return flat[: width - 1].rstrip() + "…"
