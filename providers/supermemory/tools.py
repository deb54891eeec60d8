"""Supermemory's tools for one container tag, and the ledger that makes forgetting safe.

Names and parameters are the reference's: ``supermemory_store(content, metadata)``,
``supermemory_search(query, limit)``, ``supermemory_forget(id, query)``,
``supermemory_profile(query)``, plus the kebab-case aliases it also exposes
(``supermemory-save``, ``-search``, ``-forget``, ``-profile``). No ``container_tag``
parameter: the tag is always the caller's backend key.

**Forget.** The reference deletes "the best match of a query"; here a memory is forgotten
only by an ``id`` that a search in the same scope returned recently (the
:class:`SearchLedger`, ``forget_window_s``). ``forget(query=…)`` without an id searches and
returns the candidates with their ids, deleting nothing. The tools run in the gateway process
only, so the ledger is kept in its memory; a restart empties it (the model searches again).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from providers.base import tool_error
from providers.supermemory.client import Hit, SupermemoryClient

MAX_CONTENT_CHARS = 4000
MAX_REMEMBERED = 500  # ids per scope; the oldest go first
MAX_METADATA_KEYS = 10
ALIASES = {
    "supermemory_store": "supermemory-save",
    "supermemory_search": "supermemory-search",
    "supermemory_forget": "supermemory-forget",
    "supermemory_profile": "supermemory-profile",
}
CANONICAL = {alias: name for name, alias in ALIASES.items()} | {n: n for n in ALIASES}


def _schema(name: str, description: str, props: dict[str, Any], required: list[str]) -> Any:
    parameters: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        parameters["required"] = required
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


_BASE = [
    _schema(
        "supermemory_store",
        "Store an explicit memory about this user for future recall.",
        {
            "content": {"type": "string", "description": "The memory content to store."},
            "metadata": {"type": "object", "description": "Optional flat key/value metadata."},
        },
        ["content"],
    ),
    _schema(
        "supermemory_search",
        "Search this user's long-term memory by meaning; results carry ids.",
        {
            "query": {"type": "string", "description": "What to search for."},
            "limit": {"type": "integer", "description": "Maximum results to return, 1 to 20."},
        },
        ["query"],
    ),
    _schema(
        "supermemory_forget",
        "Forget a memory by the id a recent supermemory_search returned. With only a query, "
        "lists matching memories and their ids without deleting anything.",
        {
            "id": {"type": "string", "description": "Memory id from supermemory_search."},
            "query": {"type": "string", "description": "Find candidates to forget."},
        },
        [],
    ),
    _schema(
        "supermemory_profile",
        "Retrieve this user's persistent profile facts and recent memory context.",
        {"query": {"type": "string", "description": "Optional query to focus the profile."}},
        [],
    ),
]
TOOL_SCHEMAS: list[dict[str, Any]] = _BASE + [
    {**s, "function": {**s["function"], "name": ALIASES[s["function"]["name"]]}} for s in _BASE
]


class SearchLedger:
    """Ids each scope's searches returned, each valid for ``window_s``; thread-safe."""

    def __init__(self, window_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.window_s = window_s
        self._clock = clock
        self._lock = threading.Lock()
        self._ids: dict[str, dict[str, float]] = {}

    def remember(self, scope: str, ids: list[str]) -> None:
        expires = self._clock() + self.window_s
        with self._lock:
            known = self._ids.setdefault(scope, {})
            for memory_id in ids:
                known.pop(memory_id, None)
                known[memory_id] = expires
            while len(known) > MAX_REMEMBERED:
                known.pop(next(iter(known)))

    def take(self, scope: str, memory_id: str) -> bool:
        """Whether ``memory_id`` was returned to ``scope`` within the window (then dropped)."""
        with self._lock:
            expires = self._ids.get(scope, {}).pop(memory_id, None)
        return expires is not None and expires >= self._clock()

    def restore(self, scope: str, memory_id: str) -> None:
        """Put back an id whose forget failed, so the model may try again."""
        self.remember(scope, [memory_id])

    def drop(self, scopes: set[str]) -> None:
        with self._lock:
            for scope in scopes:
                self._ids.pop(scope, None)


class Tools:
    def __init__(
        self, client: SupermemoryClient, ledger: SearchLedger, *, mode: str, max_chars: int
    ) -> None:
        self.client = client
        self.ledger = ledger
        self.mode = mode
        self.max_chars = max_chars

    def handle(self, tag: str, name: str, args: dict[str, Any], entity_context: str) -> str:
        canonical = CANONICAL.get(name)
        if canonical == "supermemory_store":
            return self.store(tag, args, entity_context)
        if canonical == "supermemory_search":
            return self.search(tag, args)
        if canonical == "supermemory_forget":
            return self.forget(tag, args)
        if canonical == "supermemory_profile":
            return self.profile(tag, args)
        return tool_error(f"unknown tool {name!r}; available: {', '.join(sorted(CANONICAL))}")

    def store(self, tag: str, args: dict[str, Any], entity_context: str) -> str:
        content = _text(args.get("content"))
        if not content:
            return tool_error("content is required")
        if len(content) > MAX_CONTENT_CHARS:
            return tool_error(f"content is longer than {MAX_CONTENT_CHARS} characters")
        metadata = _metadata(args.get("metadata"))
        if isinstance(metadata, str):
            return tool_error(metadata)
        doc_id = self.client.add_document(
            tag, content, {**metadata, "type": "explicit_memory"}, entity_context
        )
        preview = content[:80] + ("..." if len(content) > 80 else "")
        return json.dumps({"saved": True, "id": doc_id, "preview": preview})

    def search(self, tag: str, args: dict[str, Any]) -> str:
        query = _text(args.get("query"))
        if not query:
            return tool_error("query is required")
        limit = args.get("limit", 5)
        if not isinstance(limit, int) or isinstance(limit, bool):
            return tool_error("limit must be an integer")
        hits = self.client.search(tag, query, max(1, min(limit, 20)), self.mode)
        return self._results(tag, hits, {})

    def forget(self, tag: str, args: dict[str, Any]) -> str:
        memory_id, query = _text(args.get("id")), _text(args.get("query"))
        if memory_id:
            if not self.ledger.take(tag, memory_id):
                return tool_error(
                    "that id did not come from a recent supermemory_search for this user; "
                    "search first, then forget by the id it returns"
                )
            try:
                self.client.forget(tag, memory_id)
            except Exception:
                self.ledger.restore(tag, memory_id)
                raise
            return json.dumps({"success": True, "forgotten": memory_id})
        if not query:
            return tool_error("provide the id of a memory to forget (from supermemory_search)")
        hits = self.client.search(tag, query, 5, self.mode)
        note = {"note": "nothing was deleted; call again with the id of the memory to forget"}
        return self._results(tag, hits, note)

    def profile(self, tag: str, args: dict[str, Any]) -> str:
        found = self.client.profile(tag, _text(args.get("query"))[:200])
        answer: dict[str, Any] = {"static": found.static, "dynamic": found.dynamic}
        answer["results"] = [_shown(hit) for hit in found.hits if hit.text]
        self.ledger.remember(tag, [hit.id for hit in found.hits if hit.id])
        return _bounded(answer, self.max_chars)

    def _results(self, tag: str, hits: list[Hit], extra: dict[str, Any]) -> str:
        shown = [_shown(hit) for hit in hits if hit.text]
        self.ledger.remember(tag, [item["id"] for item in shown if item["id"]])
        return _bounded({"results": shown, "count": len(shown), **extra}, self.max_chars)


def _shown(hit: Hit) -> dict[str, Any]:
    item: dict[str, Any] = {"id": hit.id, "content": hit.text[:MAX_CONTENT_CHARS]}
    if hit.similarity is not None:
        item["similarity"] = round(hit.similarity * 100)
    return item


def _bounded(answer: dict[str, Any], max_chars: int) -> str:
    """JSON within ``max_chars``: list items are dropped from the end until it fits."""
    text = json.dumps(answer)
    while len(text) > max_chars:
        lists = [key for key, value in answer.items() if isinstance(value, list) and value]
        if not lists:
            return json.dumps(
                {"truncated": True, **{k: v for k, v in answer.items() if k == "count"}}
            )
        longest = max(lists, key=lambda key: len(json.dumps(answer[key])))
        answer = {**answer, longest: answer[longest][:-1], "truncated": True}
        text = json.dumps(answer)
    return text


def _metadata(value: object) -> dict[str, str | int | float | bool] | str:
    """Flat, bounded metadata, or why it is refused."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        return "metadata must be an object"
    if len(value) > MAX_METADATA_KEYS:
        return f"metadata may have at most {MAX_METADATA_KEYS} keys"
    clean: dict[str, str | int | float | bool] = {}
    for key, item in value.items():
        if not isinstance(item, str | int | float | bool):
            return f"metadata value of {key!r} must be a string, number or boolean"
        clean[str(key)[:64]] = item[:200] if isinstance(item, str) else item
    return clean


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""
