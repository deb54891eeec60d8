"""Mem0's four tools (the reference's names and parameters) answered for one tenant.

``mem0_search(query, top_k, rerank)``, ``mem0_add(content)`` (stored verbatim, no
extraction), ``mem0_update(memory_id, text)`` and ``mem0_delete(memory_id)``. The tenant is the
``user_id`` the provider passes — no parameter names a user. Update and delete first read
the memory and refuse it unless it belongs to that ``user_id`` (Mem0's ``get`` returns any
user's memory); a foreign id and a missing one get the same answer, so ids of other users
cannot be probed. Answers are bounded JSON.
"""

from __future__ import annotations

import json
from typing import Any

from providers.base import tool_error
from providers.mem0.backends import Mem0Backend, Record

MAX_TOP_K = 50
MAX_CONTENT_CHARS = 2000
NOT_YOURS = "no memory with that id in this user's memories (ids come from mem0_search)"

TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "mem0_search",
            "description": (
                "Search this user's long-term memories by meaning; returns facts with ids, "
                "most relevant first. Use it before answering anything that may depend on "
                "what you know about the user."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to search for."},
                    "top_k": {
                        "type": "integer",
                        "description": "Max results (default: 10, max: 50).",
                    },
                    "rerank": {
                        "type": "boolean",
                        "description": "Rerank results for relevance (accepted; not used).",
                    },
                },
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "mem0_add",
            "description": (
                "Store a durable fact about the user, verbatim (no extraction). Use it when the "
                "user states a lasting preference, correction or personal detail."
            ),
            "parameters": {
                "type": "object",
                "properties": {"content": {"type": "string", "description": "The fact to store."}},
                "required": ["content"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "mem0_update",
            "description": (
                "Replace the text of one of this user's memories by its id (from mem0_search) "
                "when a stored fact changed or was wrong."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "memory_id": {"type": "string", "description": "Memory id to update."},
                    "text": {"type": "string", "description": "New text content."},
                },
                "required": ["memory_id", "text"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "mem0_delete",
            "description": (
                "Delete one of this user's memories by its id (from mem0_search) when it is "
                "obsolete or the user asks you to forget it."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "memory_id": {"type": "string", "description": "Memory id to delete."}
                },
                "required": ["memory_id"],
            },
        },
    },
]
TOOL_NAMES = frozenset(schema["function"]["name"] for schema in TOOL_SCHEMAS)


class Tools:
    """Answers the tools with ``backend`` for the ``user_id`` given on each call."""

    def __init__(self, backend: Mem0Backend, *, threshold: float, max_chars: int) -> None:
        self.backend = backend
        self.threshold = threshold
        self.max_chars = max_chars

    def handle(self, user_id: str, name: str, args: dict[str, Any]) -> str:
        if name == "mem0_search":
            return self.search(user_id, args)
        if name == "mem0_add":
            return self.add(user_id, args)
        if name in ("mem0_update", "mem0_delete"):
            return self.change(user_id, name, args)
        return tool_error(f"unknown tool {name!r}; available: {', '.join(sorted(TOOL_NAMES))}")

    def search(self, user_id: str, args: dict[str, Any]) -> str:
        query = _text(args.get("query"))
        if not query:
            return tool_error("'query' must be a non-empty string")
        top_k = args.get("top_k", 10)
        if not isinstance(top_k, int) or isinstance(top_k, bool):
            return tool_error("'top_k' must be an integer")
        hits = self.backend.search(user_id, query, max(1, min(top_k, MAX_TOP_K)), self.threshold)
        return self._bounded([_shown(hit) for hit in hits])

    def add(self, user_id: str, args: dict[str, Any]) -> str:
        content = _text(args.get("content"))
        if not content:
            return tool_error("'content' must be a non-empty string")
        if len(content) > MAX_CONTENT_CHARS:
            return tool_error(f"'content' is longer than {MAX_CONTENT_CHARS} characters")
        added = self.backend.add(
            user_id, [{"role": "user", "content": content}], {"source": "mem0_add"}, infer=False
        )
        return json.dumps({"success": True, "ids": [item.id for item in added]})

    def change(self, user_id: str, name: str, args: dict[str, Any]) -> str:
        memory_id = _text(args.get("memory_id"))
        if not memory_id:
            return tool_error("'memory_id' must be a non-empty string")
        owned = self.backend.get(memory_id)
        if owned is None or owned.user_id != user_id:
            return tool_error(NOT_YOURS)
        if name == "mem0_delete":
            self.backend.delete(memory_id)
            return json.dumps({"success": True, "deleted": memory_id})
        text = _text(args.get("text"))
        if not text:
            return tool_error("'text' must be a non-empty string")
        if len(text) > MAX_CONTENT_CHARS:
            return tool_error(f"'text' is longer than {MAX_CONTENT_CHARS} characters")
        self.backend.update(memory_id, text)
        return json.dumps({"success": True, "updated": memory_id})

    def _bounded(self, shown: list[dict[str, Any]]) -> str:
        """The results as JSON within ``max_chars``: whole results, the rest counted."""
        kept: list[dict[str, Any]] = []
        for item in shown:
            candidate = json.dumps({"success": True, "results": [*kept, item]})
            if len(candidate) > self.max_chars:
                break
            kept.append(item)
        answer: dict[str, Any] = {"success": True, "results": kept}
        if len(kept) < len(shown):
            answer["omitted"] = len(shown) - len(kept)
        return json.dumps(answer)


def _shown(hit: Record) -> dict[str, Any]:
    shown: dict[str, Any] = {"id": hit.id, "memory": hit.memory[:MAX_CONTENT_CHARS]}
    if hit.score is not None:
        shown["score"] = round(hit.score, 3)
    return shown


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""
