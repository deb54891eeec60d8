"""Tool answers that carry stored memory text: sanitized, JSON, and bounded in size.

A provider tool's answer goes back to the model as tool output. Memory text in it is
stripped of fence tags (a stored "fence close" must not end a later recall fence early) and
the whole answer stays under a limit: items are dropped from the end of its list, and the
answer says so, rather than cutting JSON in the middle.
"""

from __future__ import annotations

import json
from typing import Any

from gateway.security.fence import sanitize_recalled


def clip(text: str, limit: int) -> str:
    """``text`` trimmed and cut to ``limit`` characters with an ellipsis."""
    text = text.strip()
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + "…"


def clean(text: str, limit: int) -> str:
    """Memory text as a tool may show it: no fence tags, at most ``limit`` characters."""
    return clip(sanitize_recalled(text), limit)


def bounded_answer(payload: dict[str, Any], items_key: str, limit: int) -> str:
    """``payload`` as JSON of at most ``limit`` characters, dropping ``items_key`` entries."""
    answer = dict(payload)
    if items_key not in answer:
        return clip(json.dumps(answer, ensure_ascii=False), limit)  # no list: nothing to drop
    items = list(answer[items_key] or [])
    while True:
        answer[items_key] = items
        text = json.dumps(answer, ensure_ascii=False)
        if len(text) <= limit or not items:
            return text
        items = items[:-1]
        answer["truncated"] = True
