"""Backend keys from memory scopes and the scope registry (in memory and on state.db)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.history.db import Database
from gateway.provider_scopes import SqliteScopeRegistry
from gateway.tenants import TenantId
from providers.scoping import MemoryScopeRegistry, ScopeRecord, ScopeRegistry, backend_key

SAFE = set("abcdefghijklmnopqrstuvwxyz0123456789_-")
A = TenantId.parse("telegram:123")
B = TenantId.parse("discord:456")


def test_backend_key_is_readable_and_stable() -> None:
    key = backend_key("telegram-123")
    assert key.startswith("mg-telegram-123-") and key == backend_key("telegram-123")
    group = backend_key("telegram-123.telegram-_2D100")
    assert group.startswith("mg-telegram-123-telegram-_2d100-")
    assert group != key


def test_scopes_that_sanitise_alike_still_differ() -> None:
    # Case and punctuation fold to the same readable part; the hash keeps them apart.
    assert backend_key("Console-Ana") != backend_key("console-ana")
    assert backend_key("a.b") != backend_key("a-b")


def test_empty_scope_is_refused() -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        backend_key("")


@given(st.text(min_size=1, max_size=200), st.text(min_size=1, max_size=200))
def test_backend_keys_are_safe_bounded_and_injective(left: str, right: str) -> None:
    a, b = backend_key(left), backend_key(right)
    assert set(a) <= SAFE and len(a) <= 2 + 1 + 48 + 1 + 10
    assert (a == b) == (left == right)


@pytest.fixture(params=["memory", "sqlite"])
def registry(request: pytest.FixtureRequest, tmp_path: Path) -> ScopeRegistry:
    if request.param == "memory":
        return MemoryScopeRegistry()
    return SqliteScopeRegistry(Database(tmp_path / "state.db"))


def _record(tenant: TenantId, scope: str, provider: str = "mem0") -> ScopeRecord:
    return ScopeRecord(tenant, provider, scope, backend_key(scope))


def test_registry_lists_only_the_tenants_scopes_of_that_provider(registry: ScopeRegistry) -> None:
    registry.record(_record(A, A.namespace))
    registry.record(_record(A, A.namespace))  # twice is harmless
    registry.record(_record(A, f"{A.namespace}.grp"))
    registry.record(_record(A, A.namespace, provider="hindsight"))
    registry.record(_record(B, B.namespace))
    assert [r.scope_key for r in registry.scopes(A, "mem0")] == [
        A.namespace,
        f"{A.namespace}.grp",
    ]
    assert registry.scopes(A, "mem0")[0].backend_key == backend_key(A.namespace)
    assert registry.forget(A, "mem0") == 2
    assert registry.scopes(A, "mem0") == []
    assert [r.provider for r in registry.scopes(A, "hindsight")] == ["hindsight"]
    assert [r.tenant for r in registry.scopes(B, "mem0")] == [B]
