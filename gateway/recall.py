"""Provider recall cached in Redis between turns, its cadences, and the gateway's reader.

Workers compute recall (``workers.jobs.recall_next``) and store it with :class:`RecallCache`;
the gateway reads it with :class:`AsyncRecallCache` through :class:`RecallSource`, which never
waits except on a cold first turn, and then at most ``recall.first_turn_budget_s``. A cached
entry distinguishes "computed, nothing to recall" (``text == ""``) from "never computed"
(no entry). All keys come from :class:`~gateway.keys.RedisKeys`, under the tenant.

Cadences count user turns of the session, which state.db keeps durably with the session
(``sessions.user_turns``), so they survive restarts and need no Redis counter.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, cast

import redis
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import ExponentialBackoff

from gateway.keys import RedisKeys
from gateway.observability import metrics
from gateway.security.scanner import scan
from gateway.settings import RecallSettings
from gateway.tenants import TenantId
from providers.base import ProviderContext
from workers.queues import ConnectionHealth, JobQueues

log = logging.getLogger(__name__)

READY_TTL_S = 60
# Extra time the whole cold-turn wait may take beyond the budget (enqueue + round trips).
WAIT_MARGIN_S = 0.25


def async_redis_client(url: str) -> aioredis.Redis:
    """The gateway's client: fails fast when Redis is down; BLPOP waits stay under its timeout."""
    return aioredis.Redis.from_url(
        url,
        socket_connect_timeout=2,
        socket_timeout=30,
        retry=AsyncRetry(ExponentialBackoff(cap=0.2, base=0.02), 1),
    )


@dataclass(frozen=True, slots=True)
class CachedRecall:
    """A computed recall; ``text`` is "" when the provider had nothing to say."""

    text: str
    turn_index: int
    computed_at: float


def screen_recalled(text: str) -> str:
    """``text`` with every line the threat scanner blocks replaced by a placeholder.

    Provider output is written by a model or a third-party service from what other turns
    said; like curated memory, it is scanned before it can reach a prompt (then fenced at
    request time). Line by line, so one poisoned fact does not hide the rest.
    """
    lines = []
    for line in text.splitlines():
        result = scan(line) if line.strip() else None
        if result is not None and result.blocked:
            log.warning("recalled line blocked by rule %s", result.rule)
            lines.append(f"[BLOCKED recalled line: {result.findings[0].category}]")
        else:
            lines.append(line)
    return "\n".join(lines)


def _encode(text: str, turn_index: int) -> str:
    screened = screen_recalled(text)
    return json.dumps({"text": screened, "turn_index": turn_index, "at": time.time()})


def _decode(raw: Any) -> CachedRecall | None:
    if raw is None:
        return None
    data = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    return CachedRecall(str(data["text"]), int(data["turn_index"]), float(data["at"]))


class Cadence:
    """When to compute recall and when to inject it, from ``[recall]`` settings.

    ``turn_index`` counts the user turns before this one in the session (0 = first turn).
    """

    def __init__(self, settings: RecallSettings) -> None:
        self.settings = settings

    def recall_due(self, turn_index: int) -> bool:
        return turn_index % self.settings.context_cadence == 0

    def dialectic_due(self, turn_index: int) -> bool:
        return turn_index % self.settings.dialectic_cadence == 0

    def inject(self, turn_index: int) -> bool:
        if self.settings.injection_frequency == "first-turn":
            return turn_index == 0
        return True


class RecallCache:
    """Worker side: store recall, count turns, signal a waiting turn (synchronous Redis)."""

    def __init__(self, client: redis.Redis, keys: RedisKeys, settings: RecallSettings) -> None:
        self.client = client
        self.keys = keys
        self.settings = settings

    def put(self, tenant: TenantId, session_key: str, text: str, *, turn_index: int) -> None:
        self.client.set(
            self.keys.recall(tenant, session_key),
            _encode(text, turn_index),
            ex=self.settings.cache_ttl_s,
        )

    def get(self, tenant: TenantId, session_key: str) -> CachedRecall | None:
        return _decode(self.client.get(self.keys.recall(tenant, session_key)))

    def signal_ready(self, tenant: TenantId, session_key: str, nonce: str) -> None:
        """Wake the turn waiting on ``nonce`` (a list, so a signal sent early is not lost)."""
        key = self.keys.recall_ready(tenant, session_key, nonce)
        with self.client.pipeline() as pipe:
            pipe.rpush(key, "1")
            pipe.expire(key, READY_TTL_S)
            pipe.execute()


class AsyncRecallCache:
    """Gateway side: the same entries over ``redis.asyncio``, plus waiting for a signal."""

    def __init__(self, client: aioredis.Redis, keys: RedisKeys, settings: RecallSettings) -> None:
        self.client = client
        self.keys = keys
        self.settings = settings

    async def put(self, tenant: TenantId, session_key: str, text: str, *, turn_index: int) -> None:
        await self.client.set(
            self.keys.recall(tenant, session_key),
            _encode(text, turn_index),
            ex=self.settings.cache_ttl_s,
        )

    async def get(self, tenant: TenantId, session_key: str) -> CachedRecall | None:
        return _decode(await self.client.get(self.keys.recall(tenant, session_key)))

    async def wait_ready(
        self, tenant: TenantId, session_key: str, nonce: str, timeout: float
    ) -> bool:
        """Block (BLPOP, no polling) until the job for ``nonce`` signals, or ``timeout`` passes."""
        if timeout <= 0:
            return False
        key = self.keys.recall_ready(tenant, session_key, nonce)
        # redis-py types one signature for both clients; the asyncio one returns an awaitable.
        popped = await cast(Awaitable[Any], self.client.blpop([key], timeout=timeout))
        return popped is not None


class RecallSource:
    """What the turn asks for recall: the cached text, or a short wait on a cold first turn.

    Redis trouble never fails the turn: it answers None, logs the first failure as a warning
    (later ones at debug) and logs when Redis is back.
    """

    def __init__(
        self, cache: AsyncRecallCache, queues: JobQueues, settings: RecallSettings
    ) -> None:
        self.cache = cache
        self.queues = queues
        self.settings = settings
        self.cadence = Cadence(settings)
        self.health = ConnectionHealth(log, "recall cache")

    async def for_turn(self, ctx: ProviderContext, text: str, *, turn_index: int) -> str | None:
        """Recall to append to this turn's user message, or None.

        ``turn_index`` is the number of user turns before this one in the session. When
        nothing is cached for the session key and this is its first turn, a recall job for
        ``text`` is enqueued and awaited for at most ``first_turn_budget_s``.
        """
        if not self.cadence.inject(turn_index):
            return None
        try:
            cached = await self.cache.get(ctx.tenant, ctx.session_key)
            metrics.recall_lookup(cached is not None)
            if cached is None and turn_index == 0 and self.settings.first_turn_budget_s > 0:
                budget = self.settings.first_turn_budget_s
                cached = await asyncio.wait_for(
                    self._cold(ctx, text, budget), budget + WAIT_MARGIN_S
                )
        except (redis.RedisError, OSError, TimeoutError) as exc:
            self.health.failed(exc)
            return None
        except Exception:  # recall is optional: a bug here must not cost the user the reply
            log.exception("recall for %s failed", ctx.namespace)
            return None
        self.health.ok()
        return cached.text if cached is not None and cached.text else None

    async def _cold(self, ctx: ProviderContext, text: str, budget: float) -> CachedRecall | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + budget
        nonce = secrets.token_hex(8)
        await asyncio.to_thread(
            self.queues.enqueue,
            "recall",
            ctx.tenant,
            ctx.session_id,
            dedup=nonce,
            query=text,
            nonce=nonce,
        )
        arrived = await self.cache.wait_ready(
            ctx.tenant, ctx.session_key, nonce, deadline - loop.time()
        )
        metrics.recall_wait(arrived)
        if not arrived:
            log.debug("recall for %s not ready within %.2fs", ctx.namespace, budget)
            return None
        return await self.cache.get(ctx.tenant, ctx.session_key)
