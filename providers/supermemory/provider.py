"""SupermemoryProvider: each tenant scope one Supermemory container tag (its backend key).

Recall asks ``/v4/profile`` with the user's message: the profile (static + dynamic facts) on
the first turn and every ``profile_frequency`` turns, the relevant memories every turn.
Turns are not sent one by one: the whole session is ingested once when it ends
(``/v4/conversations`` under the session id, read from the gateway's transcript store); an
ingest that failed is posted again by the scope's next ``sync_turn`` (:mod:`.pending`).
Curated-memory additions are stored as documents. Erasure bulk-deletes every container tag
the tenant used.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from gateway.security.fence import sanitize_recalled
from gateway.tenants import TenantId
from providers.base import (
    ConfigField,
    MemoryProvider,
    MemoryWriteEvent,
    NoTranscripts,
    ProviderContext,
    ProviderServices,
    RecallQuery,
    SessionEnd,
    SessionTranscripts,
    SyncedTurn,
    tool_error,
)
from providers.scoping import ScopeRecord, backend_key
from providers.supermemory.client import SupermemoryClient
from providers.supermemory.pending import PendingIngests
from providers.supermemory.tools import TOOL_SCHEMAS, SearchLedger, Tools

if TYPE_CHECKING:
    from gateway.provider_settings import SupermemorySettings
    from gateway.settings import Settings

log = logging.getLogger(__name__)

PROMPT_BLOCK = (
    "Supermemory keeps long-term memory about this user; relevant parts may be appended to "
    "the user's message as background. Use supermemory_search (alias supermemory-search) to "
    "look things up, supermemory_store (supermemory-save) to keep a durable fact, "
    "supermemory_profile (supermemory-profile) for the user's profile, and supermemory_forget "
    "(supermemory-forget) with an id that supermemory_search returned."
)
MIN_SESSION_CHARS = 20  # a session of one short message is not worth ingesting
HEALTH_TAG = "mnemogate-health"


class SupermemoryProvider(MemoryProvider):
    name = "supermemory"

    def __init__(self, settings: SupermemorySettings, home: Path) -> None:
        self.settings = settings
        self.pending = PendingIngests(home / "supermemory" / "pending")
        key = settings.api_key.get_secret_value() if settings.api_key else ""
        self._ready = bool(key)
        self.client = SupermemoryClient(settings.base_url, key, settings.timeout_s)
        self.ledger = SearchLedger(settings.forget_window_s)
        self.tools = Tools(
            self.client,
            self.ledger,
            mode=settings.search_mode,
            max_chars=settings.max_tool_result_chars,
        )
        self.transcripts: SessionTranscripts = NoTranscripts()

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls(settings.supermemory, settings.home)

    def attach(self, services: ProviderServices) -> None:
        self.transcripts = services.transcripts

    def is_available(self) -> bool:
        return self._ready

    def initialize(self, ctx: ProviderContext) -> None:
        return None  # a container tag exists once something is stored under it

    def tool_schemas(self) -> list[dict[str, Any]]:
        return copy.deepcopy(TOOL_SCHEMAS)

    def system_prompt_block(self) -> str:
        return PROMPT_BLOCK

    def recall(self, ctx: ProviderContext, query: RecallQuery) -> str:
        text = query.text.strip()
        if not text:
            return ""
        profile = self.client.profile(ctx.backend_key, text[:200])
        every = self.settings.profile_frequency
        with_profile = query.turn_index == 0 or query.turn_index % every == 0
        limit = self.settings.max_recall_results
        seen: set[str] = set()
        sections = []
        if with_profile:
            for title, facts in (("User profile", profile.static), ("Recent", profile.dynamic)):
                kept = _unique(facts, seen)[:limit]
                if kept:
                    sections.append(f"{title}:\n" + "\n".join(f"- {fact}" for fact in kept))
        hits = _unique([hit.text for hit in profile.hits], seen)[:limit]
        if hits:
            sections.append("Relevant memories:\n" + "\n".join(f"- {hit}" for hit in hits))
        return _clip("\n\n".join(sections), self.settings.max_recall_chars)

    def handle_tool_call(self, ctx: ProviderContext, name: str, args: dict[str, Any]) -> str:
        try:
            return self.tools.handle(ctx.backend_key, name, args, self.settings.entity_context)
        except Exception as exc:
            log.warning("supermemory tool %s for %s failed: %s", name, ctx.namespace, exc)
            return tool_error(f"Supermemory could not answer: {type(exc).__name__}")

    def on_session_end(self, ctx: ProviderContext, end: SessionEnd) -> None:
        """Ingest the whole session once, under its id (a repeat replaces, never duplicates).

        The session is marked pending first and unmarked once posted, so a failure here is
        retried by a later :meth:`sync_turn` of the same scope.
        """
        self.pending.add(ctx, end.session_id, end.reason)
        self._ingest(ctx, end.session_id, end.reason)

    def sync_turn(self, ctx: ProviderContext, turn: SyncedTurn) -> None:
        """Turns go with their session at its end; here only failed ingests are retried."""
        for ended, session_id, reason in self.pending.waiting(ctx.backend_key):
            try:
                self._ingest(ended, session_id, reason)
            except Exception as exc:  # still down: the marker stays for the next turn
                log.warning("supermemory: session %s still not ingested: %s", session_id, exc)

    def _ingest(self, ctx: ProviderContext, session_id: str, reason: str) -> None:
        messages = [
            {"role": role, "content": cleaned}
            for role, text in self.transcripts.messages(ctx.tenant, session_id)
            if (cleaned := sanitize_recalled(text).strip())
        ]
        if messages and sum(len(m["content"]) for m in messages) >= MIN_SESSION_CHARS:
            metadata = {
                "type": "full_session",
                "session_id": session_id,
                "message_count": len(messages),
                "end_reason": reason,
            }
            self.client.ingest_conversation(ctx.backend_key, session_id, messages, metadata)
        self.pending.done(ctx.backend_key, session_id)

    def on_memory_write(self, ctx: ProviderContext, event: MemoryWriteEvent) -> None:
        """Mirror curated-memory additions (as the reference does); edits stay local."""
        content = event.content.strip()
        if event.action != "add" or not content:
            return
        metadata = {"type": "explicit_memory", "target": str(event.target)}
        self.client.add_document(ctx.backend_key, content, metadata, self.settings.entity_context)

    def erase(self, tenant: TenantId, scopes: Sequence[ScopeRecord] = ()) -> tuple[int, list[str]]:
        keys = {record.backend_key for record in scopes} | {backend_key(tenant.namespace)}
        removed, failed = 0, []
        for key in sorted(keys):
            try:
                removed += self.client.delete_container(key)
            except Exception as exc:
                failed.append(f"supermemory container {key}: not erased ({exc})")
        self.ledger.drop(keys)
        self.pending.drop(keys)
        return removed, failed

    def health(self) -> str:
        self.client.profile(HEALTH_TAG)
        return f"{self.settings.base_url} reachable"

    def shutdown(self) -> None:
        self.client.close()

    def config_schema(self) -> list[ConfigField]:
        return [
            ConfigField(
                "api_key", "Supermemory API key", secret=True, env_var="SUPERMEMORY_API_KEY"
            )
        ]


def _unique(items: list[str], seen: set[str]) -> list[str]:
    """``items`` not seen before (earlier sections win), in order; records what it keeps."""
    kept = []
    for item in items:
        key = " ".join(item.split())
        if key and key not in seen:
            seen.add(key)
            kept.append(key)
    return kept


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
