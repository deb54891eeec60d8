"""The holographic provider: contract, trust, scopes, mirror, recall, dimensions, writers."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from gateway.history.db import Database
from gateway.provider_scopes import provider_services
from gateway.settings import HolographicSettings, Settings
from gateway.tenants import GroupId, MemoryScope
from providers.base import (
    MemoryProvider,
    MemoryWriteEvent,
    ProviderContext,
    RecallQuery,
    WriteMetadata,
)
from providers.contract import ProviderContract, make_context
from providers.holographic.provider import HolographicProvider
from providers.manager import MemoryManager
from providers.registry import load_provider
from tests.without_module import run_without

if TYPE_CHECKING:
    from gateway.memory.operations import Action

REPO = Path(__file__).resolve().parents[2]
NOW = datetime(2025, 5, 6, 7, 8, 9, tzinfo=UTC)


def attached(home: Path, **settings: Any) -> HolographicProvider:
    provider = HolographicProvider(HolographicSettings(**settings))
    provider.attach(provider_services(Database(home / "state.db")))
    return provider


class TestHolographicContract(ProviderContract):
    def make_provider(self, home: Path) -> MemoryProvider:
        return attached(home)

    def tool_arguments(self, schema: dict[str, Any], text: str) -> dict[str, Any]:
        if schema["function"]["name"] == "fact_store":
            return {"action": "search", "query": text}  # bob looks for alice's secret
        return super().tool_arguments(schema, text)


@pytest.fixture
def provider(tmp_path: Path) -> Iterator[HolographicProvider]:
    provider = attached(tmp_path)
    yield provider
    provider.shutdown()


@pytest.fixture
def alice(tmp_path: Path) -> ProviderContext:
    return make_context(tmp_path, "alice")


@pytest.fixture
def bob(tmp_path: Path) -> ProviderContext:
    return make_context(tmp_path, "bob")


def in_group(ctx: ProviderContext, group: str = "room") -> ProviderContext:
    scope = MemoryScope(ctx.tenant, GroupId("console", group))
    return dataclasses.replace(ctx, chat_type="group", memory_scope_key=scope.key)


def tool(provider: MemoryProvider, ctx: ProviderContext, name: str, **args: Any) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(provider.handle_tool_call(ctx, name, args))
    return answer


def add(provider: MemoryProvider, ctx: ProviderContext, content: str, **extra: Any) -> int:
    answer = tool(provider, ctx, "fact_store", action="add", content=content, **extra)
    assert answer["success"], answer
    return int(answer["fact_id"])


def write(
    provider: MemoryProvider,
    ctx: ProviderContext,
    action: Action,
    content: str,
    previous: str | None = None,
) -> None:
    meta = WriteMetadata(origin="user-chat", time=NOW, scope_key=ctx.memory_scope_key)
    provider.on_memory_write(ctx, MemoryWriteEvent(action, "user", content, meta, previous))


def contents(provider: MemoryProvider, ctx: ProviderContext) -> list[str]:
    answer = tool(provider, ctx, "fact_store", action="list", limit=50)
    return sorted(f["content"] for f in answer["facts"])


def stored(home: Path) -> int:
    db = Database(home / "state.db")
    try:
        return int(db.read(lambda c: c.execute("SELECT COUNT(*) FROM holo_facts").fetchone()[0]))
    finally:
        db.close()


def test_trust_moves_by_the_documented_steps_and_stays_in_bounds(
    provider: HolographicProvider, alice: ProviderContext
) -> None:
    fact = add(provider, alice, "Prefers aisle seats")
    trust = [tool(provider, alice, "fact_feedback", action="helpful", fact_id=fact)["trust"]]
    trust.append(tool(provider, alice, "fact_feedback", action="helpful", fact_id=fact)["trust"])
    trust.append(tool(provider, alice, "fact_feedback", action="unhelpful", fact_id=fact)["trust"])
    assert trust == pytest.approx([0.55, 0.6, 0.5])
    for _ in range(6):
        last = tool(provider, alice, "fact_feedback", action="unhelpful", fact_id=fact)
    assert last["trust"] == 0.0  # clamped, not negative
    update = tool(provider, alice, "fact_store", action="update", fact_id=fact, trust_delta=1.0)
    assert update["fact"]["trust"] == 1.0
    assert tool(provider, alice, "fact_feedback", action="helpful", fact_id=fact)["trust"] == 1.0
    bad = tool(provider, alice, "fact_store", action="update", fact_id=fact, trust_delta=3)
    assert bad == {"success": False, "error": "'trust_delta' must be a number between -1 and 1"}
    assert tool(provider, alice, "fact_feedback", action="meh", fact_id=fact)["success"] is False


def test_ids_of_other_tenants_and_scopes_are_not_found(
    provider: HolographicProvider, alice: ProviderContext, bob: ProviderContext
) -> None:
    mine = add(provider, alice, "Alice keeps bees in Lyon")
    group = in_group(alice)
    for ctx in (bob, group):
        for name, args in (
            ("fact_store", {"action": "update", "fact_id": mine, "content": "hijacked"}),
            ("fact_store", {"action": "remove", "fact_id": mine}),
            ("fact_feedback", {"action": "unhelpful", "fact_id": mine}),
        ):
            answer = tool(provider, ctx, name, **args)
            assert answer == {"success": False, "error": f"no fact {mine} in this memory"}
        assert tool(provider, ctx, "fact_store", action="search", query="bees")["facts"] == []
        assert tool(provider, ctx, "fact_store", action="probe", entity="Lyon")["facts"] == []
    assert contents(provider, alice) == ["Alice keeps bees in Lyon"]
    add(provider, group, "The room plans a picnic")
    assert contents(provider, alice) == ["Alice keeps bees in Lyon"]  # a group fact stays there
    assert contents(provider, group) == ["The room plans a picnic"]


def test_curated_memory_writes_are_mirrored(
    provider: HolographicProvider, alice: ProviderContext
) -> None:
    write(provider, alice, "add", "Prefers green tea")
    write(provider, alice, "add", "Works nights")
    add(provider, alice, "Works nights at the Lisbon lab")  # a tool fact is not curated
    write(provider, alice, "replace", "Prefers oolong tea", previous="Prefers green tea")
    write(provider, alice, "remove", "", previous="Works nights")
    write(provider, alice, "remove", "", previous="Works nights at the Lisbon lab")
    assert contents(provider, alice) == ["Prefers oolong tea", "Works nights at the Lisbon lab"]
    facts = tool(provider, alice, "fact_store", action="list")["facts"]
    assert {f["content"]: f["category"] for f in facts}["Prefers oolong tea"] == "user_pref"
    write(provider, alice, "add", "x" * 5000)  # longer than a fact may be: logged, not raised
    assert len(contents(provider, alice)) == 2


def test_recall_shows_relevant_trusted_facts_first_and_nothing_below_the_floor(
    provider: HolographicProvider, alice: ProviderContext, bob: ProviderContext
) -> None:
    bees = add(provider, alice, "Keeps bees in Lyon")
    add(provider, alice, "Plays the cello")
    doubtful = add(provider, alice, "Owns a yacht")
    for _ in range(3):
        tool(provider, alice, "fact_feedback", action="unhelpful", fact_id=doubtful)  # 0.2 < 0.3
    text = provider.recall(alice, RecallQuery("how are my bees?"))
    lines = text.splitlines()
    assert lines[0] == "## Facts kept about this user (holographic memory)"
    assert lines[1] == f"- Keeps bees in Lyon [general, trust 0.50, fact {bees}]"
    assert "Plays the cello" in text and "yacht" not in text
    assert provider.recall(bob, RecallQuery("bees")) == ""
    small = attached(alice.home, recall_limit=1)
    assert small.recall(alice, RecallQuery("cello")).splitlines()[1].startswith("- Plays the cello")


def test_a_dimension_change_re_encodes_instead_of_crashing(tmp_path: Path) -> None:
    ctx = make_context(tmp_path, "alice")
    old = attached(tmp_path, dimension=1024)
    ids = [add(old, ctx, f"Orion note number {i}") for i in range(3)]
    new = attached(tmp_path, dimension=2048)
    answer = tool(new, ctx, "fact_store", action="probe", entity="Orion")
    assert sorted(f["fact_id"] for f in answer["facts"]) == ids
    assert answer["note"] == "3 facts stored at another dimension were re-encoded"
    again = tool(new, ctx, "fact_store", action="probe", entity="Orion")
    assert "note" not in again and len(again["facts"]) == 3  # written back at 2048
    db = Database(tmp_path / "state.db")
    dims = db.read(lambda c: c.execute("SELECT DISTINCT dim FROM holo_facts").fetchall())
    assert [row[0] for row in dims] == [2048]
    db.write(lambda c: c.execute("UPDATE holo_facts SET vector = x'00' WHERE id = ?", (ids[0],)))
    assert len(tool(new, ctx, "fact_store", action="probe", entity="Orion")["facts"]) == 3


def test_erase_removes_every_scope_of_the_tenant_and_nothing_else(
    provider: HolographicProvider, alice: ProviderContext, bob: ProviderContext
) -> None:
    add(provider, alice, "Alice DM fact about Orion")
    add(provider, in_group(alice), "Alice group fact about Orion")
    add(provider, bob, "Bob fact about Orion")
    assert provider.erase(alice.tenant) == (2, [])
    assert contents(provider, alice) == [] and contents(provider, in_group(alice)) == []
    assert tool(provider, alice, "fact_store", action="search", query="orion")["facts"] == []
    assert contents(provider, bob) == ["Bob fact about Orion"]
    db = Database(alice.home / "state.db")
    left = db.read(lambda c: c.execute("SELECT COUNT(*) FROM holo_facts_fts").fetchone()[0])
    assert left == 1  # the index rows went with the facts
    assert provider.erase(alice.tenant) == (0, [])


def test_bad_arguments_get_clear_errors(
    provider: HolographicProvider, alice: ProviderContext
) -> None:
    cases = [
        (
            {"action": "fly"},
            "'action' must be one of add, search, probe, related, reason, "
            "contradict, update, remove, list",
        ),
        ({"action": "add"}, "'content' must be a non-empty string"),
        ({"action": "add", "content": "x" * 1001}, "a fact is at most 1000 characters; split it"),
        ({"action": "reason", "entities": []}, "'entities' must be a non-empty list of names"),
        ({"action": "remove", "fact_id": "abc"}, "'fact_id' must be a positive integer"),
        (
            {"action": "list", "category": "secrets"},
            "'category' must be one of general, user_pref, project, tool",
        ),
    ]
    for args, error in cases:
        assert tool(provider, alice, "fact_store", **args) == {"success": False, "error": error}
    first = tool(provider, alice, "fact_store", action="add", content="Likes  tea")
    again = tool(provider, alice, "fact_store", action="add", content="Likes tea")
    assert first["created"] is True and again == {**first, "created": False}


def test_a_full_bank_refuses_more_facts(tmp_path: Path) -> None:
    ctx = make_context(tmp_path, "alice")
    small = attached(tmp_path, max_facts=10)
    for i in range(10):
        add(small, ctx, f"fact {i}")
    answer = tool(small, ctx, "fact_store", action="add", content="one too many")
    assert answer["success"] is False and "holds 10 facts, the limit" in answer["error"]


def test_tool_answers_stay_bounded(tmp_path: Path) -> None:
    ctx = make_context(tmp_path, "alice")
    provider = attached(tmp_path, max_tool_result_chars=600)
    for i in range(20):
        add(provider, ctx, f"Orion detail number {i} " + "padding " * 10)
    text = provider.handle_tool_call(ctx, "fact_store", {"action": "list", "limit": 50})
    answer = json.loads(text)
    assert len(text) <= 600 and answer["truncated"] is True and 0 < len(answer["facts"]) < 20


def test_concurrent_writers_in_threads_lose_nothing(tmp_path: Path) -> None:
    ctx = make_context(tmp_path, "alice")

    errors: list[BaseException] = []

    def write_many(prefix: str) -> None:
        writer = attached(tmp_path)  # its own Database: its own connections
        try:
            for i in range(15):
                add(writer, ctx, f"{prefix} item{prefix}{i} noted")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write_many, args=(p,)) for p in ("a", "b", "c", "d")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == [] and stored(tmp_path) == 60
    reader = attached(tmp_path)
    hit = tool(reader, ctx, "fact_store", action="search", query="itemc7")
    assert [f["content"] for f in hit["facts"]] == ["c itemc7 noted"]


def test_concurrent_writer_processes_share_the_store(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from tests.unit.test_holographic_provider import add, attached
        from providers.contract import make_context
        home = Path({str(tmp_path)!r})
        provider = attached(home)
        ctx = make_context(home, "alice")
        for i in range(20):
            add(provider, ctx, f"process {{sys.argv[1]}} wrote note{{sys.argv[1]}}x{{i}}")
        """
    )
    attached(tmp_path)  # migrate once before the writers race
    workers = [
        subprocess.Popen([sys.executable, "-c", script, tag], cwd=REPO, stderr=subprocess.PIPE)
        for tag in ("p", "q", "r")
    ]
    for worker in workers:
        _, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err.decode()
    assert stored(tmp_path) == 60
    reader = attached(tmp_path)
    ctx = make_context(tmp_path, "alice")
    assert len(tool(reader, ctx, "fact_store", action="search", query="noteqx19")["facts"]) == 1


def test_through_the_registry_and_manager(tmp_path: Path, alice: ProviderContext) -> None:
    settings = Settings(home=tmp_path, memory={"provider": "holographic"})
    provider = load_provider("holographic", settings)
    db = Database(tmp_path / "state.db")
    manager = MemoryManager(5.0, services=provider_services(db))
    manager.register(provider)
    manager.initialize(alice)
    answer = manager.handle_tool_call(
        alice, "fact_store", '{"action": "add", "content": "Plays the cello", "tenant": "x"}'
    )
    assert json.loads(answer)["created"] is True
    assert "Plays the cello" in manager.recall(alice, RecallQuery("cello"))
    assert manager.erase(alice.tenant) == (1, [])
    assert provider.health().endswith(
        "dimension 1024 (match threshold 0.110), 0 facts in the state store"
    )


def test_a_failing_store_leaves_the_turn_alone(tmp_path: Path, alice: ProviderContext) -> None:
    provider = attached(tmp_path)
    manager = MemoryManager(5.0)
    manager.register(provider)  # attaches an in-memory registry and no fact store
    assert manager.recall(alice, RecallQuery("anything")) == ""
    answer = json.loads(manager.handle_tool_call(alice, "fact_store", '{"action": "list"}'))
    assert answer["success"] is False
    assert manager.stats.failures >= 2


def test_without_numpy_the_provider_loads_and_setup_names_the_extra() -> None:
    done = run_without(
        ("numpy",),
        """
        from gateway.settings import Settings
        from providers.registry import load_provider, missing_requirements
        settings = Settings(memory={"provider": "holographic"})
        print(missing_requirements("holographic", settings))
        provider = load_provider("holographic", settings)
        print(provider.is_available(), [t["function"]["name"] for t in provider.tool_schemas()])
        print("numpy" in sys.modules)
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[\"Python packages missing (numpy): pip install 'mnemogate[holographic]'\"]",
        "False ['fact_store', 'fact_feedback']",
        "False",
    ]
