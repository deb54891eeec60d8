"""RetainDBProvider: the reference's five memory tools, recall and sync, per backend key.

Recall (recall worker) joins the user's profile and a context query into one block, deduped
and bounded. Sync ingests each finished turn once (the turn ledger). ``retaindb_forget``
deletes a memory only after finding it among the caller's own memories (RetainDB deletes by
id alone). Erasure deletes every memory of each scope; RetainDB's known routes cannot delete
ingested session transcripts, so erasure reports them.
"""

from __future__ import annotations

import copy
import re
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

from gateway.tenants import TenantId
from providers.base import (
    ConfigField,
    MemoryWriteEvent,
    ProviderContext,
    RecallQuery,
    SyncedTurn,
)
from providers.retaindb.client import RetainDBClient, contents, memory_ids
from providers.retaindb.tools import MEMORY_TYPES, TOOL_SCHEMAS
from providers.scoping import ScopeRecord
from providers.service import (
    ServiceError,
    ServiceProvider,
    ToolHandler,
    ToolRefused,
    clip,
    int_arg,
    text_arg,
)

if TYPE_CHECKING:
    from gateway.provider_settings import RetainDBSettings
    from gateway.settings import Settings

PROMPT = (
    "RetainDB keeps this user's long-term memory; relevant memories may be appended to the "
    "user's message as background. retaindb_search finds memories, retaindb_profile gives an "
    "overview, retaindb_context a synthesis for the current task, retaindb_remember stores a "
    "fact, retaindb_forget deletes a memory by the id search returned."
)
ITEMS_PER_SECTION = 5


class RetainDBProvider(ServiceProvider):
    """``user_id`` = the scope's backend key in the configured project."""

    name = "retaindb"
    saved_keys = ("base_url", "project")

    def __init__(self, settings: RetainDBSettings) -> None:
        super().__init__()
        self.settings = settings
        self.max_tool_result_chars = settings.max_tool_result_chars
        self._lock = threading.Lock()
        self._client: RetainDBClient | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls(settings.retaindb)

    def client(self) -> RetainDBClient:
        with self._lock:
            if self._client is None:
                key = self.settings.api_key
                self._client = RetainDBClient(
                    self.settings.base_url,
                    api_key=key.get_secret_value() if key else "",
                    project=self.settings.project,
                    timeout_s=self.settings.timeout_s,
                )
            return self._client

    def is_available(self) -> bool:
        return self.settings.api_key is not None and self.settings.base_url.startswith(
            ("http://", "https://")
        )

    def initialize(self, ctx: ProviderContext) -> None:
        return None

    def tool_schemas(self) -> list[dict[str, Any]]:
        return copy.deepcopy(TOOL_SCHEMAS)

    def system_prompt_block(self) -> str:
        return PROMPT

    def recall(self, ctx: ProviderContext, query: RecallQuery) -> str:
        text = query.text.strip()
        if not text:
            return ""
        client, timeout = self.client(), self.settings.recall_timeout_s
        profile = client.profile(ctx.backend_key, timeout_s=timeout)
        found = client.query_context(
            ctx.backend_key, ctx.session_id, text[:2000], timeout_s=timeout
        )
        return overlay(
            contents(profile, "memories"),
            contents(found, "results"),
            self.settings.max_recall_chars,
        )

    def sync_turn(self, ctx: ProviderContext, turn: SyncedTurn) -> None:
        at = turn.timestamp.isoformat()
        messages = [{"role": "user", "content": turn.user, "timestamp": at}]
        if turn.assistant:
            messages.append({"role": "assistant", "content": turn.assistant, "timestamp": at})

        def send() -> None:
            self.client().ingest_session(
                ctx.backend_key,
                turn.session_id,
                messages,
                idempotency_key=f"{ctx.backend_key}:{turn.session_id}:{turn.turn_id}",
                timeout_s=self.settings.ingest_timeout_s,
            )

        self.deliver_turn(ctx, turn, send)

    def on_memory_write(self, ctx: ProviderContext, event: MemoryWriteEvent) -> None:
        """Mirror an entry added to this scope's curated memory (USER.md → preference)."""
        in_scope = event.metadata.scope_key == ctx.memory_scope_key
        if event.action != "add" or not event.content.strip() or not in_scope:
            return
        kind = "preference" if event.target == "user" else "factual"
        self.client().add_memory(ctx.backend_key, ctx.session_id, event.content.strip(), kind, 0.7)

    def tool_handlers(self) -> Mapping[str, ToolHandler]:
        return {
            "retaindb_profile": lambda ctx, args: self.client().profile(ctx.backend_key),
            "retaindb_search": self._search,
            "retaindb_context": self._context,
            "retaindb_remember": self._remember,
            "retaindb_forget": self._forget,
        }

    def erase(self, tenant: TenantId, scopes: Sequence[ScopeRecord] = ()) -> tuple[int, list[str]]:
        removed, leftovers = super().erase(tenant, scopes)
        leftovers.extend(
            f"retaindb scope {r.scope_key}: session transcripts ingested under user_id "
            f"{r.backend_key} in project {self.settings.project} (RetainDB's API has no "
            "route to delete them; ask RetainDB to delete that user_id)"
            for r in scopes
        )
        return removed, leftovers

    def erase_scope(self, tenant: TenantId, record: ScopeRecord) -> int:
        client, removed = self.client(), 0
        for memory_id in sorted(self._own_ids(record.backend_key)):
            try:
                client.delete_memory(memory_id)
                removed += 1
            except ServiceError as exc:
                if not exc.not_found:
                    raise
        remaining = self._own_ids(record.backend_key)
        if remaining:
            raise ServiceError(f"{len(remaining)} memories still listed after deletion")
        return removed

    def health(self) -> str:
        self.client().list_memories("mnemogate-health", limit=1)
        return f"{self.settings.base_url} project {self.settings.project} reachable"

    def setup_problems(self) -> list[str]:
        url = self.settings.base_url
        return (
            [] if url.startswith(("http://", "https://")) else [f"base_url {url!r} is not http(s)"]
        )

    def shutdown(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def config_schema(self) -> list[ConfigField]:
        return [
            ConfigField("api_key", "RetainDB API key", secret=True, env_var="RETAINDB_API_KEY"),
            ConfigField("base_url", "RetainDB API URL", default="https://api.retaindb.com"),
            ConfigField("project", "RetainDB project of this bot", default="mnemogate"),
        ]

    # -- tools -------------------------------------------------------------------------------

    def _search(self, ctx: ProviderContext, args: dict[str, Any]) -> Any:
        query = text_arg(args, "query", limit=2000)
        top_k = int_arg(args, "top_k", 8, 1, 20)
        return self.client().search(ctx.backend_key, ctx.session_id, query, top_k)

    def _context(self, ctx: ProviderContext, args: dict[str, Any]) -> Any:
        query = text_arg(args, "query", limit=2000)
        client = self.client()
        profile = client.profile(ctx.backend_key)
        found = client.query_context(ctx.backend_key, ctx.session_id, query)
        block = overlay(contents(profile, "memories"), contents(found, "results"), 4000)
        return {"context": block}

    def _remember(self, ctx: ProviderContext, args: dict[str, Any]) -> Any:
        content = text_arg(args, "content", limit=4000)
        memory_type = args.get("memory_type") or "factual"
        if memory_type not in MEMORY_TYPES:
            raise ToolRefused(f"memory_type is one of {', '.join(MEMORY_TYPES)}")
        try:
            importance = min(max(float(args.get("importance", 0.7)), 0.0), 1.0)
        except (TypeError, ValueError) as exc:
            raise ToolRefused("importance is a number from 0 to 1") from exc
        stored = self.client().add_memory(
            ctx.backend_key, ctx.session_id, content, memory_type, importance
        )
        memory = stored.get("memory")
        nested = memory.get("id") if isinstance(memory, dict) else None
        return {"success": True, "id": stored.get("id") or nested}

    def _forget(self, ctx: ProviderContext, args: dict[str, Any]) -> Any:
        memory_id = text_arg(args, "memory_id", limit=200)
        if memory_id not in self._own_ids(ctx.backend_key):
            raise ToolRefused("that memory_id is not one of this user's memories")
        self.client().delete_memory(memory_id)
        return {"success": True, "deleted": memory_id}

    def _own_ids(self, user_id: str) -> set[str]:
        """Ids of the user's memories: the profile's and the listing's (both by user_id)."""
        client = self.client()
        return memory_ids(client.profile(user_id)) | {
            str(item["id"]) for item in client.list_memories(user_id) if item.get("id") is not None
        }


_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9 ]", "", _SPACE.sub(" ", text).strip().lower())


def overlay(profile: list[str], found: list[str], limit: int) -> str:
    """Profile and query memories (5 each), compacted and deduplicated, as one block."""
    seen: set[str] = set()

    def pick(items: list[str]) -> list[str]:
        out = []
        for item in items:
            text = clip(_SPACE.sub(" ", item).strip(), 320)
            if text and _norm(text) not in seen:
                seen.add(_norm(text))
                out.append(f"- {text}")
            if len(out) == ITEMS_PER_SECTION:
                break
        return out

    mine, relevant = pick(profile), pick(found)
    if not mine and not relevant:
        return ""
    lines = ["## RetainDB memory", "Profile:", *(mine or ["- none"])]
    lines += ["Relevant memories:", *(relevant or ["- none"])]
    return clip("\n".join(lines), limit)
