"""The reference provider: the shared contract, plus ordering, exactly-once and isolation."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from gateway.settings import Settings
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
from providers.manager import MemoryManager
from providers.reference import RECALL_LIMIT, RecordedCall, ReferenceProvider

if TYPE_CHECKING:
    from gateway.memory.operations import Action

REPO = Path(__file__).resolve().parents[2]
NOW = datetime(2025, 5, 6, 7, 8, 9, tzinfo=UTC)


class TestReferenceContract(ProviderContract):
    def make_provider(self, home: Path) -> MemoryProvider:
        return ReferenceProvider(home)


@pytest.fixture
def provider(tmp_path: Path) -> ReferenceProvider:
    return ReferenceProvider(tmp_path)


@pytest.fixture
def alice(tmp_path: Path) -> ProviderContext:
    return make_context(tmp_path, "alice")


@pytest.fixture
def bob(tmp_path: Path) -> ProviderContext:
    return make_context(tmp_path, "bob")


def turn(turn_id: str, user: str = "hello", session_id: str = "s1") -> SyncedTurn:
    return SyncedTurn(user, f"reply to {turn_id}", session_id, turn_id, NOW)


def write(ctx: ProviderContext, action: Action, content: str, previous: str | None = None) -> None:
    meta = WriteMetadata(origin="user-chat", time=NOW, scope_key=ctx.memory_scope_key)
    event = MemoryWriteEvent(action, "user", content, meta, previous)
    ReferenceProvider(ctx.home).on_memory_write(ctx, event)


def test_turns_keep_arrival_order_and_count_deliveries(
    provider: ReferenceProvider, alice: ProviderContext
) -> None:
    for turn_id in ("t1", "t2", "t3"):
        provider.sync_turn(alice, turn(turn_id))
    provider.sync_turn(alice, turn("t2"))  # a retried job delivers t2 again
    stored = provider.synced_turns(alice.namespace)
    assert [(t.turn_id, t.deliveries) for t in stored] == [("t1", 1), ("t2", 2), ("t3", 1)]
    assert stored[0].assistant == "reply to t1"
    assert provider.facts(alice.namespace) == ["hello"] * 3  # the duplicate added no fact


def test_same_turn_id_in_another_session_is_another_turn(
    provider: ReferenceProvider, alice: ProviderContext
) -> None:
    provider.sync_turn(alice, turn("t1", session_id="s1"))
    provider.sync_turn(alice, turn("t1", session_id="s2"))
    assert [t.session_id for t in provider.synced_turns(alice.namespace)] == ["s1", "s2"]
    assert [t.session_id for t in provider.synced_turns(alice.namespace, "s2")] == ["s2"]


def test_recall_returns_latest_matching_facts(
    provider: ReferenceProvider, alice: ProviderContext
) -> None:
    provider.sync_turn(alice, turn("t0", "I live in Lisbon"))
    for i in range(RECALL_LIMIT + 2):
        provider.sync_turn(alice, turn(f"t{i + 1}", f"Tea note {i}"))
    recalled = provider.recall(alice, RecallQuery("what TEA do I like?", turn_index=8))
    lines = recalled.splitlines()
    assert len(lines) == RECALL_LIMIT
    assert lines[0] == f"- Tea note {RECALL_LIMIT + 1}"
    assert "Lisbon" not in recalled
    assert provider.recall(alice, RecallQuery("lisbon")) == "- I live in Lisbon"
    assert provider.recall(alice, RecallQuery("zz")) == ""


def test_tenants_and_scopes_never_mix(
    provider: ReferenceProvider, alice: ProviderContext, bob: ProviderContext
) -> None:
    provider.sync_turn(alice, turn("t1", "My dog is called Biscuit"))
    provider.sync_turn(bob, turn("t1", "My cat is called Pepper"))
    group_scope = MemoryScope(alice.tenant, GroupId("console", "room"))
    in_group = dataclasses.replace(alice, chat_type="group", memory_scope_key=group_scope.key)
    assert provider.recall(alice, RecallQuery("dog cat called")) == "- My dog is called Biscuit"
    assert provider.recall(bob, RecallQuery("dog cat called")) == "- My cat is called Pepper"
    assert provider.recall(in_group, RecallQuery("dog")) == ""  # a DM fact stays out of groups
    assert [t.turn_id for t in provider.synced_turns(bob.namespace)] == ["t1"]
    answer = json.loads(provider.handle_tool_call(bob, "reference_recall", {"query": "dog"}))
    assert answer == {"success": True, "facts": []}


def test_memory_writes_are_mirrored_into_facts(alice: ProviderContext) -> None:
    write(alice, "add", "Prefers green tea")
    write(alice, "add", "Works nights")
    write(alice, "replace", "Prefers oolong tea", previous="Prefers green tea")
    write(alice, "remove", "", previous="Works nights")
    provider = ReferenceProvider(alice.home)
    assert provider.facts(alice.namespace) == ["Prefers oolong tea"]
    assert provider.recall(alice, RecallQuery("tea")) == "- Prefers oolong tea"


def test_recall_tool_answers_json(provider: ReferenceProvider, alice: ProviderContext) -> None:
    provider.sync_turn(alice, turn("t1", "Allergic to peanuts"))
    answer = json.loads(provider.handle_tool_call(alice, "reference_recall", {"query": "peanut"}))
    assert answer == {"success": True, "facts": []}  # whole words only
    answer = json.loads(provider.handle_tool_call(alice, "reference_recall", {"query": "peanuts"}))
    assert answer == {"success": True, "facts": ["Allergic to peanuts"]}
    missing = json.loads(provider.handle_tool_call(alice, "reference_recall", {}))
    assert missing == {"success": False, "error": "'query' must be a non-empty string"}


def test_every_call_is_recorded_with_namespace_and_session(
    provider: ReferenceProvider, alice: ProviderContext, bob: ProviderContext
) -> None:
    provider.initialize(alice)
    provider.recall(bob, RecallQuery("x"))
    assert provider.on_pre_compress(alice, []) == (
        "The reference provider holds 0 facts about this user."
    )
    provider.shutdown()
    assert provider.calls() == [
        RecordedCall("initialize", "console-alice", "s1"),
        RecordedCall("recall", "console-bob", "s1"),
        RecordedCall("on_pre_compress", "console-alice", "s1"),
        RecordedCall("shutdown", None, None),
    ]
    assert [c.method for c in provider.calls("console-bob")] == ["recall"]


def test_through_the_manager_from_settings(tmp_path: Path, alice: ProviderContext) -> None:
    provider = ReferenceProvider.from_settings(Settings(home=tmp_path))
    manager = MemoryManager(5.0)
    manager.register(provider)
    assert manager.sync_turn(alice, turn("t1", "Plays the cello")) is True
    answer = manager.handle_tool_call(alice, "reference_recall", '{"query": "cello"}')
    assert json.loads(answer)["facts"] == ["Plays the cello"]
    assert manager.stats.failures == 0


def test_concurrent_writers_lose_nothing(
    provider: ReferenceProvider, alice: ProviderContext
) -> None:
    def sync_many(prefix: str) -> None:
        writer = ReferenceProvider(alice.home)
        for i in range(15):
            writer.sync_turn(alice, turn(f"{prefix}{i}"))

    threads = [threading.Thread(target=sync_many, args=(p,)) for p in ("a", "b", "c")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    stored = provider.synced_turns(alice.namespace)
    assert len(stored) == 45 and all(t.deliveries == 1 for t in stored)
    assert [t.turn_id for t in stored if t.turn_id.startswith("b")] == [f"b{i}" for i in range(15)]


def test_state_is_shared_with_another_process(
    provider: ReferenceProvider, alice: ProviderContext
) -> None:
    script = textwrap.dedent(
        f"""
        from datetime import UTC, datetime
        from pathlib import Path
        from providers.base import SyncedTurn
        from providers.contract import make_context
        from providers.reference import ReferenceProvider
        home = Path({str(alice.home)!r})
        ctx = make_context(home, "alice")
        turn = SyncedTurn("Sent from a worker", "ok", "s1", "w1", datetime.now(UTC))
        ReferenceProvider(home).sync_turn(ctx, turn)
        """
    )
    provider.sync_turn(alice, turn("t1"))  # the parent created the database first
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert [t.turn_id for t in provider.synced_turns(alice.namespace)] == ["t1", "w1"]
    assert provider.recall(alice, RecallQuery("worker")) == "- Sent from a worker"
