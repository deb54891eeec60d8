"""The compact answer of a session search, and how a character budget is spent on it.

Shape (JSON, the same for the ``session_search`` tool and ``sessions search --json``)::

    {"query": "...", "when": "2023-05-01..2023-05-31",
     "sessions": [{"id": "...", "title": "...", "date": "2023-05-02",
                   "messages": [{"id": 41, "role": "user", "name": "Emily",
                                 "time": "09:30", "text": "...", "skipped": 6}]}],
     "more": 12}

Each session appears once; its messages are in order, without repeats. ``time`` is ``HH:MM``
on the session's date, else ``YYYY-MM-DD HH:MM`` (UTC). ``skipped`` says how many messages
of the session lie between this one and the previous one shown (absent when none or for the
first). ``when`` (the dates a time expression named) and ``more`` (matching messages left out)
appear only when there is something to say; so do ``title`` and ``name``.

:class:`Packer` adds windows best first and keeps the whole answer within ``budget`` characters
of ``json.dumps(answer, ensure_ascii=False)``: before adding a window it prices the window's
new messages, and :meth:`Packer.answer` re-checks the real length and drops the last windows
if the estimate was short.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from gateway.security.fence import sanitize_recalled

#: Longest text of a message that matched, and of a message shown for context.
HIT_CHARS = 360
CONTEXT_CHARS = 220
QUERY_ECHO_CHARS = 200
#: The price of a "skipped" marker the final answer may add to a message.
_SKIPPED_COST = len(', "skipped": 1000')
_ELLIPSIS = "…"


@dataclass(slots=True)
class Shown:
    """One message chosen for the answer (text already sanitized and trimmed)."""

    id: int
    role: str
    name: str | None
    timestamp: float
    text: str
    hit: bool
    skipped: int = 0
    _size: int = field(default=-1, repr=False, compare=False)

    def size(self, session_date: str) -> int:
        """Characters this message adds to the answer, with room for a "skipped" marker."""
        if self._size < 0:
            self._size = len(dumps(self.to_dict(session_date))) + 2 + _SKIPPED_COST
        return self._size

    def to_dict(self, session_date: str) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "role": self.role}
        if self.name:
            out["name"] = self.name
        stamp = datetime.fromtimestamp(self.timestamp, UTC)
        day = stamp.date().isoformat()
        out["time"] = stamp.strftime("%H:%M") if day == session_date else f"{day} {stamp:%H:%M}"
        out["text"] = self.text
        if self.skipped:
            out["skipped"] = self.skipped
        return out


@dataclass(slots=True)
class FoundSession:
    id: str
    title: str | None
    started_at: float
    messages: dict[int, Shown] = field(default_factory=dict)

    @property
    def date(self) -> str:
        return datetime.fromtimestamp(self.started_at, UTC).date().isoformat()

    def ordered(self) -> list[Shown]:
        return [self.messages[key] for key in sorted(self.messages)]

    def header(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        if self.title:
            out["title"] = self.title
        out["date"] = self.date
        return out

    def to_dict(self) -> dict[str, Any]:
        date = self.date
        return {**self.header(), "messages": [m.to_dict(date) for m in self.ordered()]}


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What a search found, best session first; :meth:`to_dict` is the answer JSON."""

    query: str
    sessions: tuple[FoundSession, ...]
    when: str | None = None
    more: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"query": _clip_plain(self.query, QUERY_ECHO_CHARS)}
        if self.when:
            out["when"] = self.when
        out["sessions"] = [s.to_dict() for s in self.sessions]
        if self.more:
            out["more"] = self.more
        return out

    def to_json(self) -> str:
        return dumps(self.to_dict())


def dumps(value: Any) -> str:
    """The answer exactly as the model reads it."""
    return json.dumps(value, ensure_ascii=False)


class Packer:
    """Collects windows of messages into sessions while they fit in ``budget`` characters."""

    def __init__(self, query: str, when: str | None, budget: int) -> None:
        self.query = query
        self.when = when
        self.budget = budget
        self.sessions: dict[str, FoundSession] = {}
        self._added: list[tuple[str, list[int], bool]] = []  # session, ids, new session
        self._ids: set[int] = set()
        self.used = len(dumps(SearchResult(query, (), when, more=1000).to_dict()))

    def shown(self, message_id: int) -> bool:
        return message_id in self._ids

    def add(self, session: FoundSession, window: list[Shown]) -> bool:
        """Add the messages of ``window`` not shown yet; False (nothing added) if over budget."""
        fresh = [m for m in window if not self.shown(m.id)]
        if not fresh:
            return True
        target = self.sessions.get(session.id)
        date = session.date
        cost = sum(m.size(date) for m in fresh)
        if target is None:
            cost += len(dumps({**session.header(), "messages": []})) + 2
        if self.used + cost > self.budget:
            return False
        if target is None:
            target = self.sessions[session.id] = session
        for message in fresh:
            target.messages[message.id] = message
            self._ids.add(message.id)
        self._added.append((session.id, [m.id for m in fresh], len(target.messages) == len(fresh)))
        self.used += cost
        return True

    def result(self, more: int) -> SearchResult:
        """The answer; windows are dropped from the last added while it is over budget."""
        while True:
            result = SearchResult(self.query, tuple(self.sessions.values()), self.when, more)
            if len(result.to_json()) <= self.budget or not self._added:
                return result
            session_id, ids, new = self._added.pop()
            for message_id in ids:
                self.sessions[session_id].messages.pop(message_id, None)
                self._ids.discard(message_id)
            if new:
                del self.sessions[session_id]
            more += 1


def trim(text: str, pattern: re.Pattern[str] | None, size: int) -> str:
    """``text`` sanitized; if longer than ``size``, the parts around matches joined by "…".

    Up to three matches of distinct words each get a share of ``size``; with no match the
    beginning is kept.
    """
    text = " ".join(sanitize_recalled(text).split())
    if len(text) <= size:
        return text
    spans: list[tuple[int, int]] = []
    if pattern is not None:
        seen: set[str] = set()
        for found in pattern.finditer(text):
            word = found.group(0).lower()
            if word not in seen:
                seen.add(word)
                spans.append((found.start(), found.end()))
            if len(spans) == 3:
                break
    if not spans:
        return text[: size - 1].rstrip() + _ELLIPSIS
    share = size // len(spans)
    pieces: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        left = max(0, start - share // 3)
        right = min(len(text), max(end, left + share))
        if pieces and left <= pieces[-1][1]:
            pieces[-1] = (pieces[-1][0], max(pieces[-1][1], right))
        else:
            pieces.append((left, right))
    out = []
    for left, right in pieces:
        left, right = _word_edges(text, left, right)
        out.append(("" if left == 0 else _ELLIPSIS) + text[left:right].strip())
    tail = "" if pieces[-1][1] >= len(text) else _ELLIPSIS
    joined = " ".join(out) + tail
    return joined if len(joined) <= size + 8 else joined[: size - 1] + _ELLIPSIS


def _word_edges(text: str, left: int, right: int) -> tuple[int, int]:
    """Move cut points to spaces nearby so English words are not cut in half."""
    if left > 0 and text[left - 1] != " ":
        space = text.find(" ", left, min(len(text), left + 20))
        left = space + 1 if space >= 0 else left
    if right < len(text) and text[right] != " ":
        space = text.rfind(" ", max(left, right - 20), right)
        right = space if space > left else right
    return left, right


def _clip_plain(text: str, size: int) -> str:
    text = sanitize_recalled(text)
    return text if len(text) <= size else text[: size - 1] + _ELLIPSIS
