"""The terminal front end of ``mnemogate chat``: the same pipeline as the platforms.

Interactive when stdin is a terminal; otherwise one message per input line and the reply on
stdout, so conversations can be scripted.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from gateway.agent.dispatch import dispatch
from gateway.agent.replies import cap_reply
from gateway.app import App
from gateway.errors import UserInputError
from gateway.identity import LinkStore
from gateway.routing import Conversation

BANNER = "mnemogate chat as {tenant} — /help for commands, Ctrl-D to quit."


async def handle_line(app: App, conversation: Conversation, line: str) -> str | None:
    """The reply to one line of input, or None for a blank line."""
    if not line.strip():
        return None
    answer = await dispatch(app.agent, conversation, line)
    if answer is not None:
        return answer
    try:
        result = await app.agent.run_turn(conversation, line)
    except UserInputError as exc:
        return f"⚠ {exc}"
    return cap_reply(result.reply, app.settings.agent.max_reply_chars, attach=False).text


async def run_console(
    app: App,
    user: str,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    interactive: bool | None = None,
) -> None:
    source = stdin or sys.stdin
    sink = stdout or sys.stdout
    tty = source.isatty() if interactive is None else interactive
    conversation = Conversation.console(user)
    if tty:
        print(BANNER.format(tenant=conversation.tenant), file=sink, flush=True)
    while True:
        if tty:
            print("you> ", end="", file=sink, flush=True)
        line = await asyncio.to_thread(source.readline)
        if not line:
            break
        # Resolved per line: a /link or /unlink takes effect from the next line on.
        tenant = await asyncio.to_thread(LinkStore(app.db).resolve, conversation.account)
        conversation = conversation.resolved(tenant)
        reply = await handle_line(app, conversation, line.rstrip("\r\n"))
        if reply is None:
            continue
        prefix = f"{app.settings.agent.name}> " if tty else ""
        print(prefix + reply, file=sink, flush=True)
        await show_notices(app, conversation, sink)
    await app.drain()
    await show_notices(app, conversation, sink)


async def show_notices(app: App, conversation: Conversation, sink: TextIO) -> None:
    """Print notices from background work (e.g. "💾 Memory updated") after a reply."""
    for notice in await app.notices_for(conversation):
        print(notice.text, file=sink, flush=True)
