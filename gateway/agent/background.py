"""After-turn work run in this process: titles, transcripts, compression with memory flush.

This is the in-process implementation of :class:`~gateway.agent.hooks.TurnHooks`; nothing
here delays the reply (each piece runs as its own task). The background plane moves the
same work onto RQ queues.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from gateway.agent.agent import Agent
from gateway.agent.compression import (
    child_messages,
    flush_memory,
    needs_compression,
    plan_compression,
    summarize,
)
from gateway.agent.hooks import TurnEvent
from gateway.agent.titles import continuation_title, generate_title
from gateway.history import lineage
from gateway.history.transcripts import write_transcript
from gateway.llm.client import LLMClient
from gateway.routing import Conversation

log = logging.getLogger(__name__)


class InlineBackground:
    """Schedules after-turn work as asyncio tasks; ``drain()`` waits for all of them."""

    def __init__(self, agent: Agent, aux: LLMClient) -> None:
        self.agent = agent
        self.aux = aux
        self._tasks: set[asyncio.Task[None]] = set()
        self._compressing: set[str] = set()

    async def after_turn(self, event: TurnEvent) -> None:
        session = event.session
        settings = self.agent.settings
        if session.title is None and session.user_turns == 0 and not session.incognito:
            self._spawn(self.title(event), "title")
        if settings.sessions.write_transcripts and not session.incognito:
            self._spawn(
                asyncio.to_thread(
                    write_transcript, settings.home, self.agent.sessions, session.tenant, session.id
                ),
                "transcript",
            )
        window = settings.llm.context_window
        if (
            needs_compression(event.prompt_tokens, window, settings.sessions.compression_threshold)
            and session.id not in self._compressing
        ):
            self._compressing.add(session.id)
            self._spawn(self.compress(event.conversation, session.id), "compression")

    async def drain(self) -> None:
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _spawn(self, work: Coroutine[Any, Any, Any], what: str) -> None:
        async def guarded() -> None:
            try:
                await work
            except Exception:
                log.exception("background %s failed", what)

        task = asyncio.create_task(guarded(), name=f"mnemogate-{what}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def title(self, event: TurnEvent) -> str | None:
        title = await generate_title(self.aux, event.user_text, event.reply)
        return await asyncio.to_thread(
            lineage.set_generated_title,
            self.agent.sessions.db,
            event.session.tenant,
            event.session.id,
            title,
        )

    async def compress(self, conversation: Conversation, session_id: str) -> str | None:
        """Summarise the middle of the session into a child session; returns the child id."""
        try:
            return await self._compress(conversation, session_id)
        finally:
            self._compressing.discard(session_id)

    async def _compress(self, conversation: Conversation, session_id: str) -> str | None:
        agent, tenant = self.agent, conversation.tenant
        cfg = agent.settings.sessions
        parent = await asyncio.to_thread(agent.sessions.get_session, tenant, session_id)
        seen = await asyncio.to_thread(agent.sessions.messages, tenant, session_id)
        plan = plan_compression(seen, cfg.protect_first, cfg.protect_last)
        if plan is None:
            return None
        scope = agent.scope_for(conversation)
        if (
            scope is not None
            and not parent.incognito
            and parent.user_turns >= agent.settings.memory.flush_min_turns
        ):
            await flush_memory(self.aux, agent.memory, scope, plan.middle)
        summary = await summarize(self.aux, plan.middle)
        base_title = parent.title
        if base_title is None:
            first_user = next((m.content for m in seen if m.role == "user"), "")
            base_title = await generate_title(self.aux, first_user, "")
        async with agent.session_lock(conversation):
            live = await asyncio.to_thread(
                agent.sessions.live_session, tenant, conversation.session_key
            )
            if live is None or live.id != parent.id:
                return None  # the user moved on (/new, /resume) meanwhile
            latest = await asyncio.to_thread(agent.sessions.messages, tenant, parent.id)
            newer = [m for m in latest if m.id > seen[-1].id]
            plan = type(plan)(plan.head, plan.middle, [*plan.tail, *newer])
            title = await asyncio.to_thread(
                agent.sessions.db.read,
                lambda c: lineage.unique_title(c, tenant, continuation_title(base_title, "Chat")),
            )
            await asyncio.to_thread(agent.sessions.end_session, tenant, parent.id, "compressed")
            child = await asyncio.to_thread(
                agent.start_session,
                conversation,
                incognito=parent.incognito,
                parent=parent,
                title=title,
            )
            await asyncio.to_thread(
                agent.sessions.append_messages, tenant, child.id, child_messages(plan, summary)
            )
        log.info(
            "compressed %s into %s (%d messages summarised)", parent.id, child.id, len(plan.middle)
        )
        return child.id
