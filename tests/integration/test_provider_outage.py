"""A provider that hangs or fails never holds a reply past the recall budget."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.app import App
from gateway.routing import Conversation
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script, tool_call
from tests.integration import slow_provider
from tests.integration.background import make_settings

pytestmark = pytest.mark.integration
ALICE = Conversation.console("alice")


@pytest.fixture
def slow_installed(tmp_path: Path) -> Iterator[None]:
    directory = slow_provider.install(tmp_path / "plugins")
    sys.path.insert(0, str(directory))
    slow_provider.RELEASE.clear()
    try:
        yield
    finally:
        slow_provider.RELEASE.set()
        sys.path.remove(str(directory))


async def test_hanging_provider_does_not_delay_the_reply(
    slow_installed: None, home: Path, redis_url: str, redis_prefix: str, fake_llm: FakeLLM
) -> None:
    budget = 0.3
    settings = make_settings(
        home,
        redis_url,
        redis_prefix,
        llm={"base_url": fake_llm.base_url, "model": "m", "max_retries": 0},
        memory={"provider": "slow"},
        recall={"first_turn_budget_s": budget, "provider_timeout_s": 2.0},
        jobs={"mode": "queue"},
    )
    fake_llm.handler = Script(
        [
            tool_call("memory", {"action": "add", "target": "user", "content": "Likes tea"}),
            "Noted.",
        ]
    )
    async with App(settings) as app:
        assert app.providers.provider is not None
        started = time.monotonic()
        result = await app.agent.run_turn(ALICE, "I like tea")
        elapsed = time.monotonic() - started
        assert result.reply == "Noted."
        assert elapsed < budget + 0.8, elapsed  # a waited hook would take 2 s
        await app.agent.drain_hooks()
        stats: Any = app.providers.stats
        assert stats.get("slow", "on_turn_start").timeouts == 1
        assert stats.get("slow", "on_memory_write").errors == 1
