"""No tenant's Honcho memory reaches another tenant's model, end to end.

The fake Honcho's dialectic searches every session of the asking peer, as the real one
does, so a peer shared by two tenants' sessions would carry one tenant's words into the
other's answers. Carol tells the bot secrets; Bob then asks for "his" secrets — through
the automatic recall (computed by an RQ worker into Redis) and through every honcho_* tool
the model can call. Nothing of Carol's may appear in anything Bob's model receives.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.routing import Conversation
from gateway.security.fence import FENCE_OPEN
from tests.fakes.honcho_server import FakeHoncho
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script, chat_requests
from tests.integration.background import turns, work
from tests.integration.honcho_harness import honcho_settings, world

pytestmark = pytest.mark.integration

CAROL = Conversation.console("carol")
BOB = Conversation.console("bob")
SECRET = "My secret code word is ZEBRA42 and my bank PIN is 9931"
QUESTION = "What is my secret code word and bank PIN?"
CAROLS = ("ZEBRA42", "9931")


@pytest.fixture
def fake() -> Iterator[FakeHoncho]:
    with FakeHoncho() as server:
        yield server


def test_carols_secrets_never_reach_bobs_model(
    home: Path, redis_url: str, redis_prefix: str, fake_llm: FakeLLM, fake: FakeHoncho
) -> None:
    settings = honcho_settings(home, redis_url, redis_prefix, fake_llm, fake)
    calls = [
        ("honcho_reasoning", {"query": QUESTION, "reasoning_level": "max"}),
        ("honcho_context", {"query": "secret code word bank PIN"}),
        ("honcho_search", {"query": "secret code word bank PIN", "limit": 20}),
        ("honcho_profile", {"action": "read"}),
    ]
    fake_llm.handler = Script(
        ["Noted, Carol.", "I don't know yet.", {"tool_calls": calls}, "I don't know them."],
        fallback=lambda body: "ok",
    )
    turns(settings, CAROL, [SECRET])
    work(settings)  # Carol's turn reaches Honcho and is derived
    assert any("ZEBRA42" in m.content for m in world(fake).messages)
    carols = len(chat_requests(fake_llm.requests))
    turns(settings, BOB, [QUESTION])  # cold: nothing known about Bob yet
    work(settings)  # Bob's turn synced; his recall computed for exactly this question
    assert turns(settings, BOB, [QUESTION]) == ["I don't know them."]

    bobs = chat_requests(fake_llm.requests)[carols:]
    asked = [m["content"] for m in bobs[-1]["messages"] if m["role"] == "user"][-1]
    assert asked.startswith(QUESTION) and FENCE_OPEN in asked, "the recall was delivered"
    assert fake.calls("POST", "/chat"), "the dialectic was asked"
    results = [json.loads(m["content"]) for m in bobs[-1]["messages"] if m.get("role") == "tool"]
    assert len(results) == len(calls) and all(result["success"] for result in results)
    leaks = [
        where
        for where, text in [("automatic recall", asked)]
        + [(name, json.dumps(result)) for (name, _), result in zip(calls, results, strict=True)]
        + [("anything Bob's model received", json.dumps([r["messages"] for r in bobs]))]
        if any(secret in text for secret in CAROLS)
    ]
    assert leaks == []
