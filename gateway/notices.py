"""Memory notices ("💾 Memory updated"): formatted by workers, carried to the chat via Redis.

A worker formats a notice with :func:`format_notice` (per ``memory.notifications``) and
publishes it with :meth:`NoticeBus.publish`: the notice goes onto the tenant's own list
(``keys.notices(tenant)``, short TTL) and the tenant's namespace onto the deployment's
"ready" list. The gateway waits on that list with :meth:`NoticeBus.next_ready` (BLPOP, no
polling) and empties the tenant's list with :meth:`NoticeBus.take`, then sends each notice
to its chat after any reply in progress. Nothing reads notices without naming the tenant.

Notices are best effort: a Redis failure is logged and never raised into a turn or a job.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal, cast

import redis
import redis.asyncio as aioredis

from gateway.errors import TenantError
from gateway.history.store import SessionRecord
from gateway.keys import RedisKeys
from gateway.memory.approval import PendingWrite, describe_operation
from gateway.memory.operations import WriteResult
from gateway.memory.review import ReviewOutcome
from gateway.memory.tool import MemoryChange
from gateway.routing import Conversation
from gateway.tenants import TenantId

log = logging.getLogger(__name__)

NoticeMode = Literal["off", "on", "verbose"]
NOTICE_TTL_S = 3600
ERROR_BACKOFF_S = 1.0
MAX_PREVIEWS = 5
PREVIEW_WIDTH = 60
UPDATED = "💾 Memory updated"
PENDING_HINT = "/memory pending"
_REDIS_ERRORS = (redis.RedisError, OSError)


@dataclass(frozen=True, slots=True)
class Notice:
    """A short text for one chat of one tenant, and where to send it."""

    tenant_id: str
    platform: str
    chat_id: str
    thread_id: str | None
    session_key: str
    text: str
    created_at: float

    @classmethod
    def for_conversation(
        cls, conversation: Conversation, text: str, *, created_at: float | None = None
    ) -> Notice:
        return cls(
            tenant_id=str(conversation.tenant),
            platform=conversation.platform,
            chat_id=conversation.chat_id,
            thread_id=conversation.thread_id,
            session_key=conversation.session_key,
            text=text,
            created_at=time.time() if created_at is None else created_at,
        )

    @classmethod
    def for_session(
        cls, session: SessionRecord, text: str, *, created_at: float | None = None
    ) -> Notice:
        """A notice to the chat a stored session belongs to (what a worker knows).

        The platform comes from the session key, not the tenant: a session of an account
        linked into another platform's tenant lives on the account's platform.
        """
        tenant = session.tenant
        chat_id = session.chat_id or tenant.user
        platform = session.session_key.partition(":")[0] or tenant.platform
        return cls(
            tenant_id=str(tenant),
            platform=platform,
            chat_id=chat_id,
            thread_id=_thread_of(session.session_key, platform, chat_id),
            session_key=session.session_key,
            text=text,
            created_at=time.time() if created_at is None else created_at,
        )

    @property
    def tenant(self) -> TenantId:
        return TenantId.parse(self.tenant_id)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, raw: str | bytes) -> Notice:
        """Parse :meth:`to_json` output; raises ValueError when it is not a notice."""
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("a notice must be a JSON object")
        try:
            notice = cls(
                tenant_id=_text(data, "tenant_id"),
                platform=_text(data, "platform"),
                chat_id=_text(data, "chat_id"),
                thread_id=None if data.get("thread_id") is None else _text(data, "thread_id"),
                session_key=_text(data, "session_key"),
                text=_text(data, "text"),
                created_at=float(data["created_at"]),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a notice: {exc}") from None
        TenantId.parse(notice.tenant_id)  # a TenantError (a ValueError) when malformed
        return notice


def _thread_of(session_key: str, platform: str, chat_id: str) -> str | None:
    """The thread id inside a group session key ``<platform>:group:<chat>[:<thread>]:<user>``
    (platform user ids hold no ``:``)."""
    prefix = f"{platform}:group:{chat_id}:"
    if not session_key.startswith(prefix):
        return None
    return session_key[len(prefix) :].rpartition(":")[0] or None


def _text(data: dict[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise TypeError(f"{key} must be a string")
    return value


def format_notice(
    outcome_or_writes: ReviewOutcome | Sequence[WriteResult | MemoryChange],
    staged: Sequence[PendingWrite] = (),
    mode: NoticeMode = "on",
) -> str | None:
    """The notice text for memory writes and staged writes, or None when there is nothing
    to say or ``mode`` is ``off``.

    ``on``: ``💾 Memory updated``; ``verbose`` adds a preview of each change
    (``💾 Memory updated — user: + "Prefers metric units"``). Staged writes add
    ``📝 1 memory change waiting for your approval — /memory pending``.
    """
    if mode == "off":
        return None
    if isinstance(outcome_or_writes, ReviewOutcome):
        outcome = outcome_or_writes
        changes: Sequence[WriteResult | MemoryChange] = outcome.changes or outcome.writes
        seen = {write.id for write in staged}
        staged = [*staged, *(w for w in outcome.staged if w.id not in seen)]
    else:
        changes = outcome_or_writes
    lines = []
    applied = [c for c in changes if _result(c).changed]
    if applied:
        line = UPDATED
        if mode == "verbose":
            line += " — " + _previews([_describe(c) for c in applied])
        lines.append(line)
    if staged:
        count = len(staged)
        noun = "memory change" if count == 1 else "memory changes"
        line = f"📝 {count} {noun} waiting for your approval — {PENDING_HINT}"
        if mode == "verbose":
            line += ": " + _previews([f"#{w.id} {w.describe(PREVIEW_WIDTH)}" for w in staged])
        lines.append(line)
    return "\n".join(lines) if lines else None


def _result(change: WriteResult | MemoryChange) -> WriteResult:
    return change.result if isinstance(change, MemoryChange) else change


def _describe(change: WriteResult | MemoryChange) -> str:
    result = _result(change)
    edits = "; ".join(describe_operation(op, PREVIEW_WIDTH) for op in result.applied)
    return f"{change.target}: {edits}" if isinstance(change, MemoryChange) else edits


def _previews(items: list[str]) -> str:
    shown = "; ".join(items[:MAX_PREVIEWS])
    if len(items) > MAX_PREVIEWS:
        shown += f"; … and {len(items) - MAX_PREVIEWS} more"
    return shown


class NoticeBus:
    """Notices through Redis: ``client`` (sync) for workers, ``aclient`` (asyncio) for the
    gateway. Give the side the process uses; calling the other raises RuntimeError.

    ``aclient``'s socket timeout must exceed the ``timeout_s`` given to :meth:`next_ready`.
    """

    def __init__(
        self,
        keys: RedisKeys,
        *,
        client: redis.Redis | None = None,
        aclient: aioredis.Redis | None = None,
        ttl_s: int = NOTICE_TTL_S,
    ) -> None:
        self.keys = keys
        self._client = client
        self._aclient = aclient
        self.ttl_s = ttl_s

    # --- worker side -------------------------------------------------------------------
    def publish(self, tenant: TenantId, notice: Notice) -> bool:
        """Queue ``notice`` for ``tenant``'s chat; False (logged) when Redis failed."""
        if notice.tenant_id != str(tenant):
            raise ValueError(f"a notice for {notice.tenant_id} cannot be published to {tenant}")
        if self._client is None:
            raise RuntimeError("this NoticeBus has no synchronous Redis client")
        key, ready = self.keys.notices(tenant), self.keys.notices_ready()
        try:
            with self._client.pipeline(transaction=True) as pipe:
                pipe.rpush(key, notice.to_json())
                pipe.expire(key, self.ttl_s)
                pipe.rpush(ready, tenant.namespace)
                pipe.expire(ready, self.ttl_s)
                pipe.execute()
        except _REDIS_ERRORS as exc:
            log.warning("notice for %s dropped: Redis failed: %s", tenant.namespace, exc)
            return False
        return True

    # --- gateway side ------------------------------------------------------------------
    async def next_ready(self, timeout_s: float) -> TenantId | None:
        """The next tenant with notices waiting, or None after ``timeout_s`` (BLPOP).

        A Redis failure is logged and answers None after a short pause, so a consumer loop
        around this call does not spin while Redis is down.
        """
        aclient = self._async_client()
        try:
            popped = await cast(
                Awaitable[Any], aclient.blpop([self.keys.notices_ready()], timeout=timeout_s)
            )
        except _REDIS_ERRORS as exc:
            log.warning("waiting for notices failed: Redis: %s", exc)
            await asyncio.sleep(min(timeout_s, ERROR_BACKOFF_S))
            return None
        if popped is None:
            return None
        namespace = _decode(popped[1])
        try:
            return TenantId.from_namespace(namespace)
        except TenantError:
            log.warning("ignoring notices-ready entry %r: not a tenant namespace", namespace)
            return None

    async def take(self, tenant: TenantId) -> list[Notice]:
        """Pop every notice waiting for ``tenant`` (atomically); [] when Redis failed."""
        aclient = self._async_client()
        key = self.keys.notices(tenant)
        try:
            async with aclient.pipeline(transaction=True) as pipe:
                pipe.lrange(key, 0, -1)
                pipe.delete(key)
                raw, _ = await pipe.execute()
        except _REDIS_ERRORS as exc:
            log.warning("notices for %s not read: Redis: %s", tenant.namespace, exc)
            return []
        notices = []
        for item in raw:
            try:
                notice = Notice.from_json(item)
            except ValueError as exc:
                log.warning("dropping a malformed notice for %s: %s", tenant.namespace, exc)
                continue
            if notice.tenant_id != str(tenant):
                log.error("dropping a notice for %s found in %s's list", notice.tenant_id, tenant)
                continue
            notices.append(notice)
        return notices

    def _async_client(self) -> aioredis.Redis:
        if self._aclient is None:
            raise RuntimeError("this NoticeBus has no asyncio Redis client")
        return self._aclient


def _decode(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
