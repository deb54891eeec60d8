"""What happens after a turn (titles, review, sync) — an interface the background plane fills."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from gateway.history.store import SessionRecord
from gateway.routing import Conversation

if TYPE_CHECKING:
    from gateway.memory.store import WriteResult


@dataclass(frozen=True, slots=True)
class TurnEvent:
    """A finished, persisted turn."""

    conversation: Conversation
    session: SessionRecord  # as it was when the turn started
    user_text: str
    reply: str
    memory_writes: list[WriteResult]
    outbox_ids: list[int]  # follow-up work committed with the turn


class TurnHooks(Protocol):
    """Called after each persisted turn; must return quickly (schedule, don't do, slow work)."""

    async def after_turn(self, event: TurnEvent) -> None: ...

    async def schedule(self, outbox_ids: list[int]) -> None:
        """Start committed outbox rows (e.g. a session's end) without waiting for them."""

    async def drain(self) -> None:
        """Wait for work scheduled in this process (used before a console exits)."""


class NoHooks:
    async def after_turn(self, event: TurnEvent) -> None:
        return None

    async def schedule(self, outbox_ids: list[int]) -> None:
        return None

    async def drain(self) -> None:
        return None
