"""Test providers: one that hangs (or fails) in every gateway-side call until released, and
one whose ``on_session_end`` announces itself and then waits for the test."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Self

from gateway.settings import Settings
from providers.base import (
    MemoryWriteEvent,
    ProviderContext,
    RecallQuery,
    SessionEnd,
    TurnStart,
)
from providers.reference import ReferenceProvider
from tests.plugins import write_entry_point

RELEASE = threading.Event()
END_ENTERED = threading.Event()  # on_session_end was called (in any thread of this process)
END_RELEASE = threading.Event()  # … and may go on
END_REASONS: list[str] = []


class SlowProvider(ReferenceProvider):
    name = "slow"

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls(settings.home)

    def on_turn_start(self, ctx: ProviderContext, turn: TurnStart) -> None:
        RELEASE.wait(30)

    def recall(self, ctx: ProviderContext, query: RecallQuery) -> str:
        RELEASE.wait(30)
        raise RuntimeError("recall backend is down")

    def on_memory_write(self, ctx: ProviderContext, event: MemoryWriteEvent) -> None:
        raise RuntimeError("memory backend is down")


def install(directory: Path) -> Path:
    """Declare this provider as ``slow`` through a real entry point under ``directory``."""
    return write_entry_point(directory, "slow", "tests.integration.slow_provider:SlowProvider")


class SlowEndProvider(ReferenceProvider):
    """The reference provider, but ``on_session_end`` blocks until the test releases it."""

    name = "slow-end"

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls(settings.home)

    def on_session_end(self, ctx: ProviderContext, end: SessionEnd) -> None:
        END_ENTERED.set()
        if not END_RELEASE.wait(30):
            raise RuntimeError("the test never released on_session_end")
        END_REASONS.append(end.reason)
        super().on_session_end(ctx, end)


def install_slow_end(directory: Path) -> Path:
    """Declare :class:`SlowEndProvider` as ``slow-end`` through a real entry point."""
    return write_entry_point(
        directory, "slow-end", "tests.integration.slow_provider:SlowEndProvider"
    )
