"""Per-tenant rate limit on a real Redis (db 11), its in-process fallback, the token budget."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import redis

from gateway.history.db import Database
from gateway.history.store import NewMessage, SessionStore, Usage
from gateway.keys import RedisKeys
from gateway.limits import Limits, RateLimiter, TokenBudget
from gateway.settings import Settings, load_settings
from gateway.tenants import TenantId
from tests.integration.conftest import free_port

pytestmark = pytest.mark.integration

LIMITS_DB = 11
ALICE = TenantId.parse("telegram:1")
ALICE_LONGER = TenantId.parse("telegram:12")
# 2024-05-01 15:00 UTC
NOON_ISH = datetime(2024, 5, 1, 15, 0, tzinfo=UTC).timestamp()


@pytest.fixture
def limits_url(redis_base: str) -> Iterator[str]:
    url = f"{redis_base}/{LIMITS_DB}"
    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
        yield url
        client.flushdb()
    finally:
        client.close()


def make_settings(home: Path, url: str, prefix: str, **access: Any) -> Settings:
    return load_settings(home=home, redis_url=url, redis_prefix=prefix, access=access)


@pytest.fixture
def limiter(home: Path, limits_url: str, redis_prefix: str) -> Iterator[RateLimiter]:
    rate = RateLimiter(make_settings(home, limits_url, redis_prefix, messages_per_minute=3))
    yield rate
    rate.close()


def test_allows_n_then_refuses_politely_once(limiter: RateLimiter) -> None:
    decisions = [limiter.check(ALICE) for _ in range(5)]
    assert [d.allowed for d in decisions] == [True, True, True, False, False]
    first_refusal = decisions[3].reply
    assert first_refusal is not None
    assert "3 a minute" in first_refusal and "Please wait about" in first_refusal
    assert decisions[4].reply is None  # a flood is not answered message by message


def test_counted_in_redis_under_the_tenant_key(
    limiter: RateLimiter, home: Path, limits_url: str, redis_prefix: str
) -> None:
    limiter.check(ALICE)
    keys = RedisKeys(redis_prefix)
    client = redis.Redis.from_url(limits_url, decode_responses=True)
    try:
        found = list(client.scan_iter(match=keys.tenant_pattern(ALICE)))
        assert len(found) == 1 and found[0].startswith(keys.rate(ALICE))
        # A second gateway process shares the window through Redis.
        other = RateLimiter(make_settings(home, limits_url, redis_prefix, messages_per_minute=3))
        try:
            assert [other.check(ALICE).allowed for _ in range(3)] == [True, True, False]
        finally:
            other.close()
    finally:
        client.close()


def test_tenants_are_independent(limiter: RateLimiter) -> None:
    for _ in range(3):
        assert limiter.check(ALICE).allowed
    assert not limiter.check(ALICE).allowed
    # telegram-1 is a prefix of telegram-12: the keys must still be separate.
    assert [limiter.check(ALICE_LONGER).allowed for _ in range(4)] == [True, True, True, False]


def test_redis_down_falls_back_to_in_process_window(
    home: Path, redis_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    dead = f"redis://127.0.0.1:{free_port()}/0"
    rate = RateLimiter(make_settings(home, dead, redis_prefix, messages_per_minute=2))
    try:
        with caplog.at_level(logging.WARNING, logger="gateway.limits"):
            decisions = [rate.check(ALICE) for _ in range(4)]
        assert [d.allowed for d in decisions] == [True, True, False, False]
        assert decisions[2].reply is not None
        assert rate.check(ALICE_LONGER).allowed
        warnings = [r for r in caplog.records if "Redis unreachable" in r.getMessage()]
        assert len(warnings) == 1  # logged once per outage, not per message
    finally:
        rate.close()


# --- token budget ------------------------------------------------------------------------
class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    db = Database(tmp_path / "state.db")
    yield SessionStore(db)
    db.close()


def session_with_usage(
    store: SessionStore, tenant: TenantId, at: float, prompt: int, completion: int
) -> str:
    session = store.create_session(
        tenant,
        session_key=f"telegram:dm:{tenant.user}:{at}",
        source="telegram",
        system_prompt="sys",
        tools_json="[]",
        scope_key=tenant.namespace,
        started_at=at,
    )
    store.record_turn(
        tenant,
        session.id,
        [NewMessage("user", "hi", timestamp=at), NewMessage("assistant", "hello", timestamp=at)],
        Usage(prompt_tokens=prompt, completion_tokens=completion, cached_tokens=7),
    )
    return session.id


def test_usage_today_counts_sessions_touched_today(home: Path, store: SessionStore) -> None:
    budget = TokenBudget(load_settings(home=home), store.db, clock=Clock(NOON_ISH))
    yesterday = NOON_ISH - 86_400
    session_with_usage(store, ALICE, yesterday, 1000, 1000)  # untouched today: not counted
    carried = session_with_usage(store, ALICE, yesterday, 300, 200)
    store.append_messages(ALICE, carried, [NewMessage("user", "again", timestamp=NOON_ISH - 60)])
    session_with_usage(store, ALICE, NOON_ISH - 3600, 40, 10)
    session_with_usage(store, ALICE_LONGER, NOON_ISH - 3600, 5000, 5000)
    assert budget.usage_today(ALICE) == 300 + 200 + 40 + 10


def test_token_budget_refuses_with_reset_time(home: Path, store: SessionStore) -> None:
    settings = load_settings(home=home, access={"daily_token_budget": 1000})
    clock = Clock(NOON_ISH)
    budget = TokenBudget(settings, store.db, clock=clock)
    session_with_usage(store, ALICE, NOON_ISH - 60, 500, 400)
    assert budget.check(ALICE).allowed
    session_with_usage(store, ALICE, NOON_ISH - 30, 60, 40)
    refused = budget.check(ALICE)
    assert not refused.allowed
    assert refused.reply == (
        "You've used today's token budget (1,000 of 1,000 tokens). "
        "It resets at 00:00 UTC, in 9 h 0 min. Talk to you then!"
    )
    assert budget.check(ALICE_LONGER).allowed
    clock.now = NOON_ISH + 9 * 3600  # midnight: a new day
    assert budget.check(ALICE).allowed


def test_no_budget_configured_always_allows(home: Path, store: SessionStore) -> None:
    budget = TokenBudget(load_settings(home=home), store.db)
    session_with_usage(store, ALICE, NOON_ISH, 10**9, 10**9)
    assert budget.check(ALICE).allowed


def test_limits_check_rate_first_then_budget(
    home: Path, limits_url: str, redis_prefix: str, store: SessionStore
) -> None:
    settings = make_settings(
        home, limits_url, redis_prefix, messages_per_minute=2, daily_token_budget=10
    )
    limits = Limits(RateLimiter(settings), TokenBudget(settings, store.db))
    try:
        assert limits.check(ALICE).allowed
        session_with_usage(store, ALICE, datetime.now(UTC).timestamp(), 10, 5)
        over_budget = limits.check(ALICE)
        assert not over_budget.allowed and "token budget" in (over_budget.reply or "")
        too_fast = limits.check(ALICE)
        assert not too_fast.allowed and "faster than I can answer" in (too_fast.reply or "")
    finally:
        limits.close()


def test_a_stranger_gets_one_reply_per_window(limiter: RateLimiter) -> None:
    assert [limiter.stranger_reply_due(ALICE) for _ in range(5)] == [
        True,
        False,
        False,
        False,
        False,
    ]
    assert limiter.stranger_reply_due(ALICE_LONGER) is True  # per tenant
    assert limiter.check(ALICE).allowed  # a separate count from the talking limit
