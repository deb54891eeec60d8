"""Mem0Provider: each tenant's memory scope is one Mem0 ``user_id``, in-process or hosted.

Wires a backend (:class:`~.backends.OssBackend` or :class:`~.platform.PlatformBackend`,
chosen by ``mem0.mode``) to the provider interface: recall searches the scope's memories
for the user's message, sync adds each finished turn once (a turn id in metadata), the four
tools answer through :class:`~.tools.Tools`, erasure deletes every backend key the tenant
used. Nothing touches the network in :meth:`from_settings`.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from gateway.security.fence import sanitize_recalled
from gateway.tenants import TenantId
from providers.base import (
    ConfigField,
    MemoryProvider,
    ProviderContext,
    ProviderServices,
    RecallQuery,
    SyncedTurn,
    tool_error,
)
from providers.mem0.backends import TURN_KEY, Mem0Backend, OssBackend, OssConfig, import_mem0
from providers.mem0.platform import PlatformBackend
from providers.mem0.tools import TOOL_SCHEMAS, Tools
from providers.scoping import ScopeRecord, backend_key

if TYPE_CHECKING:
    from gateway.provider_settings import Mem0Settings
    from gateway.settings import Settings

log = logging.getLogger(__name__)

PROMPT_BLOCK = (
    "Mem0 keeps long-term memories about this user. Relevant ones may be appended to the "
    "user's message as background. mem0_search finds more; mem0_add stores a durable fact; "
    "mem0_update and mem0_delete change or remove a memory by the id mem0_search returned."
)
PLACEHOLDER_KEY = "not-needed"  # the OpenAI SDK refuses an empty key; local endpoints ignore it


class Mem0Provider(MemoryProvider):
    """Mem0 memories per tenant scope (``user_id`` = the scope's backend key)."""

    name = "mem0"
    extra = "mem0"
    requires_modules = ("mem0",)

    def __init__(
        self, settings: Mem0Settings, backend: Mem0Backend, *, ready: bool, home: Path
    ) -> None:
        self.settings = settings
        self.home = home
        self.backend = backend
        self._ready = ready
        self.tools = Tools(
            backend, threshold=settings.search_threshold, max_chars=settings.max_tool_result_chars
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        section = settings.mem0
        backend: Mem0Backend
        if section.mode == "platform":
            key = section.api_key.get_secret_value() if section.api_key else ""
            backend = PlatformBackend(settings.home, section.base_url, key, section.timeout_s)
            return cls(section, backend, ready=bool(key), home=settings.home)
        aux = settings.aux
        llm_base = aux.base_url or ""
        model = section.llm_model or aux.model or ""
        config = OssConfig(
            home=settings.home,
            llm_base_url=llm_base,
            llm_model=model,
            llm_api_key=aux.api_key.get_secret_value() if aux.api_key else PLACEHOLDER_KEY,
            embedding_base_url=section.embedding_base_url or llm_base,
            embedding_model=section.embedding_model,
            embedding_dims=section.embedding_dims,
            vector_store=section.vector_store,
            vector_store_config=dict(section.vector_store_config),
            collection=section.collection,
            timeout_s=section.timeout_s,
        )
        return cls(section, OssBackend(config), ready=bool(llm_base and model), home=settings.home)

    def attach(self, services: ProviderServices) -> None:
        """Import ``mem0ai`` in the background now: it takes seconds (Qdrant's client, gRPC),
        which the first call would otherwise spend inside its timeout."""
        if self._ready:
            threading.Thread(target=self._warm, name="mem0-import", daemon=True).start()

    def _warm(self) -> None:
        try:
            import_mem0(self.home, "mem0" if self.settings.mode == "oss" else "mem0.client.main")
        except Exception as exc:  # reported again, with context, by the first real call
            log.warning("mem0: importing mem0ai failed: %s", exc)

    def is_available(self) -> bool:
        return self._ready

    def initialize(self, ctx: ProviderContext) -> None:
        return None  # Mem0 creates a user on its first memory

    def tool_schemas(self) -> list[dict[str, Any]]:
        return copy.deepcopy(TOOL_SCHEMAS)

    def system_prompt_block(self) -> str:
        return PROMPT_BLOCK

    def recall(self, ctx: ProviderContext, query: RecallQuery) -> str:
        text = query.text.strip()
        if not text:
            return ""
        hits = self.backend.search(
            ctx.backend_key, text, self.settings.recall_top_k, self.settings.search_threshold
        )
        lines: list[str] = []
        used = 0
        for hit in hits:
            line = f"- {' '.join(hit.memory.split())}"
            if used + len(line) + 1 > self.settings.max_recall_chars:
                break
            lines.append(line)
            used += len(line) + 1
        return "\n".join(lines)

    def sync_turn(self, ctx: ProviderContext, turn: SyncedTurn) -> None:
        """Add the turn once: a delivery whose turn id is already stored is skipped.

        When extraction found nothing worth keeping no memory carries the turn id, so a
        redelivery extracts again — harmless, Mem0 drops facts it already holds.
        """
        user = sanitize_recalled(turn.user).strip()
        assistant = sanitize_recalled(turn.assistant).strip()
        if not user:
            return
        turn_key = f"{turn.session_id}:{turn.turn_id}"
        if self.backend.has_turn(ctx.backend_key, turn_key):
            return
        messages = [{"role": "user", "content": user}]
        if assistant:
            messages.append({"role": "assistant", "content": assistant})
        metadata = {TURN_KEY: turn_key, "session_id": turn.session_id}
        self.backend.add(ctx.backend_key, messages, metadata, infer=True)

    def handle_tool_call(self, ctx: ProviderContext, name: str, args: dict[str, Any]) -> str:
        try:
            return self.tools.handle(ctx.backend_key, name, args)
        except Exception as exc:  # the model gets a short reason, the log the details
            log.warning("mem0 tool %s for %s failed: %s", name, ctx.namespace, exc, exc_info=True)
            return tool_error(f"Mem0 could not answer: {type(exc).__name__}")

    def erase(self, tenant: TenantId, scopes: Sequence[ScopeRecord] = ()) -> tuple[int, list[str]]:
        """Delete all memories of every ``user_id`` the tenant used; report the failures."""
        keys = {record.backend_key for record in scopes} | {backend_key(tenant.namespace)}
        removed, failed = 0, []
        for key in sorted(keys):
            try:
                removed += self.backend.delete_all(key)
            except Exception as exc:
                failed.append(f"mem0 user_id {key}: not erased ({exc})")
        return removed, failed

    def health(self) -> str:
        return self.backend.ping()

    def shutdown(self) -> None:
        self.backend.close()

    def config_schema(self) -> list[ConfigField]:
        if self.settings.mode != "platform":
            return []
        key = ConfigField("api_key", "Mem0 platform API key", secret=True, env_var="MEM0_API_KEY")
        return [key]
