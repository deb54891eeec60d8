"""Wiring: builds the stores, clients and the agent from Settings, and closes them in order."""

from __future__ import annotations

from types import TracebackType

from gateway.agent.agent import Agent
from gateway.agent.background import InlineBackground
from gateway.history.db import Database
from gateway.history.search import SessionSearch
from gateway.history.store import SessionStore
from gateway.llm.client import LLMClient
from gateway.memory.store import MemoryStore
from gateway.settings import Settings


class App:
    """Everything one gateway or console process needs; use as ``async with App(settings)``."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.db = Database(settings.state_db)
        self.sessions = SessionStore(self.db)
        self.search = SessionSearch(self.db)
        self.memory = MemoryStore(settings.home, settings.memory)
        self.llm = LLMClient(settings.llm, role="main")
        self.aux_llm = LLMClient(settings.aux, role="auxiliary")
        self.agent = Agent(
            settings,
            sessions=self.sessions,
            memory=self.memory,
            search=self.search,
            llm=self.llm,
            aux=self.aux_llm,
        )
        self.background = InlineBackground(self.agent, self.aux_llm)
        self.agent.hooks = self.background

    async def __aenter__(self) -> App:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def drain(self) -> None:
        """Wait for background work this process scheduled (titles, flushes) to finish."""
        await self.background.drain()

    async def aclose(self) -> None:
        await self.llm.aclose()
        await self.aux_llm.aclose()
        self.db.close()
