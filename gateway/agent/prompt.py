"""The frozen system prompt and tools array of a session.

Both are built once when a session starts and persisted with it; every request of that
session sends them byte-identical, so the model provider's prefix cache stays valid and a
memory write during the session never changes what the model was told at its start.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gateway.history.search_tool import SESSION_SEARCH_GUIDANCE, SESSION_SEARCH_SCHEMA
from gateway.memory.store import MemoryStore
from gateway.memory.tool import MEMORY_GUIDANCE, MEMORY_TOOL_SCHEMA
from gateway.routing import Conversation
from gateway.settings import AgentSettings
from gateway.tenants import MemoryScope

PRIVATE_NOTE = (
    "This is a private (incognito) session: nothing from it is saved to memory or indexed "
    "for search, and you have no memory tool in it."
)
GROUP_NOTE = (
    "This conversation is in a group chat. Your memory here belongs to this person in this "
    "group only; do not bring up anything they told you elsewhere."
)
NO_MEMORY_NOTE = "Curated memory is switched off for this chat."


@dataclass(frozen=True, slots=True)
class FrozenPrompt:
    """What a session sends on every request: the system prompt and the tools array."""

    system_prompt: str
    tools: list[dict[str, Any]]

    @property
    def tools_json(self) -> str:
        return json.dumps(self.tools, ensure_ascii=False, separators=(",", ":"))


def build_tools(
    *, memory_enabled: bool, provider_tools: Sequence[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    if memory_enabled:
        tools.append(MEMORY_TOOL_SCHEMA)
    tools.append(SESSION_SEARCH_SCHEMA)
    tools.extend(provider_tools)
    return tools


def build_frozen_prompt(
    agent: AgentSettings,
    memory: MemoryStore,
    conversation: Conversation,
    scope: MemoryScope | None,
    *,
    incognito: bool = False,
    provider_block: str = "",
    provider_tools: Sequence[dict[str, Any]] = (),
    now: datetime | None = None,
) -> FrozenPrompt:
    """Capture the system prompt and tools for a new session from the memory on disk now."""
    started = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    parts = [agent.persona.strip(), f"This conversation started on {started}."]
    if conversation.chat_type == "group":
        parts.append(GROUP_NOTE)
    memory_enabled = scope is not None and not incognito
    if incognito:
        parts.append(PRIVATE_NOTE)
    elif scope is None:
        parts.append(NO_MEMORY_NOTE)
    else:
        parts.append(MEMORY_GUIDANCE.strip())
    parts.append(SESSION_SEARCH_GUIDANCE.strip())
    if scope is not None:
        parts.append(memory.render_snapshot(scope).strip())
    if provider_block.strip():
        parts.append(provider_block.strip())
    tools = build_tools(memory_enabled=memory_enabled, provider_tools=provider_tools)
    return FrozenPrompt(system_prompt="\n\n".join(parts) + "\n", tools=tools)
