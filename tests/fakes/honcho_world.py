"""The fake Honcho's state and one handler per route of the v3 API the SDK uses.

Handlers take the workspace record, the path parameters, the query and the JSON body and
return ``(status, payload)``. Messages are "derived" by :mod:`~tests.fakes.honcho_deriver`.
The dialectic works like Honcho's: the asking peer's conclusions about the target, plus a
search over the messages of *every* session the asking peer belongs to — unless the request
confines it to an allowlist of sessions. A peer shared by several users' sessions therefore
recalls what any of them said. Peer cards live in the observer's internal metadata
(``peer_card``, or ``<target>_peer_card``), which the API never serves or deletes.
"""

from __future__ import annotations

from typing import Any

from tests.fakes.honcho_deriver import (
    Deriver,
    add_conclusion,
    touch_peer,
)
from tests.fakes.honcho_payloads import (
    ID_PATTERN,
    ConclusionRec,
    MessageRec,
    PeerRec,
    Query,
    SessionRec,
    WorkspaceRec,
    card_label,
    conclusion_json,
    conclusions_about,
    dialectic_answer,
    matches,
    message_json,
    new_id,
    now,
    page_json,
    paging,
    peer_json,
    query_flag,
    query_value,
    ranked,
    representation_text,
    session_allowlist,
    session_json,
    summary_json,
    validation_error,
    workspace_json,
)

Answer = tuple[int, Any]
Params = dict[str, str]


def _content(item: dict[str, Any]) -> str:
    return str(item["content"])


class NotFound(Exception):
    """Answered as 404 with ``{"detail": …}``."""


class World:
    """Every workspace of the fake; handlers run under the server's lock."""

    def __init__(self) -> None:
        self.workspaces: dict[str, WorkspaceRec] = {}
        self.deriver = Deriver()

    # -- helpers -------------------------------------------------------------------------

    def workspace(self, ws_id: str) -> WorkspaceRec:
        if ws_id not in self.workspaces:
            raise NotFound(f"Workspace {ws_id} not found")
        return self.workspaces[ws_id]

    @staticmethod
    def peer(ws: WorkspaceRec, peer_id: str) -> PeerRec:
        if peer_id not in ws.peers:
            raise NotFound(f"Peer {peer_id} not found")
        return ws.peers[peer_id]

    @staticmethod
    def session(ws: WorkspaceRec, session_id: str) -> SessionRec:
        if session_id not in ws.sessions:
            raise NotFound(f"Session {session_id} not found")
        return ws.sessions[session_id]

    @staticmethod
    def _touch_peer(ws: WorkspaceRec, peer_id: str) -> PeerRec:
        return touch_peer(ws, peer_id)

    # -- workspaces, peers, sessions ----------------------------------------------------

    def create_workspace(self, body: dict[str, Any]) -> Answer:
        ws_id = str(body.get("id", ""))
        if not ID_PATTERN.match(ws_id):
            return 422, validation_error(["body", "id"], "String should match pattern", "str")
        if ws_id in self.workspaces:
            return 200, workspace_json(self.workspaces[ws_id])
        self.workspaces[ws_id] = WorkspaceRec(ws_id, now(), metadata=body.get("metadata") or {})
        return 201, workspace_json(self.workspaces[ws_id])

    def create_peer(self, ws: WorkspaceRec, p: Params, q: Query, body: dict[str, Any]) -> Answer:
        peer_id = str(body.get("id", ""))
        if not ID_PATTERN.match(peer_id):
            return 422, validation_error(["body", "id"], "String should match pattern", "str")
        status = 200 if peer_id in ws.peers else 201
        peer = self._touch_peer(ws, peer_id)
        if body.get("metadata") is not None:
            peer.metadata = dict(body["metadata"])
        if body.get("configuration") is not None:
            peer.configuration = {**peer.configuration, **body["configuration"]}
        return status, peer_json(ws, peer)

    def update_peer(self, ws: WorkspaceRec, p: Params, q: Query, body: dict[str, Any]) -> Answer:
        peer = self.peer(ws, p["peer"])
        if body.get("metadata") is not None:
            peer.metadata = dict(body["metadata"])
        if body.get("configuration") is not None:
            peer.configuration = dict(body["configuration"])
        return 200, peer_json(ws, peer)

    def list_peers(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        filters = (body or {}).get("filters")
        items = [peer_json(ws, peer) for peer in ws.peers.values()]
        return 200, page_json([i for i in items if matches(i, filters)], *paging(q))

    def peer_sessions(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        self.peer(ws, p["peer"])
        filters = (body or {}).get("filters")
        items = [
            session_json(ws, session)
            for session in ws.sessions.values()
            if p["peer"] in session.members
        ]
        return 200, page_json([i for i in items if matches(i, filters)], *paging(q))

    def create_session(self, ws: WorkspaceRec, p: Params, q: Query, body: dict[str, Any]) -> Answer:
        session_id = str(body.get("id", ""))
        if not ID_PATTERN.match(session_id):
            return 422, validation_error(["body", "id"], "String should match pattern", "str")
        status = 200 if session_id in ws.sessions else 201
        if status == 201:
            ws.sessions[session_id] = SessionRec(session_id, now(), body.get("metadata") or {})
        session = ws.sessions[session_id]
        for peer_id, flags in (body.get("peers") or {}).items():
            self._touch_peer(ws, peer_id)
            session.members.setdefault(peer_id, dict(flags or {}))
        return status, session_json(ws, session)

    def list_sessions(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        filters = (body or {}).get("filters")
        items = [session_json(ws, session) for session in ws.sessions.values()]
        return 200, page_json([i for i in items if matches(i, filters)], *paging(q))

    def delete_session(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        self.session(ws, p["session"])
        del ws.sessions[p["session"]]
        ws.messages = [m for m in ws.messages if m.session_id != p["session"]]
        ws.pending = [m for m in ws.pending if m.session_id != p["session"]]
        ws.conclusions = [c for c in ws.conclusions if c.session_id != p["session"]]
        return 202, {"message": "Session deletion accepted"}

    def add_session_peers(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        session = self.session(ws, p["session"])
        for peer_id, flags in (body or {}).items():
            self._touch_peer(ws, peer_id)
            session.members[peer_id] = {**session.members.get(peer_id, {}), **(flags or {})}
        return 200, session_json(ws, session)

    def session_peers(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        session = self.session(ws, p["session"])
        items = [peer_json(ws, self._touch_peer(ws, peer_id)) for peer_id in session.members]
        return 200, page_json(items, *paging(q))

    def _member(self, ws: WorkspaceRec, p: Params) -> dict[str, Any]:
        session = self.session(ws, p["session"])
        if p["peer"] not in session.members:
            raise NotFound(f"Peer {p['peer']} is not in session {p['session']}")
        return session.members[p["peer"]]

    def get_peer_config(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        flags = self._member(ws, p)
        return 200, {
            "observe_me": flags.get("observe_me"),
            "observe_others": flags.get("observe_others"),
        }

    def set_peer_config(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        self._member(ws, p).update({k: v for k, v in (body or {}).items() if v is not None})
        return 204, None

    # -- messages ------------------------------------------------------------------------

    def add_messages(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        session = self.session(ws, p["session"])
        items = (body or {}).get("messages") or []
        if not 1 <= len(items) <= 100:
            return 422, validation_error(["body", "messages"], "1 to 100 messages", "list")
        stored = []
        for item in items:
            content = str(item.get("content", ""))
            if len(content) > 25_000:
                return 422, validation_error(["body", "messages"], "content too long", "str")
            peer_id = str(item["peer_id"])
            self._touch_peer(ws, peer_id)
            session.members.setdefault(peer_id, {})
            message = MessageRec(
                new_id(), session.id, peer_id, content, dict(item.get("metadata") or {}), now()
            )
            stored.append(message)
        ws.messages.extend(stored)
        self.deriver.accept(ws, session, stored)
        return 201, [message_json(ws, message) for message in stored]

    def list_messages(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        self.session(ws, p["session"])
        filters = (body or {}).get("filters")
        items = [message_json(ws, m) for m in ws.messages if m.session_id == p["session"]]
        if query_flag(q, "reverse", False):
            items.reverse()
        return 200, page_json([i for i in items if matches(i, filters)], *paging(q))

    def _search(self, ws: WorkspaceRec, messages: list[MessageRec], body: Any) -> Answer:
        body = body or {}
        found = [message_json(ws, m) for m in messages]
        found = [item for item in found if matches(item, body.get("filters"))]
        return 200, ranked(
            found, _content, str(body.get("query", "")), int(body.get("limit") or 10)
        )

    def search_workspace(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        return self._search(ws, ws.messages, body)

    def search_session(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        self.session(ws, p["session"])
        return self._search(ws, [m for m in ws.messages if m.session_id == p["session"]], body)

    def search_peer(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        self.peer(ws, p["peer"])
        return self._search(ws, [m for m in ws.messages if m.peer_id == p["peer"]], body)

    # -- what the fake "knows" -------------------------------------------------------------

    def get_card(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        self.peer(ws, p["peer"])
        target = query_value(q, "target") or p["peer"]
        return 200, {"peer_card": self._card(ws, p["peer"], target)}

    @staticmethod
    def _card(ws: WorkspaceRec, observer: str, target: str) -> list[str] | None:
        peer = ws.peers.get(observer)
        card = peer.internal_metadata.get(card_label(observer, target)) if peer else None
        return list(card) if isinstance(card, list) else None

    def set_card(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        peer = self.peer(ws, p["peer"])
        card = (body or {}).get("peer_card")
        if not isinstance(card, list):
            return 422, validation_error(["body", "peer_card"], "Field required", "missing")
        target = query_value(q, "target") or p["peer"]
        # Emptying a card keeps its key: the API has no way to remove it.
        peer.internal_metadata[card_label(peer.id, target)] = [str(line) for line in card]
        return 200, {"peer_card": self._card(ws, peer.id, target)}

    def representation(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        self.peer(ws, p["peer"])
        body = body or {}
        target = body.get("target") or p["peer"]
        found = conclusions_about(ws, p["peer"], target, session_allowlist(body))
        return 200, {"representation": representation_text(found)}

    def peer_context(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        self.peer(ws, p["peer"])
        target = query_value(q, "target") or p["peer"]
        found = conclusions_about(ws, p["peer"], target, None)
        return 200, {
            "peer_id": p["peer"],
            "target_id": target,
            "representation": representation_text(found),
            "peer_card": self._card(ws, p["peer"], target),
        }

    def session_context(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        session = self.session(ws, p["session"])
        messages = [m for m in ws.messages if m.session_id == session.id]
        budget = int(query_value(q, "tokens", "100000") or 100000) * 4
        kept: list[MessageRec] = []
        for message in reversed(messages):
            budget -= len(message.content)
            if budget < 0:
                break
            kept.insert(0, message)
        target = query_value(q, "peer_target")
        representation, card = None, None
        if target:
            observer = query_value(q, "peer_perspective") or target
            limited = query_flag(q, "limit_to_session", False)
            allowed = {session.id} if limited else (set(q["sessions"]) if "sessions" in q else None)
            found = conclusions_about(ws, observer, target, allowed)
            representation = representation_text(found) or None
            card = None if allowed is not None else self._card(ws, observer, target)
        last = messages[-1].id if messages else ""
        return 200, {
            "id": session.id,
            "messages": [message_json(ws, m) for m in kept],
            "summary": summary_json(session, last) if query_flag(q, "summary", True) else None,
            "peer_representation": representation,
            "peer_card": card,
        }

    def summaries(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        session = self.session(ws, p["session"])
        messages = [m for m in ws.messages if m.session_id == session.id]
        short = summary_json(session, messages[-1].id if messages else "")
        return 200, {"id": session.id, "short_summary": short, "long_summary": None}

    def chat(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        self.peer(ws, p["peer"])
        body = body or {}
        query = str(body.get("query", ""))
        if not query:
            return 422, validation_error(["body", "query"], "Field required", "missing")
        observed = body.get("target") or p["peer"]
        allowed = session_allowlist(body)
        facts = [c.content for c in conclusions_about(ws, p["peer"], observed, allowed)]
        # Like Honcho's dialectic agent: search the messages of every session the asking
        # peer is in (not just the target's), once the deriver has processed them.
        joined = {sid for sid, s in ws.sessions.items() if p["peer"] in s.members}
        searched = joined if allowed is None else joined & allowed
        facts += [m.content for m in ws.messages if m.session_id in searched and ws.derived(m)]
        level = str(body.get("reasoning_level") or "low")
        return 200, {"content": dialectic_answer(query, facts, level)}

    def queue_status(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        return 200, self.deriver.status(ws, q)

    # -- conclusions -----------------------------------------------------------------------

    def create_conclusions(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        items = (body or {}).get("conclusions") or []
        if not 1 <= len(items) <= 100:
            return 422, validation_error(["body", "conclusions"], "1 to 100 items", "list")
        if not all(str(item.get("content", "")) for item in items):
            return 422, validation_error(["body", "conclusions"], "empty content", "str")
        created = [
            ConclusionRec(
                new_id(),
                self._touch_peer(ws, str(item["observer_id"])).id,
                self._touch_peer(ws, str(item["observed_id"])).id,
                str(item["content"]),
                item.get("session_id"),
                now(),
            )
            for item in items
        ]
        for item in created:
            add_conclusion(ws, item)
        return 201, [conclusion_json(item) for item in created]

    def list_conclusions(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        filters = (body or {}).get("filters")
        items = [conclusion_json(c) for c in ws.conclusions]
        items = [item for item in items if matches(item, filters)]
        # Newest first, as Honcho lists them; reverse=true gives the oldest first.
        items.sort(key=lambda item: item["created_at"], reverse=not query_flag(q, "reverse", False))
        return 200, page_json(items, *paging(q))

    def query_conclusions(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        body = body or {}
        items = [conclusion_json(c) for c in ws.conclusions]
        items = [item for item in items if matches(item, body.get("filters"))]
        return 200, ranked(
            items, _content, str(body.get("query", "")), int(body.get("top_k") or 10)
        )

    def delete_conclusion(self, ws: WorkspaceRec, p: Params, q: Query, body: Any) -> Answer:
        before = len(ws.conclusions)
        ws.conclusions = [c for c in ws.conclusions if c.id != p["conclusion"]]
        if len(ws.conclusions) == before:
            raise NotFound(f"Conclusion {p['conclusion']} not found")
        return 204, None
