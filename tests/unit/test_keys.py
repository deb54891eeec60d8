"""Redis key layout, tenant patterns that never reach another tenant, job-id validation."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.keys import RedisKeys
from gateway.settings import Settings
from gateway.tenants import TenantId
from workers.queues import (
    JOBS,
    QUEUE_ORDER,
    InvalidJobId,
    JobQueues,
    check_job_id,
    job_id,
    queue_name,
)

KEYS = RedisKeys("mg")
ONE = TenantId.of("telegram", "1")
TWELVE = TenantId.of("telegram", "12")
SAFE = re.compile(r"^[A-Za-z0-9_:-]+$")


def every_key(keys: RedisKeys, tenant: TenantId) -> list[str]:
    session_key = f"{tenant.platform}:group:-100:{tenant.user}"
    return [
        keys.recall(tenant, session_key),
        keys.recall_ready(tenant, session_key, "abc123"),
        keys.sync_lock(tenant, "20250101_000000_abcdef"),
        keys.rate(tenant),
        keys.notices(tenant),
    ]


def test_layout() -> None:
    assert KEYS.rate(ONE) == "mg:t:telegram-1:rate"
    assert KEYS.notices(ONE) == "mg:t:telegram-1:notices"
    assert KEYS.sync_lock(ONE, "s_1") == "mg:t:telegram-1:sync-lock:s_5F1"
    recall = KEYS.recall(ONE, "telegram:dm:1")
    assert re.fullmatch(r"mg:t:telegram-1:recall:[0-9a-f]{16}", recall)
    assert KEYS.recall_ready(ONE, "telegram:dm:1", "n").split(":")[-2] == recall.split(":")[-1]
    assert KEYS.recall(ONE, "telegram:dm:2") != recall
    assert KEYS.recall_ready(ONE, "telegram:dm:1", "n1").endswith(":n1")
    assert KEYS.notices_ready() == "mg:g:notices-ready"
    assert KEYS.relay_lock() == "mg:g:relay-lock"
    assert all(key.startswith("mg:t:telegram-1:") for key in every_key(KEYS, ONE))


def test_tenant_keys_need_a_tenant_id() -> None:
    with pytest.raises(TypeError, match="TenantId"):
        KEYS.rate("telegram:1")  # type: ignore[arg-type]


def test_unsafe_parts_are_refused() -> None:
    with pytest.raises(ValueError, match="prefix"):
        RedisKeys("my prefix")
    for nonce in ("a*b", "n1\n", ""):
        with pytest.raises(ValueError, match="nonce"):
            KEYS.recall_ready(ONE, "telegram:dm:1", nonce)


def test_tenant_pattern_never_matches_a_longer_namespace() -> None:
    pattern = KEYS.tenant_pattern(ONE)
    assert pattern == "mg:t:telegram-1:*"
    assert all(fnmatchcase(key, pattern) for key in every_key(KEYS, ONE))
    assert not any(fnmatchcase(key, pattern) for key in every_key(KEYS, TWELVE))
    assert not fnmatchcase(KEYS.relay_lock(), pattern)
    assert not any(fnmatchcase(key, pattern) for key in every_key(RedisKeys("mg2"), ONE))


@given(
    a=st.text(min_size=1, max_size=20).filter(
        lambda s: s.isprintable() and not any(c.isspace() for c in s)
    ),
    b=st.text(min_size=1, max_size=20).filter(
        lambda s: s.isprintable() and not any(c.isspace() for c in s)
    ),
)
def test_patterns_separate_any_two_tenants(a: str, b: str) -> None:
    first, second = TenantId.of("discord", a), TenantId.of("discord", b)
    for key in every_key(KEYS, first):
        assert SAFE.match(key)
        assert fnmatchcase(key, KEYS.tenant_pattern(first))
        if first != second:
            assert not fnmatchcase(key, KEYS.tenant_pattern(second))
    assert check_job_id(job_id("sync", first, f"s:{b}/x", "7"))


def test_job_ids() -> None:
    assert job_id("sync", ONE, "20250101_000000_abcdef", "42") == (
        "sync-telegram-1-20250101_5F000000_5Fabcdef-42"
    )
    assert job_id("sync", ONE, "s", "1") != job_id("sync", TWELVE, "s", "1")
    assert check_job_id(job_id("recall", TenantId.of("console", "ä.b"), "a b/c", "n"))
    for bad in ("", "a b", "a:b", "a/b", "ä", "x\n"):
        with pytest.raises(InvalidJobId):
            check_job_id(bad)
    with pytest.raises(InvalidJobId):
        job_id("sync", ONE, "s", "bad suffix")


def test_queue_names_and_job_table() -> None:
    assert [queue_name("mg", q) for q in QUEUE_ORDER] == [
        "mg-sync",
        "mg-recall",
        "mg-review",
        "mg-maint",
    ]
    assert {kind: spec.queue for kind, spec in JOBS.items()} == {
        "sync": "sync",
        "recall": "recall",
        "review": "review",
        "title": "maint",
        "flush": "maint",
        "compress": "maint",
        "session_end": "sync",
        "session_switch": "sync",
    }
    assert JOBS["sync"].idempotent and not JOBS["review"].idempotent


def test_retry_follows_settings() -> None:
    settings = Settings(jobs={"retries": 2, "retry_intervals_s": [1, 4]})  # type: ignore[arg-type]
    retry = JobQueues(None, settings).retry()  # type: ignore[arg-type]
    assert retry is not None and retry.max == 2 and retry.intervals == [1, 4]
    none = Settings(jobs={"retries": 0})  # type: ignore[arg-type]
    assert JobQueues(None, none).retry() is None  # type: ignore[arg-type]
