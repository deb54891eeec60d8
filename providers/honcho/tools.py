"""The ``honcho_*`` tools: schemas (fixed for the process) and their handlers.

No tool takes a tenant, peer or session argument: who the user is comes from the context
the gateway built. Answers are JSON, every text sanitized of fence tags and the whole
capped at ``max_tool_result_chars``. Bad arguments get an error answer; a failing server
raises :class:`~providers.honcho.client.HonchoCallError` for the manager to log and count.
Every tool works through the :class:`~providers.honcho.scope.TenantScope` of the context:
on the peer of its memory scope (in an isolated group chat the group peer, so the tools see
and change only what belongs to that group), asked by that scope's own assistant peer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from gateway.security.fence import sanitize_recalled
from gateway.settings import HonchoSettings
from providers.base import tool_error
from providers.honcho.client import Level
from providers.honcho.recall import LEVELS, Recaller, cap_level, clip
from providers.honcho.scope import TenantScope
from providers.schemas import function_tool

MAX_SEARCH = 20
CARD_LINES = 40
LEVEL_GUIDE = (
    "minimal: quick factual lookups (name, role, a simple preference); low: straightforward "
    "questions; medium: questions that combine several observations; high: behaviour "
    "patterns and contradictions; max: exhaustive audit-level analysis (slow, costly)."
)
Handler = Callable[[TenantScope, dict[str, Any]], dict[str, Any] | str]


def tool_schemas(settings: HonchoSettings) -> list[dict[str, Any]]:
    """The tools offered in ``hybrid`` and ``tools`` mode, in a fixed order."""
    reasoning: dict[str, Any] = {"query": {"type": "string", "description": "The question."}}
    if settings.dialectic_dynamic:
        reasoning["reasoning_level"] = {
            "type": "string",
            "enum": list(LEVELS),
            "description": "How hard Honcho should think. " + LEVEL_GUIDE,
        }
    return [
        function_tool(
            "honcho_profile",
            "Read or replace this user's Honcho profile (peer card: short, stable facts). "
            "'read' also lists recent conclusions with their ids; 'replace' sets the whole "
            "card to `card`.",
            {
                "action": {"type": "string", "enum": ["read", "replace"]},
                "card": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "For 'replace': every line of the new card.",
                },
            },
            ["action"],
        ),
        function_tool(
            "honcho_search",
            "Search what this user said in earlier conversations; returns matching messages.",
            {
                "query": {"type": "string", "description": "Words or a question."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH},
            },
            ["query"],
        ),
        function_tool(
            "honcho_context",
            "Honcho's current picture of this user: summary of this conversation, what it "
            "knows about them and their profile. `query` focuses it on a topic.",
            {"query": {"type": "string", "description": "Optional topic to focus on."}},
            [],
        ),
        function_tool(
            "honcho_reasoning",
            "Ask Honcho to reason over everything it knows about this user and answer a "
            "question. Slower and costlier than honcho_context.",
            reasoning,
            ["query"],
        ),
        function_tool(
            "honcho_conclude",
            "Record a durable fact about this user in Honcho ('create' with `content`), or "
            "remove one ('delete' with a `conclusion_id` from honcho_profile).",
            {
                "action": {"type": "string", "enum": ["create", "delete"]},
                "content": {"type": "string", "description": "For 'create': the fact."},
                "conclusion_id": {"type": "string", "description": "For 'delete'."},
            },
            ["action"],
        ),
    ]


class Tools:
    """Dispatches tool calls by name through a table of handlers."""

    def __init__(self, settings: HonchoSettings, recaller: Recaller) -> None:
        self._settings = settings
        self._recaller = recaller
        self._handlers: dict[str, Handler] = {
            "honcho_profile": self._profile,
            "honcho_search": self._search,
            "honcho_context": self._context,
            "honcho_reasoning": self._reasoning,
            "honcho_conclude": self._conclude,
        }

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._handlers)

    def call(self, scope: TenantScope, name: str, args: dict[str, Any]) -> str:
        handler = self._handlers.get(name)
        if handler is None:
            known = ", ".join(sorted(self._handlers))
            return tool_error(f"unknown tool {name!r}; this provider offers {known}")
        answer = handler(scope, args)
        if isinstance(answer, str):
            return tool_error(answer)
        return self._dump({"success": True, **answer})

    def _profile(self, scope: TenantScope, args: dict[str, Any]) -> dict[str, Any] | str:
        action = args.get("action")
        if action == "replace":
            card = args.get("card")
            if not isinstance(card, list) or not all(isinstance(line, str) for line in card):
                return "'card' must be a list of strings (every line of the new card)"
            lines = [line.strip() for line in card if line.strip()][:CARD_LINES]
            return {"card": scope.set_card(lines)}
        if action != "read":
            return "'action' must be 'read' or 'replace'"
        conclusions = scope.conclusions(limit=20)
        return {
            "card": scope.card(),
            "conclusions": [{"id": item.id, "content": item.content} for item in conclusions],
        }

    def _search(self, scope: TenantScope, args: dict[str, Any]) -> dict[str, Any] | str:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return "'query' must be a non-empty string"
        limit = args.get("limit", 5)
        limit = max(1, min(limit if isinstance(limit, int) else 5, MAX_SEARCH))
        found = scope.search(query.strip(), limit=limit)
        return {
            "messages": [{"date": item.created_at[:10], "text": item.content} for item in found]
        }

    def _context(self, scope: TenantScope, args: dict[str, Any]) -> dict[str, Any] | str:
        query = args.get("query")
        if query is not None and not isinstance(query, str):
            return "'query' must be a string"
        focus = query.strip()[: self._settings.dialectic_max_input_chars] if query else None
        base = self._recaller.base_context(scope, focus)
        return {key: value for key, value in base.items() if value}

    def _reasoning(self, scope: TenantScope, args: dict[str, Any]) -> dict[str, Any] | str:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return "'query' must be a non-empty string"
        settings = self._settings
        level: Level = settings.reasoning_level
        chosen = args.get("reasoning_level")
        if settings.dialectic_dynamic and chosen is not None:
            if chosen not in LEVELS:
                return f"'reasoning_level' must be one of {', '.join(LEVELS)}"
            level = LEVELS[LEVELS.index(chosen)]
        level = cap_level(level, settings.reasoning_level_cap)
        question = query.strip()[: settings.dialectic_max_input_chars]
        answer = self._recaller.ask(scope, question, level)
        return {"answer": answer or "Honcho has nothing on this yet.", "reasoning_level": level}

    def _conclude(self, scope: TenantScope, args: dict[str, Any]) -> dict[str, Any] | str:
        action = args.get("action")
        if action == "create":
            content = args.get("content")
            if not isinstance(content, str) or not content.strip():
                return "'content' must be the fact to record"
            ids = scope.conclude([content.strip()])
            return {"conclusion_id": ids[0] if ids else None}
        if action != "delete":
            return "'action' must be 'create' or 'delete'"
        wanted = args.get("conclusion_id")
        if not isinstance(wanted, str) or not wanted.strip():
            return "'conclusion_id' must be an id listed by honcho_profile"
        # Only this user's conclusions may be deleted: the scope checks ownership first.
        if not scope.delete_conclusion(wanted.strip()):
            return f"no conclusion {wanted.strip()!r} about this user; see honcho_profile"
        return {"deleted": wanted.strip()}

    def _dump(self, payload: dict[str, Any]) -> str:
        cap = self._settings.max_tool_result_chars
        clean = _cleaned(payload, cap // 2)
        text = json.dumps(clean, ensure_ascii=False)
        if len(text) <= cap:
            return text
        return json.dumps(
            {"success": True, "truncated": True, "text": clip(text, cap - 60)}, ensure_ascii=False
        )


def _cleaned(value: Any, limit: int) -> Any:
    if isinstance(value, str):
        return clip(sanitize_recalled(value), limit)
    if isinstance(value, list):
        return [_cleaned(item, limit) for item in value]
    if isinstance(value, dict):
        return {key: _cleaned(item, limit) for key, item in value.items()}
    return value
