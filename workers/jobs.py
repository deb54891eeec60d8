"""RQ job functions: provider sync and recall prefetch, and the wrapper every job runs in.

Entry functions take primitive arguments only (tenant id string, session id, …), fetch the
worker's :class:`~workers.context.WorkerContext` and run a *body* that takes the context
explicitly, through :func:`run_job`, which

* parses the tenant and makes sure ``job.meta["tenant"]`` holds its namespace,
* logs start, success and failure with the namespace (``extra``: tenant, kind, session, job),
* marks the job's outbox rows done when the body succeeds, and
* lets exceptions propagate, so RQ retries (``Retry`` set at enqueue) and finally moves the
  job to its FailedJobRegistry. :func:`tag_failure` is the worker's exception handler that
  adds the error to ``job.meta``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, TypeVar

from redis.exceptions import LockError, RedisError
from rq import get_current_job
from rq.job import Job

from gateway import outbox
from gateway.agent.memory_events import write_events
from gateway.errors import MnemogateError, NotFound
from gateway.history.records import SessionRecord
from gateway.memory.store import Origin
from gateway.memory.tool import MemoryChange
from gateway.recall import Cadence
from gateway.tenants import MemoryScope, TenantId
from providers.base import RecallQuery, SyncedTurn
from workers.context import WorkerContext, current
from workers.queues import JobKind, JobQueues, one_line

log = logging.getLogger(__name__)
T = TypeVar("T")
Body = Callable[[WorkerContext, TenantId, str], T]


class JobFailed(MnemogateError):
    """A job could not finish (provider refused a turn, lock busy); RQ retries it."""


def run_job(kind: JobKind, tenant_id: str, session_id: str, body: Body[T]) -> T:
    """Run ``body(context, tenant, session_id)`` as one job of ``kind`` (see module doc)."""
    tenant = TenantId.parse(tenant_id)
    job = get_current_job()
    extra = {
        "tenant": tenant.namespace,
        "kind": kind,
        "session": session_id,
        "job_id": job.id if job else None,
    }
    if job is not None and job.meta.get("tenant") != tenant.namespace:
        job.meta.update(tenant=tenant.namespace, kind=kind)
        job.save_meta()
    ctx = current()
    log.debug("%s job for %s/%s started", kind, tenant.namespace, session_id, extra=extra)
    try:
        result = body(ctx, tenant, session_id)
    except Exception as exc:
        # A JobFailed names a cause already logged where it happened (a provider call) or a
        # passing condition (a busy lock): the retry is routine. A final failure is logged
        # as an error by tag_failure.
        log.log(
            logging.INFO if isinstance(exc, JobFailed) else logging.WARNING,
            "%s job for %s/%s failed: %s",
            kind,
            tenant.namespace,
            session_id,
            one_line(exc),
            extra=extra,
        )
        raise
    rows = job.meta.get("outbox", []) if job is not None else []
    if rows:
        outbox.mark_done(ctx.db, tenant, [int(i) for i in rows])
    log.info("%s job for %s/%s done", kind, tenant.namespace, session_id, extra=extra)
    return result


def tag_failure(
    job: Job, exc_type: type[BaseException], exc_value: BaseException, tb: TracebackType | Any
) -> bool:
    """RQ exception handler: the tenant namespace and the error into ``job.meta``; falls through.

    Also called for abandoned jobs (worker killed), then with a stack summary as ``tb``.
    """
    namespace = job.meta.get("tenant")
    if namespace is None and job.args:
        with suppress(MnemogateError, TypeError):
            namespace = TenantId.parse(str(job.args[0])).namespace
    job.meta.update(tenant=namespace, error=f"{exc_type.__name__}: {one_line(exc_value)}")
    with suppress(RedisError):
        job.save_meta()
    # RQ requeues or schedules a job with retries left (and logs so) right after this
    # handler; the failure itself was logged where it happened. Only a final one is an error.
    retried = bool(job.retries_left)
    log.log(
        logging.INFO if retried else logging.ERROR,
        "job %s for %s failed%s: %s",
        job.id,
        namespace,
        ", will be retried" if retried else "",
        job.meta["error"],
        extra={"tenant": namespace, "job_id": job.id, "kind": job.meta.get("kind")},
    )
    return True


# --- provider sync -----------------------------------------------------------------------


def sync_session(tenant_id: str, session_id: str) -> int:
    """RQ entry (``sync`` queue): send the session's unsynced turns to the provider, in order."""
    return run_job("sync", tenant_id, session_id, sync_body)


@dataclass(frozen=True, slots=True)
class PendingTurn:
    """A finished user→assistant exchange; ``last_id`` is its last message id."""

    user_id: int
    user: str
    assistant: str
    timestamp: float
    last_id: int

    def synced(self, session_id: str) -> SyncedTurn:
        return SyncedTurn(
            user=self.user,
            assistant=self.assistant,
            session_id=session_id,
            turn_id=str(self.user_id),
            timestamp=datetime.fromtimestamp(self.timestamp, UTC),
        )


def pair_turns(rows: Sequence[Any]) -> list[PendingTurn]:
    """Group messages (id order) into turns: a user message and what followed it.

    A turn is finished when the assistant answered without asking for tools, or when the
    next user message arrived; a trailing unfinished turn is left for a later sync.
    """
    turns: list[PendingTurn] = []
    open_turn: PendingTurn | None = None
    answered = False
    for row in rows:
        if row["role"] == "user":
            if open_turn is not None:
                turns.append(open_turn)
            open_turn = PendingTurn(row["id"], row["content"], "", row["timestamp"], row["id"])
            answered = False
        elif open_turn is not None:
            text = open_turn.assistant
            if row["role"] == "assistant" and row["content"]:
                text = row["content"]
                answered = not row["tool_calls"]
            open_turn = PendingTurn(
                open_turn.user_id, open_turn.user, text, open_turn.timestamp, row["id"]
            )
    if open_turn is not None and answered:
        turns.append(open_turn)
    return turns


def unsynced_turns(ctx: WorkerContext, tenant: TenantId, session_id: str) -> list[PendingTurn]:
    """Finished turns after the session's ``provider_synced_upto`` pointer."""

    def query(conn: Any) -> list[Any]:
        row = conn.execute(
            "SELECT provider_synced_upto FROM sessions WHERE tenant_id = ? AND id = ?",
            (str(tenant), session_id),
        ).fetchone()
        if row is None:
            raise NotFound(f"no session {session_id!r} for {tenant}")
        return list(
            conn.execute(
                "SELECT id, role, content, tool_calls, timestamp FROM messages "
                "WHERE tenant_id = ? AND session_id = ? AND id > ? ORDER BY id",
                (str(tenant), session_id, int(row[0])),
            ).fetchall()
        )

    return pair_turns(ctx.db.read(query))


def advance_pointer(ctx: WorkerContext, tenant: TenantId, session_id: str, upto: int) -> None:
    ctx.db.write(
        lambda c: c.execute(
            "UPDATE sessions SET provider_synced_upto = ? WHERE tenant_id = ? AND id = ? "
            "AND provider_synced_upto < ?",
            (upto, str(tenant), session_id, upto),
        )
    )


def sync_body(ctx: WorkerContext, tenant: TenantId, session_id: str) -> int:
    """Sync under the session's lock; advance the pointer after each stored turn.

    Idempotent: what is behind the pointer is never sent again, so a retried or duplicate job
    only sends what is left. Returns how many turns were sent.
    """
    try:
        session = ctx.sessions.get_session(tenant, session_id)
    except NotFound:
        outbox.mark_session_done(ctx.db, tenant, session_id, "sync")
        return 0
    if session.incognito or ctx.manager.provider is None:
        outbox.mark_session_done(ctx.db, tenant, session_id, "sync")
        return 0
    jobs = ctx.settings.jobs
    lock = ctx.redis.lock(
        ctx.keys.sync_lock(tenant, session_id),
        # Held for one provider call at a time (renewed per turn), so a killed worker's lock
        # frees itself soon after.
        timeout=ctx.settings.recall.provider_timeout_s + jobs.sync_lock_timeout_s,
        blocking_timeout=jobs.sync_lock_timeout_s,
    )
    if not lock.acquire():
        raise JobFailed(f"sync of {tenant.namespace}/{session_id} is busy in another job")
    try:
        # Rows committed before this read have their messages visible to the next read.
        through = outbox.last_row_id(ctx.db, tenant, session_id, "sync")
        turns = unsynced_turns(ctx, tenant, session_id)
        provider_ctx = ctx.provider_context(tenant, session)
        if turns and not ctx.manager.initialize(provider_ctx):
            raise JobFailed(f"provider could not initialize {tenant.namespace}/{session_id}")
        for turn in turns:
            lock.reacquire()
            if not ctx.manager.sync_turn(provider_ctx, turn.synced(session_id)):
                raise JobFailed(f"provider did not store turn {turn.user_id} of {session_id}")
            advance_pointer(ctx, tenant, session_id, turn.last_id)
        outbox.mark_session_done(ctx.db, tenant, session_id, "sync", through_id=through)
        return len(turns)
    finally:
        with suppress(LockError, RedisError):
            lock.release()


# --- recall prefetch ---------------------------------------------------------------------


def recall_next(
    tenant_id: str, session_id: str, query: str, nonce: str = "", refresh: int = 0, turn: int = -1
) -> int:
    """RQ entry (``recall`` queue): compute recall for the session's next turn into the cache.

    ``refresh`` > 0 marks a follow-up (attempt number) of the recall computed at user turn
    ``turn``; see :func:`recall_body`. A recall computed while the provider was behind is
    followed up ``recall.refresh_delay_s`` later, at most ``recall.refresh_attempts`` times.
    """

    def body(ctx: WorkerContext, tenant: TenantId, sid: str) -> int:
        outcome = recall_body(ctx, tenant, sid, query, nonce=nonce, refresh=refresh, turn=turn)
        if outcome.behind and refresh < ctx.settings.recall.refresh_attempts:
            follow_up(ctx, tenant, sid, query, attempt=refresh + 1, turn=outcome.turn)
        return outcome.length

    return run_job("recall", tenant_id, session_id, body)


def follow_up(
    ctx: WorkerContext, tenant: TenantId, session_id: str, query: str, *, attempt: int, turn: int
) -> str:
    """Enqueue recall refresh ``attempt`` of user turn ``turn``, ``refresh_delay_s`` from now."""
    queues = JobQueues(ctx.redis, ctx.settings)
    delay, dedup = ctx.settings.recall.refresh_delay_s, f"r{turn}-{attempt}"
    if delay <= 0:
        return queues.enqueue(
            "recall", tenant, session_id, dedup=dedup, query=query, refresh=attempt, turn=turn
        ).job_id
    return queues.schedule(
        "recall", tenant, session_id, delay, dedup=dedup, query=query, refresh=attempt, turn=turn
    )


@dataclass(frozen=True, slots=True)
class RecallOutcome:
    """What a recall job did: the cached length (-1: cache untouched), and whether the
    provider was still processing the session (``behind``) at user turn ``turn``."""

    length: int
    behind: bool
    turn: int


def recall_body(
    ctx: WorkerContext,
    tenant: TenantId,
    session_id: str,
    query: str,
    *,
    nonce: str = "",
    refresh: int = 0,
    turn: int = -1,
) -> RecallOutcome:
    """Ask the provider (bounded by its timeout), cache the text, wake a waiting turn.

    "" is cached too ("computed, nothing to say"). Whether the provider is *behind* — a turn
    not yet synced, or the provider still processing what was (``is_caught_up``) — is
    checked before the recall, so a recall that may miss the latest turn is known as such.
    A follow-up (``refresh`` > 0) recomputes only when the provider has caught up and no
    newer turn of the session has had its own recall; otherwise the cache stays as it is.
    When the provider cannot be reached the cache also stays as it is.
    """
    session = ctx.sessions.get_session(tenant, session_id)
    at = session.user_turns
    try:
        if ctx.manager.provider is None:
            ctx.recall_cache.put(tenant, session.session_key, "", turn_index=at)
            return RecallOutcome(0, False, at)
        if refresh and turn != at:
            return RecallOutcome(-1, False, at)  # a newer turn's recall took over
        provider_ctx = ctx.provider_context(tenant, session)
        if not ctx.manager.initialize(provider_ctx):
            return RecallOutcome(-1, False, at)  # unreachable: logged; keep what is cached
        behind = bool(unsynced_turns(ctx, tenant, session_id)) or not ctx.manager.is_caught_up(
            provider_ctx
        )
        if refresh and behind:
            return RecallOutcome(-1, True, at)
        dialectic = Cadence(ctx.settings.recall).dialectic_due(at)
        text = ctx.manager.recall(
            provider_ctx, RecallQuery(text=query, turn_index=at, dialectic=dialectic)
        )
        ctx.recall_cache.put(tenant, session.session_key, text, turn_index=at)
        return RecallOutcome(len(text), behind, at)
    finally:
        if nonce:  # even on failure: the waiting turn stops waiting and goes on without it
            ctx.recall_cache.signal_ready(tenant, session.session_key, nonce)


def notify_provider(
    ctx: WorkerContext,
    session: SessionRecord,
    changes: Sequence[MemoryChange],
    scope: MemoryScope,
    *,
    origin: Origin = "background-review",
) -> None:
    """Tell the provider about curated-memory writes a background job made."""
    if not changes or ctx.manager.provider is None or session.incognito:
        return
    provider_ctx = ctx.provider_context(session.tenant, session)
    for event in write_events(changes, origin=origin, scope=scope):
        ctx.manager.on_memory_write(provider_ctx, event)
