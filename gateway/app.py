"""Wiring: builds stores, clients, the provider manager and the agent from Settings.

One place starts and stops everything in order (``async with App(settings)``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from types import TracebackType
from typing import Literal

import httpx

from gateway.agent.agent import Agent
from gateway.agent.hooks import TurnHooks
from gateway.background import InlineRunner, QueueRunner
from gateway.history.db import Database
from gateway.history.search import SessionSearch
from gateway.history.store import SessionStore
from gateway.keys import RedisKeys
from gateway.llm.client import LLMClient
from gateway.memory.store import MemoryStore
from gateway.notices import Notice, NoticeBus
from gateway.outbox import Relay
from gateway.provider_scopes import provider_services
from gateway.recall import AsyncRecallCache, RecallSource, async_redis_client
from gateway.routing import Conversation
from gateway.settings import Settings
from providers.registry import build_manager
from workers.context import WorkerContext
from workers.queues import JobQueues, redis_client

log = logging.getLogger(__name__)
IDLE_SWEEP_S = 60.0
JobsMode = Literal["queue", "inline"]


class App:
    """Everything one gateway or console process needs."""

    def __init__(
        self,
        settings: Settings,
        *,
        jobs_mode: JobsMode | None = None,
        llm_transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """``llm_transport`` replaces the HTTP transport of both model clients (benchmarks)."""
        self.settings = settings
        self.jobs_mode: JobsMode = jobs_mode or settings.jobs.mode
        self.db = Database(settings.state_db)
        self.sessions = SessionStore(self.db)
        self.search = SessionSearch(self.db, budget_chars=settings.sessions.search_budget_chars)
        self.memory = MemoryStore(settings.home, settings.memory)
        self.providers = build_manager(settings, provider_services(self.db))
        self.llm = LLMClient(settings.llm, role="main", transport=llm_transport)
        self.aux_llm = LLMClient(settings.aux, role="auxiliary", transport=llm_transport)
        self.keys = RedisKeys(settings.redis_prefix)
        self.aredis = async_redis_client(settings.redis_url)
        self.redis = redis_client(settings.redis_url)
        self.queues = JobQueues(self.redis, settings)
        self.relay = Relay(self.db, self.queues, settings.jobs)
        self.notices = NoticeBus(self.keys, aclient=self.aredis)
        recall_settings = settings.recall
        self.inline: InlineRunner | None = None
        self._stop = asyncio.Event()
        self._relay_task: asyncio.Task[None] | None = None
        self._idle_task: asyncio.Task[None] | None = None
        runner: TurnHooks
        if self.jobs_mode == "inline":
            # No worker will answer a cold-start recall job: don't wait for one.
            recall_settings = recall_settings.model_copy(update={"first_turn_budget_s": 0.0})
            self.worker_context = WorkerContext(settings, manager=self.providers)
            self.inline = runner = InlineRunner(self.worker_context)
        else:
            runner = QueueRunner(self.db, self.relay)
        recall = RecallSource(
            AsyncRecallCache(self.aredis, self.keys, recall_settings), self.queues, recall_settings
        )
        self.agent = Agent(
            settings,
            sessions=self.sessions,
            memory=self.memory,
            search=self.search,
            llm=self.llm,
            aux=self.aux_llm,
            providers=self.providers,
            recall=recall,
            hooks=runner,
        )

    async def __aenter__(self) -> App:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Pick up work an earlier process left in the outbox; keep relaying (queue mode);
        end idle sessions (``sessions.idle_minutes``) in the background."""
        if self.inline is not None:
            await self.inline.run_pending()
        else:
            self._relay_task = asyncio.create_task(
                self.relay.run_forever(self._stop), name="mnemogate-relay"
            )
        if self.settings.sessions.idle_minutes > 0:
            self._idle_task = asyncio.create_task(self._expire_idle(), name="mnemogate-idle")

    async def _expire_idle(self) -> None:
        # Every minute at most: idle limits are minutes, and a pass is one indexed query.
        interval = min(IDLE_SWEEP_S, self.settings.sessions.idle_minutes * 60 / 4)
        while not self._stop.is_set():
            try:
                ended = await self.agent.expire_idle()
                if ended:
                    log.info("ended %d idle session(s)", ended)
            except Exception:
                log.exception("idle session sweep failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), interval)

    async def drain(self) -> None:
        """Wait for background work this process runs itself (inline mode, provider hooks)."""
        await self.agent.drain_hooks()
        await self.agent.hooks.drain()

    async def notices_for(self, conversation: Conversation) -> list[Notice]:
        """Notices (e.g. "💾 Memory updated") waiting for this conversation's tenant."""
        return await self.notices.take(conversation.tenant)

    async def aclose(self) -> None:
        self._stop.set()
        for task in (self._relay_task, self._idle_task):
            if task is not None:
                await task
        await self.drain()
        await self.llm.aclose()
        await self.aux_llm.aclose()
        await self.aredis.aclose()
        self.redis.close()
        self.providers.shutdown()
        if self.inline is not None:
            self.worker_context.close()
        self.db.close()
