"""A provider with instant, no-op hooks, so a benchmark measures the gateway, not a backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from gateway.settings import Settings
from providers.base import MemoryProvider, ProviderContext, RecallQuery


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
    """A dist-info declaring ``bench`` in ``mnemogate.providers``; put ``directory`` on sys.path."""
    info = directory / "mnemogate_bench-0.1.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: mnemogate-bench\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[mnemogate.providers]\nbench = tests.benchmarks.bench_provider:BenchProvider\n",
        encoding="utf-8",
    )
    return directory
