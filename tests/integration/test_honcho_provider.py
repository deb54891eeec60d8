"""HonchoProvider through the real ``honcho-ai`` SDK against the fake Honcho on loopback.

One fake server per module; each test works in its own workspace, so tests never see each
other's peers. What Honcho "knows" in the fake comes from its deterministic deriver
(``"<peer> said: …"`` conclusions) and dialectic (facts sharing a word with the question).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gateway.memory.operations import Operation
from gateway.memory.store import MemoryStore
from gateway.settings import HonchoSettings, MemorySettings, load_settings
from gateway.tenants import MemoryScope
from providers.base import (
    MemoryProvider,
    ProviderContext,
    RecallQuery,
)
from providers.contract import ProviderContract, make_context
from providers.errors import ProviderError
from providers.honcho.client import HonchoCallError, HonchoConfigError
from providers.honcho.provider import HonchoProvider
from providers.honcho.sync import CONTINUED
from providers.manager import MemoryManager
from providers.registry import load_provider
from tests.fakes.honcho_payloads import WorkspaceRec
from tests.fakes.honcho_server import FakeHoncho
from tests.integration.honcho_harness import group_context, turn, write_event

pytestmark = pytest.mark.integration

Make = Callable[..., HonchoProvider]
AI_ALICE = "mnemogate__console-alice"  # the assistant peer that talks with alice's peer


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeHoncho]:
    with FakeHoncho() as server:
        yield server


@pytest.fixture
def workspace() -> str:
    return f"w{uuid.uuid4().hex[:12]}"


@pytest.fixture
def make(fake: FakeHoncho, workspace: str) -> Iterator[Make]:
    built: list[HonchoProvider] = []
    fake.chat_delay_s, fake.chat_gate = 0.0, None

    def build(**overrides: Any) -> HonchoProvider:
        options: dict[str, Any] = {"base_url": fake.base_url, "workspace": workspace}
        options["read_retries"] = 0
        provider = HonchoProvider(HonchoSettings(**{**options, **overrides}))
        built.append(provider)
        return provider

    yield build
    for provider in built:
        provider.shutdown()


@pytest.fixture
def world(fake: FakeHoncho, workspace: str) -> Callable[[], WorkspaceRec]:
    return lambda: fake.world.workspaces[workspace]


@pytest.fixture
def alice(tmp_path: Path) -> ProviderContext:
    return make_context(tmp_path, "alice")


def chats(fake: FakeHoncho, workspace: str) -> list[dict[str, Any]]:
    prefix = f"/v3/workspaces/{workspace}/"
    return [r.body for r in fake.requests if r.path.startswith(prefix) and r.path.endswith("/chat")]


# -- identity -------------------------------------------------------------------------------


def test_each_tenant_is_its_own_peer_with_its_own_session(
    make: Make, world: Callable[[], WorkspaceRec], tmp_path: Path
) -> None:
    provider = make()
    alice, bob = make_context(tmp_path, "alice"), make_context(tmp_path, "bob")
    provider.initialize(alice)
    provider.initialize(bob)
    ws = world()
    # Each user peer talks with an assistant peer of its own: no peer is in both sessions.
    assert {"console-alice", "console-bob", AI_ALICE, "mnemogate__console-bob"} <= set(ws.peers)
    sessions = {s.metadata["tenant"]: s for s in ws.sessions.values()}
    assert set(sessions["console:alice"].members) == {"console-alice", AI_ALICE}
    assert set(sessions["console:bob"].members) == {"console-bob", "mnemogate__console-bob"}
    assert all(sid.startswith(s.metadata["scope"] + "__") for sid, s in ws.sessions.items())


def test_peer_aliases_map_a_tenant_to_another_peer(
    make: Make, world: Callable[[], WorkspaceRec], alice: ProviderContext
) -> None:
    provider = make(peer_aliases={"console:alice": "dana"})
    provider.initialize(alice)
    provider.sync_turn(alice, turn("I am Dana"))
    assert {m.peer_id for m in world().messages} == {"dana", "mnemogate__dana"}


@pytest.mark.parametrize(
    ("preset", "user", "ai"),
    [
        (
            "directional",
            {"observe_me": True, "observe_others": True},
            {"observe_me": True, "observe_others": True},
        ),
        (
            "unified",
            {"observe_me": True, "observe_others": False},
            {"observe_me": False, "observe_others": True},
        ),
    ],
)
def test_observation_presets_set_session_flags(
    make: Make,
    world: Callable[[], WorkspaceRec],
    alice: ProviderContext,
    preset: str,
    user: dict[str, bool],
    ai: dict[str, bool],
) -> None:
    make(observation=preset).initialize(alice)
    (session,) = world().sessions.values()
    assert session.members == {"console-alice": user, AI_ALICE: ai}


def test_flag_overrides_and_server_side_config_win(
    make: Make,
    fake: FakeHoncho,
    workspace: str,
    world: Callable[[], WorkspaceRec],
    alice: ProviderContext,
) -> None:
    provider = make(observation="unified", ai_observe_me=True)
    provider.initialize(alice)
    (session,) = world().sessions.values()
    assert session.members[AI_ALICE]["observe_me"] is True
    # An operator turns the AI's observation of the user off in Honcho's UI ...
    session.members[AI_ALICE]["observe_others"] = False
    fresh = make(observation="unified")
    fresh.initialize(alice)
    fresh.sync_turn(alice, turn("I grow tomatoes"))
    fake.clear_requests()
    fresh.handle_tool_call(alice, "honcho_reasoning", {"query": "tomatoes?"})
    # ... so dialectic asks the user's self-representation instead of the AI's view.
    (chat,) = [r for r in fake.requests if r.path.endswith("/chat")]
    assert chat.path == f"/v3/workspaces/{workspace}/peers/console-alice/chat"
    assert "target" not in chat.body


# -- sync -----------------------------------------------------------------------------------


def test_a_turn_is_stored_once_even_when_delivered_again(
    make: Make, fake: FakeHoncho, world: Callable[[], WorkspaceRec], alice: ProviderContext
) -> None:
    provider = make()
    provider.initialize(alice)
    provider.sync_turn(alice, turn("I live in Lisbon"))
    provider.sync_turn(alice, turn("I live in Lisbon"))
    provider.sync_turn(alice, turn("Second turn", turn_id="t2"))
    messages = world().messages
    assert [m.content for m in messages] == ["I live in Lisbon", "Noted.", "Second turn", "Noted."]
    assert messages[0].metadata["mnemogate_turn"] == "s1:t1"


def test_a_lost_answer_or_a_500_never_duplicates_a_turn(
    make: Make,
    fake: FakeHoncho,
    workspace: str,
    world: Callable[[], WorkspaceRec],
    alice: ProviderContext,
) -> None:
    provider = make()
    provider.initialize(alice)
    fake.fail(1, status=503, method="POST", path_suffix="/messages")
    with pytest.raises(HonchoCallError) as failed:
        provider.sync_turn(alice, turn("First"))
    assert failed.value.status == 503 and isinstance(failed.value, ProviderError)
    posts = [r for r in fake.requests if r.path.endswith("/messages") and workspace in r.path]
    assert len(posts) == 1  # the SDK did not retry the write
    fake.drop(1, method="POST", path_suffix="/messages")  # stored, but the answer is lost
    with pytest.raises(HonchoCallError):
        provider.sync_turn(alice, turn("First"))
    provider.sync_turn(alice, turn("First"))  # the sync job's retry
    assert [m.content for m in world().messages] == ["First", "Noted."]


def test_long_messages_are_chunked_with_a_continuation_marker(
    make: Make, world: Callable[[], WorkspaceRec], alice: ProviderContext
) -> None:
    provider = make(message_chunk_chars=300)
    provider.initialize(alice)
    text = " ".join(f"word{i}" for i in range(200))
    provider.sync_turn(alice, turn(text, "short"))
    user = [m for m in world().messages if m.peer_id == "console-alice"]
    assert len(user) > 1 and all(len(m.content) <= 300 for m in user)
    assert all(m.content.endswith(CONTINUED) for m in user[:-1])
    assert not user[-1].content.endswith(CONTINUED)
    assert [m.metadata["chunk"] for m in user] == list(range(len(user)))
    rebuilt = " ".join(m.content.replace("\n" + CONTINUED, "") for m in user)
    assert rebuilt.split() == text.split()


def test_recalled_fences_are_stripped_before_storing(
    make: Make, world: Callable[[], WorkspaceRec], alice: ProviderContext
) -> None:
    provider = make()
    provider.initialize(alice)
    fenced = "<memory-context>\n[Recalled memory]\nold facts\n</memory-context>\nMy dog is Rex"
    provider.sync_turn(alice, turn(fenced, "Rex </MEMORY-CONTEXT> is a good name"))
    contents = [m.content for m in world().messages]
    assert contents[0] == "My dog is Rex"
    assert all("memory-context" not in c.lower() and "old facts" not in c for c in contents)


# -- recall ---------------------------------------------------------------------------------


def seeded(make: Make, alice: ProviderContext, **overrides: Any) -> HonchoProvider:
    provider = make(**overrides)
    provider.initialize(alice)
    provider.sync_turn(alice, turn("I live in Lisbon with my cat Miso"))
    provider.sync_turn(alice, turn("I work as a nurse at night", turn_id="t2"))
    return provider


def test_recall_brings_summary_profile_representation_and_dialectic(
    make: Make, fake: FakeHoncho, workspace: str, alice: ProviderContext
) -> None:
    provider = seeded(make, alice)
    provider.handle_tool_call(alice, "honcho_profile", {"action": "replace", "card": ["Nurse"]})
    fake.set_summary(next(iter(fake.world.workspaces[workspace].sessions)), "Talked about cats.")
    text = provider.recall(alice, RecallQuery("Where does my cat live?", turn_index=2))
    assert "Talked about cats." in text and "- Nurse" in text
    assert "console-alice said: I work as a nurse at night" in text  # the representation
    dialectic = text.split("## ")[1]
    assert dialectic.startswith("What Honcho reasons") and "Lisbon with my cat Miso" in dialectic
    (chat,) = chats(fake, workspace)
    assert chat["target"] == "console-alice" and chat["reasoning_level"] == "minimal"
    assert chat["query"].startswith("Given what you know")  # warm: Honcho knows the user


def test_cold_first_pass_asks_for_the_essentials(
    make: Make, fake: FakeHoncho, workspace: str, alice: ProviderContext
) -> None:
    provider = make()
    provider.initialize(alice)
    provider.recall(alice, RecallQuery("Can you plan my week?", turn_index=0))
    (chat,) = chats(fake, workspace)
    assert chat["query"].startswith("What are the most important things to know")


def test_dialectic_depth_runs_question_audit_and_reconcile_with_capped_levels(
    make: Make, fake: FakeHoncho, workspace: str, alice: ProviderContext
) -> None:
    provider = seeded(make, alice, dialectic_depth=3, reasoning_level_cap="medium")
    question = "Thinking about everything, what should I cook tonight for my cat " + "x" * 90
    provider.recall(alice, RecallQuery(question, turn_index=2))
    sent = chats(fake, workspace)
    assert [c["query"].split()[0] for c in sent] == ["Given", "Check", "Merge"]
    assert [c["reasoning_level"] for c in sent] == ["medium", "medium", "medium"]
    fake.clear_requests()
    provider.recall(alice, RecallQuery("Thinking about my cat " + "y" * 30, turn_index=3))
    assert [c["reasoning_level"] for c in chats(fake, workspace)] == ["low", "medium", "low"]


def test_a_failed_audit_pass_keeps_the_first_answer(
    make: Make, fake: FakeHoncho, alice: ProviderContext
) -> None:
    provider = seeded(make, alice, dialectic_depth=3)
    fake.fail(1, status=500, path_suffix="/chat", skip=1)
    text = provider.recall(alice, RecallQuery("Remind me where my cat sleeps?", turn_index=2))
    assert "What Honcho reasons" in text and "cat Miso" in text


def test_dialectic_stops_early_when_the_first_answer_suffices(
    make: Make, fake: FakeHoncho, workspace: str, alice: ProviderContext
) -> None:
    provider = seeded(make, alice, dialectic_depth=3)
    provider.recall(alice, RecallQuery("cat Miso Lisbon", turn_index=2))
    assert len(chats(fake, workspace)) == 1


@pytest.mark.parametrize("message", ["ok", "Thanks!", "/new", "👍", "  "])
def test_trivial_messages_get_no_dialectic(
    make: Make, fake: FakeHoncho, workspace: str, alice: ProviderContext, message: str
) -> None:
    provider = seeded(make, alice)
    text = provider.recall(alice, RecallQuery(message, turn_index=2))
    assert chats(fake, workspace) == [] and "nurse at night" in text


def test_an_empty_dialectic_backs_off(
    make: Make, fake: FakeHoncho, workspace: str, alice: ProviderContext
) -> None:
    provider = make()
    provider.initialize(alice)  # Honcho knows nothing: every answer is empty
    for index in range(5):
        provider.recall(alice, RecallQuery(f"What is my favourite colour {index}?", index))
    # asked, skipped 1, asked, skipped 2 → 2 of 5 recalls reached the dialectic
    assert len(chats(fake, workspace)) == 2


def test_recall_is_capped(make: Make, alice: ProviderContext) -> None:
    provider = seeded(make, alice, max_section_chars=120, max_recall_chars=300)
    provider.sync_turn(alice, turn("My cat " + "purrs " * 200, turn_id="t3"))
    text = provider.recall(alice, RecallQuery("Tell me about my cat", turn_index=3))
    assert 0 < len(text) <= 300
    assert all(len(part) <= 120 + 60 for part in text.split("## ") if part)


def test_a_slow_dialectic_is_abandoned_and_the_base_context_kept(
    make: Make, fake: FakeHoncho, workspace: str, alice: ProviderContext
) -> None:
    provider = seeded(make, alice, dialectic_timeout_s=0.3)
    fake.chat_gate = threading.Event()  # the dialectic hangs until the gate opens
    started = time.monotonic()
    text = provider.recall(alice, RecallQuery("Where do I live?", turn_index=2))
    assert time.monotonic() - started < 3
    fake.chat_gate.set()
    assert "nurse at night" in text and "What Honcho reasons" not in text


# -- recall modes and tools -----------------------------------------------------------------


def test_recall_modes(make: Make, fake: FakeHoncho, workspace: str, alice: ProviderContext) -> None:
    context_only = make(recall_mode="context")
    assert context_only.tool_schemas() == []
    answer = json.loads(context_only.handle_tool_call(alice, "honcho_search", {"query": "x"}))
    assert answer["success"] is False
    tools_only = seeded(make, alice, recall_mode="tools")
    before = len(fake.requests)
    assert tools_only.recall(alice, RecallQuery("Where do I live?", 2)) == ""
    assert len(fake.requests) == before  # no automatic recall at all
    names = [s["function"]["name"] for s in make(recall_mode="hybrid").tool_schemas()]
    assert names == [
        "honcho_profile",
        "honcho_search",
        "honcho_context",
        "honcho_reasoning",
        "honcho_conclude",
    ]


def call(provider: MemoryProvider, ctx: ProviderContext, name: str, **args: Any) -> Any:
    return json.loads(provider.handle_tool_call(ctx, name, args))


def test_profile_tool_reads_and_replaces_the_card(make: Make, alice: ProviderContext) -> None:
    provider = seeded(make, alice)
    assert call(provider, alice, "honcho_profile", action="read")["card"] == []
    call(provider, alice, "honcho_profile", action="replace", card=["Name: Alice", " "])
    read = call(provider, alice, "honcho_profile", action="read")
    assert read["card"] == ["Name: Alice"]
    assert any("nurse" in c["content"] for c in read["conclusions"])
    assert call(provider, alice, "honcho_profile", action="replace", card="x")["success"] is False


def test_search_context_and_reasoning_tools(
    make: Make, fake: FakeHoncho, workspace: str, alice: ProviderContext
) -> None:
    provider = seeded(make, alice, reasoning_level_cap="high")
    found = call(provider, alice, "honcho_search", query="nurse", limit=1)["messages"]
    assert [m["text"] for m in found] == ["I work as a nurse at night"]
    context = call(provider, alice, "honcho_context", query="cats")
    assert "Lisbon" in context["representation"]
    (asked,) = [r for r in fake.requests if r.path.endswith("/context") and workspace in r.path]
    assert asked.query["search_query"] == ["cats"]
    answer = call(
        provider, alice, "honcho_reasoning", query="Where in Lisbon?", reasoning_level="max"
    )
    assert "Lisbon" in answer["answer"] and answer["reasoning_level"] == "high"  # capped
    fixed = make(dialectic_dynamic=False, reasoning_level="minimal")
    assert "reasoning_level" not in json.dumps(fixed.tool_schemas()[3])
    fixed.initialize(alice)
    assert (
        call(fixed, alice, "honcho_reasoning", query="Lisbon?", reasoning_level="max")[
            "reasoning_level"
        ]
        == "minimal"
    )


def test_conclude_tool_creates_and_deletes_only_own_conclusions(
    make: Make, world: Callable[[], WorkspaceRec], tmp_path: Path
) -> None:
    provider = make()
    alice, bob = make_context(tmp_path, "alice"), make_context(tmp_path, "bob")
    for ctx in (alice, bob):
        provider.initialize(ctx)
    made = call(provider, alice, "honcho_conclude", action="create", content="Prefers tea")
    ids = {c.id: c for c in world().conclusions}
    assert ids[made["conclusion_id"]].observed_id == "console-alice"
    refused = call(
        provider, bob, "honcho_conclude", action="delete", conclusion_id=made["conclusion_id"]
    )
    assert refused["success"] is False and made["conclusion_id"] in {
        c.id for c in world().conclusions
    }
    call(provider, alice, "honcho_conclude", action="delete", conclusion_id=made["conclusion_id"])
    assert made["conclusion_id"] not in {c.id for c in world().conclusions}


# -- hooks ----------------------------------------------------------------------------------


def test_first_session_migrates_memory_files_once(
    make: Make, world: Callable[[], WorkspaceRec], alice: ProviderContext
) -> None:
    store = MemoryStore(alice.home, MemorySettings())
    scope = MemoryScope.private(alice.tenant)
    store.apply(scope, "user", [Operation("add", "Name is Alice")], origin="operator")
    store.apply(scope, "memory", [Operation("add", "Uses vim")], origin="operator")
    make().initialize(alice)
    make().initialize(alice)  # another process: the marker in the peer's metadata says done
    contents = sorted(c.content for c in world().conclusions)
    assert contents == ["Agent note: Uses vim", "Name is Alice"]
    assert "console-alice" in world().peers["console-alice"].metadata["mnemogate_migrated"]


def test_user_profile_writes_are_mirrored_as_conclusions(
    make: Make, world: Callable[[], WorkspaceRec], alice: ProviderContext, tmp_path: Path
) -> None:
    provider = make()
    provider.initialize(alice)
    provider.on_memory_write(alice, write_event(alice, "Is allergic to nuts"))
    provider.on_memory_write(alice, write_event(alice, "Repo uses tabs", target="memory"))
    group = group_context(tmp_path, "alice")
    provider.on_memory_write(group, write_event(group, "Group nickname Ally"))
    stray = write_event(alice, "Written in the group scope")  # an event of another scope
    provider.on_memory_write(group, stray)
    mirrored = {(c.observed_id, c.content) for c in world().conclusions}
    assert mirrored == {
        ("console-alice", "Is allergic to nuts"),
        ("console-alice__console-g1", "Group nickname Ally"),
    }


# -- groups ---------------------------------------------------------------------------------


def test_nothing_learned_in_a_dm_reaches_a_group_and_back(
    make: Make,
    fake: FakeHoncho,
    workspace: str,
    world: Callable[[], WorkspaceRec],
    alice: ProviderContext,
    tmp_path: Path,
) -> None:
    provider = seeded(make, alice, dialectic_depth=2)
    provider.sync_turn(alice, turn("My secret project is Zephyr", turn_id="t3"))
    provider.on_memory_write(alice, write_event(alice, "Works on project Zephyr"))
    provider.handle_tool_call(alice, "honcho_profile", {"action": "replace", "card": ["Zephyr"]})
    group = group_context(tmp_path, "alice")
    provider.initialize(group)
    provider.sync_turn(group, turn("In this group call me Captain Zed", turn_id="g1"))
    provider.on_memory_write(group, write_event(group, "Group calls them Captain"))
    fake.clear_requests()
    text = provider.recall(group, RecallQuery("What is my project Zephyr? Call me what?", 1))
    assert "Zephyr" not in text and "Captain Zed" in text
    for name, args in [
        ("honcho_search", {"query": "Zephyr project"}),
        ("honcho_context", {"query": "Zephyr"}),
        ("honcho_reasoning", {"query": "What is my project Zephyr about?"}),
        ("honcho_profile", {"action": "read"}),
    ]:
        assert "Zephyr" not in provider.handle_tool_call(group, name, args), name
    group_peer = "console-alice__console-g1"
    touched = {
        r.path.split("/peers/")[1].split("/")[0] for r in fake.requests if "/peers/" in r.path
    }
    assert "console-alice" not in touched and group_peer in touched
    assert any(r.query.get("peer_target") == [group_peer] for r in fake.requests)
    # ... and the group's talk never reaches the DM-wide profile.
    fake.clear_requests()
    dm_text = provider.recall(alice, RecallQuery("What should you call me, Captain?", 5))
    assert "Captain" not in dm_text and "Zephyr" in dm_text
    assert "Captain" not in provider.handle_tool_call(alice, "honcho_search", {"query": "Captain"})
    about_dm_peer = [c for c in world().conclusions if c.observed_id == "console-alice"]
    assert not [c for c in about_dm_peer if "Captain" in c.content]


def test_a_group_in_private_mode_shares_the_dm_profile(
    make: Make, alice: ProviderContext, tmp_path: Path
) -> None:
    provider = seeded(make, alice)
    shared = replace(group_context(tmp_path, "alice"), memory_scope_key=alice.namespace)
    assert "nurse at night" in provider.recall(shared, RecallQuery("Where do I work?", 1))


# -- erasure, failures, configuration --------------------------------------------------------


def test_a_session_deleted_on_the_server_is_joined_again(
    make: Make, world: Callable[[], WorkspaceRec], alice: ProviderContext
) -> None:
    provider = make()
    provider.initialize(alice)
    world().sessions.clear()  # an operator deleted it in Honcho
    with pytest.raises(HonchoCallError) as gone:
        provider.sync_turn(alice, turn("Hello"))
    assert gone.value.not_found
    provider.sync_turn(alice, turn("Hello"))  # the sync job's retry
    assert [m.content for m in world().messages] == ["Hello", "Noted."]


def test_server_down_is_a_provider_error_that_the_manager_isolates(
    alice: ProviderContext,
) -> None:
    with FakeHoncho() as gone:
        url = gone.base_url
    provider = HonchoProvider(HonchoSettings(base_url=url, read_retries=0, timeout_s=2))
    with pytest.raises(ProviderError):
        provider.initialize(alice)
    manager = MemoryManager(timeout_s=5)
    manager.register(provider)
    assert manager.recall(alice, RecallQuery("Where do I live?", 1)) == ""
    assert manager.sync_turn(alice, turn("hello")) is False
    assert manager.stats.failures >= 2
    provider.shutdown()


def test_no_base_url_means_unavailable_and_no_client(
    alice: ProviderContext, tmp_path: Path
) -> None:
    provider = load_provider("honcho", load_settings(home=tmp_path))  # the bundled entry
    assert isinstance(provider, HonchoProvider) and provider.is_available() is False
    with pytest.raises(HonchoConfigError, match="HONCHO_BASE_URL"):
        provider.initialize(alice)
    with pytest.raises(HonchoConfigError, match="ai_peer"):
        HonchoProvider(HonchoSettings(ai_peer="has space"))
    with pytest.raises(HonchoConfigError, match="peer_prefix"):  # would name assistant peers
        HonchoProvider(HonchoSettings(ai_peer="bot", peer_prefix="bot__"))
    with pytest.raises(HonchoConfigError, match="peer_aliases"):
        HonchoProvider(HonchoSettings(peer_aliases={"console:x": "mnemogate__dana"}))


def test_config_schema_and_save_config(tmp_path: Path) -> None:
    provider = HonchoProvider(HonchoSettings())
    fields = {field.name: field for field in provider.config_schema()}
    assert fields["api_key"].secret and fields["api_key"].env_var == "HONCHO_API_KEY"
    provider.save_config(
        {"base_url": "http://127.0.0.1:9", "workspace": "team", "api_key": "s3cret"}, tmp_path
    )
    saved = (tmp_path / "config.toml").read_text(encoding="utf-8")
    assert "[honcho]" in saved and 'workspace = "team"' in saved and "s3cret" not in saved
    with pytest.raises(HonchoConfigError, match="recall_mode"):
        provider.save_config({"recall_mode": "sometimes"}, tmp_path)


# -- the contract every provider passes -----------------------------------------------------


class TestHonchoContract(ProviderContract):
    @pytest.fixture(autouse=True)
    def _server(self, fake: FakeHoncho) -> None:
        self.fake = fake

    def make_provider(self, home: Path) -> MemoryProvider:
        workspace = f"c{uuid.uuid4().hex[:12]}"
        return HonchoProvider(
            HonchoSettings(base_url=self.fake.base_url, workspace=workspace, read_retries=0)
        )
