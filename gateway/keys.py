"""Redis key names: the one place that builds them, always from a TenantId for tenant data.

Layout (``P`` is ``settings.redis_prefix``, ``NS`` the tenant's namespace, ``H`` a short hex
digest of a session key, ``S`` a session id spelled with :func:`~gateway.tenants.escape_id`)::

    P:t:NS:recall:H                 cached provider recall for a session key (string, TTL)
    P:t:NS:recall-ready:H:NONCE     a recall job's "done" signal for one waiting turn (list)
    P:t:NS:sync-lock:S              per-session provider-sync lock
    P:t:NS:rate                     the tenant's message-rate window
    P:t:NS:notices                  notices waiting for delivery to the tenant's chats (list)
    P:g:notices-ready               tenants with notices waiting (non-tenant)
    P:g:relay-lock                  the outbox relay's lock (non-tenant)

Every tenant key starts with ``P:t:NS:``. A namespace never contains ``:``, so the delimiter
after it keeps ``telegram-1`` from matching ``telegram-12``; :meth:`RedisKeys.tenant_pattern`
relies on that and on namespaces holding no glob characters.
"""

from __future__ import annotations

import hashlib
import re

from gateway.tenants import TenantId, escape_id

SAFE_PART = re.compile(r"^[A-Za-z0-9_-]+$")
DIGEST_CHARS = 16


def digest(text: str) -> str:
    """A short, key-safe, stable hex digest of ``text`` (session keys may hold any character)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:DIGEST_CHARS]


class RedisKeys:
    """Builds every Redis key of one deployment (``prefix`` = ``settings.redis_prefix``)."""

    def __init__(self, prefix: str) -> None:
        if not SAFE_PART.fullmatch(prefix):
            raise ValueError(f"redis prefix {prefix!r} must match {SAFE_PART.pattern}")
        self.prefix = prefix

    # --- tenant keys ----------------------------------------------------------------------
    def _tenant(self, tenant: TenantId, *parts: str) -> str:
        if not isinstance(tenant, TenantId):
            raise TypeError(f"tenant keys need a TenantId, not {type(tenant).__name__}")
        return ":".join((self.prefix, "t", tenant.namespace, *parts))

    def recall(self, tenant: TenantId, session_key: str) -> str:
        return self._tenant(tenant, "recall", digest(session_key))

    def recall_ready(self, tenant: TenantId, session_key: str, nonce: str) -> str:
        if not SAFE_PART.fullmatch(nonce):
            raise ValueError(f"nonce {nonce!r} must match {SAFE_PART.pattern}")
        return self._tenant(tenant, "recall-ready", digest(session_key), nonce)

    def sync_lock(self, tenant: TenantId, session_id: str) -> str:
        return self._tenant(tenant, "sync-lock", escape_id(session_id))

    def rate(self, tenant: TenantId) -> str:
        return self._tenant(tenant, "rate")

    def notices(self, tenant: TenantId) -> str:
        return self._tenant(tenant, "notices")

    def tenant_pattern(self, tenant: TenantId) -> str:
        """SCAN MATCH pattern of every key of ``tenant`` and of no other tenant (erasure)."""
        return self._tenant(tenant, "*")

    # --- deployment-wide keys -------------------------------------------------------------
    def notices_ready(self) -> str:
        return f"{self.prefix}:g:notices-ready"

    def relay_lock(self) -> str:
        return f"{self.prefix}:g:relay-lock"
