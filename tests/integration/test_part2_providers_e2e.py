"""OpenViking, RetainDB and ByteRover end to end with real Redis/RQ, the fake LLM over HTTP,
and each service's fake: turns → outbox → RQ worker → provider → service, recall cached by
the recall job and fenced into the tenant's next turn, never into another tenant's.

Each provider is a :class:`Backend`: how to run its fake, the settings that select it, how
a turn plants a fact (OpenViking: the model calls ``viking_remember`` — its server extracts
memories from sessions only at commit; the others learn from the synced turn), how to take
the service down and bring it back, and what "nothing left for the tenant" means there.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis

from gateway.app import App
from gateway.outbox import Relay
from gateway.privacy.erasure import forget_tenant
from gateway.routing import Conversation
from gateway.security.fence import FENCE_OPEN
from gateway.settings import Settings
from providers.scoping import backend_key
from tests.fakes.fake_brv import install_fake_brv
from tests.fakes.llm_server import FakeLLM
from tests.fakes.openviking_server import FakeOpenViking
from tests.fakes.retaindb_server import FakeRetainDB
from tests.fakes.script import Script, chat_requests
from tests.integration.background import make_settings, turns, work
from tests.integration.conftest import free_port

pytestmark = pytest.mark.integration

ALICE = Conversation.console("alice")
BOB = Conversation.console("bob")
FACT = "I keep bees in Lyon, canary zebra-17"
QUESTION = "where do I keep my bees?"
ALICE_KEY = backend_key(ALICE.tenant.namespace)
BOB_KEY = backend_key(BOB.tenant.namespace)


@dataclass
class Backend:
    name: str
    section: dict[str, Any]
    server: Any  # the fake service (None for ByteRover: its fake is the brv script)
    down: Callable[[], None]
    up: Callable[[], object]
    stored_for: Callable[[str], list[str]]  # what the service holds under a backend key
    plants_with_tool: bool = False


@pytest.fixture(params=["openviking", "retaindb", "byterover"])
def backend(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Backend]:
    name = request.param
    if name == "byterover":
        brv = install_fake_brv(tmp_path / "bin")
        monkeypatch.setenv("PATH", f"{brv.directory}{os.pathsep}{os.environ['PATH']}")
        home = tmp_path / "home"

        def brv_tree(key: str) -> list[str]:
            tree = home / "providers" / "byterover" / key / "work" / "tree.txt"
            return tree.read_text().splitlines() if tree.exists() else []

        yield Backend(
            name,
            {"auto_curate": True},
            brv,
            lambda: brv.set(mode="fail", code=1, stderr="cannot reach ByteRover"),
            lambda: brv.set(mode="ok"),
            brv_tree,
        )
        return
    port = free_port()  # a fixed port: the outage test stops and restarts the server
    if name == "openviking":
        monkeypatch.setenv("OPENVIKING_API_KEY", "root-key")
        viking = FakeOpenViking(port)

        def in_viking(key: str) -> list[str]:
            files = list(viking.user_files(key).values())
            sessions = [s for (user, _), s in viking.sessions.items() if user == key]
            return files + [m["content"] for s in sessions for m in s.messages]

        with viking:
            yield Backend(
                name,
                {"base_url": viking.base_url},
                viking,
                viking.stop,
                viking.start,
                in_viking,
                True,
            )
        return
    monkeypatch.setenv("RETAINDB_API_KEY", "rdb-key")
    retaindb = FakeRetainDB(port)

    def in_retaindb(key: str) -> list[str]:
        return [m["content"] for m in retaindb.user_memories(key)]

    with retaindb:
        yield Backend(
            name,
            {"base_url": retaindb.base_url},
            retaindb,
            retaindb.stop,
            retaindb.start,
            in_retaindb,
        )


@pytest.fixture
def settings(
    backend: Backend, tmp_path: Path, redis_url: str, redis_prefix: str, fake_llm: FakeLLM
) -> Settings:
    return make_settings(
        tmp_path / "home",
        redis_url,
        redis_prefix,
        llm={"base_url": fake_llm.base_url, "model": "fake-model", "max_retries": 0},
        memory={"provider": backend.name},
        recall={"first_turn_budget_s": 0.2},
        jobs={"mode": "queue", "retries": 1},
        **{backend.name: backend.section},
    )


def plant(
    backend: Backend, settings: Settings, fake_llm: FakeLLM, who: Conversation, fact: str
) -> None:
    """One turn in which ``who`` tells the bot ``fact``; then the workers run."""
    if backend.plants_with_tool:
        call = [("viking_remember", {"content": fact, "category": "preference"})]
        fake_llm.handler = Script([{"tool_calls": call}, "Noted."])
    else:
        fake_llm.handler = Script(["Noted."])
    assert turns(settings, who, [fact]) == ["Noted."]
    work(settings)


def last_user_message(fake_llm: FakeLLM) -> str:
    return str(chat_requests(fake_llm.requests)[-1]["messages"][-1]["content"])


def test_a_fact_reaches_the_tenants_next_turn_and_never_another_tenant(
    backend: Backend, settings: Settings, fake_llm: FakeLLM
) -> None:
    plant(backend, settings, fake_llm, ALICE, FACT)
    assert any("zebra-17" in item for item in backend.stored_for(ALICE_KEY))
    fake_llm.handler = Script(fallback=lambda body: "ok")
    seen = len(fake_llm.requests)
    turns(settings, BOB, [QUESTION])  # bob asks the same question, cold and then warm
    work(settings)
    turns(settings, BOB, [QUESTION])
    bobs = fake_llm.requests[seen:]
    assert bobs and not any("zebra" in json.dumps(request) for request in bobs)
    assert not any("zebra" in item for item in backend.stored_for(BOB_KEY))
    turns(settings, ALICE, [QUESTION])
    last = last_user_message(fake_llm)
    assert last.startswith(QUESTION) and FENCE_OPEN in last
    assert "zebra-17" in last.split(FENCE_OPEN, 1)[1]


def test_the_provider_tools_work_through_a_turn(
    backend: Backend, settings: Settings, fake_llm: FakeLLM
) -> None:
    plant(backend, settings, fake_llm, ALICE, FACT)
    tool = {
        "openviking": ("viking_search", {"query": "bees Lyon"}),
        "retaindb": ("retaindb_search", {"query": "bees Lyon"}),
        "byterover": ("brv_query", {"query": "bees Lyon"}),
    }[backend.name]
    fake_llm.handler = Script([{"tool_calls": [tool]}, "In Lyon."])
    assert turns(settings, ALICE, [QUESTION]) == ["In Lyon."]
    request = chat_requests(fake_llm.requests)[-1]
    result = json.loads(request["messages"][-1]["content"])  # this turn's tool answer
    assert request["messages"][-1]["role"] == "tool"
    assert result["success"] is True and "zebra-17" in json.dumps(result)


def test_an_outage_leaves_turns_answered_and_syncs_once_when_back(
    backend: Backend, settings: Settings, fake_llm: FakeLLM
) -> None:
    backend.down()
    fake_llm.handler = Script(["r1", "r2"])
    assert turns(settings, ALICE, ["first message here", "second message here"]) == ["r1", "r2"]
    work(settings)  # sync and recall jobs fail (retried once)
    assert backend.stored_for(ALICE_KEY) == []
    backend.up()

    async def relay_now() -> int:
        async with App(settings) as app:
            return Relay(app.db, app.queues, settings.jobs, redeliver_after_s=0).run_once()

    assert asyncio.run(relay_now()) >= 2
    work(settings)
    work(settings)
    stored = backend.stored_for(ALICE_KEY)
    for text in ("first message here", "second message here"):
        assert sum(text in item for item in stored) == 1, stored


def test_tenants_forget_erases_the_tenant_at_the_service(
    backend: Backend, settings: Settings, fake_llm: FakeLLM, redis_url: str
) -> None:
    plant(backend, settings, fake_llm, ALICE, FACT)
    plant(backend, settings, fake_llm, BOB, "I collect old maps, canary okapi-42")
    client = redis.Redis.from_url(redis_url)
    try:
        report = forget_tenant(settings, ALICE.tenant, redis_client=client)
    finally:
        client.close()
    assert backend.stored_for(ALICE_KEY) == [] or backend.name == "retaindb"
    assert any("okapi-42" in item for item in backend.stored_for(BOB_KEY))
    if backend.name == "retaindb":
        # Memories are gone; the ingested transcripts have no delete route and are reported.
        assert not [m for m in backend.server.user_memories(ALICE_KEY)]
        assert "session transcripts" in report.not_erased["provider data (partly)"]
    else:
        assert report.complete, report.lines()
        assert report.erased["provider items"] >= 1


def test_openviking_commits_the_session_when_it_ends(
    tmp_path: Path,
    redis_url: str,
    redis_prefix: str,
    fake_llm: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENVIKING_API_KEY", "root-key")
    with FakeOpenViking() as viking:
        settings = make_settings(
            tmp_path / "home",
            redis_url,
            redis_prefix,
            llm={"base_url": fake_llm.base_url, "model": "fake-model", "max_retries": 0},
            memory={"provider": "openviking"},
            jobs={"mode": "queue"},
            openviking={"base_url": viking.base_url},
        )
        fake_llm.handler = Script(fallback=lambda body: "ok")
        turns(settings, ALICE, [FACT])
        work(settings)
        (session,) = [s for (user, _), s in viking.sessions.items() if user == ALICE_KEY]
        assert [m["role"] for m in session.messages] == ["user", "assistant"]
        created = viking.calls("POST", "/api/v1/sessions")[0]
        assert created.path == "/api/v1/sessions"  # created before its first message

        async def start_over() -> None:
            async with App(settings) as app:
                await app.agent.new_session(ALICE)

        asyncio.run(start_over())
        assert session.commits == 0  # /new does not wait for the provider
        work(settings)  # the session-end job commits it; the server extracts its memories
        assert session.commits == 1 and session.messages == []
        turns(settings, ALICE, ["a new day: what about my bees?"])
        work(settings)
        assert session.commits == 1  # the next session's first sync finds nothing to commit
        assert f"{ALICE_KEY} said: {FACT}" in viking.user_files(ALICE_KEY).values()
        turns(settings, ALICE, ["where do I keep my bees?"])
        assert "zebra-17" in last_user_message(fake_llm).split(FENCE_OPEN, 1)[1]
