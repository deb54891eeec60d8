"""The contract every memory provider must pass, as a pytest base class to subclass.

Usage in a provider's tests::

    class TestMyProviderContract(ProviderContract):
        def make_provider(self, home: Path) -> MemoryProvider:
            return MyProvider(...)

The checks call the provider directly (not through the manager) so that a crash fails the
test instead of being isolated away. Only ``is_available`` runs with the network blocked;
a provider that talks to a service should point ``make_provider`` at a local fake of it.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gateway.routing import Conversation
from providers.base import (
    CORE_TOOL_NAMES,
    PROVIDER_NAME,
    ConfigField,
    Delegation,
    MemoryProvider,
    MemoryWriteEvent,
    ProviderContext,
    RecallQuery,
    SessionEnd,
    SessionSwitch,
    SyncedTurn,
    TurnStart,
    WriteMetadata,
    check_tool_schemas,
)

SECRET = "zanzibarquokka"


def make_context(home: Path, user: str, session_id: str = "s1") -> ProviderContext:
    """A console tenant's DM context, as the gateway would build it."""
    conversation = Conversation.console(user)
    tenant = conversation.tenant
    return ProviderContext(
        tenant=tenant,
        namespace=tenant.namespace,
        user_peer_id=tenant.namespace,
        ai_peer_id="mnemogate",
        session_id=session_id,
        session_key=conversation.session_key,
        platform=tenant.platform,
        chat_type="dm",
        memory_scope_key=tenant.namespace,
        home=home,
    )


def sample_arguments(schema: dict[str, Any], text: str) -> dict[str, Any]:
    """Plausible arguments for a function tool: ``text`` for strings, small values otherwise."""
    params = schema["function"].get("parameters", {})
    args: dict[str, Any] = {}
    for key, spec in params.get("properties", {}).items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        if isinstance(spec, dict) and spec.get("enum"):
            args[key] = spec["enum"][0]
        elif kind in ("integer", "number"):
            args[key] = 5
        elif kind == "boolean":
            args[key] = False
        elif kind == "array":
            args[key] = [text]
        else:
            args[key] = text
    return args


class ProviderContract:
    """Base class of a provider's contract tests; override :meth:`make_provider`."""

    def make_provider(self, home: Path) -> MemoryProvider:
        raise NotImplementedError("override make_provider(home) in the test class")

    def tool_arguments(self, schema: dict[str, Any], text: str) -> dict[str, Any]:
        """Arguments used to probe each tool; override when the generic guess is not enough."""
        return sample_arguments(schema, text)

    @pytest.fixture
    def home(self, tmp_path: Path) -> Path:
        return tmp_path / "provider-home"

    @pytest.fixture
    def provider(self, home: Path) -> Iterator[MemoryProvider]:
        provider = self.make_provider(home)
        yield provider
        provider.shutdown()

    @pytest.fixture
    def alice(self, home: Path) -> ProviderContext:
        return make_context(home, "alice")

    @pytest.fixture
    def bob(self, home: Path) -> ProviderContext:
        return make_context(home, "bob")

    def test_name_is_a_valid_provider_name(self, provider: MemoryProvider) -> None:
        assert isinstance(provider.name, str)
        assert PROVIDER_NAME.match(provider.name), provider.name

    def test_is_available_answers_a_bool_without_network(
        self, provider: MemoryProvider, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def refuse(*args: object) -> None:
            raise AssertionError("is_available() must not use the network")

        monkeypatch.setattr(socket.socket, "connect", refuse)
        monkeypatch.setattr(socket.socket, "connect_ex", refuse)
        assert isinstance(provider.is_available(), bool)

    def test_initialize_accepts_a_context(
        self, provider: MemoryProvider, alice: ProviderContext
    ) -> None:
        assert provider.initialize(alice) is None

    def test_tool_schemas_are_well_formed_stable_and_not_core(
        self, provider: MemoryProvider
    ) -> None:
        first = provider.tool_schemas()
        names = check_tool_schemas(provider.name, first)
        assert json.dumps(first, sort_keys=True) == json.dumps(
            provider.tool_schemas(), sort_keys=True
        )
        assert len(set(names)) == len(names)
        assert not CORE_TOOL_NAMES.intersection(names)

    def test_optional_hooks_accept_typed_arguments(
        self, provider: MemoryProvider, alice: ProviderContext, home: Path
    ) -> None:
        now = datetime.now(UTC)
        provider.initialize(alice)
        assert isinstance(provider.system_prompt_block(), str)
        provider.on_turn_start(alice, TurnStart(turn_index=0, user_text="hello"))
        assert isinstance(provider.recall(alice, RecallQuery("hello", turn_index=0)), str)
        provider.sync_turn(alice, SyncedTurn("hello", "hi there", alice.session_id, "t1", now))
        meta = WriteMetadata(origin="user-chat", time=now, scope_key=alice.memory_scope_key)
        provider.on_memory_write(alice, MemoryWriteEvent("add", "user", "Likes tea", meta))
        provider.on_memory_write(
            alice, MemoryWriteEvent("replace", "user", "Likes green tea", meta, "Likes tea")
        )
        provider.on_memory_write(alice, MemoryWriteEvent("remove", "user", "", meta, "x"))
        messages = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
        assert isinstance(provider.on_pre_compress(alice, messages), str)
        provider.on_delegation(alice, Delegation(task="look up", result="found"))
        provider.on_session_switch(alice, SessionSwitch("s0", "new"))
        provider.on_session_end(alice, SessionEnd(alice.session_id, "reset"))
        fields = provider.config_schema()
        assert all(isinstance(field, ConfigField) for field in fields)
        provider.save_config({field.name: field.default or "" for field in fields}, home)

    def test_unknown_tool_answers_error_json(
        self, provider: MemoryProvider, alice: ProviderContext
    ) -> None:
        provider.initialize(alice)
        answer = json.loads(provider.handle_tool_call(alice, "no_such_tool_xyz", {}))
        assert isinstance(answer, dict)
        assert answer.get("success") is False or "error" in answer

    def test_tenants_never_see_each_others_data(
        self, provider: MemoryProvider, alice: ProviderContext, bob: ProviderContext
    ) -> None:
        now = datetime.now(UTC)
        provider.initialize(alice)
        provider.initialize(bob)
        said = f"My password hint is {SECRET}"
        provider.sync_turn(alice, SyncedTurn(said, "Noted.", alice.session_id, "t1", now))
        meta = WriteMetadata(origin="user-chat", time=now, scope_key=alice.memory_scope_key)
        provider.on_memory_write(alice, MemoryWriteEvent("add", "user", said, meta))
        query = f"password hint {SECRET}"
        assert SECRET not in provider.recall(bob, RecallQuery(query, turn_index=1))
        for schema in provider.tool_schemas():
            name = schema["function"]["name"]
            answer = provider.handle_tool_call(bob, name, self.tool_arguments(schema, query))
            assert SECRET not in answer, f"tool {name} showed alice's data to bob"
