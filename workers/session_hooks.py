"""RQ jobs that tell the provider a session ended, or that another one took its place.

Both run on the ``sync`` queue. The end job first runs the session's sync (under the
session's sync lock, idempotent), so the provider has every turn before it hears of the
end — Supermemory ingests the whole session then, OpenViking commits it. A provider call
that fails or times out raises :class:`~workers.jobs.JobFailed`, so RQ retries the job;
the sync part of a retry only sends what is still behind the pointer. Outbox rows are
written by :mod:`gateway.history.endings` in the transaction that ended the session.
"""

from __future__ import annotations

import logging
from typing import Literal, cast, get_args

from gateway.errors import NotFound
from gateway.history.records import SessionRecord
from gateway.tenants import TenantId
from providers.base import SessionEnd, SessionSwitch
from workers.context import WorkerContext
from workers.jobs import JobFailed, run_job, sync_body

log = logging.getLogger(__name__)

EndReason = Literal["new", "reset", "idle", "shutdown", "resume", "compression"]
SwitchReason = Literal["new", "resume", "compression"]
END_REASONS: tuple[str, ...] = get_args(EndReason)
SWITCH_REASONS: tuple[str, ...] = get_args(SwitchReason)


def end_session(tenant_id: str, session_id: str, reason: str = "new") -> bool:
    """RQ entry (``sync`` queue): sync what is left of the session, then ``on_session_end``."""
    return run_job(
        "session_end",
        tenant_id,
        session_id,
        lambda ctx, tenant, sid: end_body(ctx, tenant, sid, reason=reason),
    )


def switch_session(
    tenant_id: str, session_id: str, previous: str = "", reason: str = "new"
) -> bool:
    """RQ entry (``sync`` queue): ``on_session_switch`` for the session that took over."""
    return run_job(
        "session_switch",
        tenant_id,
        session_id,
        lambda ctx, tenant, sid: switch_body(ctx, tenant, sid, previous=previous, reason=reason),
    )


def _session(ctx: WorkerContext, tenant: TenantId, session_id: str) -> SessionRecord | None:
    """The session if the provider may hear of it (exists, not private, a provider is set)."""
    if ctx.manager.provider is None:
        return None
    try:
        session = ctx.sessions.get_session(tenant, session_id)
    except NotFound:  # erased meanwhile: nothing left to tell
        return None
    return None if session.incognito else session


def end_body(ctx: WorkerContext, tenant: TenantId, session_id: str, *, reason: str) -> bool:
    """Whether the provider was told (False: nothing to tell)."""
    if reason not in END_REASONS:
        raise ValueError(f"unknown session end reason {reason!r}")
    session = _session(ctx, tenant, session_id)
    if session is None:
        return False
    sync_body(ctx, tenant, session_id)  # every turn first; raises (→ retry) if it cannot
    provider_ctx = ctx.provider_context(tenant, session)
    if not ctx.manager.initialize(provider_ctx):
        raise JobFailed(f"provider could not initialize {tenant.namespace}/{session_id}")
    end = SessionEnd(session_id, cast(EndReason, reason))
    if not ctx.manager.on_session_end(provider_ctx, end):
        raise JobFailed(f"provider did not take the end of {tenant.namespace}/{session_id}")
    return True


def switch_body(
    ctx: WorkerContext, tenant: TenantId, session_id: str, *, previous: str, reason: str
) -> bool:
    """Whether the provider was told (False: nothing to tell)."""
    if reason not in SWITCH_REASONS:
        raise ValueError(f"unknown session switch reason {reason!r}")
    session = _session(ctx, tenant, session_id)
    if session is None:
        return False
    provider_ctx = ctx.provider_context(tenant, session)
    if not ctx.manager.initialize(provider_ctx):
        raise JobFailed(f"provider could not initialize {tenant.namespace}/{session_id}")
    switch = SessionSwitch(previous, cast(SwitchReason, reason))
    if not ctx.manager.on_session_switch(provider_ctx, switch):
        raise JobFailed(f"provider did not take the switch to {tenant.namespace}/{session_id}")
    return True
