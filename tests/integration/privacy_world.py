"""A seeded world for the privacy tests: two tenants in every store, and searches for traces.

Tenant A is ``telegram:1001``; tenant B is ``telegram:100``, whose namespace is a prefix of
A's, so any prefix-matching mistake in erasure would hit B. :func:`seed` stores both in
memory files (DM and group scope), sessions, outbox, pending writes, preferences, access
rows and (given a client) Redis keys and RQ jobs; the ``*_hits`` functions search a store
for given words.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from rq import Queue
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry

from gateway import outbox
from gateway.access import AccessPolicy
from gateway.errors import UserInputError
from gateway.history.db import Database
from gateway.history.store import NewMessage, SessionStore
from gateway.keys import RedisKeys
from gateway.memory.operations import Operation
from gateway.memory.store import MemoryStore
from gateway.privacy import request_erasure
from gateway.settings import Settings, load_settings
from gateway.tenants import GroupId, MemoryScope, TenantId
from workers.queues import JobQueues

A = TenantId.parse("telegram:1001")
B = TenantId.parse("telegram:100")
CANARY = {A: "qx7canaryalphazz", B: "qx7canarybravozz"}
GROUP = GroupId("telegram", "-5005")


def needles(tenant: TenantId) -> list[str]:
    """Traces of ``tenant`` (A's id and namespace contain B's, never the other way round)."""
    return [str(tenant), tenant.namespace, CANARY[tenant]]


def settings_for(home: Path, url: str, prefix: str, **extra: Any) -> Settings:
    return load_settings(home=home, redis_url=url, redis_prefix=prefix, **extra)


class Seeded:
    """What seeding stored for one tenant."""

    def __init__(self) -> None:
        self.sessions: list[str] = []
        self.jobs: list[str] = []


def seed(settings: Settings, db: Database, client: redis.Redis | None) -> dict[TenantId, Seeded]:
    store = SessionStore(db)
    memory = MemoryStore(settings.home, settings.memory)
    policy = AccessPolicy(settings, db)
    seeded = {A: Seeded(), B: Seeded()}
    for tenant in (A, B):
        canary = CANARY[tenant]
        for scope in (MemoryScope.private(tenant), MemoryScope(tenant, GROUP)):
            for target in ("memory", "user"):
                result = memory.apply(
                    scope, target, [Operation("add", f"note {canary}")], origin="user-chat"
                )
                assert result.success
        for chat_type in ("dm", "group"):
            session = store.create_session(
                tenant,
                session_key=f"telegram:{chat_type}:{tenant.user}",
                source="telegram",
                system_prompt=f"frozen {canary}",
                tools_json="[]",
                scope_key=tenant.namespace,
                chat_type=chat_type,
                title=f"about {canary} {chat_type}",
            )
            store.record_turn(
                tenant,
                session.id,
                [NewMessage("user", f"hello {canary}"), NewMessage("assistant", "hi there")],
            )
            seeded[tenant].sessions.append(session.id)
        session_id = seeded[tenant].sessions[0]

        def rows(
            conn: sqlite3.Connection, tenant: TenantId = tenant, sid: str = session_id
        ) -> None:
            outbox.add(conn, tenant, sid, "sync", {"upto": 2})
            conn.execute(
                "INSERT INTO pending_writes (id, tenant_id, scope_key, target, operations, "
                "origin, created_at) VALUES (1, ?, ?, 'user', ?, 'background-review', 1.0)",
                (str(tenant), tenant.namespace, json.dumps([{"content": CANARY[tenant]}])),
            )
            conn.execute(
                "INSERT INTO tenant_prefs (tenant_id, write_approval) VALUES (?, 1)",
                (str(tenant),),
            )

        db.write(rows)
        code = policy.pairing.issue_code(tenant, chat_id=tenant.user, display_name=CANARY[tenant])
        assert code.code is not None
    # A approves B's code and fails once: A's id lands in rows that belong to B or nobody.
    b_code = policy.list_pending()[1]
    assert b_code.tenant == B
    policy.approve(b_code.code, str(A))
    with pytest.raises(UserInputError):
        policy.approve("ZZZZZZZZ", str(A))
    policy.grant(A, str(B))
    request_erasure(db, A)
    if client is not None:
        seed_redis(settings, client, seeded)
    return seeded


def seed_redis(settings: Settings, client: redis.Redis, seeded: dict[TenantId, Seeded]) -> None:
    keys = RedisKeys(settings.redis_prefix)
    queues = JobQueues(client, settings)
    for tenant in (A, B):
        canary = CANARY[tenant]
        client.set(keys.recall(tenant, "telegram:dm:x"), f"recalled {canary}")
        client.rpush(keys.notices(tenant), json.dumps({"text": canary}))
        client.rpush(keys.notices_ready(), tenant.namespace)
        session = seeded[tenant].sessions[0]
        for kind in ("sync", "title"):
            job = queues.enqueue(kind, tenant, session, dedup="1", note=canary)
            seeded[tenant].jobs.append(job.job_id)
    # One of A's jobs failed for good: it sits in the failed registry, not in a queue.
    failed = Job.fetch(seeded[A].jobs[1], connection=client)
    Queue(failed.origin, connection=client).remove(failed)
    failed.set_status(JobStatus.FAILED)
    FailedJobRegistry(failed.origin, connection=client).add(failed, ttl=600)


def sqlite_hits(path: Path, words: list[str]) -> list[str]:
    conn = sqlite3.connect(path)
    hits: list[str] = []
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                for value in row:
                    text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
                    hits.extend(f"{table}: {word}" for word in words if word in text)
    finally:
        conn.close()
    return hits


def file_hits(home: Path, words: list[str]) -> list[str]:
    hits: list[str] = []
    for path in home.rglob("*"):
        rel = str(path.relative_to(home))
        hits.extend(f"path {rel}" for word in words if word in rel)
        if path.is_file() and not path.name.startswith("state.db"):
            text = path.read_bytes().decode("latin-1")
            hits.extend(f"{rel}: {word}" for word in words if word in text)
    return hits


def redis_values(client: Any) -> Iterator[bytes]:
    """Every key name and value in the database (a sync client: annotated loosely)."""
    for key in client.scan_iter(count=1000):
        yield key
        kind = client.type(key)
        values: list[bytes] = []
        if kind == b"string":
            values = [client.get(key) or b""]
        elif kind == b"list":
            values = client.lrange(key, 0, -1)
        elif kind == b"set":
            values = list(client.smembers(key))
        elif kind == b"zset":
            values = client.zrange(key, 0, -1)
        elif kind == b"hash":
            for field, value in client.hgetall(key).items():
                values += [field, value]
                with contextlib.suppress(zlib.error):
                    values.append(zlib.decompress(value))  # RQ's compressed job payload
        elif kind == b"stream":
            for _id, fields in client.xrange(key):
                values += [*fields.keys(), *fields.values()]
        yield from values


def redis_hits(client: redis.Redis, words: list[str]) -> list[str]:
    found: list[str] = []
    for value in redis_values(client):
        text = value.decode("latin-1")
        found.extend(f"{text[:80]!r}: {word}" for word in words if word in text)
    return found
