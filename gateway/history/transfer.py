"""JSONL export and import of a tenant's sessions, in the format of SPEC §2.1.

One session per line, keys in this order::

    {"id","title","started_at","ended_at","source","parent_id",
     "messages":[{"role","content","timestamp","name"}]}

Timestamps are ISO 8601 in UTC with exactly six fractional digits and a ``Z`` suffix
(``2024-05-01T09:30:00.000000Z``); export → import → export is byte-identical for ended
sessions. Every message is exported with its role (``user``, ``assistant``, ``tool`` or
``system``) and text; tool calls and tool-call ids are not part of the format and are lost.

Import is all-or-nothing: every line is validated first (unknown or missing keys, wrong
types, bad roles or timestamps are refused with the line number), then the whole file is
stored in one transaction. Imported content is history, never instructions: every title
and message is checked (:mod:`gateway.history.import_checks`: title rules, threat scanner)
and one flagged line refuses the file, naming line, message and rule. Messages keep their
exported role, so export → import → export stays byte-identical; :mod:`gateway.agent.replay`
never sends a ``system`` message, or a ``tool`` message without its call, to the model as
such.

Ids are per tenant as far as anyone can tell: an id this tenant already uses, or a title it
already uses, is a conflict handled by ``on_conflict`` — ``fail`` (the default) refuses
the file, ``skip`` leaves those sessions out, ``rename`` gives them a fresh id and a
``title (2)`` style title. An id some *other* tenant happens to use is no conflict: the
session quietly gets a fresh id (reported like any renamed id), so an import never tells
one tenant which ids another has. Parent links inside the file are preserved (following
renames). Imported sessions are ended (``ended_at`` from the file, else the last message's
time), have an empty system prompt and no tools, and belong to the tenant's private
(direct-message) scope: they are history to search and read, and resuming one freezes a
fresh prompt and tools first.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from gateway.errors import UserInputError
from gateway.history.import_checks import check_imported
from gateway.history.lineage import title_taken, unique_title
from gateway.history.store import (
    NewMessage,
    SessionRecord,
    SessionStore,
    StoredMessage,
    new_session_id,
)
from gateway.tenants import TenantId

OnConflict = Literal["fail", "skip", "rename"]
ON_CONFLICT: tuple[OnConflict, ...] = ("fail", "skip", "rename")
SESSION_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: Beyond this a float of seconds no longer holds every microsecond exactly.
_LATEST = datetime(2200, 1, 1, tzinfo=UTC)
_PAGE = 200
# json.dumps already escapes the C0 controls; these three break lines for splitlines().
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def format_timestamp(ts: float) -> str:
    """``ts`` (seconds since the epoch) as ``YYYY-MM-DDTHH:MM:SS.ffffffZ``."""
    return _iso(from_epoch(ts))


def from_epoch(ts: float) -> datetime:
    """The UTC moment of ``ts``, rounded to the microsecond."""
    return datetime.fromtimestamp(ts, UTC)


def to_epoch(moment: datetime) -> float:
    """Seconds since the epoch, computed from whole microseconds (exactly rounded)."""
    return (moment - _EPOCH) / timedelta(seconds=1)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _timestamp(value: Any) -> datetime:
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{value!r} is not an ISO 8601 timestamp") from None
    else:
        raise ValueError("a timestamp must be an ISO 8601 string")
    if moment.tzinfo is None:
        raise ValueError(f"{value!r} has no UTC offset (write e.g. 2024-05-01T09:30:00Z)")
    if not _EPOCH <= moment < _LATEST:
        raise ValueError(f"{value!r} is not between 1970 and 2200")
    return moment.astimezone(UTC)


Timestamp = Annotated[datetime, BeforeValidator(_timestamp)]
SessionIdText = Annotated[str, Field(pattern=SESSION_ID_PATTERN)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ExportedMessage(_Strict):
    role: Literal["user", "assistant", "tool", "system"]
    content: str
    timestamp: Timestamp
    name: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "content": self.content,
            "timestamp": _iso(self.timestamp),
            "name": self.name,
        }


class ExportedSession(_Strict):
    """One line of the export: a session and its messages."""

    id: SessionIdText
    title: str | None
    started_at: Timestamp
    ended_at: Timestamp | None
    source: Annotated[str, Field(min_length=1, max_length=64)]
    parent_id: SessionIdText | None
    messages: list[ExportedMessage]

    @classmethod
    def from_store(cls, session: SessionRecord, messages: list[StoredMessage]) -> ExportedSession:
        """Stored rows as they are: export never refuses what the gateway itself stored."""
        return cls.model_construct(
            id=session.id,
            title=session.title,
            started_at=from_epoch(session.started_at),
            ended_at=None if session.ended_at is None else from_epoch(session.ended_at),
            source=session.source,
            parent_id=session.parent_id,
            messages=[
                ExportedMessage.model_construct(
                    role=m.role, content=m.content, timestamp=from_epoch(m.timestamp), name=m.name
                )
                for m in messages
            ],
        )

    @property
    def started_ts(self) -> float:
        return to_epoch(self.started_at)

    @property
    def ended_ts(self) -> float | None:
        return None if self.ended_at is None else to_epoch(self.ended_at)

    def new_messages(self) -> list[NewMessage]:
        return [
            NewMessage(m.role, m.content, name=m.name, timestamp=to_epoch(m.timestamp))
            for m in self.messages
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "started_at": _iso(self.started_at),
            "ended_at": None if self.ended_at is None else _iso(self.ended_at),
            "source": self.source,
            "parent_id": self.parent_id,
            "messages": [m.to_dict() for m in self.messages],
        }

    def to_json_line(self) -> str:
        """The JSON object on one line, without the newline.

        Text stays readable (no ASCII escaping), except the characters that line-splitting
        tools such as ``str.splitlines`` treat as line breaks, so a line is always a session.
        """
        text = json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":"))
        return text.translate(_LINE_BREAKS)


# --- export ------------------------------------------------------------------------------
def exported_session(store: SessionStore, tenant: TenantId, session_id: str) -> ExportedSession:
    """One of the tenant's sessions in the export shape (NotFound for anyone else's)."""
    session = store.get_session(tenant, session_id)
    return ExportedSession.from_store(session, store.messages(tenant, session_id))


def export_lines(store: SessionStore, tenant: TenantId) -> Iterator[str]:
    """The tenant's sessions, oldest first, each as a JSONL line ending in a newline."""
    offset = 0
    while True:
        page = store.list_sessions(tenant, limit=_PAGE, offset=offset, oldest_first=True)
        for session in page:
            exported = ExportedSession.from_store(session, store.messages(tenant, session.id))
            yield exported.to_json_line() + "\n"
        if len(page) < _PAGE:
            return
        offset += _PAGE


# --- import ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ParsedLine:
    line: int
    session: ExportedSession


@dataclass(slots=True)
class ImportReport:
    """What an import stored: ids as written in the file → ids stored."""

    imported: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    retitled: dict[str, str] = field(default_factory=dict)
    unlinked: list[str] = field(default_factory=list)
    messages: int = 0

    @property
    def renamed(self) -> dict[str, str]:
        return {old: new for old, new in self.imported.items() if old != new}


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise ValueError(f"duplicate key {duplicates[0]!r}")
    return dict(pairs)


def _describe(exc: ValidationError) -> str:
    problems = []
    for err in exc.errors()[:3]:
        where = ".".join(str(part) for part in err["loc"]) or "line"
        problems.append(f"{where}: {err['msg']}")
    more = len(exc.errors()) - len(problems)
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")


def parse_jsonl(text: str) -> list[ParsedLine]:
    """Validate every line of an export; UserInputError names the first bad line."""
    parsed: list[ParsedLine] = []
    # Only "\n" ends a line: str.splitlines() would also split on U+2028 inside strings.
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        if not line.strip():
            continue
        try:
            data = json.loads(line, object_pairs_hook=_reject_duplicate_keys)
        except ValueError as exc:
            raise UserInputError(f"line {number}: not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise UserInputError(f"line {number}: expected a JSON object, one session per line")
        try:
            session = ExportedSession.model_validate(data)
        except ValidationError as exc:
            raise UserInputError(f"line {number}: {_describe(exc)}") from None
        parsed.append(ParsedLine(number, session))
    _check_file(parsed)
    return parsed


def _check_file(parsed: list[ParsedLine]) -> None:
    seen_ids: dict[str, int] = {}
    seen_titles: dict[str, int] = {}
    for item in parsed:
        s = item.session
        if s.id in seen_ids:
            raise UserInputError(f"line {item.line}: id {s.id!r} repeats line {seen_ids[s.id]}")
        seen_ids[s.id] = item.line
        if s.title is not None and s.title in seen_titles:
            raise UserInputError(
                f"line {item.line}: title {s.title!r} repeats line {seen_titles[s.title]}"
            )
        if s.title is not None:
            seen_titles[s.title] = item.line
        if s.parent_id == s.id:
            raise UserInputError(f"line {item.line}: session {s.id!r} is its own parent")
        check_imported(item.line, s.title, [(m.role, m.content) for m in s.messages])


def _parents_first(parsed: list[ParsedLine]) -> list[ParsedLine]:
    """File order, except that a parent in the file is always stored before its children."""
    by_id = {item.session.id: item for item in parsed}
    ordered: list[ParsedLine] = []
    done: set[str] = set()
    for item in parsed:
        chain: list[ParsedLine] = []
        in_chain: set[str] = set()
        current: ParsedLine | None = item
        while current is not None and current.session.id not in done:
            if current.session.id in in_chain:
                raise UserInputError(f"line {current.line}: parent links form a cycle")
            chain.append(current)
            in_chain.add(current.session.id)
            parent = current.session.parent_id
            current = by_id.get(parent) if parent is not None else None
        for link in reversed(chain):
            ordered.append(link)
            done.add(link.session.id)
    return ordered


class _Importer:
    """Resolves ids, titles and parents of one file inside one write transaction."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        store: SessionStore,
        tenant: TenantId,
        parsed: list[ParsedLine],
        on_conflict: OnConflict,
    ) -> None:
        self.conn = conn
        self.store = store
        self.tenant = tenant
        self.on_conflict = on_conflict
        self.in_file = {item.session.id for item in parsed}
        self.report = ImportReport()

    def run(self, parsed: list[ParsedLine]) -> ImportReport:
        for item in _parents_first(parsed):
            self._one(item)
        return self.report

    def _one(self, item: ParsedLine) -> None:
        s = item.session
        owner = self.store.id_owner(self.conn, self.tenant, s.id)
        title_clash = s.title is not None and title_taken(self.conn, self.tenant, s.title)
        if owner == "mine" or title_clash:
            what = (
                f"id {s.id!r} is already in use by another of {self.tenant}'s sessions"
                if owner == "mine"
                else (f"title {s.title!r} is already used by another of {self.tenant}'s sessions")
            )
            if self.on_conflict == "fail":
                raise UserInputError(
                    f"line {item.line}: {what}; nothing was imported "
                    "(choose --on-conflict skip or rename)"
                )
            if self.on_conflict == "skip":
                self.report.skipped.append(s.id)
                return
        new_id = s.id if owner == "free" else self._fresh_id(s.started_ts)
        title = s.title
        if title is not None and title_clash:
            title = unique_title(self.conn, self.tenant, title)
            self.report.retitled[s.id] = title
        parent = self._parent(item)
        self.report.messages += self.store.insert_imported(
            self.conn, self.tenant, s, session_id=new_id, title=title, parent_id=parent
        )
        self.report.imported[s.id] = new_id

    def _parent(self, item: ParsedLine) -> str | None:
        parent = item.session.parent_id
        if parent is None:
            return None
        if parent in self.report.imported:
            return self.report.imported[parent]
        if self.store.id_owner(self.conn, self.tenant, parent) == "mine":
            return parent
        if parent in self.in_file:  # skipped, and not the tenant's own session
            self.report.unlinked.append(item.session.id)
            return None
        raise UserInputError(
            f"line {item.line}: parent_id {parent!r} is neither in the file "
            f"nor one of {self.tenant}'s sessions"
        )

    def _fresh_id(self, started: float) -> str:
        while True:
            candidate = new_session_id(started)
            if candidate not in self.in_file and (
                self.store.id_owner(self.conn, self.tenant, candidate) == "free"
            ):
                return candidate


def import_jsonl(
    store: SessionStore, tenant: TenantId, text: str, *, on_conflict: OnConflict = "fail"
) -> ImportReport:
    """Validate ``text`` and store all its sessions for ``tenant``, or nothing at all."""
    if on_conflict not in ON_CONFLICT:
        raise UserInputError(f"on_conflict must be one of {', '.join(ON_CONFLICT)}")
    parsed = parse_jsonl(text)
    return store.db.write(
        lambda conn: _Importer(conn, store, tenant, parsed, on_conflict).run(parsed)
    )
