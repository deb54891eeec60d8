"""Red-team findings against the whole gateway on Telegram: forged buttons, strangers, size."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.settings import Settings, load_settings
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script
from tests.fakes.telegram_server import TOKEN, FakeTelegram
from tests.integration.gateway_harness import running_gateway

pytestmark = pytest.mark.integration

ALICE, STRANGER = 1001, 6666


@pytest.fixture
def tg() -> Iterator[FakeTelegram]:
    with FakeTelegram() as fake:
        yield fake


def settings_for(
    home: Path, tg: FakeTelegram, llm: FakeLLM, redis_url: str, prefix: str, **extra: Any
) -> Settings:
    return load_settings(
        home=home,
        redis_url=redis_url,
        redis_prefix=prefix,
        llm={"base_url": llm.base_url, "model": "m", "max_retries": 0},
        jobs={"mode": "inline"},
        access={"allowed_users": [f"telegram:{ALICE}"], "messages_per_minute": 5},
        telegram={"bot_token": TOKEN, "base_url": tg.base_url, "poll_timeout_s": 2},
        **extra,
    )


@pytest.fixture
def settings(
    home: Path, tg: FakeTelegram, fake_llm: FakeLLM, redis_url: str, redis_prefix: str
) -> Settings:
    return settings_for(home, tg, fake_llm, redis_url, redis_prefix)


async def sent(tg: FakeTelegram, n: int, method: str = "sendMessage") -> list[Any]:
    return await asyncio.to_thread(tg.wait_for_sent, n, 10.0, method=method)


async def test_forged_button_ids_are_one_warning_not_a_traceback(
    settings: Settings, tg: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    forged = ["mem:approve:99999999999999999999999", "mem:reject:²", "mem:approve:-1", "x:1"]
    caplog.set_level(logging.WARNING)
    async with running_gateway(settings):
        for data in forged:
            tg.push_callback(ALICE, ALICE, data)
        answers = await sent(tg, len(forged), method="answerCallbackQuery")
    assert all(a.params.get("text") is None for a in answers)
    problems = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert problems == []
    warnings = [r.getMessage() for r in caplog.records if "button press" in r.getMessage()]
    assert len(warnings) == len(forged)


async def test_a_stranger_flood_gets_one_pairing_reply_per_window(
    settings: Settings, tg: FakeTelegram
) -> None:
    async with running_gateway(settings):
        last = 0
        for n in range(40):
            last = tg.push_message(STRANGER, STRANGER, f"let me in {n}")
        await asyncio.to_thread(tg.wait_until, lambda: tg.confirmed_offset > last)
    replies = [c for c in tg.calls("sendMessage") if c.params["chat_id"] == STRANGER]
    assert len(replies) == 1
    assert "pairing code" in replies[0].params["text"]


async def test_a_two_megabyte_reply_is_capped_and_attached_on_telegram(
    settings: Settings, tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    huge = "\n".join(f"line {n}: " + "lorem ipsum " * 8 for n in range(20_000))
    assert len(huge) > 2_000_000
    fake_llm.handler = Script([huge])
    async with running_gateway(settings):
        tg.push_message(ALICE, ALICE, "write me a novel")
        [document] = await sent(tg, 1, method="sendDocument")
        texts = [c.params["text"] for c in tg.calls("sendMessage")]
    limit = settings.agent.max_reply_chars
    assert 1 <= len(texts) <= 5  # was 489 messages
    assert sum(len(t) for t in texts) <= limit + 200
    assert "reply.md" in texts[-1] and "Cut at" in texts[-1]
    assert document.files["document"] == ("reply.md", huge.strip().encode("utf-8"))
