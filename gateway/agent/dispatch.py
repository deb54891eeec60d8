"""Route a chat line to its command: the one entry point platforms and the console call."""

from __future__ import annotations

from gateway.agent import (  # noqa: F401  (register their commands)
    account_commands,
    memory_commands,
    session_commands,
)
from gateway.agent.agent import Agent
from gateway.agent.commands import COMMANDS
from gateway.identity import commands as _identity_commands  # noqa: F401  (/link, /unlink)
from gateway.routing import Conversation


def parse_command(text: str) -> tuple[str, str] | None:
    """``"/title  My trip"`` → ``("title", "My trip")``; None when the text is no command."""
    stripped = text.strip()
    if not stripped.startswith("/") or len(stripped) < 2:
        return None
    head, _, rest = stripped[1:].partition(" ")
    name = head.split("@", 1)[0].lower()  # Telegram appends @botname in groups
    return name, rest.strip()


async def dispatch(agent: Agent, conversation: Conversation, text: str) -> str | None:
    """Answer a slash command, or return None when ``text`` is not one we know."""
    parsed = parse_command(text)
    if parsed is None:
        return None
    name, args = parsed
    found = COMMANDS.get(name)
    if found is None:
        return f"Unknown command /{name}. Send /help for the list."
    if found.dm_only and conversation.chat_type != "dm":
        return f"/{name} shows private data, so it only works in a direct message with me."
    return await found.handler(agent, conversation, args)
