"""Sending a finished turn to Honcho: fences stripped, long texts chunked, stored once.

Idempotency has two layers. The SDK's write client never retries (``max_retries=0``), so
one call posts at most once. Across calls (a sync job retried after a lost response, or a
call the manager abandoned at its timeout that still completes), every message carries the
turn key ``<mnemogate session id>:<turn id>`` in its metadata, and before posting we ask
Honcho whether a message with that key exists; the whole turn goes in one request, which
the server stores all or nothing. Within one process, a turn being posted is held in a
set, so a retry waits for the first attempt instead of racing it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from gateway.security.fence import sanitize_recalled
from providers.base import ProviderContext, SyncedTurn
from providers.honcho.client import HonchoCallError, OutgoingMessage
from providers.honcho.identity import SessionState
from providers.honcho.scope import TenantScope

CONTINUED = "[continued in the next message]"
TURN_KEY = "mnemogate_turn"
MAX_MESSAGES_PER_TURN = 100  # Honcho's batch limit; one request per turn keeps it atomic
IN_FLIGHT_WAIT_S = 30.0
# A whole recalled block, should one have been echoed into a message.
_FENCED_BLOCK = re.compile(r"<\s*memory-context\s*>.*?<\s*/\s*memory-context\s*>", re.I | re.S)


def strip_fences(text: str) -> str:
    """``text`` without recalled-context blocks and without any fence tag or note."""
    return sanitize_recalled(_FENCED_BLOCK.sub("", text)).strip()


def chunk(text: str, size: int) -> list[str]:
    """``text`` in pieces of at most ``size`` characters, each but the last marked continued.

    Cuts fall on whitespace where there is some in the second half of a piece.
    """
    if len(text) <= size:
        return [text]
    room = size - len(CONTINUED) - 1
    pieces: list[str] = []
    rest = text
    while len(rest) > size:
        cut = rest.rfind(" ", room // 2, room + 1)
        if cut <= 0:
            cut = room
        pieces.append(rest[:cut].rstrip() + "\n" + CONTINUED)
        rest = rest[cut:].lstrip()
    pieces.append(rest)
    return pieces


def turn_key(turn: SyncedTurn) -> str:
    return f"{turn.session_id}:{turn.turn_id}"


def build_messages(
    state: SessionState, ctx: ProviderContext, turn: SyncedTurn, chunk_chars: int
) -> list[OutgoingMessage]:
    """The messages of ``turn``: the user's pieces, then the assistant's, with metadata."""
    key = turn_key(turn)
    sides = (
        ("user", state.ident.user_peer, strip_fences(turn.user)),
        ("assistant", state.ident.ai_peer, strip_fences(turn.assistant)),
    )
    messages: list[OutgoingMessage] = []
    for role, peer_id, text in sides:
        if not text:
            continue
        pieces = chunk(text, chunk_chars)[: MAX_MESSAGES_PER_TURN // 2]
        for index, piece in enumerate(pieces):
            metadata: dict[str, object] = {
                TURN_KEY: key,
                "turn_id": turn.turn_id,
                "role": role,
                "chunk": index,
                "chunks": len(pieces),
                "scope": ctx.memory_scope_key,
            }
            messages.append(OutgoingMessage(peer_id, piece, metadata, turn.timestamp))
    return messages


class TurnSync:
    """Stores turns exactly once per turn key; thread-safe."""

    def __init__(self, chunk_chars: int) -> None:
        self._chunk_chars = chunk_chars
        self._cond = threading.Condition()
        self._in_flight: set[tuple[str, str]] = set()

    def sync(self, scope: TenantScope, ctx: ProviderContext, turn: SyncedTurn) -> int:
        """Post the turn unless Honcho already has it; how many messages were posted."""
        messages = build_messages(scope.state, ctx, turn, self._chunk_chars)
        if not messages:
            return 0
        key = turn_key(turn)
        with self._claim(scope.session, key):
            if scope.has_message({TURN_KEY: key}):
                return 0
            return scope.post(messages)

    @contextmanager
    def _claim(self, session: str, key: str) -> Iterator[None]:
        slot = (session, key)
        with self._cond:
            free = self._cond.wait_for(lambda: slot not in self._in_flight, IN_FLIGHT_WAIT_S)
            if not free:
                raise HonchoCallError("add messages", f"turn {key} is still being sent")
            self._in_flight.add(slot)
        try:
            yield
        finally:
            with self._cond:
                self._in_flight.discard(slot)
                self._cond.notify_all()
