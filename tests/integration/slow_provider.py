"""A test provider that hangs (or fails) in every gateway-side call until released."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Self

from gateway.settings import Settings
from providers.base import MemoryWriteEvent, ProviderContext, RecallQuery, TurnStart
from providers.reference import ReferenceProvider

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
    """A dist-info declaring ``slow`` in ``mnemogate.providers`` (put ``directory`` on sys.path)."""
    info = directory / "mnemogate_slow_test-0.1.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: mnemogate-slow-test\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[mnemogate.providers]\nslow = tests.integration.slow_provider:SlowProvider\n",
        encoding="utf-8",
    )
    return directory
