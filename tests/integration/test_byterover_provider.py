"""ByteRoverProvider with a fake ``brv`` on PATH: directories, argv, timeouts, queueing, erase."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gateway.provider_settings import ByteRoverSettings
from providers.base import MemoryProvider, RecallQuery, SyncedTurn
from providers.byterover.provider import ByteRoverProvider
from providers.contract import ProviderContract, make_context
from providers.scoping import ScopeRecord
from providers.service import ServiceError
from tests.fakes.fake_brv import FakeBrv, install_fake_brv

pytestmark = pytest.mark.integration
NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def brv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeBrv:
    fake = install_fake_brv(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{fake.directory}{os.pathsep}{os.environ['PATH']}")
    return fake


def provider_for(home: Path, **overrides: Any) -> ByteRoverProvider:
    return ByteRoverProvider(ByteRoverSettings.model_validate(overrides), home)


@pytest.fixture
def provider(brv: FakeBrv, home: Path) -> Iterator[ByteRoverProvider]:
    made = provider_for(home, auto_curate=True)
    yield made
    made.shutdown()


def call(provider: ByteRoverProvider, ctx: Any, name: str, **args: Any) -> dict[str, Any]:
    answer = json.loads(provider.handle_tool_call(ctx, name, args))
    assert isinstance(answer, dict)
    return answer


def test_each_scope_runs_brv_in_its_own_directory_and_home(
    provider: ByteRoverProvider, brv: FakeBrv, home: Path
) -> None:
    alice, bob = make_context(home, "alice"), make_context(home, "bob")
    provider.sync_turn(alice, SyncedTurn("I keep bees in Lyon", "Noted.", "s1", "t1", NOW))
    provider.sync_turn(bob, SyncedTurn("I collect old maps", "Nice.", "s1", "t1", NOW))
    assert "bees in Lyon" in provider.recall(alice, RecallQuery("where are my bees kept?"))
    assert provider.recall(bob, RecallQuery("where are my bees kept?")) == ""
    calls = brv.calls()
    root = home / "providers" / "byterover"
    assert calls[0]["argv"] == ["curate", "--", "User: I keep bees in Lyon\nAssistant: Noted."]
    assert calls[0]["cwd"] == str(root / alice.backend_key / "work")
    assert calls[0]["home"] == str(root / alice.backend_key / "home")
    assert calls[1]["cwd"] == str(root / bob.backend_key / "work")
    assert calls[2]["argv"] == ["query", "--", "where are my bees kept?"]
    assert "MNEMOGATE_HOME" not in calls[0]["env_keys"]  # the gateway's env is not passed on
    assert oct((root / alice.backend_key).stat().st_mode & 0o777) == "0o700"


def test_curation_of_turns_is_off_by_default_and_idempotent_when_on(
    brv: FakeBrv, home: Path
) -> None:
    alice = make_context(home, "alice")
    turn = SyncedTurn("I keep bees in Lyon", "Noted.", "s1", "t1", NOW)
    off = provider_for(home)
    off.sync_turn(alice, turn)
    assert brv.calls() == []
    on = provider_for(home, auto_curate=True)
    on.sync_turn(alice, turn)
    on.sync_turn(alice, turn)  # a retried job
    assert [c["argv"][0] for c in brv.calls()] == ["curate"]


def test_brv_curate_queues_and_the_sync_worker_curates(brv: FakeBrv, home: Path) -> None:
    provider = provider_for(home)  # auto_curate off: only queued curations run
    alice = make_context(home, "alice")
    answer = call(provider, alice, "brv_curate", content="Alice's cat is called Miso")
    assert answer["success"] is True and "background" in answer["result"]
    assert brv.calls() == []  # nothing ran in the gateway
    brv.set(mode="fail", code=3, stderr="server unreachable")
    with pytest.raises(ServiceError, match="exited 3: server unreachable"):
        provider.sync_turn(alice, SyncedTurn("hi", "hello", "s1", "t1", NOW))
    brv.set(mode="ok")
    provider.sync_turn(alice, SyncedTurn("hi", "hello", "s1", "t2", NOW))
    assert [c["argv"] for c in brv.calls()][-1] == ["curate", "--", "Alice's cat is called Miso"]
    assert list((home / "providers/byterover" / alice.backend_key / "pending").iterdir()) == []
    found = call(provider, alice, "brv_query", query="what is my cat called?")
    assert "Miso" in found["result"]
    assert "1 entries" in call(provider, alice, "brv_status")["status"]


def test_a_hanging_brv_is_killed_at_the_timeout(brv: FakeBrv, home: Path) -> None:
    provider = provider_for(home, query_timeout_s=0.5)
    alice = make_context(home, "alice")
    brv.set(mode="hang")
    answer = call(provider, alice, "brv_query", query="anything at all here")
    assert answer["success"] is False and "timed out after 0.5 s" in answer["error"]
    with pytest.raises(ServiceError, match="timed out"):
        provider.recall(alice, RecallQuery("anything at all here"))


def test_tool_arguments_reach_brv_as_one_argv_item(brv: FakeBrv, home: Path) -> None:
    provider = provider_for(home)
    alice = make_context(home, "alice")
    hostile = "--help; rm -rf / $(whoami) `id`"
    call(provider, alice, "brv_query", query=hostile)
    assert brv.calls()[-1]["argv"] == ["query", "--", hostile]


def test_erase_removes_every_scope_directory_of_the_tenant(
    provider: ByteRoverProvider, brv: FakeBrv, home: Path
) -> None:
    alice, bob = make_context(home, "alice"), make_context(home, "bob")
    for ctx in (alice, bob):
        provider.sync_turn(ctx, SyncedTurn("something to remember", "ok", "s1", "t1", NOW))
    group_key = "mg-console-alice-g-0000000000"
    call(provider, alice, "brv_curate", content="x")
    (home / "providers/byterover" / group_key / "work").mkdir(parents=True)
    records = [
        ScopeRecord(alice.tenant, "byterover", alice.memory_scope_key, alice.backend_key),
        ScopeRecord(alice.tenant, "byterover", "console-alice.g", group_key),
    ]
    removed, leftovers = provider.erase(alice.tenant, records)
    assert leftovers == [] and removed > 0
    root = home / "providers" / "byterover"
    assert sorted(p.name for p in root.iterdir()) == [bob.backend_key]


def test_without_brv_the_provider_is_unavailable_and_setup_says_why(
    home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    provider = provider_for(home)
    assert provider.is_available() is False
    (problem,) = provider.setup_problems()
    assert "npm install -g byterover-cli" in problem and "Elastic-2.0" in problem


class TestByteRoverContract(ProviderContract):
    @pytest.fixture(autouse=True)
    def _brv(self, brv: FakeBrv) -> None:
        self.brv = brv

    def make_provider(self, home: Path) -> MemoryProvider:
        return provider_for(home, auto_curate=True)


def test_a_claim_abandoned_by_a_dead_worker_is_curated_later(brv: FakeBrv, home: Path) -> None:
    provider = provider_for(home, curate_timeout_s=5)
    alice = make_context(home, "alice")
    call(provider, alice, "brv_curate", content="Alice's cat is called Miso")
    pending = home / "providers/byterover" / alice.backend_key / "pending"
    (queued,) = pending.glob("*.txt")
    claimed = pending / f".{queued.stem}.claimed"
    queued.rename(claimed)  # as a worker that died mid-curation left it
    provider.sync_turn(alice, SyncedTurn("hi", "hello", "s1", "t1", NOW))
    assert brv.calls() == []  # a fresh claim may still be running
    os.utime(claimed, (0, 0))
    provider.sync_turn(alice, SyncedTurn("hi", "hello", "s1", "t2", NOW))
    assert [c["argv"] for c in brv.calls()] == [["curate", "--", "Alice's cat is called Miso"]]
    assert list(pending.iterdir()) == []
