"""Chat commands (``/help``, ``/new``, ``/memory`` …), answered without the LLM.

Commands are a table; each handler gets the agent, the conversation and the argument text
and returns the reply. Platform adapters and the console share this table.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from gateway.agent.agent import Agent
from gateway.routing import Conversation

Handler = Callable[[Agent, Conversation, str], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    usage: str
    help: str
    handler: Handler
    dm_only: bool = False


COMMANDS: dict[str, Command] = {}


def command(
    name: str, usage: str, help_text: str, *, dm_only: bool = False
) -> Callable[[Handler], Handler]:
    def register(func: Handler) -> Handler:
        COMMANDS[name] = Command(name, usage, help_text, func, dm_only)
        return func

    return register


@command("help", "/help", "List the commands.")
async def _help(agent: Agent, conversation: Conversation, args: str) -> str:
    lines = ["Commands:"]
    lines.extend(f"  {c.usage} — {c.help}" for c in COMMANDS.values())
    return "\n".join(lines)


@command(
    "new",
    "/new [private]",
    "Start a new conversation (private: nothing saved to memory, not searchable).",
)
async def _new(agent: Agent, conversation: Conversation, args: str) -> str:
    private = args.lower() in {"private", "incognito"}
    if args and not private:
        return "Usage: /new or /new private"
    await asyncio.to_thread(agent.new_session, conversation, incognito=private)
    if private:
        return "Started a private session: nothing from it is saved to memory or indexed."
    return "Started a new conversation. I still remember what is in your memory."


@command("reset", "/reset", "Same as /new: end this conversation and start afresh.")
async def _reset(agent: Agent, conversation: Conversation, args: str) -> str:
    await asyncio.to_thread(agent.new_session, conversation, reason="reset")
    return "Conversation reset."


@command(
    "memory", "/memory", "Show what I remember about you, with usage and origins.", dm_only=True
)
async def _memory(agent: Agent, conversation: Conversation, args: str) -> str:
    scope = agent.scope_for(conversation)
    if scope is None:
        return "Memory is switched off in this chat."
    return await asyncio.to_thread(render_memory_listing, agent, scope)


def render_memory_listing(agent: Agent, scope: object) -> str:
    from gateway.tenants import MemoryScope

    assert isinstance(scope, MemoryScope)
    out: list[str] = []
    for target, label in (("user", "About you (USER.md)"), ("memory", "My notes (MEMORY.md)")):
        entries = agent.memory.read(scope, target)  # type: ignore[arg-type]
        used, limit = agent.memory.usage(scope, target)  # type: ignore[arg-type]
        out.append(f"{label} — {used:,}/{limit:,} chars")
        if not entries:
            out.append("  (empty)")
        for i, entry in enumerate(entries, 1):
            when = (
                datetime.fromtimestamp(entry.updated_at, UTC).strftime("%Y-%m-%d")
                if entry.updated_at
                else "unknown date"
            )
            out.append(f"  {i}. {entry.text}\n     [{entry.origin}, {when}]")
        out.append("")
    return "\n".join(out).rstrip()
