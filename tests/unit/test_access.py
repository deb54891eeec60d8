"""Access control and pairing codes over a real state.db, with an injected clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.access import AccessPolicy, NotRevocable
from gateway.agent.dispatch import dispatch
from gateway.app import App
from gateway.errors import ConfigError, UserInputError
from gateway.history.db import Database
from gateway.pairing import (
    ALPHABET,
    CODE_LENGTH,
    CODE_TTL_S,
    CODES_PER_DAY,
    DAY_S,
    LOCKOUT_FAILURES,
    LOCKOUT_S,
    OPERATOR,
    PairingLocked,
    new_code,
)
from gateway.routing import Conversation
from gateway.settings import Settings, load_settings
from gateway.tenants import TenantId

ALICE = TenantId.parse("telegram:1")
BOB = TenantId.parse("telegram:2")
ADMIN = TenantId.parse("telegram:9")
START = 1_700_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(tmp_path / "state.db")
    yield database
    database.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


def settings(tmp_path: Path, **access: Any) -> Settings:
    return load_settings(home=tmp_path / "home", access=access)


def policy_for(tmp_path: Path, db: Database, clock: Clock, **access: Any) -> AccessPolicy:
    return AccessPolicy(settings(tmp_path, **access), db, clock=clock)


@pytest.fixture
def policy(tmp_path: Path, db: Database, clock: Clock) -> AccessPolicy:
    return policy_for(tmp_path, db, clock, admins=[str(ADMIN)])


def dm(tenant: TenantId, name: str | None = "Alice") -> Conversation:
    return Conversation(tenant, chat_id=tenant.user, display_name=name)


# --- decisions ---------------------------------------------------------------------------
def test_schema_has_migration_5(db: Database) -> None:
    assert db.schema_version >= 5


def test_default_deny(tmp_path: Path, db: Database, clock: Clock) -> None:
    policy = policy_for(tmp_path, db, clock)
    assert not policy.is_allowed(ALICE)
    assert not policy.is_admin(ALICE)


def test_allow_list_and_allow_all(tmp_path: Path, db: Database, clock: Clock) -> None:
    listed = policy_for(tmp_path, db, clock, allowed_users=["telegram:1"])
    assert listed.is_allowed(ALICE)
    assert not listed.is_allowed(BOB)
    everyone = policy_for(tmp_path, db, clock, allow_all=True)
    assert everyone.is_allowed(BOB)
    assert not everyone.is_admin(BOB)


def test_admins_are_allowed(policy: AccessPolicy) -> None:
    assert policy.is_admin(ADMIN)
    assert policy.is_allowed(ADMIN)
    assert not policy.is_admin(ALICE)


def test_bad_tenant_in_settings_is_a_config_error(
    tmp_path: Path, db: Database, clock: Clock
) -> None:
    with pytest.raises(ConfigError, match=r"access\.admins"):
        policy_for(tmp_path, db, clock, admins=["alice"])


def test_grant_and_revoke(policy: AccessPolicy) -> None:
    assert policy.grant(ALICE, str(ADMIN)) is True
    assert policy.is_allowed(ALICE)
    assert policy.grant(ALICE, str(ADMIN)) is False
    assert [g.tenant for g in policy.grants()] == [ALICE]
    assert policy.revoke(ALICE, str(ADMIN)) is True
    assert not policy.is_allowed(ALICE)
    assert policy.revoke(ALICE, str(ADMIN)) is False
    assert policy.grant(ALICE, OPERATOR) is True  # a revoked grant can be renewed
    assert policy.is_allowed(ALICE)


def test_settings_listed_tenants_cannot_be_revoked(
    tmp_path: Path, db: Database, clock: Clock
) -> None:
    policy = policy_for(tmp_path, db, clock, allowed_users=["telegram:1"], admins=["telegram:9"])
    with pytest.raises(NotRevocable, match=r"configuration \(access.allowed_users\)"):
        policy.revoke(ALICE, str(ADMIN))
    with pytest.raises(NotRevocable, match=r"access.admins"):
        policy.revoke(ADMIN, OPERATOR)
    assert policy.is_allowed(ALICE)


# --- pairing codes -----------------------------------------------------------------------
def test_alphabet_is_unambiguous() -> None:
    assert not set("0O1IL") & set(ALPHABET)
    codes = {new_code() for _ in range(200)}
    assert len(codes) == 200
    assert all(len(c) == CODE_LENGTH and set(c) <= set(ALPHABET) for c in codes)


def test_code_format_and_expiry(policy: AccessPolicy, clock: Clock) -> None:
    issued = policy.pairing.issue_code(ALICE, chat_id="1", display_name="Alice")
    assert issued.code is not None and not issued.reused
    assert len(issued.code.code) == CODE_LENGTH
    assert set(issued.code.code) <= set(ALPHABET)
    assert issued.code.expires_at == START + CODE_TTL_S
    clock.now = START + CODE_TTL_S
    assert policy.list_pending() == []


def test_same_code_while_valid(policy: AccessPolicy, clock: Clock) -> None:
    first = policy.pairing.issue_code(ALICE, chat_id="1")
    clock.now += CODE_TTL_S - 1
    again = policy.pairing.issue_code(ALICE, chat_id="1")
    assert again.reused and again.code is not None and first.code is not None
    assert again.code.code == first.code.code
    clock.now += 2
    fresh = policy.pairing.issue_code(ALICE, chat_id="1")
    assert fresh.code is not None and not fresh.reused
    assert fresh.code.code != first.code.code


def test_issuance_is_limited_per_day(policy: AccessPolicy, clock: Clock) -> None:
    for _ in range(CODES_PER_DAY):
        assert policy.pairing.issue_code(ALICE, chat_id="1").code is not None
        clock.now += CODE_TTL_S + 1
    limited = policy.pairing.issue_code(ALICE, chat_id="1")
    assert limited.code is None
    assert limited.limited_until == START + DAY_S
    reply = policy.pairing_reply(dm(ALICE))
    assert reply is not None and "after" in reply and "pairing code is" not in reply
    assert policy.pairing.issue_code(BOB, chat_id="2").code is not None  # per tenant
    clock.now = START + DAY_S + 1
    assert policy.pairing.issue_code(ALICE, chat_id="1").code is not None


def test_pairing_reply_only_for_unknown_users_in_dms(policy: AccessPolicy) -> None:
    reply = policy.pairing_reply(dm(ALICE))
    assert reply is not None
    code = policy.list_pending()[0].code
    assert code in reply and f"/pair approve {code}" in reply
    group = Conversation(BOB, chat_id="-100", chat_type="group")
    assert policy.pairing_reply(group) is None
    assert policy.pairing_reply(dm(ADMIN)) is None


def test_approve_grants_access(policy: AccessPolicy) -> None:
    issued = policy.pairing.issue_code(ALICE, chat_id="1", display_name="Alice")
    assert issued.code is not None
    typed = issued.code.code.lower()[:4] + "-" + issued.code.code.lower()[4:]
    approved = policy.approve(typed, str(ADMIN))
    assert approved.tenant == ALICE and approved.display_name == "Alice"
    assert policy.is_allowed(ALICE)
    assert policy.list_pending() == []
    with pytest.raises(UserInputError, match="already used"):
        policy.approve(issued.code.code, str(ADMIN))


def test_expired_code_is_refused(policy: AccessPolicy, clock: Clock) -> None:
    issued = policy.pairing.issue_code(ALICE, chat_id="1")
    assert issued.code is not None
    clock.now += CODE_TTL_S + 1
    with pytest.raises(UserInputError, match="expired"):
        policy.approve(issued.code.code, str(ADMIN))
    assert not policy.is_allowed(ALICE)


def test_wrong_codes_lock_the_approver_out_then_unlock(policy: AccessPolicy, clock: Clock) -> None:
    issued = policy.pairing.issue_code(ALICE, chat_id="1")
    assert issued.code is not None
    for attempt in range(1, LOCKOUT_FAILURES):
        clock.now += 10
        with pytest.raises(UserInputError, match=f"{LOCKOUT_FAILURES - attempt} more wrong") as e:
            policy.approve("ZZZZZZZZ", str(ADMIN))
        assert not isinstance(e.value, PairingLocked)
    with pytest.raises(PairingLocked, match="locked for 15 more minutes") as locked:
        policy.approve("ZZZZZZZZ", str(ADMIN))
    assert locked.value.retry_after == LOCKOUT_S
    clock.now += 60
    with pytest.raises(PairingLocked):  # even the right code, while locked
        policy.approve(issued.code.code, str(ADMIN))
    assert not policy.is_allowed(ALICE)
    assert policy.pairing.lockout(OPERATOR) is None  # other approvers are not locked
    clock.now += LOCKOUT_S
    assert policy.pairing.lockout(str(ADMIN)) is None
    # The code is valid for an hour, longer than the lockout.
    assert policy.approve(issued.code.code, str(ADMIN)).tenant == ALICE


def test_failures_outside_the_window_do_not_lock(policy: AccessPolicy, clock: Clock) -> None:
    for _ in range(LOCKOUT_FAILURES * 2):
        clock.now += 300  # one wrong code every 5 minutes: at most 3 in any 15 minutes
        with pytest.raises(UserInputError) as exc:
            policy.approve("ZZZZZZZZ", OPERATOR)
        assert not isinstance(exc.value, PairingLocked)


def test_list_pending_and_revoke(policy: AccessPolicy, clock: Clock) -> None:
    policy.pairing.issue_code(ALICE, chat_id="1", display_name="Alice")
    clock.now += 5
    policy.pairing.issue_code(BOB, chat_id="2", display_name=None)
    pending = policy.list_pending()
    assert [(p.tenant, p.display_name) for p in pending] == [(ALICE, "Alice"), (BOB, None)]
    assert policy.revoke(BOB, OPERATOR) is False  # no grant, but its code is withdrawn
    assert [p.tenant for p in policy.list_pending()] == [ALICE]


# --- admin chat commands -----------------------------------------------------------------
async def test_admin_commands(tmp_path: Path) -> None:
    config = load_settings(home=tmp_path / "home", access={"admins": [str(ADMIN)]})
    async with App(config) as app:
        policy = AccessPolicy(config, app.db)
        reply = policy.pairing_reply(dm(ALICE))
        assert reply is not None
        code = policy.list_pending()[0].code
        assert await dispatch(app.agent, dm(BOB), f"/pair approve {code}") == (
            "Only the bot's admins can do that."
        )
        assert await dispatch(app.agent, dm(BOB), "/allow telegram:5") == (
            "Only the bot's admins can do that."
        )
        approved = await dispatch(app.agent, dm(ADMIN), f"/pair approve {code}")
        assert approved == "Approved telegram:1 (Alice): they can talk to me now."
        assert policy.is_allowed(ALICE)
        assert "wrong" in (await dispatch(app.agent, dm(ADMIN), "/pair approve ZZZZZZZZ") or "")
        assert await dispatch(app.agent, dm(ADMIN), "/allow telegram:2") == (
            "telegram:2 may talk to me now."
        )
        assert policy.is_allowed(BOB)
        assert await dispatch(app.agent, dm(ADMIN), "/deny telegram:2") == (
            "telegram:2 may no longer talk to me."
        )
        assert not policy.is_allowed(BOB)
        denied_admin = await dispatch(app.agent, dm(ADMIN), "/deny telegram:9")
        assert denied_admin is not None and "cannot be revoked" in denied_admin
        assert "must look like" in (await dispatch(app.agent, dm(ADMIN), "/allow bob") or "")
        whoami = await dispatch(app.agent, dm(ADMIN, "Root"), "/whoami")
        assert whoami is not None
        assert "You are telegram:9." in whoami and "Role: admin." in whoami
        assert "Memory here: your private memory." in whoami
        usage = await dispatch(app.agent, dm(ALICE), "/usage")
        assert usage is not None and "Tokens today (UTC): 0." in usage
        assert "no daily token budget" in usage
