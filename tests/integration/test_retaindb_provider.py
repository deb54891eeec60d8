"""RetainDBProvider against the fake RetainDB API over HTTP: scoping, ownership, sync, erase."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gateway.provider_settings import RetainDBSettings
from providers.base import MemoryProvider, RecallQuery, SyncedTurn
from providers.contract import ProviderContract, make_context
from providers.retaindb.provider import RetainDBProvider, overlay
from providers.scoping import ScopeRecord
from providers.service import ServiceError
from tests.fakes.retaindb_server import FakeRetainDB

pytestmark = pytest.mark.integration
NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def fake() -> Iterator[FakeRetainDB]:
    with FakeRetainDB() as server:
        yield server


def provider_for(fake: FakeRetainDB) -> RetainDBProvider:
    return RetainDBProvider(
        RetainDBSettings.model_validate({"base_url": fake.base_url, "api_key": "rdb-key"})
    )


@pytest.fixture
def provider(fake: FakeRetainDB) -> Iterator[RetainDBProvider]:
    made = provider_for(fake)
    yield made
    made.shutdown()


def call(provider: RetainDBProvider, ctx: Any, name: str, **args: Any) -> dict[str, Any]:
    answer = json.loads(provider.handle_tool_call(ctx, name, args))
    assert isinstance(answer, dict)
    return answer


def test_every_call_names_the_scopes_user_id_and_the_project(
    provider: RetainDBProvider, fake: FakeRetainDB, tmp_path: Path
) -> None:
    alice = make_context(tmp_path, "alice")
    call(provider, alice, "retaindb_remember", content="Alice keeps bees", memory_type="preference")
    call(provider, alice, "retaindb_search", query="bees")
    call(provider, alice, "retaindb_profile")
    call(provider, alice, "retaindb_context", query="bees")
    assert "Alice keeps bees" in provider.recall(alice, RecallQuery("what about my bees?"))
    for request in fake.requests:
        assert request.header("authorization") == "Bearer rdb-key"
        user = (request.body or {}).get("user_id") or request.arg("user_id")
        assert user == alice.backend_key or request.path.endswith("/" + alice.backend_key)
        assert "mnemogate" in ((request.body or {}).get("project"), request.arg("project"))


def test_turns_are_ingested_once_under_the_users_session(
    provider: RetainDBProvider, fake: FakeRetainDB, tmp_path: Path
) -> None:
    alice = make_context(tmp_path, "alice")
    turn = SyncedTurn("I keep bees in Lyon", "Noted.", alice.session_id, "t1", NOW)
    fake.fail(1, status=502, path_suffix="/ingest/session")
    with pytest.raises(ServiceError):
        provider.sync_turn(alice, turn)
    provider.sync_turn(alice, turn)
    provider.sync_turn(alice, turn)  # a retried job: already delivered
    (ingest,) = fake.ingests
    assert (ingest.user_id, ingest.session_id) == (alice.backend_key, alice.session_id)
    assert [m["role"] for m in ingest.messages] == ["user", "assistant"]
    assert ingest.idempotency_key == f"{alice.backend_key}:{alice.session_id}:t1"


def test_forget_only_deletes_the_callers_own_memories(
    provider: RetainDBProvider, fake: FakeRetainDB, tmp_path: Path
) -> None:
    alice, bob = make_context(tmp_path, "alice"), make_context(tmp_path, "bob")
    alices = call(provider, alice, "retaindb_remember", content="Alice's secret")["id"]
    refused = call(provider, bob, "retaindb_forget", memory_id=alices)
    assert refused["success"] is False and "not one of this user's memories" in refused["error"]
    assert alices in fake.memories and not fake.calls("DELETE")
    assert call(provider, alice, "retaindb_forget", memory_id=alices)["success"] is True
    assert alices not in fake.memories


def test_remember_validates_its_arguments(provider: RetainDBProvider, tmp_path: Path) -> None:
    alice = make_context(tmp_path, "alice")
    assert call(provider, alice, "retaindb_remember", content="")["success"] is False
    bad_type = call(provider, alice, "retaindb_remember", content="x", memory_type="secret")
    assert bad_type["success"] is False
    bad_importance = call(provider, alice, "retaindb_remember", content="x", importance="high")
    assert bad_importance["success"] is False


def test_erase_deletes_every_memory_of_each_scope_and_reports_transcripts(
    provider: RetainDBProvider, fake: FakeRetainDB, tmp_path: Path
) -> None:
    alice, bob = make_context(tmp_path, "alice"), make_context(tmp_path, "bob")
    for ctx in (alice, bob):
        call(provider, ctx, "retaindb_remember", content=f"{ctx.namespace} likes tea")
        provider.sync_turn(ctx, SyncedTurn("I like tea", "ok", ctx.session_id, "t1", NOW))
    record = ScopeRecord(alice.tenant, "retaindb", alice.memory_scope_key, alice.backend_key)
    removed, leftovers = provider.erase(alice.tenant, [record])
    assert removed == 2
    assert fake.user_memories(alice.backend_key) == [] and fake.user_memories(bob.backend_key)
    (left,) = leftovers
    assert "session transcripts" in left and alice.backend_key in left


def test_erase_reports_a_scope_it_could_not_reach(tmp_path: Path) -> None:
    with FakeRetainDB() as fake:
        provider = provider_for(fake)
    alice = make_context(tmp_path, "alice")  # the server is gone now
    record = ScopeRecord(alice.tenant, "retaindb", alice.memory_scope_key, alice.backend_key)
    try:
        removed, leftovers = provider.erase(alice.tenant, [record])
    finally:
        provider.shutdown()
    assert removed == 0 and len(leftovers) == 2
    assert "ConnectError" in leftovers[0] and alice.backend_key in leftovers[0]


def test_overlay_dedupes_and_bounds() -> None:
    text = overlay(["Likes tea", "likes  TEA!"], ["Likes tea", "Lives in Lyon"], 4000)
    assert text.count("tea") == 1 and "Lives in Lyon" in text
    assert overlay([], [], 4000) == ""
    assert len(overlay(["x" * 300] * 5, ["y" * 300] * 5, 500)) <= 500


def test_without_an_api_key_it_is_unavailable_and_setup_says_so(tmp_path: Path) -> None:
    provider = RetainDBProvider(RetainDBSettings())
    assert provider.is_available() is False
    assert [f.env_var for f in provider.config_schema() if f.secret] == ["RETAINDB_API_KEY"]


class TestRetainDBContract(ProviderContract):
    @pytest.fixture(autouse=True)
    def _server(self, fake: FakeRetainDB) -> None:
        self.fake = fake

    def make_provider(self, home: Path) -> MemoryProvider:
        return provider_for(self.fake)
