"""The OpenViking tools offered to the model: the reference's names and safe parameters.

Dropped from the reference: ``viking_add_resource``'s ``to``/``parent``/local paths (a
resource always lands in the caller's space and only public URLs are accepted).
"""

from __future__ import annotations

from typing import Any

from providers.openviking.spaces import CATEGORY_DIRS


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


_URI = "A viking:// URI in this user's space (viking://user/<you>/…), as search returned."
TOOL_SCHEMAS: list[dict[str, Any]] = [
    _tool(
        "viking_search",
        "Search this user's OpenViking memories and resources by meaning.",
        {
            "query": {"type": "string", "description": "What to look for."},
            "scope": {"type": "string", "description": "Optional URI prefix to search under."},
            "limit": {"type": "integer", "description": "Maximum results (default 8, max 20)."},
        },
        ["query"],
    ),
    _tool(
        "viking_read",
        "Read a memory or resource at a viking:// URI.",
        {
            "uri": {"type": "string", "description": _URI},
            "level": {
                "type": "string",
                "enum": ["abstract", "overview", "full"],
                "description": "Detail level (default: overview).",
            },
        },
        ["uri"],
    ),
    _tool(
        "viking_browse",
        "Browse this user's OpenViking space like a filesystem: list, tree or stat.",
        {
            "action": {"type": "string", "enum": ["list", "tree", "stat"]},
            "path": {"type": "string", "description": _URI + " Default: the space's root."},
        },
        ["action"],
    ),
    _tool(
        "viking_remember",
        "Store a durable fact or preference about this user in long-term memory.",
        {
            "content": {"type": "string", "description": "The information to remember."},
            "category": {
                "type": "string",
                "enum": sorted(CATEGORY_DIRS),
                "description": "Memory category (default: event).",
            },
        },
        ["content"],
    ),
    _tool(
        "viking_forget",
        "Delete one memory file (a .md URI under this user's memories/).",
        {"uri": {"type": "string", "description": _URI}},
        ["uri"],
    ),
    _tool(
        "viking_add_resource",
        "Index a public web page (http or https URL) for later search by this user.",
        {
            "url": {"type": "string", "description": "A public http(s) URL."},
            "reason": {"type": "string", "description": "Why it is worth indexing."},
        },
        ["url"],
    ),
]
