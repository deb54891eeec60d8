"""ByteRoverProvider: ``brv query``/``curate``/``status`` per scope directory.

See the package docstring for where things run. Pending curations are files in the scope's
``pending/`` directory: the tool writes one atomically; a sync job claims each by renaming
it (only one worker wins), curates it, and deletes it, or renames it back when ``brv``
failed so the next sync tries again.
"""

from __future__ import annotations

import contextlib
import copy
import os
import shutil
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from gateway.tenants import TenantId
from providers.base import ConfigField, ProviderContext, RecallQuery, SyncedTurn
from providers.byterover.cli import Brv, ScopeDirs
from providers.scoping import ScopeRecord
from providers.service import ServiceProvider, ToolHandler, clip, text_arg

if TYPE_CHECKING:
    from gateway.provider_settings import ByteRoverSettings
    from gateway.settings import Settings

MIN_OUTPUT_CHARS = 20
TURN_PART_CHARS = 2000
PROMPT = (
    "ByteRover keeps a knowledge tree of what matters about this user; relevant context may "
    "be appended to the user's message. brv_query searches it, brv_curate stores something "
    "worth remembering (curated in the background), brv_status shows its state."
)


def _tool(name: str, description: str, arg: str = "", arg_doc: str = "") -> dict[str, Any]:
    properties = {arg: {"type": "string", "description": arg_doc}} if arg else {}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": [arg] if arg else [],
            },
        },
    }


TOOL_SCHEMAS = [
    _tool(
        "brv_query", "Search this user's ByteRover knowledge tree.", "query", "What to search for."
    ),
    _tool(
        "brv_curate",
        "Store information worth remembering about this user; ByteRover organises it. "
        "It is curated in the background, so it is searchable a little later.",
        "content",
        "The information to remember.",
    ),
    _tool("brv_status", "ByteRover status: CLI version and knowledge tree state."),
]


class ByteRoverProvider(ServiceProvider):
    """One ``brv`` working directory and HOME per memory scope."""

    name = "byterover"
    saved_keys = ("command", "auto_curate")

    def __init__(self, settings: ByteRoverSettings, home: Path) -> None:
        super().__init__()
        self.settings = settings
        self.max_tool_result_chars = settings.max_tool_result_chars
        self.root = home / "providers" / "byterover"
        key = settings.api_key
        self.brv = Brv(settings.command, key.get_secret_value() if key else None)

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls(settings.byterover, settings.home)

    def dirs(self, backend_key: str) -> ScopeDirs:
        return ScopeDirs(self.root / backend_key)

    def is_available(self) -> bool:
        return self.brv.executable() is not None

    def setup_problems(self) -> list[str]:
        if self.is_available():
            return []
        return [
            f"the ByteRover CLI {self.settings.command!r} is not on PATH: "
            "npm install -g byterover-cli (Elastic-2.0 licence)"
        ]

    def initialize(self, ctx: ProviderContext) -> None:
        return None  # directories are created by the first brv run of a scope

    def tool_schemas(self) -> list[dict[str, Any]]:
        return copy.deepcopy(TOOL_SCHEMAS)

    def system_prompt_block(self) -> str:
        return PROMPT

    def recall(self, ctx: ProviderContext, query: RecallQuery) -> str:
        text = query.text.strip()
        if len(text) < self.settings.min_query_chars:
            return ""
        output = self._query(ctx, text)
        if len(output) < MIN_OUTPUT_CHARS:
            return ""
        return clip("## ByteRover context\n" + output, self.settings.max_recall_chars)

    def sync_turn(self, ctx: ProviderContext, turn: SyncedTurn) -> None:
        """Curate queued tool curations, then the turn itself when auto_curate is on."""
        dirs = self.dirs(ctx.backend_key)
        self._drain(dirs)
        if not self.settings.auto_curate or len(turn.user.strip()) < self.settings.min_query_chars:
            return
        content = (
            f"User: {turn.user[:TURN_PART_CHARS]}\nAssistant: {turn.assistant[:TURN_PART_CHARS]}"
        )
        self.deliver_turn(ctx, turn, lambda: self._curate(dirs, content))

    def tool_handlers(self) -> Mapping[str, ToolHandler]:
        return {
            "brv_query": self._query_tool,
            "brv_curate": self._queue_tool,
            "brv_status": self._status,
        }

    def erase_scope(self, tenant: TenantId, record: ScopeRecord) -> int:
        root = self.dirs(record.backend_key).root
        if not root.exists():
            return 0
        count = sum(1 for _ in root.rglob("*"))
        shutil.rmtree(root)
        return count

    def health(self) -> str:
        """``brv status`` in a scratch scope of its own (no tenant's directory is touched)."""
        status = self.brv.run(["status"], self.dirs("_doctor"), self.settings.status_timeout_s)
        first = status.splitlines()[0] if status else "no output"
        return f"brv CLI at {self.brv.executable()}: {clip(first, 120)}"

    def config_schema(self) -> list[ConfigField]:
        return [
            ConfigField("command", "the brv command (on PATH, or a path)", default="brv"),
            ConfigField(
                "auto_curate", "curate every finished turn in the background", default="false"
            ),
            ConfigField(
                "api_key",
                "ByteRover API key, optional (cloud sync only)",
                secret=True,
                env_var="BRV_API_KEY",
            ),
        ]

    # -- internals ---------------------------------------------------------------------------

    def _query(self, ctx: ProviderContext, text: str) -> str:
        args = ["query", "--", text[:5000]]
        return self.brv.run(args, self.dirs(ctx.backend_key), self.settings.query_timeout_s)

    def _curate(self, dirs: ScopeDirs, content: str) -> None:
        self.brv.run(["curate", "--", content], dirs, self.settings.curate_timeout_s)

    def _query_tool(self, ctx: ProviderContext, args: dict[str, Any]) -> Any:
        output = self._query(ctx, text_arg(args, "query", limit=5000))
        if len(output) < MIN_OUTPUT_CHARS:
            return {"success": True, "result": "No relevant memories found."}
        return {"success": True, "result": output}

    def _queue_tool(self, ctx: ProviderContext, args: dict[str, Any]) -> Any:
        content = text_arg(args, "content", limit=8000)
        dirs = self.dirs(ctx.backend_key)
        dirs.create()
        name = f"{uuid.uuid4().hex}.txt"
        temporary = dirs.pending / f".{name}.tmp"
        temporary.write_text(content, encoding="utf-8")
        os.chmod(temporary, 0o600)
        temporary.rename(dirs.pending / name)  # atomic: a sync job never sees half a file
        return {"success": True, "result": "Queued; it will be curated in the background."}

    def _status(self, ctx: ProviderContext, args: dict[str, Any]) -> Any:
        output = self.brv.run(
            ["status"], self.dirs(ctx.backend_key), self.settings.status_timeout_s
        )
        return {"success": True, "status": output}

    def _drain(self, dirs: ScopeDirs) -> None:
        if not dirs.pending.is_dir():
            return
        self._reclaim_abandoned(dirs)
        for path in sorted(dirs.pending.glob("*.txt"), key=lambda p: p.stat().st_mtime):
            claimed = path.with_name(f".{path.stem}.claimed")
            try:
                path.rename(claimed)
            except FileNotFoundError:
                continue  # another worker claimed it
            os.utime(claimed)  # the claim's age, for _reclaim_abandoned
            try:
                self._curate(dirs, claimed.read_text(encoding="utf-8"))
            except BaseException:
                claimed.rename(path)
                raise
            claimed.unlink()

    def _reclaim_abandoned(self, dirs: ScopeDirs) -> None:
        """Claims older than two curate timeouts belong to a worker that died: queue again."""
        limit = time.time() - 2 * self.settings.curate_timeout_s
        for claimed in dirs.pending.glob(".*.claimed"):
            with contextlib.suppress(FileNotFoundError):
                if claimed.stat().st_mtime < limit:
                    claimed.rename(
                        dirs.pending / (claimed.name[1:].removesuffix(".claimed") + ".txt")
                    )
