"""The memory manager: one provider, refused tool clashes, isolated and timed-out calls."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pytest

from gateway.routing import Conversation
from gateway.settings import HonchoSettings, RecallSettings, Settings
from gateway.tenants import TenantId
from providers.base import (
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
)
from providers.contract import make_context
from providers.errors import (
    InvalidProvider,
    ProviderAlreadyActive,
    ProviderUnavailable,
    ToolNameClash,
)
from providers.manager import MemoryManager

Behaviour = Literal["ok", "raise", "block"]
NOW = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def tool(name: str, *params: str) -> dict[str, Any]:
    parameters = {"type": "object", "properties": {p: {"type": "string"} for p in params}}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


class FakeProvider(MemoryProvider):
    """Records what it saw; every call succeeds, raises, or blocks until ``gate`` is set."""

    name = "fake"

    def __init__(
        self, tools: list[dict[str, Any]] | None = None, behaviour: Behaviour = "ok"
    ) -> None:
        self.tools = [tool("fake_lookup", "query")] if tools is None else tools
        self.behaviour = behaviour
        self.available = True
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.seen: list[tuple[str, ProviderContext | None, object]] = []

    def _act(self, method: str, ctx: ProviderContext | None, payload: object = None) -> str:
        self.seen.append((method, ctx, payload))
        self.entered.set()
        if self.behaviour == "raise":
            raise RuntimeError(f"{method} exploded")
        if self.behaviour == "block":
            self.gate.wait()
        return f"{method}:{ctx.namespace if ctx else '-'}"

    def is_available(self) -> bool:
        return self.available

    def initialize(self, ctx: ProviderContext) -> None:
        self._act("initialize", ctx)

    def tool_schemas(self) -> list[dict[str, Any]]:
        return self.tools

    def system_prompt_block(self) -> str:
        return self._act("system_prompt_block", None)

    def recall(self, ctx: ProviderContext, query: RecallQuery) -> str:
        return self._act("recall", ctx, query)

    def sync_turn(self, ctx: ProviderContext, turn: SyncedTurn) -> None:
        self._act("sync_turn", ctx, turn)

    def handle_tool_call(self, ctx: ProviderContext, name: str, args: dict[str, Any]) -> str:
        self._act("handle_tool_call", ctx, (name, args))
        return json.dumps({"success": True, "tool": name, "args": args})

    def shutdown(self) -> None:
        self._act("shutdown", None)

    def on_turn_start(self, ctx: ProviderContext, turn: TurnStart) -> None:
        self._act("on_turn_start", ctx, turn)

    def on_session_end(self, ctx: ProviderContext, end: SessionEnd) -> None:
        self._act("on_session_end", ctx, end)

    def on_session_switch(self, ctx: ProviderContext, switch: SessionSwitch) -> None:
        self._act("on_session_switch", ctx, switch)

    def on_pre_compress(self, ctx: ProviderContext, messages: Any) -> str:
        return self._act("on_pre_compress", ctx, messages)

    def on_memory_write(self, ctx: ProviderContext, event: MemoryWriteEvent) -> None:
        self._act("on_memory_write", ctx, event)

    def on_delegation(self, ctx: ProviderContext, delegation: Delegation) -> None:
        self._act("on_delegation", ctx, delegation)


class OtherProvider(FakeProvider):
    name = "other"


@pytest.fixture
def ctx(tmp_path: Path) -> ProviderContext:
    return make_context(tmp_path, "alice")


@pytest.fixture
def gated() -> Iterator[FakeProvider]:
    provider = FakeProvider(behaviour="block")
    yield provider
    provider.gate.set()  # let the abandoned thread finish


def registered(provider: MemoryProvider, timeout_s: float = 5.0, **kw: int) -> MemoryManager:
    manager = MemoryManager(timeout_s, **kw)
    manager.register(provider)
    return manager


def test_second_provider_is_rejected_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    manager = registered(FakeProvider())
    with pytest.raises(ProviderAlreadyActive) as excinfo:
        manager.register(OtherProvider())
    assert excinfo.value.active == "fake"
    assert manager.provider is not None and manager.provider.name == "fake"
    [record] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "'other' rejected" in record.getMessage()
    assert "'fake' is already active" in record.getMessage()


@pytest.mark.parametrize(
    ("tools", "clashes"),
    [
        ([tool("memory", "content")], ("memory",)),
        ([tool("fake_lookup"), tool("session_search", "query")], ("session_search",)),
        ([tool("fake_lookup"), tool("fake_lookup")], ("fake_lookup",)),
    ],
)
def test_clashing_tool_names_are_refused(
    tools: list[dict[str, Any]], clashes: tuple[str, ...], caplog: pytest.LogCaptureFixture
) -> None:
    manager = MemoryManager()
    with pytest.raises(ToolNameClash) as excinfo:
        manager.register(FakeProvider(tools=tools))
    assert excinfo.value.clashes == clashes
    assert manager.provider is None and manager.tool_schemas() == []
    assert f"tool names {clashes[0]} clash with core tools" in caplog.text
    manager.register(FakeProvider())  # the slot stays free for a valid provider
    assert [s["function"]["name"] for s in manager.tool_schemas()] == ["fake_lookup"]


@pytest.mark.parametrize(
    ("tools", "problem"),
    [
        ([tool("has space")], "does not match"),
        ([{"type": "function"}], "has no 'function' object"),
        ([tool("fake_who", "query", "tenant")], "declares tenant"),
        ([tool("fake_peer", "user_id")], "declares user_id"),
    ],
)
def test_malformed_or_identity_taking_tools_are_refused(
    tools: list[dict[str, Any]], problem: str
) -> None:
    with pytest.raises(InvalidProvider, match=problem):
        MemoryManager().register(FakeProvider(tools=tools))


def test_unavailable_provider_is_refused() -> None:
    provider = FakeProvider()
    provider.available = False
    with pytest.raises(ProviderUnavailable, match="is not available"):
        MemoryManager().register(provider)


Call = Callable[[MemoryManager, ProviderContext], object]
META = WriteMetadata(origin="user-chat", time=NOW, scope_key="console-alice")
CALLS: list[tuple[str, Call, object]] = [
    ("initialize", lambda m, c: m.initialize(c), False),
    ("system_prompt_block", lambda m, c: m.system_prompt_block(), ""),
    ("recall", lambda m, c: m.recall(c, RecallQuery("tea", 3)), ""),
    ("sync_turn", lambda m, c: m.sync_turn(c, SyncedTurn("hi", "yo", "s1", "t1", NOW)), False),
    ("on_turn_start", lambda m, c: m.on_turn_start(c, TurnStart(1, "hi")), None),
    ("on_session_end", lambda m, c: m.on_session_end(c, SessionEnd("s1", "reset")), False),
    (
        "on_session_switch",
        lambda m, c: m.on_session_switch(c, SessionSwitch("s0", "new")),
        False,
    ),
    ("on_pre_compress", lambda m, c: m.on_pre_compress(c, [{"role": "user"}]), ""),
    (
        "on_memory_write",
        lambda m, c: m.on_memory_write(c, MemoryWriteEvent("add", "user", "x", META)),
        None,
    ),
    ("on_delegation", lambda m, c: m.on_delegation(c, Delegation("task", "done")), None),
    ("shutdown", lambda m, c: m.shutdown(), None),
]


@pytest.mark.parametrize(("method", "call", "default"), CALLS, ids=[c[0] for c in CALLS])
def test_exception_in_each_call_is_isolated_logged_and_counted(
    method: str, call: Call, default: object, ctx: ProviderContext, caplog: pytest.LogCaptureFixture
) -> None:
    manager = registered(FakeProvider(behaviour="raise"))
    with caplog.at_level(logging.ERROR, logger="providers.isolation"):
        assert call(manager, ctx) == default
    [record] = caplog.records
    assert record.exc_info is not None and f"{method} exploded" in str(record.exc_info[1])
    stats = manager.stats.get("fake", method)
    assert (stats.calls, stats.errors, stats.timeouts) == (1, 1, 0)
    assert stats.last_error is not None and "exploded" in stats.last_error
    assert manager.stats.failures == 1


@pytest.mark.parametrize(("method", "call", "default"), CALLS, ids=[c[0] for c in CALLS])
def test_each_call_reaches_the_provider_and_is_counted(
    method: str, call: Call, default: object, ctx: ProviderContext
) -> None:
    provider = FakeProvider()
    manager = registered(provider)
    result = call(manager, ctx)
    assert result != default or default is None
    assert provider.seen[-1][0] == method
    assert manager.stats.get("fake", method).calls == 1
    assert manager.stats.failures == 0


def test_failed_tool_call_answers_error_json(ctx: ProviderContext) -> None:
    manager = registered(FakeProvider(behaviour="raise"))
    answer = json.loads(manager.handle_tool_call(ctx, "fake_lookup", {"query": "tea"}))
    assert answer["success"] is False and "did not answer" in answer["error"]
    assert manager.stats.get("fake", "handle_tool_call").errors == 1


def test_wrong_return_type_is_counted_as_an_error(ctx: ProviderContext) -> None:
    class Sloppy(FakeProvider):
        def recall(self, ctx: ProviderContext, query: RecallQuery) -> Any:
            return ["not", "text"]

    manager = registered(Sloppy())
    assert manager.recall(ctx, RecallQuery("tea")) == ""
    assert manager.stats.get("fake", "recall").last_error == "returned list, expected str"


def test_slow_call_times_out_within_budget(
    gated: FakeProvider, ctx: ProviderContext, caplog: pytest.LogCaptureFixture
) -> None:
    manager = registered(gated, timeout_s=0.2)
    started = time.monotonic()
    assert manager.recall(ctx, RecallQuery("tea")) == ""
    assert manager.sync_turn(ctx, SyncedTurn("hi", "yo", "s1", "t1", NOW)) is False
    assert time.monotonic() - started < 0.2 * 2 + 0.5
    assert manager.stats.get("fake", "recall").timeouts == 1
    assert manager.stats.get("fake", "sync_turn").timeouts == 1
    assert "timed out after 0.2s" in caplog.text
    assert "in _act" in caplog.text  # the log shows where the provider is stuck


async def test_async_call_times_out_without_blocking_the_loop(
    gated: FakeProvider, ctx: ProviderContext
) -> None:
    manager = registered(gated, timeout_s=0.3)
    pending = asyncio.create_task(manager.aio.recall(ctx, RecallQuery("tea")))
    # The loop keeps running while the provider is stuck: this await completes first.
    assert await asyncio.to_thread(gated.entered.wait, 5)
    assert not pending.done()
    started = time.monotonic()
    assert await pending == ""
    assert time.monotonic() - started < 0.3 + 0.5
    assert manager.stats.get("fake", "recall").timeouts == 1


async def test_async_wrappers_answer_like_the_sync_calls(ctx: ProviderContext) -> None:
    manager = registered(FakeProvider())
    aio = manager.aio
    assert await aio.initialize(ctx) is True
    assert await aio.recall(ctx, RecallQuery("tea")) == "recall:console-alice"
    assert await aio.sync_turn(ctx, SyncedTurn("hi", "yo", "s1", "t1", NOW)) is True
    answer = json.loads(await aio.handle_tool_call(ctx, "fake_lookup", '{"query": "tea"}'))
    assert answer == {"success": True, "tool": "fake_lookup", "args": {"query": "tea"}}
    assert await aio.on_pre_compress(ctx, []) == "on_pre_compress:console-alice"


def test_when_every_slot_is_stuck_new_calls_fail_fast(
    gated: FakeProvider, ctx: ProviderContext, caplog: pytest.LogCaptureFixture
) -> None:
    manager = registered(gated, timeout_s=0.2, max_inflight=1)
    assert manager.recall(ctx, RecallQuery("tea")) == ""
    started = time.monotonic()
    assert manager.recall(ctx, RecallQuery("tea")) == ""
    assert time.monotonic() - started < 0.1
    assert "all 1 provider calls are still running" in caplog.text
    assert len(gated.seen) == 1  # the second call never reached the provider
    gated.gate.set()
    for thread in threading.enumerate():
        if thread.name == "provider-recall":
            thread.join(5)
    assert manager.recall(ctx, RecallQuery("tea")) == "recall:console-alice"
    assert manager.stats.get("fake", "recall").timeouts == 2


def test_tool_calls_are_routed_by_name(ctx: ProviderContext) -> None:
    provider = FakeProvider(tools=[tool("fake_a", "query"), tool("fake_b", "topic")])
    manager = registered(provider)
    tools = manager.tools(ctx)
    assert sorted(tools) == ["fake_a", "fake_b"]
    answer = json.loads(tools["fake_b"].handle('{"topic": "tea"}'))
    assert answer == {"success": True, "tool": "fake_b", "args": {"topic": "tea"}}
    assert provider.seen[-1] == ("handle_tool_call", ctx, ("fake_b", {"topic": "tea"}))


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("memory", {}, "unknown provider tool 'memory'; available: fake_lookup"),
        ("nope", {}, "unknown provider tool 'nope'"),
        ("fake_lookup", "{not json", "arguments are not valid JSON"),
        ("fake_lookup", "[1, 2]", "arguments must be a JSON object"),
    ],
)
def test_unusable_tool_calls_answer_error_json_without_calling_the_provider(
    name: str, arguments: Any, error: str, ctx: ProviderContext
) -> None:
    provider = FakeProvider()
    answer = json.loads(registered(provider).handle_tool_call(ctx, name, arguments))
    assert answer["success"] is False and error in answer["error"]
    assert provider.seen == []


def test_the_model_cannot_choose_the_tenant(
    ctx: ProviderContext, caplog: pytest.LogCaptureFixture
) -> None:
    provider = FakeProvider()
    manager = registered(provider)
    forged = dict(query="tea", tenant="telegram:9", user_id="9", namespace="t-9", peer_id="t-9")
    manager.tools(ctx)["fake_lookup"].handle(json.dumps(forged))
    [(_, seen_ctx, payload)] = provider.seen
    assert seen_ctx is ctx and seen_ctx.tenant == TenantId.parse("console:alice")
    assert payload == ("fake_lookup", {"query": "tea"})
    assert "dropped undeclared arguments namespace, peer_id, tenant, user_id" in caplog.text


def test_context_is_immutable_and_consistent(ctx: ProviderContext, tmp_path: Path) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.tenant = TenantId.parse("telegram:999")  # type: ignore[misc]
    bob = TenantId.parse("console:bob")
    with pytest.raises(ValueError, match="namespace 'console-bob' is not console:alice's"):
        dataclasses.replace(ctx, namespace=bob.namespace)
    with pytest.raises(ValueError, match="memory scope 'console-bob' is not console:alice's"):
        dataclasses.replace(ctx, memory_scope_key=bob.namespace)
    with pytest.raises(ValueError, match="memory scope"):
        dataclasses.replace(ctx, memory_scope_key="console-alicex")
    assert ProviderContext.from_payload(json.loads(json.dumps(ctx.to_payload()))) == ctx


def test_context_for_a_group_conversation_uses_the_isolated_scope(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, honcho=HonchoSettings(peer_prefix="mg-", ai_peer="bot"))
    convo = Conversation(TenantId.of("telegram", 7), chat_id="-100", chat_type="group")
    ctx = ProviderContext.for_conversation(convo, session_id="s9", settings=settings)
    assert (ctx.namespace, ctx.user_peer_id, ctx.ai_peer_id) == (
        "telegram-7",
        "mg-telegram-7",
        "bot",
    )
    assert ctx.memory_scope_key == "telegram-7.telegram--100"
    assert ctx.session_key == "telegram:group:-100:7" and ctx.chat_type == "group"
    assert ctx.home == tmp_path.resolve()


def test_without_a_provider_every_call_answers_its_default(ctx: ProviderContext) -> None:
    manager = MemoryManager()
    assert manager.recall(ctx, RecallQuery("tea")) == ""
    assert manager.sync_turn(ctx, SyncedTurn("hi", "yo", "s1", "t1", NOW)) is False
    assert manager.tools(ctx) == {} and manager.tool_schemas() == []
    assert json.loads(manager.handle_tool_call(ctx, "fake_lookup", {}))["success"] is False
    assert manager.stats.snapshot() == {}


def test_timeout_comes_from_settings(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, recall=RecallSettings(provider_timeout_s=1.5))
    assert MemoryManager.from_settings(settings).timeout_s == 1.5
