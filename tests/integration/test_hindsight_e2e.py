"""Hindsight end to end: real turns → outbox → Redis → RQ worker → HindsightProvider → fake.

The gateway runs in queue mode with ``memory.provider = "hindsight"``; the model is the fake
LLM over HTTP; jobs run in an in-process ``SimpleWorker``; the provider talks to the fake
Hindsight through the real ``hindsight-client``. What the fake "extracts" from a turn is the
user's line itself, so recall can be traced to the turn it came from.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.app import App
from gateway.outbox import Relay
from gateway.routing import Conversation
from gateway.security.fence import FENCE_CLOSE, FENCE_OPEN
from gateway.settings import Settings
from providers.scoping import backend_key
from tests.conftest import run_cli
from tests.fakes.hindsight_server import FakeHindsight
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script, tool_call
from tests.integration.background import make_settings, turns, work
from tests.integration.conftest import free_port
from tests.integration.provider_e2e import (
    forget,
    last_user_message,
    recalled,
    requests_since,
    tool_results,
)

pytestmark = pytest.mark.integration

ALICE = Conversation.console("alice")
BOB = Conversation.console("bob")
ALICE_BANK = backend_key("console-alice")
BOB_BANK = backend_key("console-bob")
Build = Callable[..., Settings]


@pytest.fixture
def fake() -> Iterator[FakeHindsight]:
    with FakeHindsight(port=free_port()) as server:  # a fixed port: the outage test restarts it
        yield server


@pytest.fixture
def settings_for(
    home: Path, redis_url: str, redis_prefix: str, fake_llm: FakeLLM, fake: FakeHindsight
) -> Build:
    def build(**overrides: dict[str, Any]) -> Settings:
        values: dict[str, dict[str, Any]] = {
            "llm": {"base_url": fake_llm.base_url, "model": "fake-model", "max_retries": 0},
            "memory": {"provider": "hindsight"},
            "hindsight": {"base_url": fake.base_url, "recall_timeout_s": 2.0},
            "recall": {"first_turn_budget_s": 0.3},
            "jobs": {"mode": "queue"},
        }
        for key, value in overrides.items():
            values[key] = {**values.get(key, {}), **value}
        return make_settings(home, redis_url, redis_prefix, **values)

    return build


def test_a_turn_is_recalled_in_the_next_turn_and_never_reaches_another_tenant(
    settings_for: Build, fake: FakeHindsight, fake_llm: FakeLLM
) -> None:
    settings = settings_for()
    fake_llm.handler = Script(["Noted.", "They are fine."])
    turns(settings, ALICE, ["I keep bees in Lyon, hive zebra-17"])
    assert FENCE_OPEN not in last_user_message(fake_llm)  # cold: nothing known yet
    work(settings)  # sync retains the turn; recall finds it and caches the text
    assert fake.texts(ALICE_BANK, "world") == ["I keep bees in Lyon, hive zebra-17"]
    turns(settings, ALICE, ["how are my bees doing?"])
    last = last_user_message(fake_llm)
    assert last.count(FENCE_OPEN) == 1 and last.count(FENCE_CLOSE) == 1
    memory = recalled(fake_llm)
    assert "## What Hindsight remembers about this user" in memory
    assert memory.count("I keep bees in Lyon, hive zebra-17") == 1  # observation deduplicated

    start = len(fake_llm.requests)
    fake_llm.handler = Script(
        [tool_call("hindsight_recall", {"query": "bees hive"}), "Nothing."],
        fallback=lambda body: "ok",
    )
    turns(settings, BOB, ["do you know about my bees and hive?"])
    assert tool_results(fake_llm) == [
        {"success": True, "memories": [], "note": "nothing remembered about this yet"}
    ]
    work(settings)
    turns(settings, BOB, ["what about my bees?"])
    assert "zebra-17" not in requests_since(fake_llm, start)
    assert set(fake.banks) == {ALICE_BANK, BOB_BANK}
    assert all("zebra" not in text for text in fake.texts(BOB_BANK))


def test_tools_work_through_a_turn(
    settings_for: Build, fake: FakeHindsight, fake_llm: FakeLLM
) -> None:
    settings = settings_for()
    fake_llm.handler = Script(
        [
            tool_call("hindsight_retain", {"content": "Alice plays the cello"}),
            "Stored.",
            {
                "tool_calls": [
                    ("hindsight_recall", {"query": "cello"}),
                    ("hindsight_reflect", {"query": "which instrument, the cello?"}),
                ]
            },
            "You play the cello.",
        ]
    )
    turns(settings, ALICE, ["remember that I play the cello"])
    assert tool_results(fake_llm) == [{"success": True, "stored": True}]
    assert turns(settings, ALICE, ["what do I play?"]) == ["You play the cello."]
    recall, reflect = tool_results(fake_llm)
    assert recall["memories"] == [{"text": "Alice plays the cello", "type": "world"}]
    assert reflect == {"success": True, "answer": "From memory: Alice plays the cello"}


def test_outage_keeps_turns_answered_and_syncs_once_when_back(
    settings_for: Build, fake: FakeHindsight, fake_llm: FakeLLM
) -> None:
    settings = settings_for(jobs={"retries": 1})
    fake_llm.handler = Script(["r1", "r2"])
    fake.stop()
    assert turns(settings, ALICE, ["m1 bees", "m2 honey"]) == ["r1", "r2"]
    work(settings)  # each sync and recall job fails (twice); the turns were answered
    fake.start()  # Hindsight is back, on the same port

    async def relay_now() -> int:
        async with App(settings) as app:
            return Relay(app.db, app.queues, settings.jobs, redeliver_after_s=0).run_once()

    assert asyncio.run(relay_now()) >= 2
    work(settings)
    assert fake.texts(ALICE_BANK, "world") == ["m1 bees", "m2 honey"]
    assert len(fake.calls("POST", "/memories")) == 2  # each turn written once


def test_tenants_forget_deletes_the_banks_or_says_what_it_could_not(
    settings_for: Build, fake: FakeHindsight, fake_llm: FakeLLM
) -> None:
    settings = settings_for()
    fake_llm.handler = Script(fallback=lambda body: "ok")
    turns(settings, ALICE, ["alice likes tea"])
    turns(settings, BOB, ["bob likes coffee"])
    work(settings)
    env = {"HINDSIGHT_API_URL": fake.base_url, "MNEMOGATE_HINDSIGHT__RETAIN_TIMEOUT_S": "2"}
    fake.stop()
    down = forget(settings, "console:alice", **env)
    assert down.returncode == 3, down.stdout + down.stderr
    assert f"hindsight bank {ALICE_BANK}" in down.stderr
    fake.start()
    assert ALICE_BANK in fake.banks  # nothing was lost on the way: the retry can finish
    done = forget(settings, "console:alice", **env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert set(fake.banks) == {BOB_BANK}


def test_setup_names_what_is_missing_and_doctor_checks_health(
    home: Path, fake: FakeHindsight, fake_llm: FakeLLM
) -> None:
    setup = run_cli(["memory", "setup", "hindsight"], home=home, input_text="\n\n\n")
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert "missing: environment variable HINDSIGHT_API_URL is not set" in setup.stdout
    assert "missing: environment variable HINDSIGHT_API_KEY is not set" in setup.stdout
    assert "secret: set HINDSIGHT_API_KEY in the environment" in setup.stdout
    env = {
        "MNEMOGATE_LLM__BASE_URL": fake_llm.base_url,
        "MNEMOGATE_LLM__MODEL": "fake-model",
        "MNEMOGATE_MEMORY__PROVIDER": "hindsight",
        "HINDSIGHT_API_URL": fake.base_url,
    }
    good = run_cli(["doctor"], home=home, **env)
    assert f"✓ provider: hindsight: server {fake.base_url} reachable (API 0.4.0-fake)" in (
        good.stdout
    ), good.stdout + good.stderr
    fake.stop()
    bad = run_cli(["doctor"], home=home, **env)
    assert "✗ provider: hindsight: HindsightCallError: hindsight version:" in bad.stdout
    assert bad.returncode == 1
