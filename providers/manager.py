"""The memory manager: the one active provider, each call isolated, timed out and counted.

:class:`MemoryManager` is synchronous (workers, tool handlers);
:class:`AsyncMemoryManager` offers the same calls to the event loop. A provider call that
raises or overruns its timeout is logged with a traceback (for a timeout: where the provider
is stuck), counted in :class:`ProviderStats`, and answered with a safe default — "" for text,
False for "did it work", error JSON for a tool — so it never breaks a turn.
"""

from __future__ import annotations

import copy
import json
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from providers.base import (
    CORE_TOOL_NAMES,
    Delegation,
    MemoryProvider,
    MemoryWriteEvent,
    ProviderContext,
    ProviderServices,
    RecallQuery,
    SessionEnd,
    SessionSwitch,
    SyncedTurn,
    TurnStart,
    check_tool_schemas,
    declared_arguments,
    tool_error,
)
from providers.errors import (
    InvalidProvider,
    ProviderAlreadyActive,
    ProviderError,
    ProviderUnavailable,
    ToolNameClash,
)
from providers.isolation import FAILED, IsolatedCalls, ProviderStats, off_loop
from providers.scoping import ScopeRecord

if TYPE_CHECKING:
    from gateway.settings import Settings
    from gateway.tenants import TenantId

log = logging.getLogger(__name__)

T = TypeVar("T")
NOT_ANSWERED = "the memory provider did not answer; continue without it"


class ProviderTool:
    """One provider tool bound to a gateway-built context; fits the agent's tool loop."""

    def __init__(self, manager: MemoryManager, ctx: ProviderContext, name: str) -> None:
        self._manager = manager
        self._ctx = ctx
        self.name = name

    def handle(self, arguments: dict[str, Any] | str) -> str:
        return self._manager.handle_tool_call(self._ctx, self.name, arguments)


class MemoryManager:
    """Holds at most one external provider and calls it safely (blocking, with a timeout).

    Calls run through :class:`~providers.isolation.IsolatedCalls` (a thread each, at most
    ``max_inflight`` at once, abandoned after ``timeout_s``). The tenant of every call is
    the ``ctx`` argument the gateway built: tool arguments from the model are cut down to
    the parameters the tool declares, and a tool may not declare identity parameters (see
    ``providers.base.RESERVED_ARGUMENTS``), so a model can never name another tenant.
    """

    def __init__(
        self,
        timeout_s: float = 10.0,
        *,
        max_inflight: int = 16,
        services: ProviderServices | None = None,
    ) -> None:
        self.services = services if services is not None else ProviderServices()
        self._recorded: set[tuple[str, str]] = set()  # (tenant, scope) already registered
        self._recorded_lock = threading.Lock()
        self.stats = ProviderStats()
        self._isolated = IsolatedCalls(timeout_s, max_inflight, self.stats)
        self._provider: MemoryProvider | None = None
        self._schemas: list[dict[str, Any]] = []
        self._declared: dict[str, frozenset[str]] = {}

    @classmethod
    def from_settings(
        cls, settings: Settings, services: ProviderServices | None = None
    ) -> MemoryManager:
        return cls(settings.recall.provider_timeout_s, services=services)

    @property
    def timeout_s(self) -> float:
        return self._isolated.timeout_s

    @property
    def provider(self) -> MemoryProvider | None:
        return self._provider

    @property
    def aio(self) -> AsyncMemoryManager:
        return AsyncMemoryManager(self)

    def register(self, provider: MemoryProvider) -> None:
        """Make ``provider`` the active one, or log a warning and raise ProviderRejected."""
        try:
            self._admit(provider)
        except ProviderError as exc:
            log.warning("%s", exc)
            raise

    def _admit(self, provider: MemoryProvider) -> None:
        if not isinstance(provider, MemoryProvider):
            name = type(provider).__name__
            raise InvalidProvider(name, ["it is not a MemoryProvider"])
        name = provider.name
        if self._provider is not None:
            raise ProviderAlreadyActive(name, self._provider.name)
        try:
            available = provider.is_available()
            schemas = provider.tool_schemas()
        except Exception as exc:
            raise InvalidProvider(name, [f"is_available()/tool_schemas() raised {exc!r}"]) from exc
        if available is not True:
            raise ProviderUnavailable(name, "is_available() returned False; check its settings")
        names = check_tool_schemas(name, schemas)
        clashes = {n for n in names if n in CORE_TOOL_NAMES or names.count(n) > 1}
        if clashes:
            raise ToolNameClash(name, clashes)
        provider.attach(self.services)
        self._provider = provider
        self._schemas = copy.deepcopy(schemas)
        self._declared = {s["function"]["name"]: declared_arguments(s) for s in schemas}
        log.info("memory provider %s registered with tools %s", name, ", ".join(names) or "-")

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The provider's tools as read at registration (stable for the prompt cache)."""
        return copy.deepcopy(self._schemas)

    def tools(self, ctx: ProviderContext) -> dict[str, ProviderTool]:
        """The provider's tools bound to ``ctx``, by name, for the agent's tool loop."""
        return {name: ProviderTool(self, ctx, name) for name in self._declared}

    # Calls into the provider. Each returns a safe default when there is no provider.

    def initialize(self, ctx: ProviderContext) -> bool:
        self._record_scope(ctx)
        return self._notify("initialize", ctx, lambda p: p.initialize(ctx))

    def erase(self, tenant: TenantId) -> tuple[int, list[str]]:
        """The provider's ``erase`` with every scope the tenant used; the records go after.

        Raises what the provider raises (NotImplementedError when it cannot erase): erasure
        reports it, so it is not isolated like the calls of a turn.
        """
        provider = self._provider
        if provider is None:
            return 0, []
        scopes = self.services.scopes.scopes(tenant, provider.name)
        removed, leftovers = provider.erase(tenant, scopes)
        if not leftovers:
            self.services.scopes.forget(tenant, provider.name)
        with self._recorded_lock:
            self._recorded = {r for r in self._recorded if r[0] != str(tenant)}
        return removed, leftovers

    def _record_scope(self, ctx: ProviderContext) -> None:
        """Register the scope's backend key once per process, before the provider sees it."""
        provider = self._provider
        if provider is None:
            return
        seen = (str(ctx.tenant), ctx.memory_scope_key)
        with self._recorded_lock:
            if seen in self._recorded:
                return
        record = ScopeRecord(ctx.tenant, provider.name, ctx.memory_scope_key, ctx.backend_key)
        try:
            self.services.scopes.record(record)
        except Exception as exc:  # a registry outage must not break a turn; retried next time
            log.warning("scope registry: cannot record %s: %s", ctx.namespace, exc)
            return
        with self._recorded_lock:
            self._recorded.add(seen)

    def system_prompt_block(self) -> str:
        return self._call("system_prompt_block", None, "", lambda p: p.system_prompt_block())

    def recall(self, ctx: ProviderContext, query: RecallQuery) -> str:
        return self._call("recall", ctx, "", lambda p: p.recall(ctx, query))

    def is_caught_up(self, ctx: ProviderContext) -> bool:
        """Whether the provider has processed what was synced; True when it cannot say."""
        return self._call("is_caught_up", ctx, True, lambda p: p.is_caught_up(ctx))

    def sync_turn(self, ctx: ProviderContext, turn: SyncedTurn) -> bool:
        """True when the provider stored the turn; on False the sync job should retry.

        A timed-out call may still complete later, so providers must treat a repeated
        ``turn_id`` as already stored.
        """
        return self._notify("sync_turn", ctx, lambda p: p.sync_turn(ctx, turn))

    def handle_tool_call(
        self, ctx: ProviderContext, name: str, arguments: Mapping[str, Any] | str
    ) -> str:
        """Route a model's tool call to the provider by name; always JSON text."""
        declared = self._declared.get(name)
        if declared is None:
            known = ", ".join(sorted(self._declared)) or "none"
            return tool_error(f"unknown provider tool {name!r}; available: {known}")
        args = _parse_arguments(arguments)
        if isinstance(args, str):
            return args
        dropped = sorted(set(args) - declared)
        if dropped:
            log.warning("tool %s: dropped undeclared arguments %s", name, ", ".join(dropped))
        clean = {key: value for key, value in args.items() if key in declared}
        answer = tool_error(NOT_ANSWERED)
        return self._call(
            "handle_tool_call", ctx, answer, lambda p: p.handle_tool_call(ctx, name, clean)
        )

    def on_turn_start(self, ctx: ProviderContext, turn: TurnStart) -> None:
        self._notify("on_turn_start", ctx, lambda p: p.on_turn_start(ctx, turn))

    def on_session_end(self, ctx: ProviderContext, end: SessionEnd) -> bool:
        """Whether the provider took it in time without an error."""
        return self._notify("on_session_end", ctx, lambda p: p.on_session_end(ctx, end))

    def on_session_switch(self, ctx: ProviderContext, switch: SessionSwitch) -> bool:
        """Whether the provider took it in time without an error."""
        return self._notify("on_session_switch", ctx, lambda p: p.on_session_switch(ctx, switch))

    def on_pre_compress(self, ctx: ProviderContext, messages: Sequence[Mapping[str, Any]]) -> str:
        return self._call("on_pre_compress", ctx, "", lambda p: p.on_pre_compress(ctx, messages))

    def on_memory_write(self, ctx: ProviderContext, event: MemoryWriteEvent) -> None:
        self._notify("on_memory_write", ctx, lambda p: p.on_memory_write(ctx, event))

    def on_delegation(self, ctx: ProviderContext, delegation: Delegation) -> None:
        self._notify("on_delegation", ctx, lambda p: p.on_delegation(ctx, delegation))

    def shutdown(self) -> None:
        self._notify("shutdown", None, lambda p: p.shutdown())

    def _call(
        self,
        method: str,
        ctx: ProviderContext | None,
        default: T,
        run: Callable[[MemoryProvider], T],
    ) -> T:
        """``run(provider)`` if it answers with ``default``'s type in time, else ``default``."""
        result = self._run(method, ctx, run, type(default))
        return default if result is FAILED else cast(T, result)

    def _notify(
        self, method: str, ctx: ProviderContext | None, run: Callable[[MemoryProvider], None]
    ) -> bool:
        """``run(provider)`` for its effect; whether it completed in time without an error."""
        return self._run(method, ctx, run, type(None)) is not FAILED

    def _run(
        self,
        method: str,
        ctx: ProviderContext | None,
        run: Callable[[MemoryProvider], object],
        expected: type,
    ) -> object:
        provider = self._provider
        if provider is None:
            return FAILED
        where = f"{provider.name}.{method}" + (f" for {ctx.namespace}" if ctx else "")
        return self._isolated.run(provider.name, method, where, lambda: run(provider), expected)


def _parse_arguments(arguments: Mapping[str, Any] | str) -> dict[str, Any] | str:
    """The model's arguments as a dict, or error JSON saying why they are unusable."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return tool_error(f"arguments are not valid JSON: {exc.msg}")
    if not isinstance(arguments, Mapping):
        return tool_error("arguments must be a JSON object")
    return dict(arguments)


class AsyncMemoryManager:
    """The manager's calls for the event loop, each awaited off the loop (see ``off_loop``)."""

    def __init__(self, manager: MemoryManager) -> None:
        self.manager = manager

    async def initialize(self, ctx: ProviderContext) -> bool:
        return await off_loop(self.manager.initialize, ctx)

    async def system_prompt_block(self) -> str:
        return await off_loop(self.manager.system_prompt_block)

    async def recall(self, ctx: ProviderContext, query: RecallQuery) -> str:
        return await off_loop(self.manager.recall, ctx, query)

    async def sync_turn(self, ctx: ProviderContext, turn: SyncedTurn) -> bool:
        return await off_loop(self.manager.sync_turn, ctx, turn)

    async def handle_tool_call(
        self, ctx: ProviderContext, name: str, arguments: Mapping[str, Any] | str
    ) -> str:
        return await off_loop(self.manager.handle_tool_call, ctx, name, arguments)

    async def on_turn_start(self, ctx: ProviderContext, turn: TurnStart) -> None:
        await off_loop(self.manager.on_turn_start, ctx, turn)

    async def on_session_end(self, ctx: ProviderContext, end: SessionEnd) -> None:
        await off_loop(self.manager.on_session_end, ctx, end)

    async def on_session_switch(self, ctx: ProviderContext, switch: SessionSwitch) -> None:
        await off_loop(self.manager.on_session_switch, ctx, switch)

    async def on_pre_compress(
        self, ctx: ProviderContext, messages: Sequence[Mapping[str, Any]]
    ) -> str:
        return await off_loop(self.manager.on_pre_compress, ctx, messages)

    async def on_memory_write(self, ctx: ProviderContext, event: MemoryWriteEvent) -> None:
        await off_loop(self.manager.on_memory_write, ctx, event)

    async def on_delegation(self, ctx: ProviderContext, delegation: Delegation) -> None:
        await off_loop(self.manager.on_delegation, ctx, delegation)

    async def shutdown(self) -> None:
        await off_loop(self.manager.shutdown)
