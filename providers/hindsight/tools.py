"""The ``hindsight_*`` tools: schemas (as the reference plugin names them) and handlers.

Every tool works on the bank of the caller's context; no parameter names a bank, tenant
or URL. Answers are JSON with sanitized memory text, bounded by ``max_tool_result_chars``.
A bank that does not exist yet is "nothing remembered yet", not an error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gateway.settings import HindsightSettings
from providers.base import ProviderContext, tool_error
from providers.schemas import function_tool
from providers.toolresults import bounded_answer, clean

if TYPE_CHECKING:
    from providers.hindsight.client import HindsightClient

MAX_INPUT_CHARS = 4000
NOTHING_YET = "nothing remembered about this yet"


def tool_schemas() -> list[dict[str, Any]]:
    text = {"type": "string"}
    return [
        function_tool(
            "hindsight_retain",
            "Store something worth remembering about this user in long-term memory.",
            {
                "content": {**text, "description": "What to remember, in plain words."},
                "context": {**text, "description": "Optional: where it comes from."},
            },
            ["content"],
        ),
        function_tool(
            "hindsight_recall",
            "Search long-term memory for facts about this user.",
            {"query": {**text, "description": "What to look for."}},
            ["query"],
        ),
        function_tool(
            "hindsight_reflect",
            "Ask long-term memory for a reasoned answer that combines what it knows about "
            "this user. Slower than hindsight_recall: use it only when a deeper answer is "
            "needed.",
            {"query": {**text, "description": "The question."}},
            ["query"],
        ),
    ]


class Tools:
    """Handlers by tool name; ``client`` builds the SDK client on first use."""

    def __init__(self, settings: HindsightSettings, client: Callable[[], HindsightClient]) -> None:
        self.settings = settings
        self.client = client
        self._handlers: dict[str, Callable[[ProviderContext, dict[str, Any]], dict[str, Any]]] = {
            "hindsight_retain": self._retain,
            "hindsight_recall": self._recall,
            "hindsight_reflect": self._reflect,
        }
        self.names = frozenset(self._handlers)

    def call(self, ctx: ProviderContext, name: str, args: dict[str, Any]) -> str:
        try:
            payload = self._handlers[name](ctx, args)
        except ValueError as exc:
            return tool_error(str(exc))
        return bounded_answer(
            {"success": True, **payload}, "memories", self.settings.max_tool_result_chars
        )

    def _retain(self, ctx: ProviderContext, args: dict[str, Any]) -> dict[str, Any]:
        content = _text(args, "content")
        context = args.get("context")
        if context is not None and not isinstance(context, str):
            raise ValueError("'context' must be a string")
        self.client().retain(
            ctx.backend_key,
            content,
            context=(context or "").strip()[:200] or "stored by the assistant during a chat",
            metadata={"platform": ctx.platform, "chat_type": ctx.chat_type, "origin": "tool"},
        )
        return {"stored": True}

    def _recall(self, ctx: ProviderContext, args: dict[str, Any]) -> dict[str, Any]:
        found = self.client().recall(
            ctx.backend_key,
            _text(args, "query"),
            self.settings.recall_budget,
            self.settings.recall_max_tokens,
        )
        seen: set[str] = set()
        memories = []
        for memory in found:
            text = clean(memory.text, 1000)
            if text and text.casefold() not in seen:
                seen.add(text.casefold())
                memories.append({"text": text, "type": memory.type})
        answer: dict[str, Any] = {"memories": memories}
        if not memories:
            answer["note"] = NOTHING_YET
        return answer

    def _reflect(self, ctx: ProviderContext, args: dict[str, Any]) -> dict[str, Any]:
        text = self.client().reflect(
            ctx.backend_key, _text(args, "query"), self.settings.reflect_budget
        )
        if text is None:
            return {"answer": "", "note": NOTHING_YET}
        return {"answer": clean(text, self.settings.max_tool_result_chars - 100)}


def _text(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"'{key}' must be a non-empty string")
    if len(value) > MAX_INPUT_CHARS:
        raise ValueError(f"'{key}' is at most {MAX_INPUT_CHARS} characters")
    return value.strip()
