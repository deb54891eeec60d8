"""The whole gateway on Telegram: the real python-telegram-bot, the fake Bot API, the fake LLM."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.platforms.telegram.markup import visible_length
from gateway.service import UNSUPPORTED
from gateway.settings import Settings, load_settings
from tests.conftest import REPO, cli_env
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script, chat_requests, tool_call
from tests.fakes.telegram_server import TOKEN, FakeTelegram
from tests.integration.gateway_harness import running_gateway

pytestmark = pytest.mark.integration

ALICE, BOB = 1001, 1002
GROUP = -100777


@pytest.fixture
def tg() -> Iterator[FakeTelegram]:
    with FakeTelegram() as fake:
        yield fake


def env_settings(tg: FakeTelegram, llm: FakeLLM, redis_url: str, prefix: str) -> dict[str, str]:
    return {
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "MNEMOGATE_TELEGRAM__BASE_URL": tg.base_url,
        "MNEMOGATE_TELEGRAM__POLL_TIMEOUT_S": "2",
        "MNEMOGATE_LLM__BASE_URL": llm.base_url,
        "MNEMOGATE_LLM__MODEL": "m",
        "MNEMOGATE_LLM__MAX_RETRIES": "0",
        "MNEMOGATE_REDIS_URL": redis_url,
        "MNEMOGATE_REDIS_PREFIX": prefix,
        "MNEMOGATE_ACCESS__ALLOWED_USERS": f"telegram:{ALICE},telegram:{BOB}",
        "MNEMOGATE_JOBS__MODE": "inline",
    }


@pytest.fixture
def settings(
    home: Path, tg: FakeTelegram, fake_llm: FakeLLM, redis_url: str, redis_prefix: str
) -> Settings:
    return load_settings(
        home=home,
        redis_url=redis_url,
        redis_prefix=redis_prefix,
        llm={"base_url": fake_llm.base_url, "model": "m", "max_retries": 0},
        jobs={"mode": "inline"},
        access={"allowed_users": [f"telegram:{ALICE}", f"telegram:{BOB}"]},
        telegram={"bot_token": TOKEN, "base_url": tg.base_url, "poll_timeout_s": 2},
        agent={"max_reply_chars": 50_000},  # the split test sends more than the default cap
    )


async def sent(tg: FakeTelegram, n: int, method: str = "sendMessage") -> list[Any]:
    return await asyncio.to_thread(tg.wait_for_sent, n, 10.0, method=method)


async def test_dm_and_group_replies_and_private_memory(
    settings: Settings, tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_llm.handler = Script(
        [
            tool_call(
                "memory", {"action": "add", "target": "user", "content": "Allergic to peanuts"}
            ),
            "Noted.",
            "Hi Bob.",
            "Group answer for Alice.",
        ]
    )
    async with running_gateway(settings):
        tg.push_message(ALICE, ALICE, "I am allergic to peanuts")
        await sent(tg, 1)
        tg.push_message(BOB, BOB, "hello", first_name="Bob", username="bob")
        await sent(tg, 2)
        tg.push_message(ALICE, GROUP, "lunch ideas?", chat_type="supergroup")  # not addressed
        tg.push_message(ALICE, GROUP, "@mnemo_test_bot lunch ideas?", chat_type="supergroup")
        messages = await sent(tg, 3)
    chats = [(m.params["chat_id"], m.params["text"]) for m in messages]
    assert chats == [(ALICE, "Noted."), (BOB, "Hi Bob."), (GROUP, "Group answer for Alice.")]
    group_prompt = chat_requests(fake_llm.requests)[-1]["messages"][0]["content"]
    assert "peanuts" not in group_prompt
    assert "peanuts" not in str(chat_requests(fake_llm.requests)[-2])  # Bob's turn
    assert all(m.params["link_preview_options"] == {"is_disabled": True} for m in messages)
    assert tg.calls("sendChatAction")


async def test_long_reply_split_and_markup_fallback(
    settings: Settings, tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    long_reply = (
        "**Plan**\n\n```sh\n" + "echo 😀 step\n" * 700 + "```\n" + "done " * 900 + "THE-END"
    )
    assert len(long_reply) > 10_000
    fake_llm.handler = Script([long_reply, "*plain* fallback"])
    async with running_gateway(settings):
        tg.push_message(ALICE, ALICE, "long please")
        await asyncio.to_thread(
            tg.wait_until, lambda: any("THE-END" in c.params.get("text", "") for c in tg._calls)
        )
        chunks = [c.params["text"] for c in tg.calls("sendMessage")]
        tg.reject_markup_next()
        tg.push_message(ALICE, ALICE, "short please")
        after = await sent(tg, len(chunks) + 1)
        tg.push_message(ALICE, ALICE, None, photo=True)
        unsupported = await sent(tg, len(chunks) + 2)
    # Telegram counts its 4096-unit limit on the text after parsing the HTML.
    assert len(chunks) >= 3 and all(visible_length(c) <= 4096 for c in chunks)
    assert all(c.count("<pre") == c.count("</pre>") for c in chunks)
    assert after[-1].params.get("parse_mode") is None  # resent as plain text
    assert "fallback" in after[-1].params["text"]
    assert unsupported[-1].params["text"] == UNSUPPORTED


async def test_staged_write_approved_with_inline_button(
    settings: Settings, tg: FakeTelegram, fake_llm: FakeLLM
) -> None:
    fake_llm.handler = Script(
        [
            tool_call("memory", {"action": "add", "target": "user", "content": "Vegetarian"}),
            "I'll remember once you approve.",
        ]
    )
    user_md = settings.home / "tenants" / f"telegram-{ALICE}" / "memories" / "USER.md"
    async with running_gateway(settings):
        tg.push_message(ALICE, ALICE, "/memory approval on")
        await sent(tg, 1)
        tg.push_message(ALICE, ALICE, "I'm vegetarian")
        messages = await sent(tg, 3)
        keyboard = messages[-1].params["reply_markup"]["inline_keyboard"][0]
        approve = next(b["callback_data"] for b in keyboard if b["text"] == "Approve")
        assert not user_md.exists() or "Vegetarian" not in user_md.read_text(encoding="utf-8")
        tg.push_callback(BOB, ALICE, approve)  # someone else's press changes nothing
        await sent(tg, 1, method="answerCallbackQuery")
        assert not user_md.exists() or "Vegetarian" not in user_md.read_text(encoding="utf-8")
        tg.push_callback(ALICE, ALICE, approve)
        answers = await sent(tg, 2, method="answerCallbackQuery")
    assert answers[-1].params.get("text") == "Saved to memory."
    assert "Vegetarian" in user_md.read_text(encoding="utf-8")


def test_gateway_killed_mid_turn_answers_once_after_restart(
    home: Path, tg: FakeTelegram, fake_llm: FakeLLM, redis_url: str, redis_prefix: str
) -> None:
    env = cli_env(home, **env_settings(tg, fake_llm, redis_url, redis_prefix))

    def start() -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "gateway.cli", "run"],
            env=env,
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    fake_llm.latency_s = 60  # the first attempt hangs in the model
    fake_llm.handler = Script(fallback=lambda body: "the one and only answer")
    first = start()
    try:
        update_id = tg.push_message(ALICE, ALICE, "are you there?")
        fake_llm.wait_for_requests(1, timeout=30)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    finally:
        if first.poll() is None:
            first.kill()
        first.communicate()
    assert tg.confirmed_offset <= update_id  # never acknowledged
    assert tg.calls("sendMessage") == []
    fake_llm.latency_s = 0
    second = start()
    try:
        tg.wait_for_sent(1, timeout=30)
        tg.wait_until(lambda: tg._confirmed > update_id, timeout=30)
        tg.push_raw({"update_id": update_id, "message": {}})  # a stray duplicate id
        second.send_signal(signal.SIGTERM)
        _out, err = second.communicate(timeout=30)
    finally:
        if second.poll() is None:
            second.kill()
            second.communicate()
    replies = [c.params["text"] for c in tg.calls("sendMessage")]
    assert replies == ["the one and only answer"], err
    assert second.returncode == 0, err
