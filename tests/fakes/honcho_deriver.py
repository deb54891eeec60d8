"""The fake Honcho's deriver: messages become conclusions, at once or when the queue drains.

By default a message is derived on arrival. ``hold = True`` queues messages instead, as the
real deriver's backlog does: queue status reports them as pending, and neither the dialectic
nor representations see them until they are derived — by :meth:`Deriver.drain`, or by
itself after ``release_after_polls`` queue-status reads (a deriver that catches up while a
client polls). A message from P becomes the explicit conclusion ``"P said: …"`` for P itself
when P is observed (``observe_me``, session flag first, then the peer's) and for every other
member that ``observe_others``. The first conclusion of an (observer, observed) pair makes
its collection row, which, as in Honcho, nothing in the API deletes.
"""

from __future__ import annotations

from typing import Any

from tests.fakes.honcho_payloads import (
    ConclusionRec,
    MessageRec,
    PeerRec,
    SessionRec,
    WorkspaceRec,
    new_id,
    now,
    query_value,
    queue_status_json,
)


def touch_peer(ws: WorkspaceRec, peer_id: str) -> PeerRec:
    """The peer, created on first mention (as Honcho's get-or-create does)."""
    if peer_id not in ws.peers:
        ws.peers[peer_id] = PeerRec(peer_id, now())
    return ws.peers[peer_id]


def observe_me(ws: WorkspaceRec, session: SessionRec, peer_id: str) -> bool:
    flag = session.members.get(peer_id, {}).get("observe_me")
    if flag is None:
        flag = touch_peer(ws, peer_id).configuration.get("observe_me")
    return flag is not False


def observe_others(session: SessionRec, peer_id: str) -> bool:
    return bool(session.members.get(peer_id, {}).get("observe_others"))


def add_conclusion(ws: WorkspaceRec, conclusion: ConclusionRec) -> None:
    ws.conclusions.append(conclusion)
    ws.collections.add((conclusion.observer_id, conclusion.observed_id))


class Deriver:
    """Derivation mode of one fake server (shared by its workspaces)."""

    def __init__(self) -> None:
        self.hold = False
        self.release_after_polls: int | None = None
        self.polls = 0

    def accept(self, ws: WorkspaceRec, session: SessionRec, messages: list[MessageRec]) -> None:
        """New messages of ``session``: derived now, or queued while the deriver is held."""
        for message in messages:
            if self.hold and self._work(ws, session, message):
                ws.pending.append(message)
            else:
                self._derive(ws, session, message)

    def drain(self, ws: WorkspaceRec) -> int:
        """Derive every queued message; how many there were."""
        queued, ws.pending = ws.pending, []
        for message in queued:
            session = ws.sessions.get(message.session_id)
            if session is not None:
                self._derive(ws, session, message)
        return len(queued)

    def status(self, ws: WorkspaceRec, query: dict[str, list[str]]) -> dict[str, Any]:
        """The queue status answer; a read may let a held deriver finish (see module doc)."""
        self.polls += 1
        if self.release_after_polls is not None and self.polls > self.release_after_polls:
            self.drain(ws)
        only = query_value(query, "session_id")
        sender = query_value(query, "sender_id")
        counts: dict[str, tuple[int, int]] = {}
        for sid in ws.sessions:
            if only is not None and sid != only:
                continue
            waiting = sum(
                1
                for m in ws.pending
                if m.session_id == sid and (sender is None or m.peer_id == sender)
            )
            counts[sid] = (ws.done_units.get(sid, 0), waiting)
        return queue_status_json(counts, filtered=only is not None)

    def _work(self, ws: WorkspaceRec, session: SessionRec, message: MessageRec) -> bool:
        """Whether the message gives the deriver something to do."""
        return bool(message.content.strip()) and observe_me(ws, session, message.peer_id)

    def _derive(self, ws: WorkspaceRec, session: SessionRec, message: MessageRec) -> None:
        if not self._work(ws, session, message):
            return
        sender = message.peer_id
        observers = [sender] + [
            peer_id
            for peer_id in session.members
            if peer_id != sender and observe_others(session, peer_id)
        ]
        for observer in observers:
            add_conclusion(
                ws,
                ConclusionRec(
                    new_id(),
                    observer,
                    sender,
                    f"{sender} said: {message.content}",
                    session.id,
                    message.created_at,
                ),
            )
        ws.done_units[session.id] = ws.done_units.get(session.id, 0) + 1
