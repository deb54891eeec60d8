"""Per-tenant message rate limit and daily token budget, checked before a turn (SPEC §8.3).

Rate limit: ``access.messages_per_minute`` messages in any 60-second moving window, counted
with the ``limits`` package in Redis under the tenant's key (``P:t:<namespace>:rate…``, so
erasure's SCAN finds it). When Redis does not answer, counting falls back to an in-process
moving window for :data:`REDIS_RETRY_S` before Redis is tried again: a Redis outage never
blocks a turn, and it is logged once. A tenant over the limit gets one polite reply per
window; further messages in the same window are dropped without a reply (``reply=None``),
so a flood does not make the bot flood back.

Strangers (users not allowed to talk to the bot) are limited before anything else is done
for them: :meth:`RateLimiter.stranger_reply_due` grants at most one pairing reply per
60-second window per tenant (same Redis storage and fallback), and their other messages are
dropped unanswered, so a flood from an unpaired account costs neither replies nor writes.

Token budget (optional, ``access.daily_token_budget``): the tenant's usage today is the sum
of ``prompt_tokens + completion_tokens`` of every session of the tenant that was *touched*
today — started today, or whose newest message is timestamped today — where "today" is the
current UTC day. Session counters are cumulative, so a conversation carried over from
yesterday brings its earlier tokens along (this errs on the side of the budget); starting a
new conversation (``/new``) does not reset the day. The budget resets at 00:00 UTC.

Both checks are synchronous (Redis and SQLite calls of well under a millisecond locally).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import redis
from limits import RateLimitItemPerMinute
from limits.errors import StorageError as LimitsStorageError
from limits.storage import MemoryStorage, RedisStorage
from limits.strategies import MovingWindowRateLimiter
from redis.backoff import NoBackoff
from redis.retry import Retry

from gateway.history.db import Database
from gateway.keys import RedisKeys
from gateway.observability import metrics
from gateway.settings import Settings
from gateway.tenants import TenantId
from workers.queues import ConnectionHealth

log = logging.getLogger(__name__)
REDIS_RETRY_S = 5.0
_MAX_TOLD = 4096


@dataclass(frozen=True, slots=True)
class Decision:
    """Whether the message may go on to a turn; ``reply`` is what to tell the user, if any."""

    allowed: bool
    reply: str | None = None


ALLOW = Decision(True)


def _redis_pool(url: str) -> redis.ConnectionPool:
    # Fail fast: the limit is checked before every turn and must not wait for a dead Redis.
    return redis.ConnectionPool.from_url(
        url, socket_connect_timeout=1.0, socket_timeout=2.0, retry=Retry(NoBackoff(), 0)
    )


def _wait_text(seconds: float) -> str:
    seconds = max(1, round(seconds))
    return f"{seconds} seconds" if seconds < 120 else f"{round(seconds / 60)} minutes"


class RateLimiter:
    """``messages_per_minute`` per tenant: Redis-backed, in-process while Redis is down."""

    def __init__(
        self,
        settings: Settings,
        *,
        connection_pool: redis.ConnectionPool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_minute = settings.access.messages_per_minute
        self._keys = RedisKeys(settings.redis_prefix)
        self._own_pool = connection_pool is None
        self._pool = connection_pool or _redis_pool(settings.redis_url)
        # The storage prefixes every key with "<key_prefix>:"; the item namespace carries
        # the rest of RedisKeys.rate(tenant), so the full key starts with it.
        self._shared_prefix = f"{self._keys.prefix}:t"
        self._redis = RedisStorage(
            settings.redis_url,
            connection_pool=self._pool,
            key_prefix=self._shared_prefix,
            wrap_exceptions=True,
        )
        self._remote = MovingWindowRateLimiter(self._redis)
        self._local = MovingWindowRateLimiter(MemoryStorage())
        self._health = ConnectionHealth(log, "rate limit")
        self._clock = clock
        self._retry_redis_at = 0.0
        self._told: dict[str, float] = {}  # tenant → end of the window it was told about
        self._told_lock = threading.Lock()

    def _item(
        self, tenant: TenantId, *, per_minute: int = 0, kind: str = ""
    ) -> RateLimitItemPerMinute:
        key = self._keys.rate(tenant) + kind
        namespace = key.removeprefix(self._shared_prefix + ":")
        if namespace == key:
            raise RuntimeError(f"rate key {key!r} does not start with {self._shared_prefix!r}")
        return RateLimitItemPerMinute(per_minute or self.per_minute, namespace=namespace)

    def check(self, tenant: TenantId) -> Decision:
        """Count one message of ``tenant``; refuse it when over the limit."""
        item = self._item(tenant)
        allowed, limiter = self._hit(item)
        if allowed:
            return ALLOW
        metrics.limit_refusal("rate")
        return self._refusal(tenant, limiter, item)

    def stranger_reply_due(self, tenant: TenantId) -> bool:
        """Whether a user who may not talk to the bot gets an answer to this message: the
        first message of each 60-second window does, the rest of the window does not."""
        allowed, _ = self._hit(self._item(tenant, per_minute=1, kind="-stranger"))
        return allowed

    def _hit(self, item: RateLimitItemPerMinute) -> tuple[bool, MovingWindowRateLimiter]:
        limiter = self._limiter()
        try:
            allowed = limiter.hit(item)
        except (LimitsStorageError, redis.RedisError) as exc:
            self._redis_down(exc)
            limiter = self._local
            allowed = limiter.hit(item)
        else:
            if limiter is self._remote:
                self._health.ok()
        return allowed, limiter

    def _limiter(self) -> MovingWindowRateLimiter:
        if self._health.healthy or self._clock() >= self._retry_redis_at:
            return self._remote
        return self._local

    def _redis_down(self, exc: Exception) -> None:
        cause = exc.storage_error if isinstance(exc, LimitsStorageError) else exc
        self._health.failed(cause)
        self._retry_redis_at = self._clock() + REDIS_RETRY_S

    def _refusal(
        self, tenant: TenantId, limiter: MovingWindowRateLimiter, item: RateLimitItemPerMinute
    ) -> Decision:
        now = time.time()
        try:
            reset = limiter.get_window_stats(item).reset_time
        except (LimitsStorageError, redis.RedisError):
            reset = now + 60
        key = str(tenant)
        with self._told_lock:
            if self._told.get(key, 0.0) > now:
                return Decision(False, None)
            if len(self._told) >= _MAX_TOLD:
                self._told = {k: until for k, until in self._told.items() if until > now}
            self._told[key] = reset
        return Decision(
            False,
            f"You're sending messages faster than I can answer them (the limit is "
            f"{self.per_minute} a minute). Please wait about {_wait_text(reset - now)} — "
            "I'll skip messages sent until then.",
        )

    def close(self) -> None:
        self._redis.storage.close()
        if self._own_pool:
            self._pool.disconnect()


class TokenBudget:
    """``access.daily_token_budget`` per tenant, measured from the sessions table."""

    def __init__(
        self, settings: Settings, db: Database, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.budget = settings.access.daily_token_budget
        self._db = db
        self._clock = clock

    def day_bounds(self) -> tuple[float, float]:
        """Start of today and of tomorrow (UTC), as epoch seconds."""
        now = datetime.fromtimestamp(self._clock(), UTC)
        start = now.replace(hour=0, minute=0, second=0, microsecond=0)
        return start.timestamp(), (start + timedelta(days=1)).timestamp()

    def usage_today(self, tenant: TenantId) -> int:
        """Prompt + completion tokens of the tenant's sessions touched today (see module)."""
        start, _ = self.day_bounds()
        row = self._db.read(
            lambda c: c.execute(
                "SELECT COALESCE(SUM(s.prompt_tokens + s.completion_tokens), 0) FROM sessions s "
                "WHERE s.tenant_id = ? AND (s.started_at >= ? OR ("
                "(s.ended_at IS NULL OR s.ended_at >= ?) AND (SELECT m.timestamp FROM messages m "
                "WHERE m.session_id = s.id AND m.tenant_id = s.tenant_id "
                "ORDER BY m.id DESC LIMIT 1) >= ?))",
                (str(tenant), start, start, start),
            ).fetchone()
        )
        return int(row[0])

    def check(self, tenant: TenantId) -> Decision:
        if self.budget is None:
            return ALLOW
        used = self.usage_today(tenant)
        if used < self.budget:
            return ALLOW
        metrics.limit_refusal("budget")
        _, reset = self.day_bounds()
        hours, rest = divmod(max(60, int(reset - self._clock())), 3600)
        return Decision(
            False,
            f"You've used today's token budget ({used:,} of {self.budget:,} tokens). "
            f"It resets at 00:00 UTC, in {hours} h {rest // 60} min. Talk to you then!",
        )


class Limits:
    """Both checks in order: the rate limit first (it counts every message), then the budget."""

    def __init__(self, rate: RateLimiter, budget: TokenBudget) -> None:
        self.rate = rate
        self.budget = budget

    @classmethod
    def from_settings(cls, settings: Settings, db: Database) -> Limits:
        return cls(RateLimiter(settings), TokenBudget(settings, db))

    def check(self, tenant: TenantId) -> Decision:
        decision = self.rate.check(tenant)
        return decision if not decision.allowed else self.budget.check(tenant)

    def close(self) -> None:
        self.rate.close()
