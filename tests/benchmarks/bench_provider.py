"""A provider with instant, no-op hooks, so a benchmark measures the gateway, not a backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from gateway.settings import Settings
from providers.base import MemoryProvider, ProviderContext, RecallQuery
from tests.plugins import write_entry_point


class BenchProvider(MemoryProvider):
    name = "bench"

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls()

    def is_available(self) -> bool:
        return True

    def initialize(self, ctx: ProviderContext) -> None:
        return None

    def tool_schemas(self) -> list[dict[str, Any]]:
        return []

    def recall(self, ctx: ProviderContext, query: RecallQuery) -> str:
        return f"- {ctx.namespace} recently asked about: {query.text[:60]}"


def install(directory: Path) -> Path:
    """Declare this provider as ``bench`` through a real entry point under ``directory``."""
    return write_entry_point(directory, "bench", "tests.benchmarks.bench_provider:BenchProvider")
