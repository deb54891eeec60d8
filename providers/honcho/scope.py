"""The one door to Honcho for a memory scope: every call a turn, recall or tool makes.

Honcho's dialectic agent answers from the messages of every session the *asking* peer
belongs to, and a peer card or conclusion is keyed by (observer, target). Whether a read
stays within one tenant therefore depends on which peers it names. A :class:`TenantScope`
is built by the provider from a joined :class:`~.identity.SessionState` and nothing else:
it names the scope's user peer, the scope's own assistant peer and the current session
once, and offers only calls made with them. ``recall``, ``tools``, ``sync`` and the
migration never see the SDK client, so no call site can ask as another peer, read another
peer's card or conclusions, or delete a conclusion that is not about this user.

Every peer named here belongs to the scope's sessions only (see the identity module: the
assistant peer is per scope), which is what confines the dialectic, representations and
message search — by construction, not by a filter each call would have to remember.
"""

from __future__ import annotations

from collections.abc import Sequence

from providers.honcho.client import (
    FoundConclusion,
    FoundMessage,
    HonchoCallError,
    HonchoClient,
    Level,
    OutgoingMessage,
    SessionView,
)
from providers.honcho.identity import Identity, SessionState

LIST_ALL = 100_000


class TenantScope:
    """Honcho calls for one joined session of one memory scope (see module docstring)."""

    def __init__(self, client: HonchoClient, state: SessionState) -> None:
        self._client = client
        self.state = state

    @property
    def ident(self) -> Identity:
        return self.state.ident

    @property
    def session(self) -> str:
        return self.state.ident.session

    def _perspective(self) -> tuple[str, str | None]:
        return self.state.perspective()

    # -- what Honcho knows about the user ----------------------------------------------------

    def dialectic(self, query: str, *, level: Level, timeout_s: float) -> str:
        """``peer.chat`` asked by this scope's observer about this scope's user."""
        observer, target = self._perspective()
        return self._client.chat(observer, query, target=target, level=level, timeout_s=timeout_s)

    def context(self, *, tokens: int, focus: str | None = None) -> SessionView:
        """This session's summary and messages, the user's representation and card."""
        observer, target = self._perspective()
        return self._client.session_context(
            self.session,
            peer_target=self.ident.user_peer,
            peer_perspective=observer if target else None,
            limit_to_session=False,
            tokens=tokens,
            search_query=focus or None,
        )

    def assistant_self(self) -> str:
        """What the scope's assistant peer has learned about itself (in this scope only)."""
        return self._client.representation(self.ident.ai_peer)

    def search(self, query: str, *, limit: int) -> list[FoundMessage]:
        """What the user said before that matches ``query`` (the user peer's messages)."""
        return self._client.search_peer(self.ident.user_peer, query, limit=limit)

    def card(self) -> list[str]:
        observer, target = self._perspective()
        return self._client.get_card(observer, target) or []

    def conclusions(self, *, limit: int, newest_first: bool = True) -> list[FoundConclusion]:
        observer, _ = self._perspective()
        return self._client.list_conclusions(
            observer, self.ident.user_peer, limit=limit, newest_first=newest_first
        )

    def former_view(self) -> tuple[list[str], list[str]]:
        """What the assistant peer shared by every tenant before per-user assistants had
        concluded about *this* user, and its card about them (contents, card lines)."""
        former, user = self.ident.former_ai, self.ident.user_peer
        found = self._client.list_conclusions(former, user, limit=LIST_ALL, newest_first=False)
        try:
            card = self._client.get_card(former, user) or []
        except HonchoCallError as exc:
            if not exc.not_found:  # no such peer: a deployment that never had one
                raise
            card = []
        return [item.content for item in found], card

    def summary(self) -> str:
        return self._client.session_summary(self.session)

    def caught_up(self) -> bool:
        """Whether Honcho's deriver has nothing left to do for this session."""
        return self._client.queue_idle(session=self.session)

    # -- changes ---------------------------------------------------------------------------

    def set_card(self, lines: Sequence[str]) -> list[str]:
        observer, target = self._perspective()
        return self._client.set_card(observer, lines, target)

    def conclude(self, contents: Sequence[str]) -> list[str]:
        """Record ``contents`` as conclusions about the user, from this session; their ids."""
        observer, _ = self._perspective()
        return self._client.create_conclusions(
            observer, self.ident.user_peer, contents, self.session
        )

    def delete_conclusion(self, conclusion_id: str, *, among: int = 1000) -> bool:
        """Delete one conclusion about this user; False when ``conclusion_id`` is not one."""
        owned = {item.id for item in self.conclusions(limit=among)}
        if conclusion_id not in owned:
            return False
        self._client.delete_conclusion(conclusion_id)
        return True

    def has_message(self, metadata: dict[str, object]) -> bool:
        """Whether this session holds a message whose metadata has these values."""
        return bool(self._client.find_messages(self.session, {"metadata": metadata}, limit=1))

    def post(self, messages: Sequence[OutgoingMessage]) -> int:
        """Post messages of this scope's peers into this session (sent once)."""
        allowed = {self.ident.user_peer, self.ident.ai_peer}
        strangers = {m.peer_id for m in messages} - allowed
        if strangers:
            raise ValueError(f"messages from peers outside the scope: {sorted(strangers)}")
        return self._client.add_messages(self.session, messages)

    def set_user_metadata(self, metadata: dict[str, object]) -> None:
        self._client.set_peer_metadata(self.ident.user_peer, metadata)
