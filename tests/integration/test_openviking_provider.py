"""OpenVikingProvider against the fake OpenViking server over HTTP: spaces, tools, sessions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gateway.provider_settings import OpenVikingSettings
from gateway.tenants import TenantId
from providers.base import MemoryProvider, RecallQuery, SessionEnd, SyncedTurn
from providers.contract import ProviderContract, make_context
from providers.ledger import TurnInFlight, TurnKey
from providers.openviking import spaces
from providers.openviking.provider import OpenVikingProvider, viking_session_id
from providers.scoping import ScopeRecord
from providers.service import ServiceError, ToolRefused
from tests.fakes.openviking_server import FakeOpenViking

pytestmark = pytest.mark.integration
NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def fake() -> Iterator[FakeOpenViking]:
    with FakeOpenViking() as server:
        yield server


def provider_for(fake: FakeOpenViking, **overrides: Any) -> OpenVikingProvider:
    values: dict[str, Any] = {"base_url": fake.base_url, "api_key": "root-key", **overrides}
    return OpenVikingProvider(OpenVikingSettings.model_validate(values))


@pytest.fixture
def provider(fake: FakeOpenViking) -> Iterator[OpenVikingProvider]:
    made = provider_for(fake)
    yield made
    made.shutdown()


def call(provider: OpenVikingProvider, ctx: Any, name: str, **args: Any) -> dict[str, Any]:
    answer = json.loads(provider.handle_tool_call(ctx, name, args))
    assert isinstance(answer, dict)
    return answer


def test_remember_writes_under_the_users_memories_and_search_finds_it(
    provider: OpenVikingProvider, fake: FakeOpenViking, tmp_path: Path
) -> None:
    alice = make_context(tmp_path, "alice")
    stored = call(
        provider, alice, "viking_remember", content="Alice keeps bees", category="preference"
    )
    assert stored["success"] is True
    user = alice.backend_key
    assert stored["uri"].startswith(f"viking://user/{user}/memories/preferences/mem_")
    assert fake.user_files(user) == {stored["uri"]: "Alice keeps bees"}
    assert all(r.header("x-openviking-user") == user for r in fake.requests)
    found = call(provider, alice, "viking_search", query="bees")
    assert [hit["uri"] for hit in found["results"]] == [stored["uri"]]
    read = call(provider, alice, "viking_read", uri=stored["uri"], level="full")
    assert read["content"] == "Alice keeps bees"
    listed = call(provider, alice, "viking_browse", action="tree")
    assert [entry["uri"] for entry in listed["entries"]] == [stored["uri"]]
    assert "Alice keeps bees" in provider.recall(alice, RecallQuery("tell me about my bees"))


@pytest.mark.parametrize(
    "uri",
    [
        "viking://user/peers/mnemogate/memories/x.md",  # the reference's form: 400 on servers
        "viking://user/mg-console-bob-0000000000/memories/x.md",  # another user
        "viking://resources/",  # account-wide, shared by every user
        "viking://user/{me}/memories/../../other/memories/x.md",
        "viking://user/{me}/memories/x.md?recursive=true",
        "viking://user/{me}X/memories/x.md",
        "viking://agent/mnemogate/memories/",
        "",
    ],
)
def test_uris_outside_the_callers_space_are_refused_before_any_request(
    provider: OpenVikingProvider, fake: FakeOpenViking, tmp_path: Path, uri: str
) -> None:
    alice = make_context(tmp_path, "alice")
    uri = uri.replace("{me}", alice.backend_key)
    for name, args in [
        ("viking_read", {"uri": uri}),
        ("viking_browse", {"action": "list", "path": uri or "x"}),
        ("viking_forget", {"uri": uri}),
        ("viking_search", {"query": "bees", "scope": uri or "x"}),
    ]:
        answer = call(provider, alice, name, **args)
        assert answer["success"] is False, (name, uri)
    assert fake.requests == []


def test_the_fake_refuses_other_users_spaces_and_the_peers_shorthand(
    provider: OpenVikingProvider, fake: FakeOpenViking, tmp_path: Path
) -> None:
    alice, bob = make_context(tmp_path, "alice"), make_context(tmp_path, "bob")
    client = provider.client()
    with pytest.raises(ServiceError) as denied:
        client.read(bob.backend_key, spaces.memories_root(alice.backend_key) + "x.md", "full")
    assert denied.value.status == 403 and denied.value.code == "PERMISSION_DENIED"
    with pytest.raises(ServiceError) as invalid:
        client.write(alice.backend_key, "viking://user/peers/mnemogate/memories/x.md", "x")
    assert invalid.value.status == 400 and invalid.value.code == "INVALID_URI"


def test_forget_deletes_one_memory_file_only(
    provider: OpenVikingProvider, fake: FakeOpenViking, tmp_path: Path
) -> None:
    alice = make_context(tmp_path, "alice")
    kept = call(provider, alice, "viking_remember", content="Keep me")["uri"]
    gone = call(provider, alice, "viking_remember", content="Forget me")["uri"]
    folder = gone.rsplit("/", 1)[0] + "/"
    assert call(provider, alice, "viking_forget", uri=folder)["success"] is False
    assert call(provider, alice, "viking_forget", uri=gone) == {"success": True, "deleted": gone}
    assert set(fake.user_files(alice.backend_key)) == {kept}


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.com/x",
        "http://localhost:8080/admin",
        "http://127.0.0.1/",
        "http://10.1.2.3/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://printer.local/",
        "http://intranet/",
        "https://user:pw@example.com/",
        "/etc/passwd",
        "git@github.com:org/repo.git",
    ],
)
def test_add_resource_refuses_anything_but_public_http_urls(
    provider: OpenVikingProvider, fake: FakeOpenViking, tmp_path: Path, url: str
) -> None:
    alice = make_context(tmp_path, "alice")
    assert call(provider, alice, "viking_add_resource", url=url)["success"] is False
    assert fake.requests == []


def test_add_resource_lands_in_the_callers_space(
    provider: OpenVikingProvider, fake: FakeOpenViking, tmp_path: Path
) -> None:
    alice = make_context(tmp_path, "alice")
    added = call(provider, alice, "viking_add_resource", url="https://example.com/bees")
    assert added["success"] is True
    (request,) = fake.calls("POST", "/api/v1/resources")
    assert request.body["parent"] == f"viking://user/{alice.backend_key}/resources/"
    assert spaces.public_url("https://93.184.216.34/x") == "https://93.184.216.34/x"
    with pytest.raises(ToolRefused):
        spaces.public_url("http://192.168.1.1/")


def test_turns_go_to_an_explicitly_created_session_once_and_commit_extracts(
    provider: OpenVikingProvider, fake: FakeOpenViking, tmp_path: Path
) -> None:
    alice = make_context(tmp_path, "alice")
    turn = SyncedTurn("I keep bees in Lyon", "Noted.", alice.session_id, "t1", NOW)
    provider.sync_turn(alice, turn)
    provider.sync_turn(alice, turn)  # a retried job delivers the same turn again
    user, session = alice.backend_key, viking_session_id(alice.session_id)
    paths = [(r.method, r.path) for r in fake.requests]
    assert paths == [
        ("POST", "/api/v1/sessions"),
        ("GET", "/api/v1/sessions"),  # earlier sessions with pending messages get committed
        ("POST", f"/api/v1/sessions/{session}/messages"),
        ("POST", f"/api/v1/sessions/{session}/messages"),
    ]
    assert [m["content"] for m in fake.sessions[(user, session)].messages] == [
        "I keep bees in Lyon",
        "Noted.",
    ]
    provider.on_session_end(alice, SessionEnd(alice.session_id, "new"))
    assert list(fake.user_files(user).values()) == [f"{user} said: I keep bees in Lyon"]


def test_a_failed_send_is_released_and_sent_again(
    provider: OpenVikingProvider, fake: FakeOpenViking, tmp_path: Path
) -> None:
    alice = make_context(tmp_path, "alice")
    turn = SyncedTurn("hello there", "hi", alice.session_id, "t1", NOW)
    fake.fail(1, status=503, path_suffix="/messages")
    with pytest.raises(ServiceError):
        provider.sync_turn(alice, turn)
    provider.sync_turn(alice, turn)
    session = fake.sessions[(alice.backend_key, viking_session_id(alice.session_id))]
    assert [m["content"] for m in session.messages] == ["hello there", "hi"]


def test_a_turn_still_in_flight_is_not_sent_twice(
    provider: OpenVikingProvider, tmp_path: Path
) -> None:
    alice = make_context(tmp_path, "alice")
    turn = SyncedTurn("hello there", "hi", alice.session_id, "t1", NOW)
    key = TurnKey(alice.tenant, "openviking", alice.backend_key, alice.session_id, "t1")
    assert provider.services.turns.claim(key) == "claimed"
    with pytest.raises(TurnInFlight):
        provider.sync_turn(alice, turn)


def test_erase_deletes_sessions_space_and_user_for_every_scope(
    provider: OpenVikingProvider, fake: FakeOpenViking, tmp_path: Path
) -> None:
    alice, bob = make_context(tmp_path, "alice"), make_context(tmp_path, "bob")
    for ctx in (alice, bob):
        call(provider, ctx, "viking_remember", content=f"{ctx.namespace} likes tea")
        provider.sync_turn(ctx, SyncedTurn("hello", "hi", ctx.session_id, "t1", NOW))
    group_key = "mg-console-alice-group-0123456789"
    records = [
        ScopeRecord(alice.tenant, "openviking", alice.memory_scope_key, alice.backend_key),
        ScopeRecord(alice.tenant, "openviking", "console-alice.g", group_key),
    ]
    removed, leftovers = provider.erase(alice.tenant, records)
    assert leftovers == [] and removed == 2  # alice's session + her space
    assert fake.user_files(alice.backend_key) == {}
    assert fake.user_files(bob.backend_key) != {}
    assert not [key for key in fake.sessions if key[0] == alice.backend_key]
    assert fake.deleted_users == [("default", alice.backend_key), ("default", group_key)]


def test_erase_reports_what_the_server_refused(
    provider: OpenVikingProvider, fake: FakeOpenViking, tmp_path: Path
) -> None:
    alice = make_context(tmp_path, "alice")
    record = ScopeRecord(alice.tenant, "openviking", alice.memory_scope_key, alice.backend_key)
    fake.fail(1, status=500, method="DELETE", path_suffix=f"/users/{alice.backend_key}")
    removed, leftovers = provider.erase(TenantId.parse("console:alice"), [record])
    assert removed == 0 and len(leftovers) == 1
    assert alice.backend_key in leftovers[0] and "500" in leftovers[0]


def test_trusted_mode_servers_have_no_user_to_delete(tmp_path: Path) -> None:
    with FakeOpenViking(admin_api=False) as fake:
        provider = provider_for(fake)
        alice = make_context(tmp_path, "alice")
        call(provider, alice, "viking_remember", content="tea")
        record = ScopeRecord(alice.tenant, "openviking", alice.memory_scope_key, alice.backend_key)
        try:
            assert provider.erase(alice.tenant, [record]) == (1, [])
        finally:
            provider.shutdown()
        assert fake.user_files(alice.backend_key) == {}


def test_a_missing_endpoint_is_reported_by_setup(tmp_path: Path) -> None:
    provider = OpenVikingProvider(OpenVikingSettings())
    assert provider.is_available() is False
    assert "OPENVIKING_ENDPOINT" in provider.setup_problems()[0]


class TestOpenVikingContract(ProviderContract):
    @pytest.fixture(autouse=True)
    def _server(self, fake: FakeOpenViking) -> None:
        self.fake = fake

    def make_provider(self, home: Path) -> MemoryProvider:
        return provider_for(self.fake)


def test_a_session_deleted_on_the_server_is_created_again(
    provider: OpenVikingProvider, fake: FakeOpenViking, tmp_path: Path
) -> None:
    alice = make_context(tmp_path, "alice")
    provider.sync_turn(alice, SyncedTurn("first", "ok", alice.session_id, "t1", NOW))
    key = (alice.backend_key, viking_session_id(alice.session_id))
    del fake.sessions[key]  # an operator removed it
    turn = SyncedTurn("second", "ok", alice.session_id, "t2", NOW)
    with pytest.raises(ServiceError):
        provider.sync_turn(alice, turn)
    provider.sync_turn(alice, turn)  # the job's retry
    assert [m["content"] for m in fake.sessions[key].messages] == ["second", "ok"]


def test_recall_keeps_only_the_users_own_memory_files(
    provider: OpenVikingProvider, fake: FakeOpenViking, tmp_path: Path
) -> None:
    alice = make_context(tmp_path, "alice")
    root = spaces.memories_root(alice.backend_key)
    fake.files[root + "events/.overview.md"] = "# Events overview: bees"
    fake.files[root + "events/mem_1.md"] = "Alice keeps bees"
    recalled = provider.recall(alice, RecallQuery("what about the bees"))
    assert "Alice keeps bees" in recalled and "overview" not in recalled
