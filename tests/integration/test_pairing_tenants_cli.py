"""``mnemogate pairing`` and ``mnemogate tenants`` through the real CLI in a subprocess."""

from __future__ import annotations

import json
import stat
import zipfile
from pathlib import Path

import pytest
import redis

from gateway.access import AccessPolicy
from gateway.history.db import Database
from gateway.history.store import NewMessage, SessionStore
from gateway.keys import RedisKeys
from gateway.memory.operations import Operation
from gateway.memory.store import MemoryStore
from gateway.pairing import LOCKOUT_FAILURES
from gateway.settings import load_settings
from gateway.tenants import MemoryScope, TenantId, tenant_dir
from tests.conftest import run_cli
from tests.integration.conftest import free_port

pytestmark = pytest.mark.integration

ALICE = TenantId.parse("telegram:42")
BOB = TenantId.parse("console:bob")


def issue_code(home: Path, tenant: TenantId, name: str) -> str:
    db = Database(home / "state.db")
    try:
        issued = AccessPolicy(load_settings(home=home), db).pairing.issue_code(
            tenant, chat_id=tenant.user, display_name=name
        )
    finally:
        db.close()
    assert issued.code is not None
    return issued.code.code


def is_allowed(home: Path, tenant: TenantId) -> bool:
    db = Database(home / "state.db")
    try:
        return AccessPolicy(load_settings(home=home), db).is_allowed(tenant)
    finally:
        db.close()


def seed_tenant(home: Path, tenant: TenantId, text: str) -> None:
    settings = load_settings(home=home)
    MemoryStore(home, settings.memory).apply(
        MemoryScope.private(tenant), "user", [Operation("add", text)], origin="operator"
    )
    db = Database(settings.state_db)
    try:
        store = SessionStore(db)
        session = store.create_session(
            tenant,
            session_key=f"{tenant.platform}:dm:{tenant.user}",
            source=tenant.platform,
            system_prompt="sys",
            tools_json="[]",
            scope_key=tenant.namespace,
        )
        store.record_turn(tenant, session.id, [NewMessage("user", text)])
    finally:
        db.close()


def one_line_error(stderr: str, fragment: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and fragment in lines[0], stderr


def test_pairing_list_approve_revoke(home: Path) -> None:
    empty = run_cli(["pairing", "list"], home=home)
    assert empty.returncode == 0
    assert "No pending pairing codes." in empty.stdout
    code = issue_code(home, ALICE, "Alice")
    listed = run_cli(["pairing", "list"], home=home)
    assert (
        listed.returncode == 0 and code in listed.stdout and "telegram:42 (Alice)" in listed.stdout
    )
    as_json = json.loads(run_cli(["pairing", "list", "--json"], home=home).stdout)
    assert [p["code"] for p in as_json["pending"]] == [code] and as_json["granted"] == []

    wrong = run_cli(["pairing", "approve", "ZZZZZZZZ"], home=home)
    assert wrong.returncode == 1
    one_line_error(wrong.stderr, "No pending pairing code ZZZZZZZZ")
    approved = run_cli(["pairing", "approve", code.lower()], home=home)
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.strip() == "Approved telegram:42 (Alice): they can talk to the bot now."
    assert is_allowed(home, ALICE)
    granted = json.loads(run_cli(["pairing", "list", "--json"], home=home).stdout)["granted"]
    assert granted[0]["tenant"] == "telegram:42" and granted[0]["granted_by"] == "operator"

    revoked = run_cli(["pairing", "revoke", "telegram:42"], home=home)
    assert revoked.returncode == 0 and "may no longer talk" in revoked.stdout
    assert not is_allowed(home, ALICE)
    again = run_cli(["pairing", "revoke", "telegram:42"], home=home)
    assert again.returncode == 0 and "nothing changed" in again.stdout
    listed_user = run_cli(
        ["pairing", "revoke", "telegram:7"], home=home, MNEMOGATE_ACCESS__ALLOWED_USERS="telegram:7"
    )
    assert listed_user.returncode == 1
    one_line_error(listed_user.stderr, "allowed by the configuration")
    bad = run_cli(["pairing", "revoke", "alice"], home=home)
    assert bad.returncode == 2 and "must look like" in bad.stderr


def test_operator_lockout_after_wrong_codes(home: Path) -> None:
    code = issue_code(home, ALICE, "Alice")
    for _ in range(LOCKOUT_FAILURES - 1):
        assert run_cli(["pairing", "approve", "ZZZZZZZZ"], home=home).returncode == 1
    locked = run_cli(["pairing", "approve", "ZZZZZZZZ"], home=home)
    assert locked.returncode == 1
    one_line_error(locked.stderr, "approvals by operator are locked for 15 more minutes")
    refused = run_cli(["pairing", "approve", code], home=home)
    assert refused.returncode == 1 and "locked" in refused.stderr
    assert not is_allowed(home, ALICE)


def test_tenants_list_and_export(home: Path, tmp_path: Path) -> None:
    assert run_cli(["tenants", "list"], home=home).stdout.strip() == "No tenants yet."
    seed_tenant(home, ALICE, "Alice likes tea")
    seed_tenant(home, BOB, "Bob likes coffee")
    listed = run_cli(["tenants", "list"], home=home)
    assert listed.returncode == 0
    assert "telegram:42" in listed.stdout and "console:bob" in listed.stdout
    rows = {
        r["tenant"]: r for r in json.loads(run_cli(["tenants", "list", "--json"], home=home).stdout)
    }
    assert rows["telegram:42"]["sessions"] == 1 and rows["telegram:42"]["memory_bytes"] > 0

    out = tmp_path / "alice.zip"
    exported = run_cli(
        ["tenants", "export", "--tenant", "telegram:42", "--out", str(out)], home=home
    )
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.strip() == str(out)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    with zipfile.ZipFile(out) as archive:
        assert "Alice likes tea" in archive.read("files/memories/USER.md").decode()
        assert "Bob" not in archive.read("sessions.jsonl").decode()
    default = run_cli(["tenants", "export", "--tenant", "telegram:42"], home=home)
    assert default.returncode == 0 and Path(default.stdout.strip()).is_file()
    missing = run_cli(["tenants", "export", "--tenant", "telegram:999"], home=home)
    assert missing.returncode == 1
    one_line_error(missing.stderr, "nothing is stored for telegram:999")
    clash = run_cli(["tenants", "export", "--tenant", "telegram:42", "--out", str(out)], home=home)
    assert clash.returncode == 1
    one_line_error(clash.stderr, "already exists")


def test_tenants_forget(home: Path, redis_url: str, redis_prefix: str) -> None:
    seed_tenant(home, ALICE, "Alice likes tea")
    seed_tenant(home, BOB, "Bob likes coffee")
    client = redis.Redis.from_url(redis_url)
    try:
        client.set(RedisKeys(redis_prefix).rate(ALICE), "1")
        aborted = run_cli(
            ["tenants", "forget", "--tenant", "telegram:42"],
            home=home,
            MNEMOGATE_REDIS_URL=redis_url,
            MNEMOGATE_REDIS_PREFIX=redis_prefix,
        )
        assert aborted.returncode == 1 and "Aborted" in aborted.stderr
        assert tenant_dir(home, ALICE).exists()

        done = run_cli(
            ["tenants", "forget", "--tenant", "telegram:42"],
            home=home,
            input_text="y\n",
            MNEMOGATE_REDIS_URL=redis_url,
            MNEMOGATE_REDIS_PREFIX=redis_prefix,
        )
        assert done.returncode == 0, done.stderr
        assert "sessions: 1" in done.stdout and "redis keys: 1" in done.stdout
        assert "warning" not in done.stderr
        assert client.exists(RedisKeys(redis_prefix).rate(ALICE)) == 0
    finally:
        client.close()
    assert not tenant_dir(home, ALICE).exists() and tenant_dir(home, BOB).exists()
    listed = run_cli(["tenants", "list", "--json"], home=home)
    assert [r["tenant"] for r in json.loads(listed.stdout)] == ["console:bob"]

    partial = run_cli(
        ["tenants", "forget", "--tenant", "console:bob", "--yes"],
        home=home,
        MNEMOGATE_REDIS_URL=f"redis://127.0.0.1:{free_port()}/0",
    )
    assert partial.returncode == 3
    assert "warning: could not erase redis keys: Redis unreachable" in partial.stderr
    assert "sessions: 1" in partial.stdout
    assert not tenant_dir(home, BOB).exists()
