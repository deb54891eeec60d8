"""A test provider that hangs (or fails) in every gateway-side call until released."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Self

from gateway.settings import Settings
from providers.base import MemoryWriteEvent, ProviderContext, RecallQuery, TurnStart
from providers.reference import ReferenceProvider
from tests.plugins import write_entry_point

RELEASE = threading.Event()


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
