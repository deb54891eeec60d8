"""Export and erasure of one tenant across SQLite, files, Redis keys and RQ jobs (SPEC §11).

The world (see ``privacy_world``) holds tenants A and B in every store. After
``forget_tenant(A)`` every table and text column, every file under home, the raw state.db
bytes and every Redis key and value (RQ job payloads decompressed) are searched for A's id,
namespace and a canary; B must be untouched.
"""

from __future__ import annotations

import io
import json
import re
import stat
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import redis
from rq.job import Job, JobStatus
from rq.registry import FinishedJobRegistry

from gateway.access import AccessPolicy
from gateway.agent.account_commands import export_for_chat
from gateway.agent.dispatch import dispatch
from gateway.app import App
from gateway.errors import UserInputError
from gateway.history.db import Database
from gateway.history.fts import tenant_token
from gateway.history.store import SessionStore
from gateway.keys import RedisKeys
from gateway.privacy import export_tenant, forget_tenant
from gateway.routing import Conversation
from gateway.settings import Settings
from gateway.tenants import TenantId, tenant_dir
from providers.base import MemoryWriteEvent, ProviderContext, WriteMetadata
from providers.reference import ReferenceProvider
from tests.integration.conftest import free_port
from tests.integration.privacy_world import (
    CANARY,
    GROUP,
    A,
    B,
    Seeded,
    file_hits,
    needles,
    redis_hits,
    seed,
    settings_for,
    sqlite_hits,
)
from workers.queues import JobQueues

pytestmark = pytest.mark.integration


@pytest.fixture
def world(
    home: Path, redis_url: str, redis_prefix: str, redis_client: redis.Redis
) -> Iterator[tuple[Settings, Database, dict[TenantId, Seeded]]]:
    settings = settings_for(home, redis_url, redis_prefix)
    db = Database(settings.state_db)
    seeded = seed(settings, db, redis_client)
    yield settings, db, seeded
    db.close()


# --- export ------------------------------------------------------------------------------
def test_export_archive_holds_all_of_the_tenant_and_nothing_else(
    world: tuple[Settings, Database, dict[TenantId, Seeded]], tmp_path: Path
) -> None:
    settings, _db, seeded = world
    out = tmp_path / "exports"
    out.mkdir()
    path = export_tenant(settings, A, out=out)
    assert path.parent == out and stat.S_IMODE(path.stat().st_mode) == 0o600
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        group = f"files/groups/{GROUP.namespace}/memories"
        for expected in (
            "manifest.json",
            "tenant.json",
            "sessions.jsonl",
            "pending_writes.json",
            "files/memories/MEMORY.md",
            "files/memories/USER.md",
            "files/memories/.USER.md.meta.json",
            f"{group}/MEMORY.md",
            f"{group}/.MEMORY.md.meta.json",
        ):
            assert expected in names
        assert not any(name.endswith(".lock") for name in names)
        manifest = json.loads(archive.read("manifest.json"))
        assert manifest["tenant"] == str(A) and manifest["namespace"] == A.namespace
        assert manifest["counts"]["sessions"] == 2 and manifest["counts"]["pending_writes"] == 1
        lines = archive.read("sessions.jsonl").decode().splitlines()
        assert sorted(json.loads(line)["id"] for line in lines) == sorted(seeded[A].sessions)
        about = json.loads(archive.read("tenant.json"))
        assert about["tenant"]["id"] == str(A) and about["grant"]["granted_by"] == str(B)
        assert CANARY[A] in archive.read("files/memories/USER.md").decode()
        everything = b"".join(archive.read(name) for name in names).decode("utf-8")
    assert CANARY[B] not in everything
    with pytest.raises(UserInputError, match="already exists"):
        export_tenant(settings, A, out=path)


# --- erasure -----------------------------------------------------------------------------
def test_forget_erases_every_store_and_spares_the_other_tenant(
    world: tuple[Settings, Database, dict[TenantId, Seeded]], redis_client: redis.Redis
) -> None:
    settings, db, seeded = world
    home = settings.home
    words = [*needles(A), tenant_token(A)]
    assert sqlite_hits(settings.state_db, words) and file_hits(home, words)
    assert redis_hits(redis_client, words)
    b_keys_before = sorted(
        redis_client.scan_iter(match=RedisKeys(settings.redis_prefix).tenant_pattern(B))
    )

    report = forget_tenant(settings, A, redis_client=redis_client)

    assert report.complete, report.not_erased
    assert report.erased["sessions"] == 2 and report.erased["messages"] == 4
    assert report.erased["index rows"] == 4 and report.erased["outbox rows"] == 1
    assert report.erased["pending writes"] == 1 and report.erased["tenant record"] == 1
    assert report.erased["queued jobs"] == 2 and report.erased["redis keys"] == 2
    assert report.erased["files"] >= 8
    assert sqlite_hits(settings.state_db, words) == []
    assert file_hits(home, words) == []
    assert redis_hits(redis_client, words) == []
    conn = db.connection()
    assert (
        conn.execute(
            "SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH ?", (CANARY[A],)
        ).fetchone()[0]
        == 0
    )
    # Deleted pages were overwritten and the WAL checkpointed: not even the raw bytes remain.
    raw = b"".join(p.read_bytes() for p in home.glob("state.db*"))
    assert CANARY[A].encode() not in raw

    # B is untouched everywhere.
    store = SessionStore(db)
    assert sorted(s.id for s in store.list_sessions(B, limit=10)) == sorted(seeded[B].sessions)
    assert CANARY[B] in (tenant_dir(home, B) / "memories" / "USER.md").read_text()
    assert AccessPolicy(settings, db).is_granted(B)  # approved by A, whose name is gone
    prefix = RedisKeys(settings.redis_prefix)
    assert sorted(redis_client.scan_iter(match=prefix.tenant_pattern(B))) == b_keys_before
    assert redis_client.lrange(prefix.notices_ready(), 0, -1) == [B.namespace.encode()]
    assert all(Job.exists(job_id, connection=redis_client) for job_id in seeded[B].jobs)
    assert redis_hits(redis_client, [CANARY[B]])

    again = forget_tenant(settings, A, redis_client=redis_client)
    assert again.complete and not any(again.erased.values())


def test_running_jobs_are_reported_and_dangling_ids_cleared(
    home: Path, redis_url: str, redis_prefix: str, redis_client: redis.Redis
) -> None:
    settings = settings_for(home, redis_url, redis_prefix)
    queues = JobQueues(redis_client, settings)
    running = Job.fetch(queues.enqueue("sync", A, "s1", dedup="1").job_id, connection=redis_client)
    running.set_status(JobStatus.STARTED)
    finished = FinishedJobRegistry(queues.name("sync"), connection=redis_client)
    dangling = [f"sync-{A.namespace}-s2-1", f"sync-{B.namespace}-s2-1"]  # ids without a job
    redis_client.zadd(finished.key, dict.fromkeys(dangling, 4e9))

    report = forget_tenant(settings, A, redis_client=redis_client)

    assert report.not_erased == {
        "running jobs": "1 job(s) still running; erase again once they finish"
    }
    assert Job.exists(running.id, connection=redis_client)
    assert finished.get_job_ids(cleanup=False) == [f"sync-{B.namespace}-s2-1"]


def test_redis_down_is_reported_and_the_rest_still_erased(home: Path, redis_prefix: str) -> None:
    settings = settings_for(home, f"redis://127.0.0.1:{free_port()}/0", redis_prefix)
    db = Database(settings.state_db)
    try:
        seed(settings, db, None)
    finally:
        db.close()
    report = forget_tenant(settings, A)
    assert set(report.not_erased) == {"queued jobs", "redis keys"}
    assert all(why.startswith("Redis unreachable") for why in report.not_erased.values())
    assert report.erased["sessions"] == 2 and report.erased["files"] >= 8
    assert sqlite_hits(settings.state_db, needles(A)) == []
    assert file_hits(home, needles(A)) == []
    assert any("Could not erase redis keys" in line for line in report.lines())


def test_provider_erasure_through_the_callback(
    home: Path, redis_url: str, redis_prefix: str
) -> None:
    plain = settings_for(home, redis_url, redis_prefix)
    assert forget_tenant(plain, A, provider_forget=lambda tenant: 7).erased["provider items"] == 7

    def unsupported(tenant: TenantId) -> int:
        raise NotImplementedError("no delete endpoint")

    report = forget_tenant(plain, A, provider_forget=unsupported)
    assert report.not_erased == {
        "provider data": "the provider cannot erase data (no delete endpoint)"
    }
    # Without a callback, the configured provider's own erase() runs.
    with_provider = settings_for(home, redis_url, redis_prefix, memory={"provider": "reference"})
    reference = ReferenceProvider(home)
    ctx = ProviderContext.for_conversation(
        Conversation(A, chat_id=A.user), session_id="s1", settings=with_provider
    )
    reference.on_memory_write(
        ctx,
        MemoryWriteEvent(
            "add",
            "user",
            "Likes quinces",
            WriteMetadata("user-chat", datetime.now(UTC), A.namespace),
        ),
    )
    assert reference.facts(A.namespace)
    erased = forget_tenant(with_provider, A)
    assert erased.erased["provider items"] >= 1 and "provider data" not in erased.not_erased
    assert reference.facts(A.namespace) == []


# --- chat commands -----------------------------------------------------------------------
async def test_export_and_forgetme_commands(home: Path, redis_url: str, redis_prefix: str) -> None:
    settings = settings_for(home, redis_url, redis_prefix)
    dm = Conversation(A, chat_id=A.user, display_name="Ann")
    async with App(settings) as app:
        assert await dispatch(app.agent, dm, "/export") == (
            "I don't keep anything about you yet, so there is nothing to export."
        )
        seed(settings, app.db, None)
        name, data = export_for_chat(app.agent, dm)
        assert name.endswith(".zip") and A.namespace in name
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            assert json.loads(archive.read("manifest.json"))["tenant"] == str(A)
        attached = await dispatch(app.agent, dm, "/export")
        assert attached is not None and attached.startswith("Your export is attached: ")
        console = await dispatch(app.agent, Conversation.console("zed"), "/export")
        assert console is not None and "nothing to export" in console

        group = Conversation(A, chat_id="-5005", chat_type="group")
        assert "only works in a direct message" in (
            await dispatch(app.agent, group, "/forgetme") or ""
        )
        warning = await dispatch(app.agent, dm, "/forgetme")
        assert warning is not None and "cannot be undone" in warning
        match = re.search(r"/forgetme confirm ([A-Z0-9]{6})", warning)
        assert match is not None
        wrong = await dispatch(app.agent, dm, "/forgetme confirm AAAAAA")
        assert (
            wrong == "That confirmation code is wrong or has expired. Send /forgetme for a new one."
        )
        assert SessionStore(app.db).list_sessions(A, limit=5)
        done = await dispatch(app.agent, dm, f"/forgetme confirm {match.group(1).lower()}")
        assert done is not None and done.startswith("Done: I erased what I kept about you — 2 ")
        assert "new pairing code" in done  # A's access came from a runtime grant
        assert SessionStore(app.db).list_sessions(A, limit=5) == []
        assert not tenant_dir(home, A).exists()
        reused = await dispatch(app.agent, dm, f"/forgetme confirm {match.group(1)}")
        assert reused is not None and "wrong or has expired" in reused
