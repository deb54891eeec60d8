"""Chat commands about sessions: ``/sessions``, ``/resume``, ``/title``, ``/search``."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from gateway.agent.agent import Agent
from gateway.agent.commands import command
from gateway.agent.titles import MAX_TITLE, clean_title
from gateway.errors import NotFound, UserInputError
from gateway.history import lineage
from gateway.history.search import SearchResult
from gateway.routing import Conversation


def _date(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M")


def shown_title(title: str | None) -> str:
    """A title for a listing: at most 80 characters, even one stored before titles were
    capped (a 100,000-character title once broke /sessions)."""
    if not title:
        return "(untitled)"
    return title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 1] + "…"


@command("sessions", "/sessions", "List your recent conversations here.")
async def _sessions(agent: Agent, conversation: Conversation, args: str) -> str:
    rows = await asyncio.to_thread(
        lineage.scope_sessions,
        agent.sessions.db,
        conversation.tenant,
        conversation.search_scope_key(),
        10,
    )
    if not rows:
        return "No conversations yet."
    live = agent.sessions.live_session(conversation.tenant, conversation.session_key)
    lines = ["Recent conversations (resume with /resume <title or id>):"]
    for row in rows:
        marker = "▶ " if live is not None and live.id == row["id"] else "  "
        title = shown_title(row["title"])
        private = " [private]" if row["incognito"] else ""
        lines.append(
            f"{marker}{title}{private} — {_date(row['started_at'])}, "
            f"{row['message_count']} messages, id {row['id']}"
        )
    return "\n".join(lines)


@command("resume", "/resume <title|id>", "Continue an earlier conversation.")
async def _resume(agent: Agent, conversation: Conversation, args: str) -> str:
    if not args:
        return "Usage: /resume <title or id> — /sessions lists them."
    try:
        target = await asyncio.to_thread(
            lineage.resolve_resume_target,
            agent.sessions.db,
            conversation.tenant,
            args,
            conversation.search_scope_key(),
        )
    except NotFound as exc:
        return str(exc)
    async with agent.session_lock(conversation):
        rows = await asyncio.to_thread(
            lineage.reopen,
            agent.sessions.db,
            conversation.tenant,
            target,
            conversation.session_key,
            notify=agent.providers.provider is not None,
        )
    await agent.hooks.schedule(rows)  # the provider hears of the end and the switch
    session = agent.sessions.get_session(conversation.tenant, target)
    return f"Resumed “{session.title or session.id}”."


@command("title", "/title [name]", "Show or set this conversation's title.")
async def _title(agent: Agent, conversation: Conversation, args: str) -> str:
    session = await asyncio.to_thread(agent.current_session, conversation)
    if not args:
        return f"Title: {session.title}" if session.title else "This conversation has no title."
    wanted = clean_title(args)
    if not wanted:
        return "Usage: /title <name>"
    try:
        await asyncio.to_thread(
            lineage.set_title, agent.sessions.db, conversation.tenant, session.id, wanted
        )
    except UserInputError as exc:
        return str(exc)
    return f"Title set: {wanted}"


#: /search prints to a chat: fewer characters than the model may read.
SEARCH_COMMAND_CHARS = 1500


@command("search", "/search <query>", "Search your past conversations here.")
async def _search(agent: Agent, conversation: Conversation, args: str) -> str:
    if not args:
        return 'Usage: /search <words, "exact phrase", OR, NOT, prefix*>'
    result = await asyncio.to_thread(
        agent.search.search,
        conversation.tenant,
        args,
        scope_key=conversation.search_scope_key(),
        chat_type=conversation.chat_type,
        current_session_id=None,
        limit=5,
        budget_chars=SEARCH_COMMAND_CHARS,
    )
    return format_search(result)


def format_search(result: SearchResult) -> str:
    if not result.sessions:
        return "Nothing found."
    lines = []
    for found in result.sessions:
        hits = [m for m in found.ordered() if m.hit] or found.ordered()
        lines.append(f"• {found.title or '(untitled)'} — {found.date}, id {found.id}")
        lines.extend(f"  {m.text}" for m in hits[:2])
    return "\n".join(lines)
