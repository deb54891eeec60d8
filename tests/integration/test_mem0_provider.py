"""Mem0Provider on the real ``mem0ai`` library (oss: local Qdrant in a temp dir, the fake LLM
for extraction and embeddings) and on the real ``MemoryClient`` against the fake platform.

Both modes run the same checks: the provider contract, isolation of user ids, ownership
checks before update/delete, idempotent sync, erasure of every scope.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gateway.errors import ConfigError
from gateway.settings import Settings, load_settings
from gateway.tenants import TenantId
from providers.base import MemoryProvider, ProviderContext, RecallQuery, SyncedTurn
from providers.contract import ProviderContract, make_context
from providers.mem0.provider import Mem0Provider
from providers.registry import missing_requirements
from providers.scoping import ScopeRecord
from tests.conftest import REPO, cli_env, run_cli
from tests.fakes import mem0_llm
from tests.fakes.llm_server import FakeLLM
from tests.fakes.mem0_server import FakeMem0

pytestmark = pytest.mark.integration

DIMS = 32
NOW = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        server.handler = mem0_llm.handler
        yield server


@pytest.fixture
def platform() -> Iterator[FakeMem0]:
    with FakeMem0() as server:
        yield server


def oss_settings(home: Path, llm: FakeLLM, **mem0: Any) -> Settings:
    return load_settings(
        home=home,
        llm={"base_url": llm.base_url, "model": "fake-model"},
        memory={"provider": "mem0"},
        mem0={"embedding_dims": DIMS, "timeout_s": 10, **mem0},
    )


def platform_settings(home: Path, server: FakeMem0, **mem0: Any) -> Settings:
    return load_settings(
        home=home,
        memory={"provider": "mem0"},
        mem0={"mode": "platform", "base_url": server.base_url, "timeout_s": 5, **mem0},
    )


@pytest.fixture(params=["oss", "platform"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def provider(
    mode: str, home: Path, llm: FakeLLM, platform: FakeMem0, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Mem0Provider]:
    if mode == "platform":
        monkeypatch.setenv("MEM0_API_KEY", platform.api_key)
        built = Mem0Provider.from_settings(platform_settings(home, platform))
    else:
        built = Mem0Provider.from_settings(oss_settings(home, llm))
    yield built
    built.shutdown()


def turn(text: str, turn_id: str, session: str = "s1") -> SyncedTurn:
    return SyncedTurn(text, "Noted.", session, turn_id, NOW)


def call(provider: MemoryProvider, ctx: ProviderContext, name: str, **args: Any) -> Any:
    return json.loads(provider.handle_tool_call(ctx, name, args))


class TestMem0OssContract(ProviderContract):
    @pytest.fixture(autouse=True)
    def _llm(self, llm: FakeLLM) -> None:
        self.llm = llm

    def make_provider(self, home: Path) -> MemoryProvider:
        return Mem0Provider.from_settings(oss_settings(home, self.llm))


class TestMem0PlatformContract(ProviderContract):
    @pytest.fixture(autouse=True)
    def _server(self, platform: FakeMem0, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("MEM0_API_KEY", platform.api_key)
        self.server = platform

    def make_provider(self, home: Path) -> MemoryProvider:
        return Mem0Provider.from_settings(platform_settings(home, self.server))


def test_a_fact_is_recalled_for_its_user_only(provider: Mem0Provider, home: Path) -> None:
    alice, bob = make_context(home, "alice"), make_context(home, "bob")
    provider.sync_turn(alice, turn("I keep bees on the allotment", "t1"))
    recalled = provider.recall(alice, RecallQuery("what about my bees", turn_index=1))
    assert "I keep bees on the allotment" in recalled
    assert provider.recall(bob, RecallQuery("what about my bees", turn_index=1)) == ""
    found = call(provider, bob, "mem0_search", query="bees allotment")
    assert found == {"success": True, "results": []}


def test_sync_is_idempotent_per_turn_id(provider: Mem0Provider, home: Path) -> None:
    alice = make_context(home, "alice")
    provider.sync_turn(alice, turn("My cat is called Miso", "t1"))
    provider.sync_turn(alice, turn("My cat is called Miso", "t1"))  # a redelivered job
    provider.sync_turn(alice, turn("My cat is called Miso", "t2"))  # same fact, new turn
    hits = call(provider, alice, "mem0_search", query="cat called Miso")["results"]
    assert [hit["memory"] for hit in hits] == ["My cat is called Miso"]


def test_tools_add_search_update_delete(provider: Mem0Provider, home: Path) -> None:
    alice = make_context(home, "alice")
    added = call(provider, alice, "mem0_add", content="Prefers oat milk")
    assert added["success"] is True and len(added["ids"]) == 1
    memory_id = added["ids"][0]
    hits = call(provider, alice, "mem0_search", query="oat milk", top_k=3)["results"]
    assert [h["id"] for h in hits] == [memory_id]
    assert call(provider, alice, "mem0_update", memory_id=memory_id, text="Prefers soy milk")[
        "success"
    ]
    hits = call(provider, alice, "mem0_search", query="soy milk")["results"]
    assert hits[0]["memory"] == "Prefers soy milk"
    assert call(provider, alice, "mem0_delete", memory_id=memory_id)["success"] is True
    assert call(provider, alice, "mem0_search", query="soy milk")["results"] == []


def test_update_and_delete_refuse_another_users_memory(provider: Mem0Provider, home: Path) -> None:
    alice, bob = make_context(home, "alice"), make_context(home, "bob")
    memory_id = call(provider, alice, "mem0_add", content="Alice's door code is 4711")["ids"][0]
    for name, args in (("mem0_update", {"text": "pwned"}), ("mem0_delete", {})):
        answer = call(provider, bob, name, memory_id=memory_id, **args)
        assert answer["success"] is False and "no memory with that id" in answer["error"]
    missing = call(provider, bob, "mem0_delete", memory_id="00000000-0000-0000-0000-000000000000")
    assert missing["error"] == answer["error"]  # a foreign id looks like a missing one
    hits = call(provider, alice, "mem0_search", query="door code")["results"]
    assert [h["memory"] for h in hits] == ["Alice's door code is 4711"]


def test_bad_tool_arguments_get_clear_errors(provider: Mem0Provider, home: Path) -> None:
    alice = make_context(home, "alice")
    assert "query" in call(provider, alice, "mem0_search", query="  ")["error"]
    assert "top_k" in call(provider, alice, "mem0_search", query="x", top_k="many")["error"]
    assert "content" in call(provider, alice, "mem0_add", content="")["error"]
    assert "longer" in call(provider, alice, "mem0_add", content="x" * 3000)["error"]
    assert "no memory" in call(provider, alice, "mem0_delete", memory_id="../../etc")["error"]


def test_erase_removes_every_scope_of_the_tenant(provider: Mem0Provider, home: Path) -> None:
    alice, bob = make_context(home, "alice"), make_context(home, "bob")
    group = ProviderContext(**{**_fields(alice), "memory_scope_key": f"{alice.namespace}.g1"})
    provider.sync_turn(alice, turn("I grow chillies", "t1"))
    call(provider, group, "mem0_add", content="Group plans a picnic")
    provider.sync_turn(bob, turn("I grow tomatoes", "t1"))
    scopes = [
        ScopeRecord(alice.tenant, "mem0", ctx.memory_scope_key, ctx.backend_key)
        for ctx in (alice, group)
    ]
    removed, leftovers = provider.erase(alice.tenant, scopes)
    assert (removed, leftovers) == (2, [])
    assert provider.recall(alice, RecallQuery("chillies")) == ""
    assert provider.recall(group, RecallQuery("picnic")) == ""
    assert "I grow tomatoes" in provider.recall(bob, RecallQuery("tomatoes"))


def test_health_reports_the_mode(provider: Mem0Provider, mode: str) -> None:
    assert provider.health().startswith(f"{mode} mode")


def test_platform_outage_raises_and_writes_are_sent_once(
    home: Path, platform: FakeMem0, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEM0_API_KEY", platform.api_key)
    provider = Mem0Provider.from_settings(platform_settings(home, platform))
    alice = make_context(home, "alice-outage")
    provider.health()  # the client is built (its ping) before the failure is scripted
    before = len(platform.calls("POST", "/v3/memories/add/"))
    platform.fail(times=2, status=503)  # has_turn's list, then the add would both fail
    with pytest.raises(Exception, match=r"503|unavailable|Service"):
        provider.sync_turn(alice, turn("I play the oboe", "t1"))
    assert len(platform.calls("POST", "/v3/memories/add/")) == before
    answer = call(provider, alice, "mem0_add", content="I play the oboe")
    assert answer["success"] is False and "Mem0 could not answer" in answer["error"]
    assert len(platform.calls("POST", "/v3/memories/add/")) == before + 1  # tried once, no retry
    provider.shutdown()


def test_erase_reports_what_it_could_not_remove(
    home: Path, platform: FakeMem0, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEM0_API_KEY", platform.api_key)
    provider = Mem0Provider.from_settings(platform_settings(home, platform))
    provider.health()
    tenant = TenantId.parse("console:zed")
    platform.fail(times=1, status=500)
    removed, leftovers = provider.erase(tenant)
    assert removed == 0 and len(leftovers) == 1 and "not erased" in leftovers[0]
    provider.shutdown()


def test_setup_reports_missing_api_key_in_platform_mode(home: Path, platform: FakeMem0) -> None:
    missing = missing_requirements("mem0", platform_settings(home, platform))
    assert missing == ["environment variable MEM0_API_KEY is not set (Mem0 platform API key)"]


def test_oss_mode_is_unavailable_without_an_llm_endpoint(home: Path) -> None:
    provider = Mem0Provider.from_settings(load_settings(home=home, memory={"provider": "mem0"}))
    assert provider.is_available() is False


def test_oss_telemetry_is_off_after_use(provider: Mem0Provider, mode: str) -> None:
    provider.health()
    import mem0.memory.telemetry as telemetry

    assert telemetry.MEM0_TELEMETRY is False


def _fields(ctx: ProviderContext) -> dict[str, Any]:
    return {name: getattr(ctx, name) for name in ctx.__dataclass_fields__}


def test_setup_names_the_extra_when_mem0ai_is_missing(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mem0" else real(name, *a)
    )
    missing = missing_requirements("mem0", load_settings(home=home))
    assert missing == ["Python packages missing (mem0): pip install 'mnemogate[mem0]'"]


@pytest.mark.parametrize("mode", ["oss", "platform"])
def test_doctor_checks_mem0(mode: str, home: Path, llm: FakeLLM, platform: FakeMem0) -> None:
    env = {
        "MNEMOGATE_MEMORY__PROVIDER": "mem0",
        "MNEMOGATE_LLM__BASE_URL": llm.base_url,
        "MNEMOGATE_LLM__MODEL": "fake-model",
        "MNEMOGATE_MEM0__MODE": mode,
        "MNEMOGATE_MEM0__BASE_URL": platform.base_url,
        "MEM0_API_KEY": platform.api_key,
    }
    healthy = run_cli(["doctor"], home=home, **env)
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    assert f"✓ provider: mem0: {mode} mode" in healthy.stdout
    if mode == "platform":
        down = run_cli(["doctor"], home=home, **{**env, "MEM0_API_KEY": "wrong"})
        assert down.returncode == 1 and "✗ provider: mem0:" in down.stdout


ADDER = """
import sys
from pathlib import Path
from gateway.errors import ConfigError
from gateway.settings import load_settings
from providers.mem0.provider import Mem0Provider
home, url, who = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
settings = load_settings(
    home=home, llm={"base_url": url, "model": "fake-model"}, mem0={"embedding_dims": 32}
)
provider = Mem0Provider.from_settings(settings)
for i in range(3):
    provider.backend.add("mg-shared", [{"role": "user", "content": f"{who} fact {i}"}], {}, False)
provider.shutdown()
"""


def test_processes_share_the_local_store_one_call_at_a_time(home: Path, llm: FakeLLM) -> None:
    """Qdrant's local folder admits one client; the file lock lets two processes write."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", ADDER, str(home), llm.base_url, f"p{n}"],
            env=cli_env(home),
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]
    provider = Mem0Provider.from_settings(oss_settings(home, llm))
    try:
        hits = provider.backend.search("mg-shared", "fact", 50, 0.0)
        assert sorted(hit.memory for hit in hits) == sorted(
            f"p{n} fact {i}" for n in range(2) for i in range(3)
        )
    finally:
        provider.shutdown()


def test_endpoint_urls_are_checked_when_settings_load(home: Path) -> None:
    with pytest.raises(ConfigError, match=r"mem0\.embedding_base_url"):
        load_settings(home=home, mem0={"embedding_base_url": "localhost:8080/v1"})


def test_erased_text_is_gone_from_the_local_store_files(home: Path, llm: FakeLLM) -> None:
    provider = Mem0Provider.from_settings(oss_settings(home, llm))
    alice, bob = make_context(home, "alice"), make_context(home, "bob")
    try:
        for i in range(20):
            call(provider, bob, "mem0_add", content=f"Bob's note {i} " + "x" * 200)
        call(provider, alice, "mem0_add", content="My locker code is zanzibarquokka")
        for i in range(20):
            call(provider, bob, "mem0_add", content=f"Bob's later note {i} " + "y" * 200)
        assert provider.erase(alice.tenant) == (1, [])
    finally:
        provider.shutdown()
    files = [path for path in (home / "mem0").rglob("*") if path.is_file()]
    assert files and not any(b"zanzibarquokka" in path.read_bytes() for path in files)
