"""Chat commands (``/help``, ``/new``, ``/reset`` …), answered without the LLM.

Commands are a table; each handler gets the agent, the conversation and the argument text
and returns the reply. Platform adapters and the console share this table. Commands about
sessions live in ``session_commands``, about memory in ``memory_commands``; ``dispatch``
imports them so they register.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

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
    await agent.new_session(conversation, incognito=private)
    if private:
        return "Started a private session: nothing from it is saved to memory or indexed."
    return "Started a new conversation. I still remember what is in your memory."


@command("reset", "/reset", "Same as /new: end this conversation and start afresh.")
async def _reset(agent: Agent, conversation: Conversation, args: str) -> str:
    await agent.new_session(conversation, reason="reset")
    return "Conversation reset."
