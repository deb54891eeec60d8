"""OpenVikingProvider: per-scope OpenViking users, explicit sessions, guarded tools.

See the package docstring for the model. Recall searches the scope's memories
(``/api/v1/search/find`` under ``viking://user/<key>/memories/``); sync adds each turn to the
scope's OpenViking session once (the turn ledger), creating the session first. A session is
committed (the server then extracts memories from it) when the mnemogate session ends, and
in any case by the first sync of the user's next session, which commits every earlier
session still holding uncommitted messages.
"""

from __future__ import annotations

import copy
import logging
import re
import threading
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self

from gateway.tenants import TenantId
from providers.base import (
    ConfigField,
    MemoryWriteEvent,
    ProviderContext,
    RecallQuery,
    SessionEnd,
    SyncedTurn,
)
from providers.openviking import spaces
from providers.openviking.client import BROWSE_ROUTES, LEVEL_ROUTES, VikingClient
from providers.openviking.tools import TOOL_SCHEMAS
from providers.scoping import ScopeRecord
from providers.service import ServiceError, ServiceProvider, ToolHandler, clip, int_arg, text_arg

if TYPE_CHECKING:
    from gateway.provider_settings import OpenVikingSettings
    from gateway.settings import Settings

log = logging.getLogger(__name__)
_SESSION_CHARS = re.compile(r"[^A-Za-z0-9_-]+")
PROMPT = (
    "OpenViking keeps this user's long-term memory. Relevant memories may be appended to the "
    "user's message as background. viking_search finds memories, viking_read and "
    "viking_browse open them, viking_remember stores a durable fact, viking_forget deletes "
    "one memory file, viking_add_resource indexes a public web page for later search."
)


def viking_session_id(session_id: str) -> str:
    """The OpenViking session of a mnemogate session (safe id characters)."""
    return "mg-" + _SESSION_CHARS.sub("-", session_id)[:96]


class OpenVikingProvider(ServiceProvider):
    """Each memory scope is an OpenViking user of the operator's account (trusted mode)."""

    name = "openviking"
    saved_keys = ("base_url", "account")

    def __init__(self, settings: OpenVikingSettings) -> None:
        super().__init__()
        self.settings = settings
        self.max_tool_result_chars = settings.max_tool_result_chars
        self._lock = threading.Lock()
        self._client: VikingClient | None = None
        self._created: set[tuple[str, str]] = set()  # (user, session) created by this process

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls(settings.openviking)

    def client(self) -> VikingClient:
        with self._lock:
            if self._client is None:
                key = self.settings.api_key
                self._client = VikingClient(
                    self.settings.base_url or "",
                    api_key=key.get_secret_value() if key else None,
                    account=self.settings.account,
                    agent=self.settings.agent,
                    timeout_s=self.settings.timeout_s,
                )
            return self._client

    # -- the interface -----------------------------------------------------------------------

    def is_available(self) -> bool:
        return (self.settings.base_url or "").startswith(("http://", "https://"))

    def initialize(self, ctx: ProviderContext) -> None:
        return None  # sessions are created by the first sync of a session, in the worker

    def tool_schemas(self) -> list[dict[str, Any]]:
        schemas = copy.deepcopy(TOOL_SCHEMAS)
        if not self.settings.resources:
            schemas = [s for s in schemas if s["function"]["name"] != "viking_add_resource"]
        return schemas

    def system_prompt_block(self) -> str:
        return PROMPT

    def recall(self, ctx: ProviderContext, query: RecallQuery) -> str:
        text = query.text.strip()
        if len(text) < 3:
            return ""
        user = ctx.backend_key
        result = self.client().find(
            user,
            text[:2000],
            spaces.memories_root(user),
            self.settings.recall_limit,
            timeout_s=self.settings.recall_timeout_s,
        )
        lines = []
        for hit in result.get("memories") or []:
            if not isinstance(hit, dict) or float(hit.get("score") or 0) < self.settings.min_score:
                continue
            uri = str(hit.get("uri", ""))
            # Only this user's memory files: not another space, not generated summaries.
            if not uri.startswith(spaces.user_root(user)) or uri.endswith(spaces.SUMMARY_FILES):
                continue
            summary = str(hit.get("abstract") or hit.get("overview") or hit.get("content") or "")
            if summary.strip():
                lines.append("- " + clip(" ".join(summary.split()), 500))
        if not lines:
            return ""
        return clip("## OpenViking memories\n" + "\n".join(lines), self.settings.max_recall_chars)

    def sync_turn(self, ctx: ProviderContext, turn: SyncedTurn) -> None:
        user, session = ctx.backend_key, viking_session_id(turn.session_id)
        at = turn.timestamp.isoformat()

        def send() -> None:
            self._ensure_session(user, session)
            client = self.client()
            try:
                client.add_message(user, session, "user", turn.user, at)
                if turn.assistant:
                    client.add_message(user, session, "assistant", turn.assistant, at)
            except ServiceError as exc:
                if exc.not_found:  # deleted on the server (erasure, operator): create it again
                    with self._lock:
                        self._created.discard((user, session))
                raise

        self.deliver_turn(ctx, turn, send)

    def on_session_end(self, ctx: ProviderContext, end: SessionEnd) -> None:
        """Commit the session: the server archives it and extracts memories from it."""
        user, session = ctx.backend_key, viking_session_id(end.session_id)
        try:
            self.client().commit(user, session)
        except ServiceError as exc:
            if not exc.not_found:  # a session without synced turns has nothing to commit
                raise
        with self._lock:
            self._created.discard((user, session))

    def on_memory_write(self, ctx: ProviderContext, event: MemoryWriteEvent) -> None:
        """Mirror a USER.md entry added in this scope as a preference memory."""
        in_scope = event.metadata.scope_key == ctx.memory_scope_key
        if event.action != "add" or event.target != "user" or not in_scope:
            return
        if event.content.strip():
            self._remember(ctx.backend_key, event.content.strip(), "preference")

    def tool_handlers(self) -> Mapping[str, ToolHandler]:
        handlers: dict[str, ToolHandler] = {
            "viking_search": self._search,
            "viking_read": self._read,
            "viking_browse": self._browse,
            "viking_remember": self._remember_tool,
            "viking_forget": self._forget,
        }
        if self.settings.resources:
            handlers["viking_add_resource"] = self._add_resource
        return handlers

    def erase_scope(self, tenant: TenantId, record: ScopeRecord) -> int:
        """Delete the user's sessions and everything in its space, then the user (admin API).

        The server refuses to delete a namespace root, so each top-level directory of the
        space (memories, resources, sessions, …) is deleted recursively; what is still
        listed afterwards is reported.
        """
        client, user = self.client(), record.backend_key
        root = spaces.user_root(user)
        removed = 0
        for session in client.sessions(user):
            client.delete_session(user, session)
            removed += 1
        for uri in self._entries(user, root):
            answer = client.remove(user, uri, recursive=True)
            count = answer.get("estimated_deleted_count") if isinstance(answer, dict) else None
            removed += int(count) if isinstance(count, int) else 1
        left = self._entries(user, root)
        if left:
            raise ServiceError(f"still listed after deletion: {', '.join(left[:5])}")
        try:
            client.delete_user(user)
        except ServiceError as exc:
            # A trusted-mode server registers no users (404, or 403 saying so): nothing is
            # left once the space is gone. Any other refusal is reported by the caller.
            if not (exc.not_found or (exc.status == 403 and "trusted mode" in str(exc))):
                raise
            log.info("openviking: no registered user %s to delete (%s)", user, exc.code)
        with self._lock:
            self._created = {row for row in self._created if row[0] != user}
        return removed

    def _entries(self, user: str, uri: str) -> list[str]:
        """The URIs directly under ``uri`` (none when it does not exist)."""
        try:
            listed = self.client().browse(user, "list", uri)
        except ServiceError as exc:
            if exc.not_found:
                return []
            raise
        rows = listed if isinstance(listed, list) else []
        return [str(row["uri"]) for row in rows if isinstance(row, dict) and row.get("uri")]

    def health(self) -> str:
        """The server answers, and accepts this key and account (an authenticated read)."""
        client = self.client()
        client.health()
        client.sessions("mg-doctor")
        return f"server {self.settings.base_url} reachable (account {self.settings.account})"

    def shutdown(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def setup_problems(self) -> list[str]:
        if self.is_available():
            return []
        return ["OPENVIKING_ENDPOINT (or [openviking] base_url) is not an http(s) URL"]

    def config_schema(self) -> list[ConfigField]:
        return [
            ConfigField("base_url", "OpenViking server URL", env_var="OPENVIKING_ENDPOINT"),
            ConfigField("api_key", "OpenViking API key", secret=True, env_var="OPENVIKING_API_KEY"),
            ConfigField("account", "OpenViking account of this bot", default="default"),
        ]

    # -- tools -------------------------------------------------------------------------------

    def _search(self, ctx: ProviderContext, args: dict[str, Any]) -> Any:
        user = ctx.backend_key
        query = text_arg(args, "query", limit=2000)
        scope = args.get("scope")
        target = spaces.own_uri(scope, user) if scope else spaces.user_root(user)
        limit = int_arg(args, "limit", 8, 1, 20)
        result = self.client().find(user, query, target, limit)
        hits = [
            {key: hit.get(key) for key in ("uri", "score", "abstract") if key in hit}
            for category in ("memories", "resources", "skills")
            for hit in result.get(category) or []
            if isinstance(hit, dict) and str(hit.get("uri", "")).startswith(spaces.user_root(user))
        ]
        return {"success": True, "results": hits}

    def _read(self, ctx: ProviderContext, args: dict[str, Any]) -> Any:
        uri = spaces.own_uri(args.get("uri"), ctx.backend_key)
        level = args.get("level") or "overview"
        if level not in LEVEL_ROUTES:
            return {"success": False, "error": "level is abstract, overview or full"}
        return {
            "success": True,
            "uri": uri,
            "content": self.client().read(ctx.backend_key, uri, level),
        }

    def _browse(self, ctx: ProviderContext, args: dict[str, Any]) -> Any:
        action = args.get("action") or "list"
        if action not in BROWSE_ROUTES:
            return {"success": False, "error": "action is list, tree or stat"}
        path = args.get("path")
        uri = spaces.own_uri(path, ctx.backend_key) if path else spaces.user_root(ctx.backend_key)
        return {
            "success": True,
            "uri": uri,
            "entries": self.client().browse(ctx.backend_key, action, uri),
        }

    def _remember_tool(self, ctx: ProviderContext, args: dict[str, Any]) -> Any:
        content = text_arg(args, "content", limit=4000)
        category = args.get("category") or "event"
        if category not in spaces.CATEGORY_DIRS:
            return {"success": False, "error": f"category is one of {sorted(spaces.CATEGORY_DIRS)}"}
        return {"success": True, "uri": self._remember(ctx.backend_key, content, category)}

    def _remember(self, user: str, content: str, category: str) -> str:
        folder = spaces.memories_root(user) + spaces.CATEGORY_DIRS[category]
        uri = f"{folder}/mem_{uuid.uuid4().hex}.md"
        self.client().write(user, uri, content)
        return uri

    def _forget(self, ctx: ProviderContext, args: dict[str, Any]) -> Any:
        uri = spaces.memory_file(args.get("uri"), ctx.backend_key)
        self.client().remove(ctx.backend_key, uri)
        return {"success": True, "deleted": uri}

    def _add_resource(self, ctx: ProviderContext, args: dict[str, Any]) -> Any:
        url = spaces.public_url(args.get("url"))
        reason = str(args.get("reason") or "")[:500]
        parent = f"{spaces.user_root(ctx.backend_key)}resources/"
        result = self.client().add_resource(ctx.backend_key, url, parent, reason)
        return {"success": True, "url": url, "result": result}

    def _ensure_session(self, user: str, session: str) -> None:
        """Create the OpenViking session before its first message (once per process).

        A new session means the user's earlier ones have ended: any of them still holding
        uncommitted messages is committed now, so memories are extracted even when no
        session-end signal reached the provider (or its commit failed).
        """
        with self._lock:
            if (user, session) in self._created:
                return
        client = self.client()
        client.create_session(user, session)
        try:
            for earlier in client.sessions(user):
                if earlier != session and client.pending_tokens(user, earlier) > 0:
                    client.commit(user, earlier)
        except ServiceError as exc:  # the turn itself is stored; the next session retries
            log.warning("openviking: committing earlier sessions of %s failed: %s", user, exc)
        with self._lock:
            self._created.add((user, session))
