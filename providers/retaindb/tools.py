"""The five RetainDB memory tools, with the reference's names and parameters."""

from __future__ import annotations

from typing import Any

MEMORY_TYPES = ("factual", "preference", "goal", "instruction", "event", "opinion")


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


TOOL_SCHEMAS: list[dict[str, Any]] = [
    _tool(
        "retaindb_profile",
        "Get this user's stable profile: preferences, facts and patterns from long-term memory.",
        {},
        [],
    ),
    _tool(
        "retaindb_search",
        "Semantic search across this user's stored memories; ranked results with scores.",
        {
            "query": {"type": "string", "description": "What to search for."},
            "top_k": {"type": "integer", "description": "Max results (default: 8, max: 20)."},
        },
        ["query"],
    ),
    _tool(
        "retaindb_context",
        "A synthesized context block: what matters most for the current task, from memory.",
        {"query": {"type": "string", "description": "Current task or question."}},
        ["query"],
    ),
    _tool(
        "retaindb_remember",
        "Persist an explicit fact, preference or decision to this user's long-term memory.",
        {
            "content": {"type": "string", "description": "The fact to remember."},
            "memory_type": {
                "type": "string",
                "enum": list(MEMORY_TYPES),
                "description": "Category (default: factual).",
            },
            "importance": {"type": "number", "description": "Importance 0-1 (default: 0.7)."},
        },
        ["content"],
    ),
    _tool(
        "retaindb_forget",
        "Delete one of this user's memories by the id search or profile returned.",
        {"memory_id": {"type": "string", "description": "Memory ID to delete."}},
        ["memory_id"],
    ),
]
