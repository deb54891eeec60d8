"""Reading chat-completions responses: the completion body and the Retry-After header.

Pure functions over decoded JSON, tolerant of the variations between OpenAI-compatible servers
(tool-call arguments sent as objects, missing call ids, content parts, absent usage details).
"""

from __future__ import annotations

import datetime
import email.utils
import json
import math
import time
import uuid
from typing import Any

from gateway.llm.types import Completion, ToolCall, Usage


class NotACompletion(ValueError):
    """The decoded body does not have the shape of a chat completion; says what is missing."""


def parse_completion(data: Any) -> Completion:
    """Turn a decoded chat-completions body into a :class:`Completion`.

    Raises :class:`NotACompletion` when it is not one. Unknown fields (DeepSeek's
    ``reasoning_content``, logprobs…) are ignored; absent or null usage counts are 0.
    """
    if not isinstance(data, dict):
        raise NotACompletion("not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        if isinstance(data.get("error"), dict):
            raise NotACompletion(f"error: {data['error'].get('message')}")
        raise NotACompletion("no choices")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise NotACompletion("choices[0].message missing")
    finish_reason = choice.get("finish_reason")
    model = data.get("model")
    return Completion(
        content=_content(message.get("content")),
        tool_calls=_tool_calls(message.get("tool_calls")),
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
        usage=_usage(data.get("usage")),
        model=model if isinstance(model, str) else None,
    )


def _content(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        # Some servers answer with content parts: [{"type": "text", "text": "..."}].
        parts = [part.get("text") for part in value if isinstance(part, dict)]
        return "".join(part for part in parts if isinstance(part, str))
    raise NotACompletion("message.content is neither text nor null")


def _tool_calls(value: Any) -> list[ToolCall]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise NotACompletion("message.tool_calls is not a list")
    calls = []
    for raw in value:
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise NotACompletion("a tool call has no function name")
        arguments = function.get("arguments")
        if arguments is None:
            arguments = "{}"
        elif not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        call_id = raw.get("id")
        if not isinstance(call_id, str) or not call_id:
            call_id = f"call_{uuid.uuid4().hex[:24]}"
        calls.append(ToolCall(id=call_id, name=function["name"], arguments=arguments))
    return calls


def _usage(value: Any) -> Usage:
    if not isinstance(value, dict):
        return Usage()
    details = value.get("prompt_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    if not cached:
        # DeepSeek reports its context cache under its own name.
        cached = _count(value.get("prompt_cache_hit_tokens"))
    return Usage(
        prompt_tokens=_count(value.get("prompt_tokens")),
        completion_tokens=_count(value.get("completion_tokens")),
        cached_tokens=cached,
    )


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0
    return max(0, int(value))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delay-seconds or HTTP date)."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:  # "-0000": the date is in UTC by definition
            when = when.replace(tzinfo=datetime.UTC)
        seconds = when.timestamp() - time.time()
    if math.isnan(seconds):
        return None
    return max(0.0, seconds)
