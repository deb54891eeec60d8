"""``mnemogate run`` as a real process: connects, answers, stops cleanly on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, cli_env
from tests.fakes.discord_server import FakeDiscord, FakeGuild
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script

pytestmark = pytest.mark.integration
ALICE = 501


@pytest.fixture
def discord() -> Iterator[FakeDiscord]:
    with FakeDiscord(guilds=[FakeGuild(10, channels={11: "general"})]) as server:
        yield server


def test_run_serves_until_sigterm(
    home: Path, discord: FakeDiscord, fake_llm: FakeLLM, redis_url: str, redis_prefix: str
) -> None:
    fake_llm.handler = Script(["pong"])
    env = cli_env(
        home,
        DISCORD_BOT_TOKEN=discord.token,
        MNEMOGATE_DISCORD__API_BASE_URL=discord.api_base_url,
        MNEMOGATE_DISCORD__GUILD_READY_TIMEOUT_S="0.05",
        MNEMOGATE_LLM__BASE_URL=fake_llm.base_url,
        MNEMOGATE_LLM__MODEL="m",
        MNEMOGATE_REDIS_URL=redis_url,
        MNEMOGATE_REDIS_PREFIX=redis_prefix,
        MNEMOGATE_ACCESS__ALLOWED_USERS=f"discord:{ALICE}",
        MNEMOGATE_JOBS__MODE="inline",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "run"],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not discord.identifies and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)  # the process is starting; nothing to await across processes
        assert discord.identifies, "the gateway never connected"
        reply = None
        while reply is None and time.monotonic() < deadline:
            before = len(discord.sent)
            discord.push_dm(ALICE, "ping")  # the first push may race the READY handling
            try:
                reply = discord.wait_for_sent(before + 1, timeout=3)[-1]
            except TimeoutError:
                continue
        assert reply is not None and reply.content == "pong"
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
