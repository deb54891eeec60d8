"""HindsightProvider: each memory scope is a Hindsight bank named by its backend key.

* **Sync** — one retain per finished turn into the scope's bank, with the session id as the
  document (``append``) and the turn id in the metadata and in a ``[turn …]`` marker line.
  Before writing, the document is read: a turn already in it is not written again (a retried
  sync job after a lost answer). Writes are never retried blindly.
* **Recall** (recall worker) — observations and world facts for the user's message,
  deduplicated, bounded; a 404 (the bank does not exist yet) means "nothing yet".
* **Tools** — ``hindsight_retain``, ``hindsight_recall``, ``hindsight_reflect`` (reflect runs
  Hindsight's own reasoning: only when the model wants a deeper answer).
* ``recall_mode``: ``hybrid`` recalls and offers tools, ``context`` only recalls, ``tools``
  only offers tools.
* **Erase** — deletes every bank the scope registry lists for the tenant (DM and groups).

The SDK (the ``hindsight`` extra) is imported when the first call needs it.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import logging
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from pydantic import ValidationError

from gateway.config_file import update_config
from gateway.errors import ConfigError
from gateway.security.fence import sanitize_recalled
from gateway.settings import HindsightSettings, config_file_path
from gateway.tenants import TenantId
from providers.base import (
    ConfigField,
    MemoryProvider,
    MemoryWriteEvent,
    ProviderContext,
    RecallQuery,
    SyncedTurn,
    tool_error,
)
from providers.hindsight.tools import Tools, tool_schemas
from providers.scoping import ScopeRecord
from providers.toolresults import clip

if TYPE_CHECKING:
    from gateway.settings import Settings
    from providers.hindsight.client import HindsightClient

log = logging.getLogger(__name__)
SAVED_KEYS = ("base_url", "recall_mode", "recall_budget")
MAX_QUERY_CHARS = 1000
TURN_LOCKS = 64
TURN_CONTEXT = "a conversation between a user and their assistant"
PROMPT_BLOCKS = {
    "hybrid": (
        "Hindsight, a memory service, remembers what this user told you in earlier "
        "conversations; what it recalls may be appended to the user's message as background. "
        "hindsight_recall searches it, hindsight_retain stores something worth remembering, "
        "and hindsight_reflect asks it for a reasoned answer (slower: only when a deeper "
        "answer is needed)."
    ),
    "context": (
        "Hindsight, a memory service, remembers what this user told you in earlier "
        "conversations; what it recalls may be appended to the user's message as background."
    ),
    "tools": (
        "Hindsight, a memory service, remembers what this user told you in earlier "
        "conversations. Nothing is recalled automatically: call hindsight_recall when knowing "
        "the user would help, hindsight_retain to store something worth remembering, and "
        "hindsight_reflect for a reasoned answer (slower)."
    ),
}


def turn_marker(turn: SyncedTurn) -> str:
    """The line that identifies a turn inside its session's document."""
    return f"[turn {turn.turn_id} at {turn.timestamp.isoformat()}]"


class HindsightProvider(MemoryProvider):
    """Banks per memory scope; see the package docstring."""

    name = "hindsight"
    extra = "hindsight"
    requires_modules = ("hindsight_client",)

    def __init__(self, settings: HindsightSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._client: HindsightClient | None = None
        self._tools = Tools(settings, self.client)
        self._schemas = [] if settings.recall_mode == "context" else tool_schemas()
        # One turn's check-then-write must not interleave with a retry of the same turn: a
        # call the manager abandoned on timeout keeps running in its thread. Striped locks
        # by (bank, session) serialise them within the process (jobs of one session already
        # run one at a time across workers).
        self._turn_locks = tuple(threading.Lock() for _ in range(TURN_LOCKS))
        if importlib.util.find_spec("hindsight_client") is not None:
            # The SDK takes seconds to import; pay that when the process starts, not inside
            # the first call's timeout. Importing touches no network.
            importlib.import_module("hindsight_client")

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls(settings.hindsight)

    def client(self) -> HindsightClient:
        """The SDK-backed client, built on first use (raises ValueError without a URL)."""
        with self._lock:
            if self._client is None:
                from providers.hindsight.client import HindsightClient

                self._client = HindsightClient(self.settings)
            return self._client

    # -- the interface -----------------------------------------------------------------------

    def is_available(self) -> bool:
        url = self.settings.base_url or ""
        installed = importlib.util.find_spec("hindsight_client") is not None
        return installed and url.startswith(("http://", "https://"))

    def initialize(self, ctx: ProviderContext) -> None:
        return None  # the server creates a bank on its first retain

    def tool_schemas(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._schemas)

    def system_prompt_block(self) -> str:
        return PROMPT_BLOCKS[self.settings.recall_mode]

    def recall(self, ctx: ProviderContext, query: RecallQuery) -> str:
        if self.settings.recall_mode == "tools" or not query.text.strip():
            return ""
        memories = self.client().recall(
            ctx.backend_key,
            clip(query.text, MAX_QUERY_CHARS),
            self.settings.recall_budget,
            self.settings.recall_max_tokens,
        )
        lines = ["## What Hindsight remembers about this user"]
        used, seen = len(lines[0]), set()
        for memory in memories:
            text = " ".join(sanitize_recalled(memory.text).split())
            key = text.casefold()
            if not text or key in seen:
                continue  # an observation often restates the fact it came from
            seen.add(key)
            line = f"- {text}"
            if used + len(line) + 1 > self.settings.max_recall_chars:
                break
            lines.append(line)
            used += len(line) + 1
        return "\n".join(lines) if len(lines) > 1 else ""

    def sync_turn(self, ctx: ProviderContext, turn: SyncedTurn) -> None:
        stripe = hash((ctx.backend_key, turn.session_id)) % TURN_LOCKS
        with self._turn_locks[stripe]:
            self._sync_turn(ctx, turn)

    def _sync_turn(self, ctx: ProviderContext, turn: SyncedTurn) -> None:
        client = self.client()
        marker = turn_marker(turn)
        stored = client.document_text(ctx.backend_key, turn.session_id)
        if stored is not None and marker in stored:
            log.info("hindsight: turn %s of %s already retained", turn.turn_id, ctx.namespace)
            return
        user = sanitize_recalled(turn.user).strip()
        assistant = sanitize_recalled(turn.assistant).strip()
        client.retain(
            ctx.backend_key,
            f"{marker}\nUser: {user}\nAssistant: {assistant}",
            context=TURN_CONTEXT,
            metadata=_metadata(ctx, turn_id=turn.turn_id, session_id=turn.session_id),
            timestamp=turn.timestamp,
            document_id=turn.session_id,
            append=True,
        )

    def handle_tool_call(self, ctx: ProviderContext, name: str, args: dict[str, Any]) -> str:
        if not self._schemas:
            return tool_error("Hindsight tools are off here (recall_mode is 'context')")
        if name not in self._tools.names:
            return tool_error(f"unknown tool {name!r}; this provider offers hindsight_* tools")
        return self._tools.call(ctx, name, args)

    def on_memory_write(self, ctx: ProviderContext, event: MemoryWriteEvent) -> None:
        """Retain a curated entry the user or agent added (in the background on the server).

        Replacements and removals are not mirrored: Hindsight consolidates past outdated
        facts itself and offers no way to find the memories an entry became.
        """
        content = " ".join(sanitize_recalled(event.content).split())
        in_scope = event.metadata.scope_key == ctx.memory_scope_key
        if not (self.settings.mirror_memory and event.action == "add" and content and in_scope):
            return
        what = "profile of the user" if event.target == "user" else "assistant's notes"
        self.client().retain(
            ctx.backend_key,
            content,
            context=f"an entry the user keeps in the {what}",
            metadata=_metadata(ctx, origin=event.metadata.origin),
            timestamp=event.metadata.time,
            background=True,
        )

    def erase(self, tenant: TenantId, scopes: Sequence[ScopeRecord] = ()) -> tuple[int, list[str]]:
        """Delete each recorded bank of ``tenant``: (memories removed, banks that failed)."""
        removed, leftovers = 0, []
        for scope in scopes:
            if scope.tenant != tenant:
                continue  # never act on a record of someone else
            try:
                deleted = self.client().delete_bank(scope.backend_key)
            except Exception as exc:
                leftovers.append(f"hindsight bank {scope.backend_key}: {exc}")
                continue
            removed += deleted or 0
        return removed, leftovers

    def health(self) -> str:
        version = self.client().version()
        return f"server {self.settings.base_url} reachable (API {version})"

    def shutdown(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def config_schema(self) -> list[ConfigField]:
        return [
            ConfigField(
                "base_url",
                "URL of your Hindsight API, e.g. http://127.0.0.1:8888",
                env_var="HINDSIGHT_API_URL",
            ),
            ConfigField("api_key", "Hindsight API key", secret=True, env_var="HINDSIGHT_API_KEY"),
            ConfigField("recall_mode", "hybrid, context or tools", default="hybrid"),
            ConfigField("recall_budget", "low, mid or high", default="low"),
        ]

    def save_config(self, values: Mapping[str, str], home: Path) -> None:
        chosen = {key: values[key].strip() for key in SAVED_KEYS if values.get(key, "").strip()}
        if not chosen:
            return
        try:
            HindsightSettings.model_validate(chosen)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = "hindsight." + ".".join(str(part) for part in first["loc"])
            raise ConfigError(f"{where}: {first['msg']}") from exc
        update_config(config_file_path() or home / "config.toml", "hindsight", chosen)


def _metadata(ctx: ProviderContext, **extra: str) -> dict[str, str]:
    """What every retained item carries: where it came from (never another tenant's id)."""
    return {"platform": ctx.platform, "chat_type": ctx.chat_type, **extra}
