"""Background memory review (``review`` queue): the auxiliary model reads a digest of the
conversation and may write memory (or stage the writes when approval is on).

``review_session`` is the RQ entry (primitive arguments); :func:`review_body` receives the
worker context explicitly, like every job body. A review never schedules another review:
its writes do not pass through a turn, so they never touch the review counter.
"""

from __future__ import annotations

import asyncio

from gateway.agent.sessions import conversation_of
from gateway.memory.approval import ApprovalStore
from gateway.memory.review import ReviewOutcome, build_digest, run_review
from gateway.notices import Notice, NoticeBus, format_notice
from gateway.tenants import MemoryScope, TenantId
from workers.context import WorkerContext
from workers.jobs import notify_provider, run_job


def review_session(tenant_id: str, session_id: str) -> None:
    """RQ entry: review one session of the tenant for things worth remembering."""
    run_job("review", tenant_id, session_id, review_body)


def review_body(ctx: WorkerContext, tenant: TenantId, session_id: str) -> int:
    """Review the session; returns how many writes were applied or staged."""
    session = ctx.sessions.get_session(tenant, session_id)
    scope = conversation_of(session).memory_scope(ctx.settings.groups.memory)
    if session.incognito or scope is None:
        return 0
    digest = build_digest(ctx.sessions.messages(tenant, session_id))
    outcome = asyncio.run(_review(ctx, scope, digest))
    notify_provider(ctx, session, outcome.changes, scope, origin="background-review")
    text = format_notice(outcome, (), ctx.settings.memory.notifications)
    if text:
        NoticeBus(ctx.keys, client=ctx.redis).publish(tenant, Notice.for_session(session, text))
    return len(outcome.writes) + len(outcome.staged)


async def _review(ctx: WorkerContext, scope: MemoryScope, digest: str) -> ReviewOutcome:
    stage = ApprovalStore(ctx.db).staging_for(
        scope, origin="background-review", default=ctx.settings.memory.write_approval
    )
    async with ctx.aux_llm() as aux:
        return await run_review(aux, ctx.memory, scope, digest, stage=stage)
