"""The fake Honcho's records and the JSON it answers with, shaped like Honcho 3.0.12's.

Field sets follow ``/work/shared/honcho/openapi-3.0.12.json`` and the recorded real
responses. Text "reasoning" is deterministic: a conclusion or message is relevant to a
question when they share a content word; a dialectic answer joins the most relevant ones,
more of them at higher reasoning levels.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

ID_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,512}$")
LEVEL_FACTS = {"minimal": 1, "low": 2, "medium": 3, "high": 5, "max": 8}
_WORD = re.compile(r"\w{3,}")
_STOP = frozenset(
    re.findall(
        r"\w+",
        "the and for you your are was what who how why when where which with this that have"
        " has does did can could would should will about from into they them their there"
        " then than any all our out not but its just also been being know user relevant"
        " given most important things reply answer answers want like check against"
        " everything list only missing facts contradictions none merge these into one short"
        " consistent preferring corrections question",
    )
)
_counter = itertools.count(1)
Query = dict[str, list[str]]


def now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_id() -> str:
    """A 21-character id like Honcho's nanoids; unique within the process."""
    return f"fk{next(_counter):019d}"


def words(text: str) -> set[str]:
    return {word for word in _WORD.findall(text.casefold()) if word not in _STOP}


@dataclass
class PeerRec:
    id: str
    created_at: datetime
    metadata: dict[str, Any] = field(default_factory=dict)
    configuration: dict[str, Any] = field(default_factory=dict)
    # Not served by the API, as in Honcho: peer cards live here (see card_label).
    internal_metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class SessionRec:
    id: str
    created_at: datetime
    metadata: dict[str, Any] = field(default_factory=dict)
    configuration: dict[str, Any] = field(default_factory=dict)
    members: dict[str, dict[str, Any]] = field(default_factory=dict)  # peer → flags
    summary: str | None = None


@dataclass
class MessageRec:
    id: str
    session_id: str
    peer_id: str
    content: str
    metadata: dict[str, Any]
    created_at: datetime


@dataclass
class ConclusionRec:
    id: str
    observer_id: str
    observed_id: str
    content: str
    session_id: str | None
    created_at: datetime
    level: str = "explicit"


@dataclass
class WorkspaceRec:
    id: str
    created_at: datetime
    metadata: dict[str, Any] = field(default_factory=dict)
    configuration: dict[str, Any] = field(default_factory=dict)
    peers: dict[str, PeerRec] = field(default_factory=dict)
    sessions: dict[str, SessionRec] = field(default_factory=dict)
    messages: list[MessageRec] = field(default_factory=list)
    conclusions: list[ConclusionRec] = field(default_factory=list)
    # Honcho's (observer, observed) collection rows: made with a pair's first conclusion,
    # never deleted through the API (not even with the conclusions or the sessions).
    collections: set[tuple[str, str]] = field(default_factory=set)
    # Messages the deriver has not processed yet (queue status counts them as pending).
    pending: list[MessageRec] = field(default_factory=list)
    done_units: dict[str, int] = field(default_factory=dict)  # session → derived messages

    def derived(self, message: MessageRec) -> bool:
        return all(item is not message for item in self.pending)


def workspace_json(ws: WorkspaceRec) -> dict[str, Any]:
    return {
        "id": ws.id,
        "metadata": ws.metadata,
        "configuration": ws.configuration,
        "created_at": iso(ws.created_at),
    }


def peer_json(ws: WorkspaceRec, peer: PeerRec) -> dict[str, Any]:
    return {
        "id": peer.id,
        "workspace_id": ws.id,
        "created_at": iso(peer.created_at),
        "metadata": peer.metadata,
        "configuration": peer.configuration,
    }


def session_json(ws: WorkspaceRec, session: SessionRec) -> dict[str, Any]:
    return {
        "id": session.id,
        "is_active": True,
        "workspace_id": ws.id,
        "metadata": session.metadata,
        "configuration": session.configuration,
        "created_at": iso(session.created_at),
    }


def message_json(ws: WorkspaceRec, message: MessageRec) -> dict[str, Any]:
    return {
        "id": message.id,
        "content": message.content,
        "peer_id": message.peer_id,
        "session_id": message.session_id,
        "metadata": message.metadata,
        "created_at": iso(message.created_at),
        "workspace_id": ws.id,
        "token_count": max(1, len(message.content) // 4),
    }


def conclusion_json(conclusion: ConclusionRec) -> dict[str, Any]:
    return {
        "id": conclusion.id,
        "content": conclusion.content,
        "observer_id": conclusion.observer_id,
        "observed_id": conclusion.observed_id,
        "session_id": conclusion.session_id,
        "level": conclusion.level,
        "created_at": iso(conclusion.created_at),
    }


def summary_json(session: SessionRec, last_message_id: str) -> dict[str, Any] | None:
    if session.summary is None:
        return None
    return {
        "content": session.summary,
        "message_id": last_message_id,
        "summary_type": "short",
        "created_at": iso(now()),
        "token_count": max(1, len(session.summary) // 4),
    }


def page_json(items: list[Any], page: int, size: int) -> dict[str, Any]:
    start = (page - 1) * size
    pages = (len(items) + size - 1) // size
    return {
        "items": items[start : start + size],
        "total": len(items),
        "page": page,
        "size": size,
        "pages": pages,
    }


def query_value(query: Query, name: str, default: str | None = None) -> str | None:
    values = query.get(name)
    return values[0] if values else default


def query_flag(query: Query, name: str, default: bool) -> bool:
    value = query_value(query, name)
    return default if value is None else value.lower() == "true"


def paging(query: Query) -> tuple[int, int]:
    return int(query_value(query, "page", "1") or 1), int(query_value(query, "size", "50") or 50)


def card_label(observer: str, target: str) -> str:
    """Where Honcho keeps a card in the observer's internal metadata."""
    return "peer_card" if observer == target else f"{target}_peer_card"


def queue_counts(done: int, pending: int) -> dict[str, int]:
    return {
        "total_work_units": done + pending,
        "completed_work_units": done,
        "in_progress_work_units": 0,
        "pending_work_units": pending,
    }


def queue_status_json(per_session: dict[str, tuple[int, int]], *, filtered: bool) -> dict[str, Any]:
    """The workspace's (or one session's) queue: ``per_session`` maps id → (done, pending)."""
    done = sum(counts[0] for counts in per_session.values())
    pending = sum(counts[1] for counts in per_session.values())
    sessions = {
        sid: {"session_id": sid, **queue_counts(*counts)}
        for sid, counts in per_session.items()
        if sum(counts)
    }
    # Honcho lists sessions only when the status is not filtered by session.
    return {**queue_counts(done, pending), "sessions": None if filtered else sessions or None}


def validation_error(loc: list[str | int], message: str, kind: str) -> dict[str, Any]:
    return {"detail": [{"loc": loc, "msg": message, "type": kind}]}


def conclusions_about(
    ws: WorkspaceRec, observer: str, observed: str, allowed: set[str] | None
) -> list[ConclusionRec]:
    """What ``observer`` concluded about ``observed`` (in the ``allowed`` sessions only)."""
    return [
        item
        for item in ws.conclusions
        if item.observer_id == observer
        and item.observed_id == observed
        and (allowed is None or item.session_id in allowed)
    ]


def representation_text(conclusions: list[ConclusionRec]) -> str:
    if not conclusions:
        return ""
    lines = "".join(
        f"[{item.created_at.strftime('%Y-%m-%d %H:%M:%S')}] {item.content}\n"
        for item in conclusions
    )
    return "## Explicit Observations\n\n" + lines


def session_allowlist(body: dict[str, Any]) -> set[str] | None:
    """The sessions a recall request is confined to (``session_id`` and/or ``filters``)."""
    allowed: set[str] | None = None
    filters = body.get("filters") or {}
    wanted = filters.get("session_id") if isinstance(filters, dict) else None
    if isinstance(wanted, dict):
        wanted = wanted.get("in")
    if isinstance(wanted, str):
        allowed = {wanted}
    elif isinstance(wanted, list):
        allowed = {str(item) for item in wanted}
    session_id = body.get("session_id")
    if isinstance(session_id, str) and session_id:
        allowed = {session_id} if allowed is None else allowed & {session_id}
    return allowed


def matches(record: dict[str, Any], filters: dict[str, Any] | None) -> bool:
    """A small subset of Honcho's filter language: equality, lists, ``in``, metadata."""
    for key, wanted in (filters or {}).items():
        if key == "metadata" and isinstance(wanted, dict):
            stored = record.get("metadata") or {}
            if any(stored.get(name) != value for name, value in wanted.items()):
                return False
            continue
        value = record.get(key)
        if isinstance(wanted, dict) and "in" in wanted:
            if value not in wanted["in"]:
                return False
        elif isinstance(wanted, list):
            if value not in wanted:
                return False
        elif value != wanted:
            return False
    return True


def ranked(items: list[Any], text_of: Any, query: str, limit: int) -> list[Any]:
    """Like a semantic search: the best ``limit`` items, most shared words first, stable."""
    wanted = words(query)
    order = sorted(
        enumerate(items), key=lambda pair: (-len(wanted & words(text_of(pair[1]))), pair[0])
    )
    return [item for _, item in order[:limit]]


def dialectic_answer(query: str, facts: list[str], level: str) -> str | None:
    """Facts sharing a content word with ``query``, best first (for a question with no
    content word, the newest facts); None when there is nothing to say."""
    wanted = words(query)
    limit = LEVEL_FACTS.get(level, 2)
    if wanted:
        scored = [(len(wanted & words(fact)), -index, fact) for index, fact in enumerate(facts)]
        picked = [fact for score, _, fact in sorted(scored, reverse=True) if score > 0]
    else:
        picked = facts[::-1]
    chosen = list(dict.fromkeys(picked))[:limit]
    return "; ".join(chosen) if chosen else None
