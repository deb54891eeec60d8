"""The MemoryProvider interface and the typed values the gateway passes to a provider.

A provider is an external long-term memory backend (Honcho, a local fact store, ...). The
interface is small: four required members, everything else a no-op hook. Every call that
concerns a tenant receives the :class:`ProviderContext` the gateway built; model-supplied
arguments never name the tenant (see :data:`RESERVED_ARGUMENTS`).
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, Self

from gateway.routing import ChatType, Conversation
from gateway.tenants import TenantId
from providers.ledger import MemoryTurnLedger, TurnLedger
from providers.schemas import (  # noqa: F401 - re-exported: the interface's vocabulary
    CORE_TOOL_NAMES,
    RESERVED_ARGUMENTS,
    check_tool_schemas,
    declared_arguments,
)
from providers.scoping import MemoryScopeRegistry, ScopeRecord, ScopeRegistry, backend_key

if TYPE_CHECKING:
    from gateway.history.records import SessionRecord
    from gateway.memory.operations import Action
    from gateway.memory.store import Origin, Target
    from gateway.settings import Settings
    from providers.holographic.facts import FactStore

PROVIDER_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")


@dataclass(frozen=True, slots=True)
class ProviderContext:
    """Who and where a provider call is for; built by the gateway (or a worker), never by a model.

    ``memory_scope_key`` is the tenant's namespace in direct messages and
    ``<namespace>.<group namespace>`` for an isolated group scope (§7): a provider that keeps
    facts per user should key them by it so nothing learned in a DM reaches a group reply.
    """

    tenant: TenantId
    namespace: str
    user_peer_id: str
    ai_peer_id: str
    session_id: str
    session_key: str
    platform: str
    chat_type: ChatType
    memory_scope_key: str
    home: Path

    def __post_init__(self) -> None:
        problems = []
        if self.namespace != self.tenant.namespace:
            problems.append(f"namespace {self.namespace!r} is not {self.tenant}'s")
        if self.platform != self.tenant.platform:
            problems.append(f"platform {self.platform!r} is not {self.tenant}'s")
        if self.chat_type not in ("dm", "group"):
            problems.append(f"chat type {self.chat_type!r} is not 'dm' or 'group'")
        if self.memory_scope_key != self.namespace and not self.memory_scope_key.startswith(
            self.namespace + "."
        ):
            problems.append(f"memory scope {self.memory_scope_key!r} is not {self.tenant}'s")
        if not (self.session_id and self.session_key and self.user_peer_id and self.ai_peer_id):
            problems.append("session id, session key and peer ids must not be empty")
        if problems:
            raise ValueError("invalid provider context: " + "; ".join(problems))

    @classmethod
    def for_conversation(
        cls, conversation: Conversation, *, session_id: str, settings: Settings
    ) -> ProviderContext:
        """The context of one session of ``conversation``; peer naming comes from settings."""
        tenant = conversation.tenant
        scope = conversation.memory_scope(settings.groups.memory)
        return cls(
            tenant=tenant,
            namespace=tenant.namespace,
            user_peer_id=f"{settings.honcho.peer_prefix}{tenant.namespace}",
            ai_peer_id=settings.honcho.ai_peer,
            session_id=session_id,
            session_key=conversation.session_key,
            platform=tenant.platform,
            chat_type=conversation.chat_type,
            memory_scope_key=scope.key if scope else conversation.search_scope_key(),
            home=settings.home,
        )

    @classmethod
    def for_session(cls, session: SessionRecord, *, settings: Settings) -> ProviderContext:
        """The context of a stored session, with the key and scope it was opened with."""
        chat_type: ChatType = "group" if session.chat_type == "group" else "dm"
        tenant = session.tenant
        conversation = Conversation(
            tenant, chat_id=session.chat_id or tenant.user, chat_type=chat_type
        )
        ctx = cls.for_conversation(conversation, session_id=session.id, settings=settings)
        # The row knows the exact key and scope of its time (thread ids, group-memory mode).
        return replace(ctx, session_key=session.session_key, memory_scope_key=session.scope_key)

    @property
    def backend_key(self) -> str:
        """The provider-side name of this context's memory scope (bank, user id, container).

        The only key a provider may store this tenant's data under; see
        :mod:`providers.scoping`.
        """
        return backend_key(self.memory_scope_key)

    def to_payload(self) -> dict[str, str]:
        """JSON-safe form for job payloads; :meth:`from_payload` validates it again."""
        return {item.name: str(getattr(self, item.name)) for item in fields(self)}

    @classmethod
    def from_payload(cls, data: Mapping[str, str]) -> ProviderContext:
        if data["chat_type"] not in ("dm", "group"):
            raise ValueError(f"invalid chat type {data['chat_type']!r}")
        chat_type: ChatType = "dm" if data["chat_type"] == "dm" else "group"
        return cls(
            tenant=TenantId.parse(data["tenant"]),
            namespace=data["namespace"],
            user_peer_id=data["user_peer_id"],
            ai_peer_id=data["ai_peer_id"],
            session_id=data["session_id"],
            session_key=data["session_key"],
            platform=data["platform"],
            chat_type=chat_type,
            memory_scope_key=data["memory_scope_key"],
            home=Path(data["home"]),
        )


@dataclass(frozen=True, slots=True)
class RecallQuery:
    """What to recall for: the user's latest message and how many user turns came before.

    ``dialectic`` is False on turns the operator's ``recall.dialectic_cadence`` skips: a
    provider should then answer from cheap context only (no model-backed reasoning).
    """

    text: str
    turn_index: int = 0
    dialectic: bool = True


@dataclass(frozen=True, slots=True)
class SyncedTurn:
    """One finished turn sent to the provider; ``turn_id`` is unique within the session."""

    user: str
    assistant: str
    session_id: str
    turn_id: str
    timestamp: datetime


@dataclass(frozen=True, slots=True)
class TurnStart:
    turn_index: int
    user_text: str


@dataclass(frozen=True, slots=True)
class SessionEnd:
    """The session ended: the user started another (``new``/``reset``) or resumed an earlier
    one (``resume``), it was compressed into a continuation (``compression``), or it sat
    unused for ``sessions.idle_minutes`` (``idle``). Delivered after its last turn's sync."""

    session_id: str
    reason: Literal["new", "reset", "idle", "shutdown", "resume", "compression"]


@dataclass(frozen=True, slots=True)
class SessionSwitch:
    """The context's session replaces ``previous_session_id`` (``/new``, resume, compression)."""

    previous_session_id: str
    reason: Literal["new", "resume", "compression"]


@dataclass(frozen=True, slots=True)
class Delegation:
    """A sub-task the agent delegated and what came back."""

    task: str
    result: str
    child_session_id: str | None = None


@dataclass(frozen=True, slots=True)
class WriteMetadata:
    origin: Origin
    time: datetime
    scope_key: str


@dataclass(frozen=True, slots=True)
class MemoryWriteEvent:
    """A successful curated-memory write; ``content`` is the entry after it, ``previous`` before.

    add: ``previous`` is None; replace: both set; remove: ``content`` is "".
    """

    action: Action
    target: Target
    content: str
    metadata: WriteMetadata
    previous: str | None = None


class SessionTranscripts(Protocol):
    """Read access to a session's stored conversation, for providers that ingest sessions."""

    def messages(self, tenant: TenantId, session_id: str) -> list[tuple[str, str]]:
        """``(role, text)`` of the session's user and assistant messages, oldest first."""


class NoTranscripts:
    """The stand-in without a state store: every session looks empty."""

    def messages(self, tenant: TenantId, session_id: str) -> list[tuple[str, str]]:
        return []


@dataclass(frozen=True, slots=True)
class ProviderServices:
    """What the gateway lends a provider instead of letting it open stores itself.

    ``scopes`` is the registry of backend keys (read it in :meth:`MemoryProvider.erase` only
    through the records the manager passes; the manager records scopes itself). ``turns``
    is the ledger of turns already delivered, for services without idempotent writes (see
    :mod:`providers.ledger`). ``transcripts`` reads a session's messages (Supermemory ingests
    a session when it ends, in the gateway, while turns were synced by workers). ``facts``
    is the holographic provider's fact store on the state store (None without one).
    """

    scopes: ScopeRegistry = field(default_factory=MemoryScopeRegistry)
    turns: TurnLedger = field(default_factory=MemoryTurnLedger)
    transcripts: SessionTranscripts = field(default_factory=NoTranscripts)
    facts: FactStore | None = None


@dataclass(frozen=True, slots=True)
class ConfigField:
    """One question of the setup wizard; secrets belong in ``env_var``, never in a file."""

    name: str
    description: str
    secret: bool = False
    env_var: str | None = None
    default: str | None = None


class MemoryProvider(ABC):
    """An external memory backend; subclass it and override what the backend supports.

    Lifecycle:

    * **Created once per process** (gateway or worker) by the registry through
      :meth:`from_settings`; it must not touch the network there.
    * :meth:`is_available` is checked when the manager registers it (no network: is the
      configuration present?). :meth:`tool_schemas` is read once then and must stay the same
      for the life of the process, because the tools array is part of the cached prompt.
    * :meth:`initialize` runs once per (tenant, session) context, in the gateway when a
      session starts and again in each worker job that needs the context; it must be
      idempotent (create peers/sessions if missing).
    * Gateway (per turn): :meth:`system_prompt_block` when a session's prompt is frozen,
      :meth:`on_turn_start`, :meth:`handle_tool_call`, :meth:`on_pre_compress`,
      :meth:`on_session_switch`, :meth:`on_session_end`, :meth:`on_delegation`.
      Workers: :meth:`sync_turn` (``sync`` queue; a retried job may deliver a ``turn_id``
      again, store it once) and :meth:`recall` (``recall`` queue; the caller caches the text
      in Redis and fences it), with :meth:`is_caught_up` deciding whether to recompute it
      later. :meth:`on_memory_write` runs wherever the write happened (the
      chat in the gateway, background review in a worker).
    * :meth:`shutdown` once when the process stops.

    All methods are **synchronous**: real backends use blocking SDKs, and RQ workers are
    synchronous. The :class:`~providers.manager.MemoryManager` runs each call in a worker
    thread with a timeout, so a provider never blocks the event loop and never needs to guard
    itself against slowness or crashes — but it must be thread-safe, because calls for
    different tenants run concurrently. The tenant is always the ``ctx`` argument: a provider
    keeps no "current tenant" state between calls.
    """

    name: ClassVar[str] = ""
    # The pip extra that installs this provider's third-party packages (``mnemogate[extra]``)
    # and the modules it needs; ``mnemogate memory setup NAME`` reports what is missing.
    extra: ClassVar[str | None] = None
    requires_modules: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        """Build the provider from validated settings; the default takes no configuration."""
        return cls()

    def attach(self, services: ProviderServices) -> None:
        """Receive the gateway's services once, before the first call (see ProviderServices)."""
        return None

    @abstractmethod
    def is_available(self) -> bool:
        """Whether the configuration needed to work is present; no network access."""

    @abstractmethod
    def initialize(self, ctx: ProviderContext) -> None:
        """Prepare for calls in ``ctx`` (idempotent)."""

    @abstractmethod
    def tool_schemas(self) -> list[dict[str, Any]]:
        """OpenAI function-tool definitions offered to the model; may be empty."""

    def system_prompt_block(self) -> str:
        """Static text for the frozen system prompt (no per-tenant data)."""
        return ""

    def recall(self, ctx: ProviderContext, query: RecallQuery) -> str:
        """Background text for the next turn of ``ctx``; "" when there is nothing."""
        return ""

    def sync_turn(self, ctx: ProviderContext, turn: SyncedTurn) -> None:
        """Store a finished turn; called once per turn, in order, by the sync job."""
        return None

    def is_caught_up(self, ctx: ProviderContext) -> bool:
        """Whether what was synced for ``ctx`` is fully processed, so :meth:`recall` sees it.

        A backend that derives asynchronously (Honcho's deriver queue) answers False while
        work is pending; the recall job then refreshes the cached recall once it is done.
        """
        return True

    def handle_tool_call(self, ctx: ProviderContext, name: str, args: dict[str, Any]) -> str:
        """Answer one of this provider's tools with JSON text."""
        return tool_error(f"unknown tool {name!r}")

    def shutdown(self) -> None:
        """Flush and close connections."""
        return None

    def on_turn_start(self, ctx: ProviderContext, turn: TurnStart) -> None:
        """A user message arrived and a turn starts."""
        return None

    def on_session_end(self, ctx: ProviderContext, end: SessionEnd) -> None:
        """The session of ``ctx`` ended."""
        return None

    def on_session_switch(self, ctx: ProviderContext, switch: SessionSwitch) -> None:
        """``ctx`` is the new session that replaces ``switch.previous_session_id``."""
        return None

    def on_pre_compress(self, ctx: ProviderContext, messages: Sequence[Mapping[str, Any]]) -> str:
        """Text added to the compression summary prompt for the dropped ``messages``."""
        return ""

    def on_memory_write(self, ctx: ProviderContext, event: MemoryWriteEvent) -> None:
        """A curated-memory write succeeded in ``ctx``'s scope."""
        return None

    def on_delegation(self, ctx: ProviderContext, delegation: Delegation) -> None:
        """A delegated sub-task finished."""
        return None

    def erase(self, tenant: TenantId, scopes: Sequence[ScopeRecord] = ()) -> tuple[int, list[str]]:
        """Delete everything this provider holds for ``tenant`` (``/forgetme``).

        ``scopes`` lists every memory scope (and its backend key) the tenant has used with
        this provider, from the registry. Returns (items removed, what could not be erased
        and why). Raise NotImplementedError when the backend offers no way to erase.
        """
        raise NotImplementedError(f"{self.name} has no erasure support")

    def health(self) -> str:
        """For ``mnemogate doctor``: a one-line status, reaching the backend if it has one.

        Raise an exception (any) to report the backend unhealthy.
        """
        return "available"

    def setup_problems(self) -> list[str]:
        """For ``memory setup``: what else is missing (a setting, a program); no network."""
        return []

    def config_schema(self) -> list[ConfigField]:
        """Questions the setup wizard asks; empty when there is nothing to configure."""
        return []

    def save_config(self, values: Mapping[str, str], home: Path) -> None:
        """Persist the wizard's non-secret answers under ``home``."""
        return None


def tool_error(message: str) -> str:
    """The JSON error answer every tool returns instead of raising."""
    return json.dumps({"success": False, "error": message})
