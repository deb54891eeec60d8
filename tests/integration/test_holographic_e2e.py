"""Holographic end to end: real turns → model tool calls → facts on state.db → RQ recall job.

The gateway runs in queue mode with ``memory.provider = "holographic"``; the model is the
fake LLM over HTTP, which calls ``fact_store`` when scripted to; jobs run in an in-process
``SimpleWorker`` on real Redis. Facts live in the same state.db as everything else.
"""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path
from typing import Any

import pytest

from gateway.history.db import Database
from gateway.routing import Conversation
from gateway.security.fence import FENCE_CLOSE, FENCE_OPEN
from gateway.settings import Settings
from providers.registry import missing_requirements
from tests.conftest import run_cli
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script, tool_call
from tests.integration.background import make_settings, turns, work
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


@pytest.fixture
def settings(home: Path, redis_url: str, redis_prefix: str, fake_llm: FakeLLM) -> Settings:
    return make_settings(
        home,
        redis_url,
        redis_prefix,
        llm={"base_url": fake_llm.base_url, "model": "fake-model", "max_retries": 0},
        memory={"provider": "holographic"},
        recall={"first_turn_budget_s": 0.3},
        jobs={"mode": "queue"},
    )


def remember(content: str) -> dict[str, Any]:
    return tool_call("fact_store", {"action": "add", "content": content})


def facts_of(settings: Settings, tenant: str) -> list[str]:
    db = Database(settings.state_db)
    try:
        rows = db.read(
            lambda c: c.execute(
                "SELECT content FROM holo_facts WHERE tenant_id = ? ORDER BY id", (tenant,)
            ).fetchall()
        )
    finally:
        db.close()
    return [row[0] for row in rows]


def test_a_fact_is_recalled_in_the_next_turn_and_never_reaches_another_tenant(
    settings: Settings, fake_llm: FakeLLM
) -> None:
    fake_llm.handler = Script([remember("Alice keeps bees in Lyon, hive zebra-17"), "Noted."])
    assert turns(settings, ALICE, ["Remember: I keep bees in Lyon (hive zebra-17)"]) == ["Noted."]
    assert facts_of(settings, "console:alice") == ["Alice keeps bees in Lyon, hive zebra-17"]
    work(settings)  # the recall job reads the facts and caches the text for the next turn
    fake_llm.handler = Script(["They are fine."])
    turns(settings, ALICE, ["how are my bees doing?"])
    last = last_user_message(fake_llm)
    assert last.startswith("how are my bees doing?\n\n")
    assert last.count(FENCE_OPEN) == 1 and last.count(FENCE_CLOSE) == 1
    assert "Alice keeps bees in Lyon, hive zebra-17 [general, trust 0.50" in recalled(fake_llm)

    start = len(fake_llm.requests)
    fake_llm.handler = Script(
        [tool_call("fact_store", {"action": "search", "query": "bees zebra"}), "Nothing."],
        fallback=lambda body: "ok",
    )
    turns(settings, BOB, ["what do you know about bees and zebra-17?"])
    work(settings)
    turns(settings, BOB, ["and about hives?"])
    sent = requests_since(fake_llm, start)
    assert "Alice keeps bees" not in sent  # neither recall nor bob's own search showed it
    assert facts_of(settings, "console:bob") == []


def test_tools_work_through_a_turn(settings: Settings, fake_llm: FakeLLM) -> None:
    fake_llm.handler = Script(
        [
            {
                "tool_calls": [
                    ("fact_store", {"action": "add", "content": "Dana leads the Orion project"}),
                    ("fact_store", {"action": "add", "content": "Orion ships in March"}),
                ]
            },
            "Saved both.",
            tool_call("fact_store", {"action": "probe", "entity": "Orion"}),
            "Two facts about Orion.",
            tool_call("fact_feedback", {"action": "helpful", "fact_id": 1}),
            "Thanks.",
        ]
    )
    turns(settings, ALICE, ["Dana leads Orion; it ships in March"])
    assert [r["created"] for r in tool_results(fake_llm)] == [True, True]
    assert turns(settings, ALICE, ["what about Orion?"]) == ["Two facts about Orion."]
    (probe,) = tool_results(fake_llm)
    assert sorted(f["content"] for f in probe["facts"]) == [
        "Dana leads the Orion project",
        "Orion ships in March",
    ]
    turns(settings, ALICE, ["that helped"])
    assert tool_results(fake_llm) == [{"success": True, "fact_id": 1, "trust": 0.55}]


def test_a_failing_store_leaves_turns_answered(settings: Settings, fake_llm: FakeLLM) -> None:
    fake_llm.handler = Script([remember("Plays the cello"), "Noted."])
    turns(settings, ALICE, ["I play the cello"])
    db = Database(settings.state_db)
    db.write(lambda c: c.execute("ALTER TABLE holo_facts RENAME TO holo_facts_away"))
    try:
        fake_llm.handler = Script([remember("Also plays piano"), "Noted, I think."])
        assert turns(settings, ALICE, ["and the piano"]) == ["Noted, I think."]
        (answer,) = tool_results(fake_llm)
        assert answer["success"] is False  # the tool failed; the turn went on
        work(settings)  # the recall job fails inside the provider; nothing is cached
        fake_llm.handler = Script(["Hello."])
        assert turns(settings, ALICE, ["hi"]) == ["Hello."]
        assert FENCE_OPEN not in last_user_message(fake_llm)
    finally:
        db.write(lambda c: c.execute("ALTER TABLE holo_facts_away RENAME TO holo_facts"))
        db.close()
    assert facts_of(settings, "console:alice") == ["Plays the cello"]


def test_tenants_forget_erases_the_facts_of_every_scope(
    settings: Settings, fake_llm: FakeLLM
) -> None:
    fake_llm.handler = Script(
        [remember("Alice likes tea"), "ok", remember("Bob likes coffee"), "ok"]
    )
    turns(settings, ALICE, ["I like tea"])
    turns(settings, BOB, ["I like coffee"])
    done = forget(settings, "console:alice")
    assert done.returncode == 0, done.stderr
    assert "provider items: 1" in done.stdout
    assert facts_of(settings, "console:alice") == []
    assert facts_of(settings, "console:bob") == ["Bob likes coffee"]


def test_doctor_and_setup(home: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {
        "MNEMOGATE_LLM__BASE_URL": fake_llm.base_url,
        "MNEMOGATE_LLM__MODEL": "fake-model",
        "MNEMOGATE_MEMORY__PROVIDER": "holographic",
    }
    doctor = run_cli(["doctor"], home=home, **env)
    assert "✓ provider: holographic: numpy " in doctor.stdout, doctor.stdout + doctor.stderr
    assert "dimension 1024 (match threshold 0.110), 0 facts in the state store" in doctor.stdout
    setup = run_cli(["memory", "setup", "holographic"], home=home, input_text="2048\n\n4\n")
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert "missing" not in setup.stdout
    config = tomllib.loads((home / "config.toml").read_text())
    assert config["holographic"] == {"dimension": 2048, "recall_limit": 4, "min_trust": 0.3}
    assert config["memory"]["provider"] == "holographic"
    # Without numpy, setup names the extra to install.
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "numpy" else real(name, *a)
    )
    assert missing_requirements("holographic", Settings(home=home)) == [
        "Python packages missing (numpy): pip install 'mnemogate[holographic]'"
    ]
