"""HindsightProvider through the real ``hindsight-client`` SDK against the fake Hindsight.

Each test gets its own fake server (banks are per server). What the fake "extracts" is
traceable: a ``User:`` line becomes a world fact *and* an observation with the same text.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gateway.settings import HindsightSettings, Settings, load_settings
from gateway.tenants import GroupId, MemoryScope
from providers.base import (
    MemoryProvider,
    MemoryWriteEvent,
    ProviderContext,
    RecallQuery,
    SyncedTurn,
    WriteMetadata,
)
from providers.contract import ProviderContract, make_context
from providers.hindsight.client import HindsightCallError
from providers.hindsight.provider import HindsightProvider
from providers.manager import MemoryManager
from providers.registry import load_provider, missing_requirements
from providers.scoping import ScopeRecord
from tests.fakes.hindsight_server import FakeHindsight
from tests.without_module import run_without

pytestmark = pytest.mark.integration
NOW = datetime(2025, 5, 6, 7, 8, 9, tzinfo=UTC)


@pytest.fixture
def fake() -> Iterator[FakeHindsight]:
    with FakeHindsight() as server:
        yield server


Make = Callable[..., HindsightProvider]


@pytest.fixture
def make(fake: FakeHindsight) -> Iterator[Make]:
    """Providers on the fake; each is shut down (its HTTP sessions closed) after the test."""
    made: list[HindsightProvider] = []

    def build(**settings: Any) -> HindsightProvider:
        made.append(HindsightProvider(HindsightSettings(base_url=fake.base_url, **settings)))
        return made[-1]

    yield build
    for provider in made:
        provider.shutdown()


@pytest.fixture
def provider(make: Make) -> HindsightProvider:
    return make()


@pytest.fixture
def alice(tmp_path: Path) -> ProviderContext:
    return make_context(tmp_path, "alice")


@pytest.fixture
def bob(tmp_path: Path) -> ProviderContext:
    return make_context(tmp_path, "bob")


class TestHindsightContract(ProviderContract):
    @pytest.fixture(autouse=True)
    def server(self) -> Iterator[FakeHindsight]:
        with FakeHindsight() as server:
            self.fake = server
            yield server

    def make_provider(self, home: Path) -> MemoryProvider:
        return HindsightProvider(HindsightSettings(base_url=self.fake.base_url))

    def tool_arguments(self, schema: dict[str, Any], text: str) -> dict[str, Any]:
        if schema["function"]["name"] == "hindsight_retain":
            return {"content": "Bob likes chess"}  # bob's own words; he then looks for alice's
        return super().tool_arguments(schema, text)


def turn(turn_id: str, user: str, session_id: str = "s1") -> SyncedTurn:
    return SyncedTurn(user, f"reply to {turn_id}", session_id, turn_id, NOW)


def tool(provider: MemoryProvider, ctx: ProviderContext, name: str, **args: Any) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(provider.handle_tool_call(ctx, name, args))
    return answer


def test_each_turn_is_appended_once_to_the_session_document(
    provider: HindsightProvider, fake: FakeHindsight, alice: ProviderContext
) -> None:
    provider.sync_turn(alice, turn("t1", "I keep bees in Lyon"))
    provider.sync_turn(alice, turn("t2", "They make honey"))
    provider.sync_turn(alice, turn("t1", "I keep bees in Lyon"))  # a retried sync job
    bank = fake.banks[alice.backend_key]
    doc = bank.documents["s1"]
    assert doc.text.count("[turn t1 at") == 1 and doc.text.count("[turn t2 at") == 1
    assert doc.text.index("I keep bees") < doc.text.index("They make honey")
    retains = fake.calls("POST", "/memories")
    assert len(retains) == 2
    item = retains[0].body["items"][0]
    assert item["document_id"] == "s1" and item["update_mode"] == "append"
    assert item["metadata"] == {
        "platform": "console",
        "chat_type": "dm",
        "turn_id": "t1",
        "session_id": "s1",
    }
    assert retains[0].path == f"/v1/default/banks/{alice.backend_key}/memories"
    assert fake.texts(alice.backend_key, "world") == ["I keep bees in Lyon", "They make honey"]


def test_a_retry_racing_an_abandoned_call_writes_the_turn_once(
    provider: HindsightProvider, fake: FakeHindsight, alice: ProviderContext
) -> None:
    fake.retain_gate = threading.Event()
    first = threading.Thread(target=provider.sync_turn, args=(alice, turn("t1", "hello")))
    first.start()  # as if the manager had given up on it: it is still writing
    assert fake.retain_waiting.wait(10)
    retry = threading.Thread(target=provider.sync_turn, args=(alice, turn("t1", "hello")))
    retry.start()
    retry.join(0.5)  # without the turn lock it would check now, find nothing, and write too
    fake.retain_gate.set()
    first.join(10)
    retry.join(10)
    assert len(fake.calls("POST", "/memories")) == 1
    assert fake.banks[alice.backend_key].documents["s1"].text.count("[turn t1 at") == 1


def test_a_failed_document_check_writes_nothing(
    provider: HindsightProvider, fake: FakeHindsight, alice: ProviderContext
) -> None:
    provider.sync_turn(alice, turn("t1", "first"))
    fake.fail(1, status=503, method="GET", path_suffix="/documents/s1")
    with pytest.raises(HindsightCallError):
        provider.sync_turn(alice, turn("t2", "second"))
    assert len(fake.calls("POST", "/memories")) == 1  # never a blind write


def test_recall_merges_observations_and_facts_without_duplicates(
    provider: HindsightProvider, fake: FakeHindsight, alice: ProviderContext
) -> None:
    assert provider.recall(alice, RecallQuery("my bees?")) == ""  # 404: nothing yet
    provider.sync_turn(alice, turn("t1", "I keep bees in Lyon"))
    text = provider.recall(alice, RecallQuery("how are my bees?"))
    assert text == "## What Hindsight remembers about this user\n- I keep bees in Lyon"
    body = fake.calls("POST", "/memories/recall")[-1].body
    assert body["types"] == ["observation", "world"] and body["prefer_observations"] is True
    assert body["budget"] == "low" and body["max_tokens"] == 1024


def test_scopes_and_tenants_are_separate_banks(
    provider: HindsightProvider, fake: FakeHindsight, alice: ProviderContext, bob: ProviderContext
) -> None:
    scope = MemoryScope(alice.tenant, GroupId("console", "room"))
    group = dataclasses.replace(alice, chat_type="group", memory_scope_key=scope.key)
    provider.sync_turn(alice, turn("t1", "alice bees zebra"))
    provider.sync_turn(bob, turn("t1", "bob bees okapi"))
    assert "zebra" in provider.recall(alice, RecallQuery("bees"))
    assert "zebra" not in provider.recall(bob, RecallQuery("bees"))
    assert provider.recall(group, RecallQuery("bees")) == ""
    assert set(fake.banks) == {alice.backend_key, bob.backend_key}


def test_tools_retain_recall_and_reflect(
    provider: HindsightProvider, fake: FakeHindsight, alice: ProviderContext
) -> None:
    empty = tool(provider, alice, "hindsight_recall", query="bees")
    assert empty == {"success": True, "memories": [], "note": "nothing remembered about this yet"}
    assert tool(provider, alice, "hindsight_reflect", query="bees?")["note"]
    stored = tool(provider, alice, "hindsight_retain", content="Keeps bees in Lyon", context="chat")
    assert stored == {"success": True, "stored": True}
    found = tool(provider, alice, "hindsight_recall", query="bees")
    assert found["memories"] == [{"text": "Keeps bees in Lyon", "type": "world"}]
    answer = tool(provider, alice, "hindsight_reflect", query="what about bees?")
    assert answer == {"success": True, "answer": "From memory: Keeps bees in Lyon"}
    assert tool(provider, alice, "hindsight_recall", query="") == {
        "success": False,
        "error": "'query' must be a non-empty string",
    }
    assert len(fake.calls("POST", "/reflect")) == 2  # only when asked for


def test_recall_modes(make: Make, alice: ProviderContext) -> None:
    context = make(recall_mode="context")
    tools_only = make(recall_mode="tools")
    tools_only.sync_turn(alice, turn("t1", "I keep bees"))
    assert context.tool_schemas() == [] and "hindsight_recall" in tools_only.system_prompt_block()
    assert tool(context, alice, "hindsight_recall", query="bees")["success"] is False
    assert tools_only.recall(alice, RecallQuery("bees")) == ""
    assert "I keep bees" in context.recall(alice, RecallQuery("bees"))
    names = [s["function"]["name"] for s in make().tool_schemas()]
    assert names == ["hindsight_retain", "hindsight_recall", "hindsight_reflect"]


def test_curated_additions_are_retained_in_the_background(
    provider: HindsightProvider, fake: FakeHindsight, alice: ProviderContext
) -> None:
    meta = WriteMetadata(origin="user-chat", time=NOW, scope_key=alice.memory_scope_key)
    provider.on_memory_write(alice, MemoryWriteEvent("add", "user", "Prefers green tea", meta))
    provider.on_memory_write(alice, MemoryWriteEvent("remove", "user", "", meta, "x"))
    (call,) = fake.calls("POST", "/memories")
    assert call.body["async"] is True
    assert call.body["items"][0]["content"] == "Prefers green tea"


def test_recall_and_retain_have_separate_timeouts(
    make: Make, fake: FakeHindsight, alice: ProviderContext
) -> None:
    provider = make(recall_timeout_s=0.3, retain_timeout_s=30)
    provider.sync_turn(alice, turn("t1", "I keep bees"))
    fake.recall_gate = threading.Event()  # recall hangs until released
    try:
        with pytest.raises(HindsightCallError, match="recall"):
            provider.recall(alice, RecallQuery("bees"))
    finally:
        fake.recall_gate.set()
    provider.sync_turn(alice, turn("t2", "they make honey"))  # retain still works
    assert len(fake.calls("POST", "/memories")) == 2


def test_erase_deletes_every_recorded_bank_and_reports_failures(
    provider: HindsightProvider, fake: FakeHindsight, alice: ProviderContext, bob: ProviderContext
) -> None:
    scope = MemoryScope(alice.tenant, GroupId("console", "room"))
    group = dataclasses.replace(alice, chat_type="group", memory_scope_key=scope.key)
    for ctx in (alice, group, bob):
        provider.sync_turn(ctx, turn("t1", f"{ctx.memory_scope_key} likes bees"))
    records = [
        ScopeRecord(alice.tenant, "hindsight", c.memory_scope_key, c.backend_key)
        for c in (alice, group)
    ]
    stray = ScopeRecord(bob.tenant, "hindsight", bob.memory_scope_key, bob.backend_key)
    fake.fail(1, status=500, method="DELETE", path_suffix=group.backend_key)
    removed, left = provider.erase(alice.tenant, [*records, stray])
    # A turn's user line is a fact and an observation, its reply an experience: 3 memories.
    assert removed == 3 and len(left) == 1 and group.backend_key in left[0]
    assert set(fake.banks) == {group.backend_key, bob.backend_key}  # bob's was not touched
    assert provider.erase(alice.tenant, records) == (3, [])  # retry: the group bank goes
    assert set(fake.banks) == {bob.backend_key}
    assert provider.erase(alice.tenant, records) == (0, [])  # nothing left: not an error


def test_outage_fails_calls_and_the_manager_keeps_turns_going(
    make: Make, fake: FakeHindsight, alice: ProviderContext
) -> None:
    provider = make(recall_timeout_s=1.0, retain_timeout_s=1.0)
    manager = MemoryManager(5.0)
    manager.register(provider)
    fake.stop()
    assert manager.recall(alice, RecallQuery("bees")) == ""
    assert manager.sync_turn(alice, turn("t1", "hello")) is False
    answer = json.loads(manager.handle_tool_call(alice, "hindsight_recall", '{"query": "x"}'))
    assert answer["success"] is False
    with pytest.raises(HindsightCallError):
        provider.health()
    manager.shutdown()


def test_settings_setup_and_health(
    fake: FakeHindsight, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
    monkeypatch.delenv("HINDSIGHT_API_KEY", raising=False)
    bare = Settings(home=tmp_path)
    missing = missing_requirements("hindsight", bare)
    assert [m.split(" (")[0] for m in missing] == [
        "environment variable HINDSIGHT_API_URL is not set",
        "environment variable HINDSIGHT_API_KEY is not set",
    ]
    monkeypatch.setenv("HINDSIGHT_API_URL", fake.base_url)
    monkeypatch.setenv("HINDSIGHT_API_KEY", "k-123")
    monkeypatch.setenv("MNEMOGATE_HOME", str(tmp_path))
    monkeypatch.setenv("MNEMOGATE_HINDSIGHT__RECALL_MODE", "tools")
    settings = load_settings()
    assert settings.hindsight.base_url == fake.base_url
    assert settings.hindsight.recall_mode == "tools"
    assert missing_requirements("hindsight", settings) == []
    provider = load_provider("hindsight", settings)
    assert provider.is_available()
    assert provider.health() == f"server {fake.base_url} reachable (API 0.4.0-fake)"
    provider.shutdown()


def test_without_the_sdk_the_provider_loads_and_setup_names_the_extra() -> None:
    done = run_without(
        ("hindsight_client", "hindsight_client_api"),
        """
        from gateway.settings import Settings
        from providers.registry import load_provider, missing_requirements
        settings = Settings(hindsight={"base_url": "http://127.0.0.1:9"})
        print(missing_requirements("hindsight", settings))
        provider = load_provider("hindsight", settings)
        print(provider.is_available(), len(provider.tool_schemas()))
        print("hindsight_client" in sys.modules)
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[\"Python packages missing (hindsight_client): pip install 'mnemogate[hindsight]'\"]",
        "False 3",
        "False",
    ]
