"""Tenant ids, injective namespaces, scopes and session keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.errors import TenantError
from gateway.routing import Conversation, session_key
from gateway.tenants import GroupId, MemoryScope, TenantId

user_ids = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")),
    min_size=1,
    max_size=40,
).filter(lambda s: not any(c.isspace() for c in s))


def test_examples() -> None:
    assert TenantId.parse("telegram:123").namespace == "telegram-123"
    assert TenantId.parse("console:alice").namespace == "console-alice"
    assert TenantId.parse("discord:42").namespace == "discord-42"
    assert TenantId.parse("console:a_b").namespace == "console-a_5Fb"
    assert TenantId.parse("console:a.b").namespace == "console-a_2Eb"


@given(user_ids, user_ids)
def test_namespace_is_injective_and_safe(a: str, b: str) -> None:
    ta, tb = TenantId.of("console", a), TenantId.of("console", b)
    assert all(c.isascii() and (c.isalnum() or c in "_-") for c in ta.namespace)
    assert TenantId.from_namespace(ta.namespace) == ta
    if a != b:
        assert ta.namespace != tb.namespace


def test_platforms_never_collide() -> None:
    assert TenantId.of("telegram", "1").namespace != TenantId.of("discord", "1").namespace


@pytest.mark.parametrize(
    "bad",
    ["", "alice", "slack:1", "console:", "console:a b", "console:" + "x" * 200, "telegram:\x00"],
)
def test_bad_ids(bad: str) -> None:
    with pytest.raises(TenantError):
        TenantId.parse(bad)


@pytest.mark.parametrize(
    "bad",
    ["telegram:042", "telegram:+42", "telegram:4 2", "discord:0x2A", "telegram:abc", "discord:0"],
)
def test_platform_ids_must_be_canonical_numbers(bad: str) -> None:
    with pytest.raises(TenantError) as err:
        TenantId.parse(bad)
    if bad in {"telegram:042", "telegram:+42"}:
        assert "did you mean telegram:42?" in str(err.value)


def test_canonical_platform_ids_parse() -> None:
    assert str(TenantId.parse(" telegram:42 ")) == "telegram:42"
    assert str(TenantId.parse("telegram:-1001234")) == "telegram:-1001234"
    assert str(TenantId.parse("console:042")) == "console:042"  # console names are free text


def test_scopes(tmp_path: Path) -> None:
    alice = TenantId.parse("telegram:7")
    group = GroupId("telegram", "-100200")
    assert MemoryScope.private(alice).directory(tmp_path) == (
        tmp_path / "tenants" / "telegram-7" / "memories"
    )
    assert MemoryScope(alice, group).directory(tmp_path) == (
        tmp_path / "tenants" / "telegram-7" / "groups" / "telegram--100200" / "memories"
    )


def test_session_keys_and_group_memory_modes() -> None:
    assert session_key("telegram", "dm", "7", "7") == "telegram:dm:7"
    assert session_key("telegram", "group", "-1", "7", "55") == "telegram:group:-1:55:7"
    dm = Conversation(TenantId.of("telegram", "7"), chat_id="7")
    grp = Conversation(TenantId.of("telegram", "7"), chat_id="-1", chat_type="group")
    assert dm.memory_scope("isolated") == MemoryScope.private(dm.tenant)
    assert grp.memory_scope("isolated") == MemoryScope(grp.tenant, GroupId("telegram", "-1"))
    assert grp.memory_scope("private") == MemoryScope.private(grp.tenant)
    assert grp.memory_scope("off") is None
    assert dm.search_scope_key() != grp.search_scope_key()
    other = Conversation(TenantId.of("telegram", "8"), chat_id="-1", chat_type="group")
    assert other.session_key != grp.session_key
