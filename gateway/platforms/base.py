"""The platform adapter interface and the neutral message model.

An adapter translates platform payloads into :class:`InboundMessage` (a pure function, golden-
tested), hands them to the gateway's handler, and sends :class:`OutboundMessage` chunks back.
Lifecycle: ``async with adapter:`` connects (``start``) and disconnects (``stop``); the
gateway's :class:`InboundHandler` is given at construction. Adding a platform is one package
under ``gateway/platforms/`` plus one entry in ``gateway/platforms/registry.py``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import ClassVar, Literal

from gateway.routing import ChatType, Conversation
from gateway.tenants import TenantId

ContentKind = Literal["text", "photo", "document", "voice", "sticker", "other"]
# Callback data of our buttons starts with this (``mem:approve:<id>``, ``mem:reject:<id>``).
BUTTON_PREFIX = "mem:"


@dataclass(frozen=True, slots=True)
class InboundMessage:
    """One user message from any platform, in our terms."""

    platform: str
    update_id: str  # unique per platform update; duplicates are handled once
    user_id: str
    chat_id: str
    chat_type: ChatType
    message_id: str
    text: str  # "" when the message has no text (see ``kind``)
    kind: ContentKind = "text"
    display_name: str | None = None
    thread_id: str | None = None
    addressed: bool = False  # bot mentioned, replied to, or commanded (groups)
    is_bot: bool = False

    @property
    def tenant(self) -> TenantId:
        return TenantId.of(self.platform, self.user_id)

    def conversation(self) -> Conversation:
        return Conversation(
            self.tenant,
            chat_id=self.chat_id,
            chat_type=self.chat_type,
            thread_id=self.thread_id,
            display_name=self.display_name,
        )


@dataclass(frozen=True, slots=True)
class OutboundMessage:
    """Text (already split to the platform's limit) or a file for one chat."""

    chat_id: str
    text: str = ""
    thread_id: str | None = None
    reply_to_message_id: str | None = None
    document: tuple[str, bytes] | None = None  # (filename, data)
    buttons: tuple[tuple[str, str], ...] = field(default=())  # (label, callback data)


@dataclass(frozen=True, slots=True)
class ButtonPress:
    """A press on an inline button (Telegram approve/reject of staged memory writes)."""

    platform: str
    user_id: str
    chat_id: str
    data: str
    display_name: str | None = None

    @property
    def tenant(self) -> TenantId:
        return TenantId.of(self.platform, self.user_id)


InboundHandler = Callable[[InboundMessage], Awaitable[None]]
ButtonHandler = Callable[[ButtonPress], Awaitable[str | None]]


class Adapter(ABC):
    """A connected platform. Implementations live in ``gateway/platforms/<name>/``."""

    platform: ClassVar[str]
    max_message_chars: ClassVar[int]

    @abstractmethod
    async def start(self) -> None:
        """Connect and begin delivering inbound messages to the handler."""

    @abstractmethod
    async def stop(self) -> None:
        """Stop receiving, finish in-flight sends, disconnect."""

    @abstractmethod
    async def send(self, message: OutboundMessage) -> str | None:
        """Send one chunk or file; returns the platform message id when known."""

    @abstractmethod
    def typing(self, chat_id: str, thread_id: str | None) -> TypingContext:
        """An async context manager that shows "typing…" while the reply is generated."""

    def split(self, text: str) -> list[str]:
        """Neutral text → chunks within this platform's limit (code fences kept intact)."""
        from gateway.platforms.chunking import split_message

        return split_message(text, self.max_message_chars, measure=self.measure)

    @staticmethod
    def measure(text: str) -> int:
        return len(text)

    async def __aenter__(self) -> Adapter:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()


class TypingContext(ABC):
    @abstractmethod
    async def __aenter__(self) -> None: ...

    @abstractmethod
    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
