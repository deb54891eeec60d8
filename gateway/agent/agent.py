"""The Agent: runs one turn for a conversation (SPEC §5) and manages its live session."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from gateway.agent.hooks import NoHooks, TurnEvent, TurnHooks
from gateway.agent.locks import KeyedLocks
from gateway.agent.loop import AsyncTool, Tool, run_tool_loop
from gateway.agent.memory_events import write_events
from gateway.agent.planning import TurnFacts, planner
from gateway.agent.replay import replay
from gateway.agent.search_summaries import SummarizingSearchTool
from gateway.agent.sessions import SessionOpener
from gateway.errors import LLMBadResponse, LLMError, UserInputError
from gateway.history import endings
from gateway.history.records import NewMessage, SessionRecord, StoredMessage
from gateway.history.search import SessionSearch
from gateway.history.search_tool import SessionSearchTool
from gateway.history.store import SessionStore
from gateway.history.transcripts import write_transcript
from gateway.history.turns import commit_turn
from gateway.llm.client import LLMClient
from gateway.llm.types import Usage
from gateway.memory.approval import ApprovalStore, PendingWrite
from gateway.memory.store import MemoryStore, WriteResult
from gateway.memory.tool import MemoryTool
from gateway.observability import metrics
from gateway.observability.logs import bind as bind_log
from gateway.observability.logs import log_context
from gateway.recall import RecallSource
from gateway.routing import Conversation
from gateway.security.fence import wrap_recalled
from gateway.settings import Settings
from gateway.tenants import MemoryScope, TenantId
from providers.base import ProviderContext, TurnStart
from providers.manager import MemoryManager

log = logging.getLogger(__name__)


@dataclass(slots=True)
class TurnResult:
    """What the platform sends back, and what background work needs to know."""

    reply: str
    session_id: str
    usage: Usage = field(default_factory=Usage)
    memory_writes: list[WriteResult] = field(default_factory=list)
    staged: list[PendingWrite] = field(default_factory=list)  # awaiting the user's approval
    error: str | None = None


class Agent:
    """Builds requests from the frozen prompt + history, runs the tool loop, persists the turn.

    Recall from the provider is read from the Redis cache (``recall``) and fenced into the
    current user message only; the turn's follow-up work is written to the outbox with the
    turn and handed to ``hooks`` (the job runner) after commit.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        sessions: SessionStore,
        memory: MemoryStore,
        search: SessionSearch,
        llm: LLMClient,
        aux: LLMClient | None = None,
        providers: MemoryManager | None = None,
        recall: RecallSource | None = None,
        hooks: TurnHooks | None = None,
    ) -> None:
        self.settings = settings
        self.sessions = sessions
        self.memory = memory
        self.search = search
        self.llm = llm
        self.aux = aux or llm
        self.providers = providers or MemoryManager()
        self.recall = recall
        self.hooks: TurnHooks = hooks or NoHooks()
        self.locks = KeyedLocks()
        self._hook_tasks: set[asyncio.Task[object]] = set()
        self.opener = SessionOpener(settings, sessions, memory, self.providers)

    # --- sessions ------------------------------------------------------------------------
    def scope_for(self, conversation: Conversation) -> MemoryScope | None:
        return conversation.memory_scope(self.settings.groups.memory)

    def current_session(self, conversation: Conversation) -> SessionRecord:
        live = self.sessions.live_session(conversation.tenant, conversation.session_key)
        return live if live is not None else self.opener.open(conversation)

    async def new_session(
        self, conversation: Conversation, *, incognito: bool = False, reason: endings.Reason = "new"
    ) -> SessionRecord:
        """End the live session (if any) and start another, under the conversation's lock.

        The provider hears of the end from the background plane — a ``session_end`` job that
        syncs the session's last turns first — never from here, so ``/new`` answers at once;
        never for a private session, of which nothing may reach memory.
        """
        async with self.session_lock(conversation):
            session, rows = await asyncio.to_thread(
                self.opener.replace, conversation, incognito=incognito, reason=reason
            )
        await self.hooks.schedule(rows)
        return session

    async def expire_idle(self, now: float | None = None) -> int:
        """End every live session idle for ``sessions.idle_minutes`` (reason ``idle``); how
        many ended. Their conversations start afresh with the next message."""
        minutes = self.settings.sessions.idle_minutes
        if minutes <= 0:
            return 0
        cutoff = (time.time() if now is None else now) - minutes * 60
        ended = 0
        for tenant, session_id, key in await asyncio.to_thread(
            endings.idle_sessions, self.sessions.db, cutoff
        ):
            async with self.locks.hold(f"{tenant}|{key}"):  # not in the middle of a turn
                done, rows = await asyncio.to_thread(self.opener.expire, tenant, session_id, cutoff)
            ended += done
            await self.hooks.schedule(rows)
        return ended

    def _live_or_fresh(self, conversation: Conversation) -> tuple[SessionRecord, list[int]]:
        """The live session, or a new one if there is none or it sat idle too long (then
        with the outbox rows telling the provider of the idle end)."""
        live = self.sessions.live_session(conversation.tenant, conversation.session_key)
        if live is None:
            return self.opener.open(conversation), []
        minutes = self.settings.sessions.idle_minutes
        if minutes > 0 and self.opener.idle_since(live) < time.time() - minutes * 60:
            # A private session stays private: the user never asked to leave private mode.
            return self.opener.replace(conversation, incognito=live.incognito, reason="idle")
        return live, []

    def session_lock(self, conversation: Conversation) -> AbstractAsyncContextManager[None]:
        """Held while a turn (or a session switch) of this conversation runs."""
        return self.locks.hold(f"{conversation.tenant}|{conversation.session_key}")

    # --- the turn ------------------------------------------------------------------------
    def check_input(self, text: str) -> str:
        cleaned = text.replace("\x00", "").strip()
        if not cleaned:
            raise UserInputError("The message is empty.")
        limit = self.settings.agent.max_message_chars
        if len(cleaned) > limit:
            raise UserInputError(
                f"The message is {len(cleaned):,} characters long; the limit is {limit:,}. "
                "Please shorten it or split it into several messages."
            )
        return cleaned

    async def run_turn(
        self,
        conversation: Conversation,
        text: str,
        *,
        platform_message_id: str | None = None,
    ) -> TurnResult:
        """One user message → tool loop → reply, persisted; messages of a session in order."""
        tenant = conversation.tenant
        with log_context(namespace=tenant.namespace), metrics.turn(conversation.platform) as timer:
            cleaned = self.check_input(text)
            async with self.session_lock(conversation):
                return timer.result(await self._turn(conversation, cleaned, platform_message_id))

    async def _turn(
        self, conversation: Conversation, text: str, platform_message_id: str | None
    ) -> TurnResult:
        tenant = conversation.tenant
        session, history, memory_tool, ended = await asyncio.to_thread(self._prepare, conversation)
        await self.hooks.schedule(ended)
        bind_log(session=session.id)
        ctx = ProviderContext.for_session(session, settings=self.settings)
        provider_on = self.providers.provider is not None and not session.incognito
        if provider_on:
            self._notify(self.providers.aio.on_turn_start(ctx, TurnStart(session.user_turns, text)))
        recall = await self._recall(ctx, text, session) if provider_on else None

        request: list[dict[str, Any]] = [{"role": "system", "content": session.system_prompt}]
        request.extend(replay(history))
        fenced = wrap_recalled(recall) if recall else ""
        request.append({"role": "user", "content": f"{text}\n\n{fenced}" if fenced else text})
        tools = self._tools(session, ctx, memory_tool, provider_on)

        user_message = NewMessage(
            role="user",
            content=text,
            name=conversation.display_name,
            platform_message_id=platform_message_id,
        )
        try:
            loop = await run_tool_loop(
                self.llm,
                request,
                session.tools,
                tools,
                max_iterations=self.settings.agent.max_tool_iterations,
            )
        except LLMError as exc:
            log.warning("turn for %s failed: %s", tenant.namespace, exc)
            await asyncio.to_thread(
                commit_turn, self.sessions, tenant, session.id, [user_message], Usage()
            )
            return TurnResult(reply=llm_failure_reply(exc), session_id=session.id, error=str(exc))

        writes = list(memory_tool.writes) if memory_tool is not None else []
        facts = TurnFacts(
            user_text=text,
            model_wrote_memory=bool(writes),
            prompt_tokens=loop.last_prompt_tokens,
            provider_active=provider_on,
            recall_due=provider_on and self._cadence_due(session.user_turns + 1),
            memory_enabled=memory_tool is not None,
        )
        stored = [user_message, *(_to_new_message(m) for m in loop.messages)]
        committed = await asyncio.to_thread(
            commit_turn,
            self.sessions,
            tenant,
            session.id,
            stored,
            loop.usage,
            planner(self.settings, facts),
        )
        if self.settings.sessions.write_transcripts and not session.incognito:
            self._notify(
                asyncio.to_thread(
                    write_transcript,
                    self.settings.home,
                    self.sessions,
                    tenant,
                    committed.session_id,
                )
            )
        if provider_on and memory_tool is not None and memory_tool.changes:
            scope = self.scope_for(conversation)
            assert scope is not None
            for event in write_events(memory_tool.changes, origin="user-chat", scope=scope):
                self._notify(self.providers.aio.on_memory_write(ctx, event))
        await self.hooks.after_turn(
            TurnEvent(conversation, session, text, loop.text, writes, committed.outbox_ids)
        )
        return TurnResult(
            reply=loop.text,
            session_id=committed.session_id,
            usage=loop.usage,
            memory_writes=writes,
            staged=list(memory_tool.staged) if memory_tool is not None else [],
        )

    def _prepare(
        self, conversation: Conversation
    ) -> tuple[SessionRecord, list[StoredMessage], MemoryTool | None, list[int]]:
        """The blocking reads a turn starts with, done in one trip off the event loop (and
        the outbox rows of an idle session it ended)."""
        session, ended = self._live_or_fresh(conversation)
        if not session.system_prompt:  # an imported session, resumed: never sent bare
            session = self.opener.refreeze(conversation, session)
        history = self.sessions.messages(conversation.tenant, session.id)
        return session, history, self._memory_tool(conversation, session), ended

    def _notify(self, call: Coroutine[Any, Any, object]) -> None:
        """Run a hook (provider, transcript) without holding up the reply; log failures."""
        task = asyncio.create_task(call)
        self._hook_tasks.add(task)
        task.add_done_callback(self._hook_done)

    async def _transcript(self, tenant: TenantId, session_id: str) -> None:
        # FIFO per session, so a slow earlier write never overwrites a newer transcript.
        async with self.locks.hold(f"transcript|{tenant}|{session_id}"):
            await asyncio.to_thread(
                write_transcript, self.settings.home, self.sessions, tenant, session_id
            )

    def _hook_done(self, task: asyncio.Task[object]) -> None:
        self._hook_tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("after-turn hook failed", exc_info=task.exception())

    async def drain_hooks(self) -> None:
        """Wait for provider hooks still running (before shutdown)."""
        while self._hook_tasks:
            await asyncio.gather(*list(self._hook_tasks), return_exceptions=True)

    async def _recall(self, ctx: ProviderContext, text: str, session: SessionRecord) -> str | None:
        if self.recall is None:
            return None
        return await self.recall.for_turn(ctx, text, turn_index=session.user_turns)

    def _cadence_due(self, turn_index: int) -> bool:
        return turn_index % self.settings.recall.context_cadence == 0

    def _tools(
        self,
        session: SessionRecord,
        ctx: ProviderContext,
        memory_tool: MemoryTool | None,
        provider_on: bool,
    ) -> dict[str, Tool | AsyncTool]:
        tools: dict[str, Tool | AsyncTool] = {"session_search": self._search_tool(session)}
        if memory_tool is not None:
            tools["memory"] = memory_tool
        if provider_on:
            tools.update(self.providers.tools(ctx))
        return tools

    def _search_tool(self, session: SessionRecord) -> Tool | AsyncTool:
        plain = SessionSearchTool(
            self.search,
            tenant=session.tenant,
            scope_key=session.scope_key,
            chat_type=session.chat_type,
            current_session_id=session.id,
        )
        if self.settings.sessions.summarize:
            return SummarizingSearchTool(plain, self.aux)
        return plain

    def _memory_tool(self, conversation: Conversation, session: SessionRecord) -> MemoryTool | None:
        scope = self.scope_for(conversation)
        if scope is None or session.incognito:
            return None
        approvals = ApprovalStore(self.sessions.db)
        return approvals.memory_tool(
            self.memory, scope, origin="user-chat", default=self.settings.memory.write_approval
        )


def llm_failure_reply(exc: LLMError) -> str:
    """What the user reads when the model failed; the message itself was kept."""
    if isinstance(exc, LLMBadResponse):
        problem = "the language model sent back an answer I could not read"
    else:
        problem = "I can't reach the language model right now"
    return f"Sorry — {problem}. Your message was kept; please try again shortly."


def _to_new_message(message: dict[str, Any]) -> NewMessage:
    return NewMessage(
        role=message["role"],
        content=message.get("content") or "",
        tool_calls=message.get("tool_calls"),
        tool_call_id=message.get("tool_call_id"),
    )
