"""HonchoProvider: the MemoryProvider that keeps each tenant's long-term memory in Honcho.

It wires the collaborators of this package together: :class:`~.identity.Sessions` (who is
who, joined sessions), :class:`~.sync.TurnSync` (turns stored once),
:class:`~.recall.Recaller` (base context + dialectic), :class:`~.tools.Tools` and
:mod:`~.lifecycle` (migration, erasure). The SDK client is built on first use, never in
:meth:`from_settings`. ``recall_mode``: ``hybrid`` recalls and offers tools, ``context``
recalls and offers no tools, ``tools`` offers tools and recalls nothing by itself.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypeVar

from pydantic import ValidationError

from gateway.config_file import update_config
from gateway.errors import MemoryStoreError
from gateway.memory.store import MemoryStore
from gateway.settings import HonchoSettings, MemorySettings, config_file_path
from gateway.tenants import TenantId
from providers.base import (
    ConfigField,
    MemoryProvider,
    MemoryWriteEvent,
    ProviderContext,
    RecallQuery,
    SessionEnd,
    SyncedTurn,
    tool_error,
)
from providers.honcho import erasure, lifecycle
from providers.honcho.client import HonchoCallError, HonchoClient, HonchoConfigError
from providers.honcho.identity import Sessions
from providers.honcho.recall import Recaller, clip
from providers.honcho.scope import TenantScope
from providers.honcho.sync import TurnSync, strip_fences
from providers.honcho.tools import Tools, tool_schemas
from providers.scoping import ScopeRecord

if TYPE_CHECKING:
    from gateway.settings import Settings

log = logging.getLogger(__name__)
T = TypeVar("T")

SAVED_KEYS = ("base_url", "workspace", "ai_peer", "peer_prefix", "recall_mode", "observation")
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
PROMPT_BLOCKS = {
    "hybrid": (
        "Honcho, a memory service, keeps a long-term picture of each user. What it recalls "
        "may be appended to the user's message as background. For more, use honcho_context "
        "or honcho_reasoning; honcho_search finds what the user said before; honcho_conclude "
        "records a durable fact; honcho_profile reads or fixes the user's profile."
    ),
    "context": (
        "Honcho, a memory service, keeps a long-term picture of each user; what it recalls "
        "may be appended to the user's message as background."
    ),
    "tools": (
        "Honcho, a memory service, keeps a long-term picture of each user. Nothing is "
        "recalled automatically: call honcho_context, honcho_reasoning or honcho_search "
        "when knowing the user would help, honcho_conclude to record a durable fact, and "
        "honcho_profile to read or fix their profile."
    ),
}


class HonchoProvider(MemoryProvider):
    """Per-tenant peers, one Honcho session per session key; see the package docstring."""

    name = "honcho"

    def __init__(self, settings: HonchoSettings, *, memory: MemorySettings | None = None) -> None:
        _check_ids(settings)
        self.settings = settings
        self._memory = memory or MemorySettings()
        self._lock = threading.Lock()
        self._client: HonchoClient | None = None
        self._sessions = Sessions(self.client, settings)
        self._recaller = Recaller(settings)
        self._tools = Tools(settings, self._recaller)
        self._turns = TurnSync(settings.message_chunk_chars)
        self._schemas = [] if settings.recall_mode == "context" else tool_schemas(settings)

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls(settings.honcho, memory=settings.memory)

    def client(self) -> HonchoClient:
        """The SDK client, built on first use (raises HonchoConfigError without a base_url)."""
        with self._lock:
            if self._client is None:
                key = self.settings.api_key
                self._client = HonchoClient(
                    self.settings.base_url,
                    self.settings.workspace,
                    api_key=key.get_secret_value() if key else None,
                    timeout_s=self.settings.timeout_s,
                    read_retries=self.settings.read_retries,
                )
            return self._client

    # -- the interface -----------------------------------------------------------------------

    def is_available(self) -> bool:
        url = self.settings.base_url or ""
        return url.startswith(("http://", "https://")) and bool(self.settings.workspace)

    def initialize(self, ctx: ProviderContext) -> None:
        state = self._sessions.join(ctx)
        if lifecycle.needs_adoption(self._sessions, state):
            try:
                count = lifecycle.adopt(TenantScope(self.client(), state), self._sessions)
                log.info("honcho: %s's assistant adopted %d conclusions", ctx.namespace, count)
            except HonchoCallError as exc:  # the next initialize tries again
                log.warning("honcho: assistant adoption for %s failed: %s", ctx.namespace, exc)
        if not (
            self.settings.migrate_memory_files
            and lifecycle.needs_migration(self._sessions, state, ctx)
        ):
            return
        try:
            store = MemoryStore(ctx.home, self._memory)
            scope = TenantScope(self.client(), state)
            count = lifecycle.migrate(scope, self._sessions, ctx, store)
            log.info("honcho: migrated %d memory entries of %s", count, ctx.namespace)
        except (HonchoCallError, MemoryStoreError) as exc:
            # The session works without it; the next initialize tries again.
            log.warning("honcho: memory file migration of %s failed: %s", ctx.namespace, exc)

    def tool_schemas(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._schemas)

    def system_prompt_block(self) -> str:
        return PROMPT_BLOCKS[self.settings.recall_mode]

    def recall(self, ctx: ProviderContext, query: RecallQuery) -> str:
        if self.settings.recall_mode == "tools":
            return ""
        return self._joined(ctx, lambda scope: self._recaller.recall(scope, query))

    def is_caught_up(self, ctx: ProviderContext) -> bool:
        """Whether Honcho's deriver has finished with this session (queue status)."""
        return self._joined(ctx, lambda scope: scope.caught_up())

    def sync_turn(self, ctx: ProviderContext, turn: SyncedTurn) -> None:
        self._joined(ctx, lambda scope: self._turns.sync(scope, ctx, turn))

    def handle_tool_call(self, ctx: ProviderContext, name: str, args: dict[str, Any]) -> str:
        if not self._schemas:
            return tool_error("Honcho tools are off here (recall_mode is 'context')")
        if name not in self._tools.names:
            return tool_error(f"unknown tool {name!r}; this provider offers honcho_* tools")
        return self._joined(ctx, lambda scope: self._tools.call(scope, name, args))

    def on_memory_write(self, ctx: ProviderContext, event: MemoryWriteEvent) -> None:
        """Mirror an entry added to a scope's USER.md as a conclusion about the scope's peer.

        MEMORY.md holds the agent's working notes, not the user's profile; replace and
        remove are not mirrored (Honcho reasons past outdated conclusions on its own).
        """
        content = strip_fences(event.content)
        in_scope = event.metadata.scope_key == ctx.memory_scope_key
        if event.action != "add" or event.target != "user" or not content or not in_scope:
            return

        self._joined(ctx, lambda scope: scope.conclude([content]))

    def on_session_end(self, ctx: ProviderContext, end: SessionEnd) -> None:
        """Flush: turns are sent by sync jobs as they finish, so only caches are dropped."""
        session = self._sessions.identity(ctx).session
        self._sessions.forget(session)
        self._recaller.forget(session)

    def on_pre_compress(self, ctx: ProviderContext, messages: Sequence[Mapping[str, Any]]) -> str:
        summary = self._joined(ctx, lambda scope: scope.summary())
        if not summary:
            return ""
        limit = self.settings.max_section_chars
        return "Honcho's running summary of this conversation: " + clip(summary, limit)

    def shutdown(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def config_schema(self) -> list[ConfigField]:
        return [
            ConfigField("base_url", "URL of your Honcho server, e.g. http://127.0.0.1:8000"),
            ConfigField("workspace", "Honcho workspace id", default="mnemogate"),
            ConfigField("api_key", "Honcho API key", secret=True, env_var="HONCHO_API_KEY"),
            ConfigField("recall_mode", "hybrid, context or tools", default="hybrid"),
            ConfigField("observation", "directional or unified", default="directional"),
        ]

    def save_config(self, values: Mapping[str, str], home: Path) -> None:
        """Write the non-secret answers to ``[honcho]`` of the config file the settings read.

        That is ``$MNEMOGATE_CONFIG`` or an existing ``$MNEMOGATE_HOME/config.toml``, else
        ``home/config.toml`` (the setup wizard's rule).
        """
        chosen = {key: values[key].strip() for key in SAVED_KEYS if values.get(key, "").strip()}
        if not chosen:
            return
        try:
            HonchoSettings.model_validate(chosen)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise HonchoConfigError(f"honcho.{where}", f"honcho.{where}: {first['msg']}") from exc
        update_config(config_file_path() or home / "config.toml", "honcho", chosen)

    def health(self) -> str:
        """One authenticated read (the workspace's peers) within ``timeout_s``; raises if down."""
        count = len(self.client().peers())
        return (
            f"server {self.settings.base_url} workspace {self.settings.workspace} reachable "
            f"({count} peers)"
        )

    # -- beyond the interface ----------------------------------------------------------------

    def erase(self, tenant: TenantId, scopes: Sequence[ScopeRecord] = ()) -> tuple[int, list[str]]:
        """Erase what Honcho allows for ``tenant``: (items removed, what could not be erased)."""
        try:
            return erasure.erase(self.client(), tenant, self.settings)
        finally:
            self._sessions.clear()  # the tenant's sessions are gone: rejoin from scratch

    def _joined(self, ctx: ProviderContext, action: Callable[[TenantScope], T]) -> T:
        """Run ``action`` with the scope of ``ctx``'s joined session; a 404 drops the join.

        This is the only place a :class:`TenantScope` is built for a context: every call a
        turn, recall or tool makes goes through it.
        """
        state = self._sessions.join(ctx)
        try:
            return action(TenantScope(self.client(), state))
        except HonchoCallError as exc:
            if exc.not_found:  # deleted on the server (erasure, operator): rejoin next time
                self._sessions.forget(state.ident.session)
            raise


def _check_ids(settings: HonchoSettings) -> None:
    """Peer ids Honcho would refuse ([A-Za-z0-9_-]) fail at start-up, not on first use."""
    named = {"honcho.ai_peer": settings.ai_peer, "honcho.workspace": settings.workspace}
    if settings.peer_prefix:
        named["honcho.peer_prefix"] = settings.peer_prefix
    named.update({f"honcho.peer_aliases[{k}]": v for k, v in settings.peer_aliases.items()})
    for where, value in named.items():
        if not value or not set(value) <= _ID_CHARS:
            raise HonchoConfigError(
                where, f"{where} = {value!r}: Honcho ids use only letters, digits, '_' and '-'"
            )
    # Assistant peers are "<ai_peer>__<user peer>": no user peer may look like one.
    taken = f"{settings.ai_peer}__"
    for where, value in named.items():
        if where != "honcho.ai_peer" and value.startswith(taken):
            raise HonchoConfigError(
                where, f"{where} = {value!r} may not start with {taken!r} (assistant peers do)"
            )
