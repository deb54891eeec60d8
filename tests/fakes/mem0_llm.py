"""What the fake LLM answers to Mem0's fact extraction, as the real model would shape it.

``mem0ai`` 2.x sends one extraction request per ``Memory.add`` (``infer=True``): the system
prompt is ``ADDITIVE_EXTRACTION_PROMPT`` and the user prompt has ``## Existing Memories`` (a
JSON list of ``{"id", "text"}``) and ``## New Messages`` (``user: …`` / ``assistant: …``
lines). The answer is ``{"memory": [{"id", "text", "attributed_to"}]}``. This fake "extracts"
each user line verbatim (so a recalled fact can be traced to the turn it came from) and, like
the prompt asks, leaves out what the existing memories already say.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SECTION = re.compile(
    r"^## (?P<name>[^\n]+)\n(?P<body>.*?)(?=\n\n## |\n\n# Output|\Z)", re.S | re.M
)


def is_extraction(body: dict[str, Any]) -> bool:
    """Whether ``body`` is Mem0's extraction request (and not a chat turn)."""
    messages = body.get("messages") or []
    user = messages[-1].get("content") if messages else None
    return isinstance(user, str) and "## New Messages" in user and "## Existing Memories" in user


def extraction_reply(body: dict[str, Any]) -> str:
    """The JSON text Mem0 parses: one memory per new user line not already stored."""
    prompt = body["messages"][-1]["content"]
    sections = {m["name"].strip(): m["body"] for m in _SECTION.finditer(prompt)}
    existing = {item.get("text") for item in json.loads(sections.get("Existing Memories") or "[]")}
    memories = []
    for line in (sections.get("New Messages") or "").splitlines():
        if line.startswith("user: ") and line[6:].strip() and line[6:].strip() not in existing:
            text = line[6:].strip()
            memories.append({"id": str(len(memories)), "text": text, "attributed_to": "user"})
    return json.dumps({"memory": memories})


def handler(body: dict[str, Any]) -> str | None:
    """A FakeLLM handler: answers extraction requests, leaves chat turns to the default."""
    return extraction_reply(body) if is_extraction(body) else None
