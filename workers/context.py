"""What a job needs (database, sessions, provider manager, Redis, recall cache), built once
per worker process and passed explicitly to job bodies.

RQ calls plain functions with primitive arguments, so the entry functions in
``workers.jobs`` fetch the process's :class:`WorkerContext` with :func:`current` and pass it
to the job body; tests call bodies with a context of their own. Every part is built lazily
on first use. The forking worker runs each job in a fresh child process: a context inherited
across ``fork()`` is never reused there (SQLite connections must not cross a fork), the
child builds its own.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from functools import cached_property

import redis

from gateway import outbox
from gateway.agent.sessions import SessionOpener
from gateway.history.db import Database
from gateway.history.store import SessionRecord, SessionStore
from gateway.keys import RedisKeys
from gateway.llm.client import LLMClient
from gateway.memory.store import MemoryStore
from gateway.provider_scopes import provider_services
from gateway.recall import RecallCache
from gateway.settings import Settings, load_settings
from gateway.tenants import TenantId
from providers.base import ProviderContext
from providers.manager import MemoryManager
from providers.registry import build_manager
from workers.queues import JobQueues, redis_client

log = logging.getLogger(__name__)


class WorkerContext:
    """The collaborators of job bodies; ``manager`` may be injected (tests, embedding)."""

    def __init__(self, settings: Settings, *, manager: MemoryManager | None = None) -> None:
        self.settings = settings
        self._manager = manager
        self.pid = os.getpid()
        # Where outbox rows a job writes go; None: onto RQ (the inline runner sets its own).
        self.follow_ups: Callable[[list[int]], None] | None = None

    @cached_property
    def db(self) -> Database:
        return Database(self.settings.state_db)

    @cached_property
    def sessions(self) -> SessionStore:
        return SessionStore(self.db)

    @cached_property
    def memory(self) -> MemoryStore:
        return MemoryStore(self.settings.home, self.settings.memory)

    @cached_property
    def opener(self) -> SessionOpener:
        return SessionOpener(self.settings, self.sessions, self.memory, self.manager)

    def aux_llm(self) -> LLMClient:
        """A fresh auxiliary-model client for one job's event loop (close it after use)."""
        return LLMClient(self.settings.aux, role="auxiliary")

    @cached_property
    def manager(self) -> MemoryManager:
        if self._manager is not None:
            return self._manager
        return build_manager(self.settings, provider_services(self.db))

    @cached_property
    def redis(self) -> redis.Redis:
        return redis_client(self.settings.redis_url)

    @cached_property
    def keys(self) -> RedisKeys:
        return RedisKeys(self.settings.redis_prefix)

    @cached_property
    def recall_cache(self) -> RecallCache:
        return RecallCache(self.redis, self.keys, self.settings.recall)

    @cached_property
    def queues(self) -> JobQueues:
        return JobQueues(self.redis, self.settings)

    def provider_context(self, tenant: TenantId, session: SessionRecord) -> ProviderContext:
        """The provider context of a stored session (peer naming as in the gateway)."""
        if session.tenant != tenant:
            raise ValueError("session belongs to another tenant")
        return ProviderContext.for_session(session, settings=self.settings)

    def hand_off(self, ids: Sequence[int]) -> None:
        """Start the outbox rows a job committed (e.g. compression's session end) now; rows
        Redis does not take stay open for the relay."""
        if not ids:
            return
        if self.follow_ups is not None:
            self.follow_ups(list(ids))
            return
        relay = outbox.Relay(self.db, self.queues, self.settings.jobs)
        relay.enqueue_rows(outbox.get_rows(self.db, list(ids)))

    def close(self) -> None:
        """Release what was built (only in the process that built it)."""
        if os.getpid() != self.pid:
            return
        built = self.__dict__
        if "manager" in built and self._manager is None:
            built["manager"].shutdown()
        if "redis" in built:
            built["redis"].close()
        if "db" in built:
            built["db"].close()
        for name in (
            "db",
            "sessions",
            "memory",
            "opener",
            "manager",
            "redis",
            "recall_cache",
            "queues",
        ):
            built.pop(name, None)


_lock = threading.Lock()
_settings: Settings | None = None
_current: WorkerContext | None = None


def configure(settings: Settings | None = None, *, context: WorkerContext | None = None) -> None:
    """Set what :func:`current` returns: a given context, or one built from ``settings``.

    ``mnemogate worker`` calls this before working; without it the first job loads the
    settings itself (a worker started with plain ``rq worker``).
    """
    global _settings, _current
    with _lock:
        if _current is not None:
            _current.close()
        _current = context
        _settings = context.settings if context is not None else settings


def current() -> WorkerContext:
    """This process's context, built on first use (again after a fork)."""
    global _settings, _current
    with _lock:
        if _current is None or _current.pid != os.getpid():
            if _settings is None:
                _settings = load_settings()
            _current = WorkerContext(_settings)
        return _current


def reset() -> None:
    """Close and forget the context and settings (tests; a worker shutting down)."""
    global _settings, _current
    with _lock:
        if _current is not None:
            _current.close()
        _current = None
        _settings = None
