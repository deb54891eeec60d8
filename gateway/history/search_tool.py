"""The model-facing ``session_search`` tool: schema, prompt guidance and argument handling.

The tool is bound to one tenant, scope and current session when a turn starts; the model's
arguments choose only *what* to look for, never *whose* history. Every answer is JSON text,
including errors, so a bad call never interrupts the turn.

Optional LLM summaries of hits (``sessions.summarize``) belong in the caller: it can post-
process the ``search`` answer (``sessions[*].messages``) before returning it to the model.
"""

from __future__ import annotations

import json
import re
from typing import Any

from gateway.errors import NotFound, UserInputError
from gateway.history.search import MAX_LIMIT, MAX_WINDOW, SessionSearch
from gateway.tenants import TenantId

TOOL_NAME = "session_search"
DEFAULT_RECENT = 10
MAX_SESSION_ID_CHARS = 200
NO_MATCH_HINT = "No match. Try fewer words, synonyms, OR, or a prefix*."
_INTEGER = re.compile(r"-?[0-9]{1,18}")

SESSION_SEARCH_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": (
            "Search this user's past conversations with you. Use it before asking the user "
            "to repeat something they may already have told you. "
            "With `query`: returns the best-matching messages with the exchange around each, "
            "grouped by session (id, title, date); long messages are trimmed around the "
            "match, `skipped` counts messages left out before one, `more` counts further "
            'matches. Query syntax: keywords, "exact phrase", OR between alternatives, '
            "NOT to exclude a word, prefix* for word beginnings; a plain question also works "
            "(its key words are matched; dates like 'last week' or 'in May' favour messages "
            "of that time). Chinese, Japanese and Korean words are supported. "
            "With `session_id`: read that session; add `around_message_id` and `window` to "
            "scroll (pass the first or last message id you saw). "
            "With no arguments: list the most recent sessions."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": 'Keywords, "phrase", OR, NOT, prefix*, or a question.',
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "description": "At most this many sessions (default: as many as fit).",
                },
                "session_id": {
                    "type": "string",
                    "description": "Read this session (an id from an earlier result).",
                },
                "around_message_id": {
                    "type": "integer",
                    "description": "With session_id: centre the window on this message.",
                },
                "window": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_WINDOW,
                    "description": "With session_id: how many messages to show (default 10).",
                },
            },
            "additionalProperties": False,
        },
    },
}

SESSION_SEARCH_GUIDANCE = (
    "When the user refers to something from an earlier conversation, call session_search "
    "to look it up in their session history before asking them to repeat themselves."
)


class SessionSearchTool:
    """``session_search`` for one turn: tenant, scope and current session are fixed here."""

    name = TOOL_NAME
    schema = SESSION_SEARCH_SCHEMA

    def __init__(
        self,
        search: SessionSearch,
        *,
        tenant: TenantId,
        scope_key: str,
        chat_type: str,
        current_session_id: str | None,
    ) -> None:
        self._search = search
        self._tenant = tenant
        self._scope_key = scope_key
        self._chat_type = chat_type
        self._current = current_session_id

    def handle(self, arguments: dict[str, Any] | str) -> str:
        """Run one call; the answer (or the error) is JSON text for the model."""
        try:
            answer = self._dispatch(_load(arguments))
        except UserInputError as exc:
            answer = {"error": str(exc)}
        except NotFound:
            answer = {"error": "no such session or message in this user's history here"}
        return json.dumps(answer, ensure_ascii=False)

    def _dispatch(self, args: dict[str, Any]) -> dict[str, Any]:
        query = _optional(args, "query", str)
        session_id = _optional(args, "session_id", str)
        limit = _optional(args, "limit", int)
        window = _optional(args, "window", int)
        around = _optional(args, "around_message_id", int)
        if session_id:
            if len(session_id) > MAX_SESSION_ID_CHARS:
                raise UserInputError("session_id is too long")
            view = self._search.read(
                self._tenant,
                session_id,
                around_message_id=around,
                window=window if window is not None else 10,
                scope_key=self._scope_key,
                chat_type=self._chat_type,
            )
            return {"mode": "read", **view.to_dict()}
        if query and query.strip():
            return search_answer(
                self._search,
                self._tenant,
                query,
                scope_key=self._scope_key,
                chat_type=self._chat_type,
                current_session_id=self._current,
                limit=limit,
            )
        recent = self._search.recent(
            self._tenant,
            scope_key=self._scope_key,
            chat_type=self._chat_type,
            limit=limit if limit is not None else DEFAULT_RECENT,
            exclude_lineage_of=self._current,
        )
        return {"mode": "recent", "count": len(recent), "sessions": [s.to_dict() for s in recent]}


def search_answer(
    search: SessionSearch,
    tenant: TenantId,
    query: str,
    *,
    scope_key: str,
    chat_type: str,
    current_session_id: str | None = None,
    limit: int | None = None,
    now: float | None = None,
) -> dict[str, Any]:
    """The answer to a search, as the tool and ``sessions search --json`` both print it."""
    result = search.search(
        tenant,
        query,
        scope_key=scope_key,
        chat_type=chat_type,
        current_session_id=current_session_id,
        limit=limit,
        now=now,
    )
    answer = result.to_dict()
    if not result.sessions:
        answer["hint"] = NO_MATCH_HINT
    return answer


def _load(arguments: dict[str, Any] | str) -> dict[str, Any]:
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        try:
            arguments = json.loads(arguments)
        except ValueError as exc:
            raise UserInputError(f"arguments are not valid JSON: {exc}") from exc
    if arguments is None:
        return {}
    if not isinstance(arguments, dict):
        raise UserInputError("arguments must be a JSON object")
    return arguments


def _optional(args: dict[str, Any], key: str, kind: type[str] | type[int]) -> Any:
    value = args.get(key)
    if value is None:
        return None
    if kind is int:
        if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
            value = int(value.strip())
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise UserInputError(f"{key} must be an integer")
        if abs(value) > 2**62:  # SQLite integers are 64-bit
            raise UserInputError(f"{key} is out of range")
        return value
    if not isinstance(value, str):
        raise UserInputError(f"{key} must be a string")
    return value
