"""Where a provider keeps a tenant's data: backend keys derived from memory scopes, and the
registry of the keys a tenant has used, so erasure can find every one of them.

A *backend key* is the bank, user id, container tag, file or directory name under which a
provider stores one memory scope. It is derived here, from the scope key the gateway built
(:attr:`providers.base.ProviderContext.memory_scope_key`) — never from configuration and
never from a tool argument — so every provider names a tenant's data the same safe way:

    telegram-123                     → mg-telegram-123-4f1c9e0a2b
    telegram-123.telegram-_2D100     → mg-telegram-123-telegram-_2d100-9b03d1c7e5

The readable part is sanitised (``[a-z0-9_-]``, lower case, cut to 48 characters) and the
suffix is a hash of the exact scope key, so two scopes never share a key even when their
readable parts do.

The :class:`ScopeRegistry` records (tenant, provider, scope key, backend key) the first time
a scope is used; :meth:`providers.manager.MemoryManager.erase` hands a provider every
record of the tenant, so ``erase`` removes all of them (DM and every group scope) or reports
exactly which it could not. The gateway implements the registry on its state store; the
in-memory one here serves tests and processes without a store.
"""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass
from typing import Protocol

from gateway.tenants import TenantId

KEY_PREFIX = "mg"
READABLE_CHARS = 48
HASH_CHARS = 10
_UNSAFE = re.compile(r"[^a-z0-9_-]+")


def backend_key(scope_key: str) -> str:
    """The provider-side name of ``scope_key``: readable, sanitised, collision-free."""
    if not scope_key:
        raise ValueError("a memory scope key must not be empty")
    readable = _UNSAFE.sub("-", scope_key.lower()).strip("-")[:READABLE_CHARS].strip("-")
    digest = hashlib.sha256(scope_key.encode("utf-8")).hexdigest()[:HASH_CHARS]
    return f"{KEY_PREFIX}-{readable}-{digest}" if readable else f"{KEY_PREFIX}-{digest}"


@dataclass(frozen=True, slots=True)
class ScopeRecord:
    """One memory scope of a tenant as a provider names it."""

    tenant: TenantId
    provider: str
    scope_key: str
    backend_key: str


class ScopeRegistry(Protocol):
    """Which backend keys a tenant has used with a provider (see the module docstring)."""

    def record(self, record: ScopeRecord) -> None:
        """Remember ``record``; recording the same scope again is harmless."""

    def scopes(self, tenant: TenantId, provider: str) -> list[ScopeRecord]:
        """Every scope of ``tenant`` recorded for ``provider``."""

    def forget(self, tenant: TenantId, provider: str) -> int:
        """Drop the tenant's records for ``provider`` (after erasure); how many there were."""


class MemoryScopeRegistry:
    """A :class:`ScopeRegistry` held in memory (tests, processes without a state store)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[tuple[str, str, str], ScopeRecord] = {}

    def record(self, record: ScopeRecord) -> None:
        with self._lock:
            self._rows.setdefault((str(record.tenant), record.provider, record.scope_key), record)

    def scopes(self, tenant: TenantId, provider: str) -> list[ScopeRecord]:
        with self._lock:
            return [
                row
                for (tid, name, _), row in sorted(self._rows.items())
                if tid == str(tenant) and name == provider
            ]

    def forget(self, tenant: TenantId, provider: str) -> int:
        with self._lock:
            keys = [k for k in self._rows if k[0] == str(tenant) and k[1] == provider]
            for key in keys:
                del self._rows[key]
            return len(keys)
