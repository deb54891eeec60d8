"""Red-team findings against the whole gateway on Discord and in the terminal."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.settings import Settings, load_settings
from tests.conftest import run_cli
from tests.fakes.discord_server import FakeDiscord, FakeGuild
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script
from tests.integration.gateway_harness import running_gateway

pytestmark = pytest.mark.integration

GUILD, GENERAL = 10, 11
ALICE = 501
HUGE = "\n".join(f"line {n}: " + "lorem ipsum " * 8 for n in range(20_000))


@pytest.fixture
def discord() -> Iterator[FakeDiscord]:
    guild = FakeGuild(GUILD, channels={GENERAL: "general"}, members={ALICE: "alice"})
    with FakeDiscord(guilds=[guild]) as server:
        yield server


@pytest.fixture
def settings(
    home: Path, fake_llm: FakeLLM, discord: FakeDiscord, redis_url: str, redis_prefix: str
) -> Settings:
    return load_settings(
        home=home,
        redis_url=redis_url,
        redis_prefix=redis_prefix,
        llm={"base_url": fake_llm.base_url, "model": "m", "max_retries": 0},
        jobs={"mode": "inline"},
        access={"allowed_users": [f"discord:{ALICE}"], "admins": []},
        discord={
            "bot_token": discord.token,
            "api_base_url": discord.api_base_url,
            "guild_ready_timeout_s": 0.05,
            "ready_timeout_s": 10,
        },
    )


async def test_a_two_megabyte_reply_is_capped_and_attached_on_discord(
    settings: Settings, discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    fake_llm.handler = Script([HUGE])
    async with running_gateway(settings):
        discord.push_dm(ALICE, "write me a novel")
        sent = await asyncio.to_thread(
            discord.wait_until_sent, lambda sent: any(m.attachments for m in sent)
        )
    texts = [m.content for m in sent if m.content]
    assert len(sent) <= 8  # was over 1,000 messages of 2,000 characters
    assert sum(len(t) for t in texts) <= settings.agent.max_reply_chars + 200
    assert any("reply.md" in t for t in texts)
    [attached] = [m for m in sent if m.attachments]
    assert attached.attachments == (("reply.md", HUGE.strip().encode("utf-8")),)


def test_the_console_cuts_an_over_long_reply_with_a_notice(home: Path, fake_llm: FakeLLM) -> None:
    fake_llm.handler = Script([HUGE])
    proc = run_cli(
        ["chat", "--user", "ana", "--jobs", "inline"],
        home=home,
        input_text="write me a novel\n",
        MNEMOGATE_LLM__BASE_URL=fake_llm.base_url,
        MNEMOGATE_LLM__MODEL="m",
        MNEMOGATE_AGENT__MAX_REPLY_CHARS="3000",
    )
    assert proc.returncode == 0, proc.stderr
    assert 2000 < len(proc.stdout) < 3400
    assert "Cut at" in proc.stdout and "sessions show" in proc.stdout
