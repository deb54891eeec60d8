"""Which platforms exist and how to build their adapters: one entry per platform.

Adapters are imported only when their platform is configured (a token is set), so a
Discord-only deployment never imports python-telegram-bot and vice versa.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gateway.platforms.base import Adapter, ButtonHandler, InboundHandler
from gateway.settings import Settings


@dataclass(frozen=True, slots=True)
class PlatformEntry:
    name: str
    adapter: str  # "module:Class"
    configured: Callable[[Settings], bool]
    takes_commands: bool = False  # registers the chat-command list with the platform


PLATFORMS: tuple[PlatformEntry, ...] = (
    PlatformEntry(
        "telegram",
        "gateway.platforms.telegram.adapter:TelegramAdapter",
        lambda s: s.telegram.bot_token is not None,
        takes_commands=True,
    ),
    PlatformEntry(
        "discord",
        "gateway.platforms.discord.adapter:DiscordAdapter",
        lambda s: s.discord.bot_token is not None,
    ),
)


def configured_platforms(settings: Settings) -> list[PlatformEntry]:
    return [entry for entry in PLATFORMS if entry.configured(settings)]


def build_adapter(
    entry: PlatformEntry,
    settings: Settings,
    on_message: InboundHandler,
    on_button: ButtonHandler,
    commands: Sequence[tuple[str, str]],
) -> Adapter:
    module_name, _, class_name = entry.adapter.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    if not (isinstance(cls, type) and issubclass(cls, Adapter)):
        raise TypeError(f"{entry.adapter} is not a platform Adapter")
    factory: Callable[..., Adapter] = cls
    if entry.takes_commands:
        return factory(settings, on_message, on_button, commands=commands)
    return factory(settings, on_message, on_button)
