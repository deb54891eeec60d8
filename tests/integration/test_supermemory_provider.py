"""SupermemoryProvider against the stateful fake Supermemory over loopback HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gateway.errors import ConfigError
from gateway.provider_settings import SupermemorySettings
from gateway.settings import load_settings
from gateway.tenants import TenantId
from providers.base import (
    MemoryProvider,
    MemoryWriteEvent,
    ProviderContext,
    ProviderServices,
    RecallQuery,
    SessionEnd,
    SyncedTurn,
    WriteMetadata,
)
from providers.contract import ProviderContract, make_context
from providers.registry import missing_requirements
from providers.schemas import check_tool_schemas
from providers.scoping import ScopeRecord
from providers.supermemory.client import SupermemoryError
from providers.supermemory.provider import SupermemoryProvider
from providers.supermemory.tools import SearchLedger
from tests.conftest import run_cli
from tests.fakes.llm_server import FakeLLM
from tests.fakes.supermemory_server import FakeSupermemory

pytestmark = pytest.mark.integration

NOW = datetime(2026, 12, 1, tzinfo=UTC)


class Transcripts:
    """An in-memory :class:`providers.base.SessionTranscripts`."""

    def __init__(self) -> None:
        self.sessions: dict[tuple[str, str], list[tuple[str, str]]] = {}

    def messages(self, tenant: TenantId, session_id: str) -> list[tuple[str, str]]:
        return list(self.sessions.get((str(tenant), session_id), []))


@pytest.fixture
def server() -> Iterator[FakeSupermemory]:
    with FakeSupermemory() as fake:
        yield fake


@pytest.fixture
def transcripts() -> Transcripts:
    return Transcripts()


def build(server: FakeSupermemory, home: Path, **overrides: Any) -> SupermemoryProvider:
    options: dict[str, Any] = {"api_key": server.api_key, "base_url": server.base_url}
    return SupermemoryProvider(SupermemorySettings(**options, **overrides), home)


@pytest.fixture
def provider(
    server: FakeSupermemory, transcripts: Transcripts, home: Path
) -> Iterator[SupermemoryProvider]:
    built = build(server, home)
    built.attach(ProviderServices(transcripts=transcripts))
    yield built
    built.shutdown()


class TestSupermemoryContract(ProviderContract):
    @pytest.fixture(autouse=True)
    def _server(self, server: FakeSupermemory) -> None:
        self.server = server

    def make_provider(self, home: Path) -> MemoryProvider:
        return build(self.server, home)


def call(provider: MemoryProvider, ctx: ProviderContext, name: str, **args: Any) -> Any:
    return json.loads(provider.handle_tool_call(ctx, name, args))


def end_session(
    provider: SupermemoryProvider, transcripts: Transcripts, ctx: ProviderContext, *said: str
) -> None:
    messages = [("user" if i % 2 == 0 else "assistant", text) for i, text in enumerate(said)]
    transcripts.sessions[(str(ctx.tenant), ctx.session_id)] = messages
    provider.on_session_end(ctx, SessionEnd(ctx.session_id, "new"))


def test_tools_include_the_kebab_aliases_and_no_container_argument(
    provider: SupermemoryProvider,
) -> None:
    names = list(check_tool_schemas("supermemory", provider.tool_schemas()))
    assert names == [
        "supermemory_store",
        "supermemory_search",
        "supermemory_forget",
        "supermemory_profile",
        "supermemory-save",
        "supermemory-search",
        "supermemory-forget",
        "supermemory-profile",
    ]
    for schema in provider.tool_schemas():
        assert "container_tag" not in schema["function"]["parameters"]["properties"]


def test_session_is_ingested_once_under_its_id_in_the_tenants_container(
    provider: SupermemoryProvider, transcripts: Transcripts, server: FakeSupermemory, home: Path
) -> None:
    alice = make_context(home, "alice", session_id="sess-1")
    end_session(provider, transcripts, alice, "I am training for a marathon", "Great!")
    end_session(provider, transcripts, alice, "I am training for a marathon", "Great!")
    posts = server.calls("POST", "/v4/conversations")
    assert [p.body["conversationId"] for p in posts] == ["sess-1", "sess-1"]
    assert posts[0].body["containerTags"] == [alice.backend_key]
    assert posts[0].body["messages"][0] == {
        "role": "user",
        "content": "I am training for a marathon",
    }
    assert server.memory_texts(alice.backend_key) == ["I am training for a marathon"]
    bob = make_context(home, "bob")
    assert provider.recall(bob, RecallQuery("marathon training")) == ""


def test_short_or_empty_sessions_are_not_ingested(
    provider: SupermemoryProvider, transcripts: Transcripts, server: FakeSupermemory, home: Path
) -> None:
    alice = make_context(home, "alice")
    end_session(provider, transcripts, alice)
    end_session(provider, transcripts, alice, "hi")
    assert server.calls("POST", "/v4/conversations") == []


def test_recall_has_the_profile_on_the_first_turn_and_every_n_turns(
    server: FakeSupermemory, home: Path
) -> None:
    provider = build(server, home, profile_frequency=3)
    alice = make_context(home, "alice")
    call(provider, alice, "supermemory_store", content="Lives in Lisbon")
    call(provider, alice, "supermemory_store", content="Works as a nurse")
    first = provider.recall(alice, RecallQuery("still in Lisbon?", turn_index=0))
    assert "User profile:" in first and "Works as a nurse" in first
    second = provider.recall(alice, RecallQuery("still in Lisbon?", turn_index=1))
    assert "User profile:" not in second and "- Lives in Lisbon" in second
    assert "Works as a nurse" not in second
    assert "User profile:" in provider.recall(alice, RecallQuery("Lisbon", turn_index=3))
    provider.shutdown()


def test_forget_only_ids_a_search_in_the_same_scope_returned(
    provider: SupermemoryProvider, server: FakeSupermemory, home: Path
) -> None:
    alice, bob = make_context(home, "alice"), make_context(home, "bob")
    call(provider, alice, "supermemory_store", content="Allergic to peanuts")
    call(provider, bob, "supermemory_store", content="Allergic to peanuts too")
    guess = call(provider, alice, "supermemory_forget", query="peanuts")
    assert "nothing was deleted" in guess["note"]
    assert server.memory_texts(alice.backend_key) == ["Allergic to peanuts"]
    bob_id = call(provider, bob, "supermemory_search", query="peanuts")["results"][0]["id"]
    refused = call(provider, alice, "supermemory_forget", id=bob_id)
    assert refused["success"] is False and "recent supermemory_search" in refused["error"]
    assert server.memory_texts(bob.backend_key) == ["Allergic to peanuts too"]
    alice_id = guess["results"][0]["id"]
    assert call(provider, alice, "supermemory_forget", id=alice_id)["forgotten"] == alice_id
    assert server.memory_texts(alice.backend_key) == []
    again = call(provider, alice, "supermemory-forget", id=alice_id)  # used up
    assert again["success"] is False
    assert server.calls("DELETE", "/v4/memories")[0].body == {
        "containerTag": alice.backend_key,
        "id": alice_id,
    }


def test_search_ids_expire_after_the_window() -> None:
    now = [100.0]
    ledger = SearchLedger(60.0, clock=lambda: now[0])
    ledger.remember("k", ["m1", "m2"])
    assert ledger.take("k", "m1") is True
    now[0] += 61
    assert ledger.take("k", "m2") is False
    assert ledger.take("other", "m1") is False


def test_store_search_profile_and_aliases(provider: SupermemoryProvider, home: Path) -> None:
    alice = make_context(home, "alice")
    saved = call(provider, alice, "supermemory-save", content="Plays cello", metadata={"k": "v"})
    assert saved["saved"] is True and saved["id"].startswith("doc_")
    found = call(provider, alice, "supermemory_search", query="cello", limit=3)
    assert found["count"] == 1 and found["results"][0]["content"] == "Plays cello"
    profile = call(provider, alice, "supermemory-profile", query="cello")
    assert profile["static"] == ["Plays cello"] and profile["results"][0]["content"]
    assert (
        "metadata" in call(provider, alice, "supermemory_store", content="x", metadata=[1])["error"]
    )
    assert "query" in call(provider, alice, "supermemory_search", query="")["error"]


def test_curated_memory_additions_are_mirrored(
    provider: SupermemoryProvider, server: FakeSupermemory, home: Path
) -> None:
    alice = make_context(home, "alice")
    meta = WriteMetadata(origin="user-chat", time=NOW, scope_key=alice.memory_scope_key)
    provider.on_memory_write(alice, MemoryWriteEvent("add", "user", "Has two kids", meta))
    provider.on_memory_write(alice, MemoryWriteEvent("remove", "user", "", meta, "x"))
    assert server.memory_texts(alice.backend_key) == ["Has two kids"]


def test_erase_deletes_every_container_and_reports_failures(
    provider: SupermemoryProvider, server: FakeSupermemory, home: Path
) -> None:
    alice, bob = make_context(home, "alice"), make_context(home, "bob")
    group = ProviderContext(
        **{n: getattr(alice, n) for n in alice.__dataclass_fields__}
        | {"memory_scope_key": f"{alice.namespace}.g1"}
    )
    for ctx, text in ((alice, "DM fact"), (group, "group fact"), (bob, "bob fact")):
        call(provider, ctx, "supermemory_store", content=text)
    scopes = [
        ScopeRecord(alice.tenant, "supermemory", c.memory_scope_key, c.backend_key)
        for c in (alice, group)
    ]
    assert provider.erase(alice.tenant, scopes) == (2, [])
    assert alice.backend_key not in server.containers and group.backend_key not in server.containers
    assert server.memory_texts(bob.backend_key) == ["bob fact"]
    server.fail(times=2, status=500)
    removed, leftovers = provider.erase(alice.tenant, scopes)
    assert removed == 0 and len(leftovers) == 2 and all("not erased" in x for x in leftovers)


def test_outage_gives_tool_errors_and_no_retries(
    provider: SupermemoryProvider, server: FakeSupermemory, home: Path
) -> None:
    alice = make_context(home, "alice")
    server.fail(times=1, status=503)
    answer = call(provider, alice, "supermemory_store", content="Likes jazz")
    assert answer["success"] is False and "could not answer" in answer["error"]
    assert len(server.calls("POST", "/v3/documents")) == 1
    with pytest.raises(Exception, match="503"):
        server.fail(times=1, status=503)
        provider.recall(alice, RecallQuery("jazz"))


def test_health_and_setup(server: FakeSupermemory, home: Path) -> None:
    provider = build(server, home)
    assert provider.health() == f"{server.base_url} reachable"
    provider.shutdown()
    settings = load_settings(home=home, memory={"provider": "supermemory"})
    assert missing_requirements("supermemory", settings) == [
        "environment variable SUPERMEMORY_API_KEY is not set (Supermemory API key)"
    ]
    assert SupermemoryProvider.from_settings(settings).is_available() is False


def test_doctor_checks_the_supermemory_service(server: FakeSupermemory, home: Path) -> None:
    with FakeLLM() as llm:
        env = {
            "MNEMOGATE_MEMORY__PROVIDER": "supermemory",
            "MNEMOGATE_LLM__BASE_URL": llm.base_url,
            "MNEMOGATE_LLM__MODEL": "fake-model",
            "SUPERMEMORY_API_KEY": server.api_key,
        }
        healthy = run_cli(["doctor"], home=home, SUPERMEMORY_BASE_URL=server.base_url, **env)
        assert healthy.returncode == 0, healthy.stdout + healthy.stderr
        assert f"✓ provider: supermemory: {server.base_url} reachable" in healthy.stdout
        down = run_cli(["doctor"], home=home, SUPERMEMORY_BASE_URL="http://127.0.0.1:9", **env)
    assert down.returncode == 1
    assert "✗ provider: supermemory: SupermemoryError" in down.stdout


def test_a_base_url_without_scheme_is_refused_with_the_setting_named(home: Path) -> None:
    with pytest.raises(ConfigError, match=r"supermemory\.base_url \(SUPERMEMORY_BASE_URL\)"):
        load_settings(home=home, supermemory={"base_url": "api.supermemory.ai"})


def test_a_failed_ingest_is_posted_by_the_next_sync_of_the_scope(
    provider: SupermemoryProvider, transcripts: Transcripts, server: FakeSupermemory, home: Path
) -> None:
    alice, bob = make_context(home, "alice", session_id="s-old"), make_context(home, "bob")
    server.fail(times=1, status=503)
    with pytest.raises(SupermemoryError):
        end_session(provider, transcripts, alice, "I am training for a marathon", "Great!")
    assert server.memory_texts(alice.backend_key) == []
    later = SyncedTurn("next", "ok", "s-new", "t1", NOW)
    provider.sync_turn(bob, later)  # another scope's sync does not touch alice's session
    assert len(server.calls("POST", "/v4/conversations")) == 1
    provider.sync_turn(make_context(home, "alice", session_id="s-new"), later)
    assert server.memory_texts(alice.backend_key) == ["I am training for a marathon"]
    provider.sync_turn(make_context(home, "alice", session_id="s-new"), later)
    assert len(server.calls("POST", "/v4/conversations")) == 2  # posted once more, then done


def test_erasure_drops_pending_ingests(
    provider: SupermemoryProvider, transcripts: Transcripts, server: FakeSupermemory, home: Path
) -> None:
    alice = make_context(home, "alice")
    server.fail(times=1, status=503)
    with pytest.raises(SupermemoryError):
        end_session(provider, transcripts, alice, "I am training for a marathon", "Great!")
    assert provider.pending.waiting(alice.backend_key)
    assert provider.erase(alice.tenant)[1] == []
    assert provider.pending.waiting(alice.backend_key) == []
    assert not any((home / "supermemory" / "pending").rglob("*.json"))
