"""Memory notices: formatting, and the Redis hand-over from workers to the gateway."""

from __future__ import annotations

import asyncio
import logging
import secrets
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
import redis
import redis.asyncio as aioredis

from gateway.keys import RedisKeys
from gateway.memory.approval import PendingWrite
from gateway.memory.operations import Operation, WriteResult
from gateway.memory.review import ReviewOutcome
from gateway.memory.store import MemoryStore
from gateway.memory.tool import MemoryChange
from gateway.notices import Notice, NoticeBus, format_notice
from gateway.routing import Conversation
from gateway.settings import MemorySettings
from gateway.tenants import MemoryScope, TenantId

pytestmark = pytest.mark.integration

NOTICES_DB = 10  # a database of its own: other suites flush theirs concurrently
ALICE = TenantId.parse("telegram:1")
ALICE_TWIN = TenantId.parse("telegram:12")  # namespace telegram-12 starts with telegram-1
BOB = TenantId.parse("discord:7")


@pytest.fixture
def notices_url(redis_base: str) -> Iterator[str]:
    url = f"{redis_base}/{NOTICES_DB}"
    client = redis.Redis.from_url(url)
    client.flushdb()
    yield url
    client.flushdb()
    client.close()


@pytest.fixture
def keys() -> RedisKeys:
    return RedisKeys(f"n{secrets.token_hex(4)}")


@pytest.fixture
async def bus(notices_url: str, keys: RedisKeys) -> AsyncIterator[NoticeBus]:
    client = redis.Redis.from_url(notices_url)
    aclient = aioredis.Redis.from_url(notices_url, socket_timeout=10)
    yield NoticeBus(keys, client=client, aclient=aclient, ttl_s=600)
    client.close()
    await aclient.aclose()


def notice(tenant: TenantId, text: str, chat_id: str = "100") -> Notice:
    return Notice(
        tenant_id=str(tenant),
        platform=tenant.platform,
        chat_id=chat_id,
        thread_id=None,
        session_key=f"{tenant.platform}:dm:{chat_id}",
        text=text,
        created_at=1_700_000_000.0,
    )


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_publish_then_next_ready_and_take_round_trip(bus: NoticeBus) -> None:
    sent = notice(ALICE, "💾 Memory updated")
    assert bus.publish(ALICE, sent) is True
    assert await bus.next_ready(2) == ALICE
    assert await bus.take(ALICE) == [sent]
    assert await bus.take(ALICE) == []
    assert await bus.next_ready(0.1) is None


async def test_the_tenant_list_has_a_short_ttl(
    bus: NoticeBus, notices_url: str, keys: RedisKeys
) -> None:
    bus.publish(ALICE, notice(ALICE, "hi"))
    client = redis.Redis.from_url(notices_url)
    try:
        assert 0 < int(client.ttl(keys.notices(ALICE))) <= 600
    finally:
        client.close()


async def test_next_ready_wakes_on_a_publish_from_a_worker_thread(bus: NoticeBus) -> None:
    waiting = asyncio.create_task(bus.next_ready(10))
    await asyncio.to_thread(bus.publish, BOB, notice(BOB, "💾 Memory updated"))
    assert await asyncio.wait_for(waiting, 5) == BOB


async def test_take_returns_only_the_named_tenants_notices(bus: NoticeBus) -> None:
    a1, b1, twin, a2 = (
        notice(ALICE, "a1"),
        notice(BOB, "b1"),
        notice(ALICE_TWIN, "twin"),
        notice(ALICE, "a2", chat_id="200"),
    )
    for tenant, item in ((ALICE, a1), (BOB, b1), (ALICE_TWIN, twin), (ALICE, a2)):
        assert bus.publish(tenant, item)
    ready = [await bus.next_ready(1) for _ in range(4)]
    assert ready == [ALICE, BOB, ALICE_TWIN, ALICE]
    assert await bus.take(ALICE) == [a1, a2]
    assert await bus.take(ALICE_TWIN) == [twin]
    assert await bus.take(BOB) == [b1]


async def test_a_foreign_notice_is_never_handed_out(
    bus: NoticeBus, notices_url: str, keys: RedisKeys
) -> None:
    with pytest.raises(ValueError, match="cannot be published"):
        bus.publish(ALICE, notice(BOB, "misrouted"))
    # Even if one lands in the wrong list, take() refuses to hand it to the wrong tenant.
    client = redis.Redis.from_url(notices_url)
    try:
        client.rpush(keys.notices(ALICE), notice(BOB, "planted").to_json(), b"not json")
    finally:
        client.close()
    assert await bus.take(ALICE) == []


def test_notice_json_round_trip_and_conversation_fields() -> None:
    group = Conversation(ALICE, chat_id="-100", chat_type="group", thread_id="7")
    made = Notice.for_conversation(group, "💾 Memory updated", created_at=5.0)
    assert made.session_key == "telegram:group:-100:7:1"
    assert (made.platform, made.chat_id, made.thread_id) == ("telegram", "-100", "7")
    assert Notice.from_json(made.to_json()) == made
    assert Notice.from_json(made.to_json().encode("utf-8")).tenant == ALICE
    for thread in ("7", None):
        conversation = Conversation(ALICE, chat_id="-100", chat_type="group", thread_id=thread)
        session = SimpleNamespace(
            tenant=ALICE, chat_id="-100", session_key=conversation.session_key
        )
        from_row = Notice.for_session(session, "hi", created_at=5.0)  # type: ignore[arg-type]
        assert from_row == Notice.for_conversation(conversation, "hi", created_at=5.0)
    for bad in ('"text"', '{"tenant_id": "telegram:1"}', made.to_json().replace("telegram:1", "x")):
        with pytest.raises(ValueError):
            Notice.from_json(bad)


def test_formatting_in_the_three_modes(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, MemorySettings())
    scope = MemoryScope.private(ALICE)
    add = [Operation("add", content="Prefers metric units")]
    result = store.apply(scope, "user", add, origin="background-review")
    change = MemoryChange("user", result)
    staged = PendingWrite(
        3, scope, "memory", (Operation("remove", old_text="Vim"),), "background-review", 1.0
    )
    outcome = ReviewOutcome([result], [staged], "done", [change])

    assert format_notice(outcome, (), "off") is None
    assert format_notice([change], (), "on") == "💾 Memory updated"
    assert format_notice([change], (), "verbose") == (
        '💾 Memory updated — user: + "Prefers metric units"'
    )
    assert format_notice([result], (), "verbose") == '💾 Memory updated — + "Prefers metric units"'
    assert format_notice(outcome, (), "on") == (
        "💾 Memory updated\n📝 1 memory change waiting for your approval — /memory pending"
    )
    assert format_notice([], [staged, staged], "on") == (
        "📝 2 memory changes waiting for your approval — /memory pending"
    )
    assert format_notice(outcome, [staged], "verbose") == (
        '💾 Memory updated — user: + "Prefers metric units"\n'
        '📝 1 memory change waiting for your approval — /memory pending: #3 memory: − "Vim"'
    )
    unchanged = store.apply(scope, "user", add, origin="background-review")
    assert not unchanged.changed
    assert format_notice([unchanged], (), "verbose") is None
    failed = WriteResult(success=False, usage="0/1,375", entry_count=0, error="no")
    assert format_notice(ReviewOutcome([failed], [], "x"), (), "on") is None


async def test_redis_down_is_logged_never_raised(
    keys: RedisKeys, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"redis://127.0.0.1:{closed_port()}/0"
    client = redis.Redis.from_url(url, socket_connect_timeout=1)
    aclient = aioredis.Redis.from_url(url, socket_connect_timeout=1)
    down = NoticeBus(keys, client=client, aclient=aclient)
    try:
        with caplog.at_level(logging.WARNING, logger="gateway.notices"):
            assert down.publish(ALICE, notice(ALICE, "lost")) is False
            assert await down.next_ready(0.05) is None
            assert await down.take(ALICE) == []
    finally:
        client.close()
        await aclient.aclose()
    messages = [r.getMessage() for r in caplog.records]
    assert any("notice for telegram-1 dropped" in m for m in messages)
    assert any("notices for telegram-1 not read" in m for m in messages)
    assert any("waiting for notices failed" in m for m in messages)
