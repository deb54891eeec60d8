"""Maintenance jobs (``maint`` queue): session titles, memory flush and compression.
Placeholders: the bodies are written separately.

Each ``*_session`` function is an RQ entry with primitive arguments; each ``*_body`` receives
the worker context explicitly, like every job body.
"""

from __future__ import annotations

from gateway.tenants import TenantId
from workers.context import WorkerContext
from workers.jobs import run_job


def title_session(tenant_id: str, session_id: str) -> None:
    """RQ entry: give the session a title."""
    run_job("title", tenant_id, session_id, title_body)


def flush_session(tenant_id: str, session_id: str) -> None:
    """RQ entry: let the model save memories before the session's context is dropped."""
    run_job("flush", tenant_id, session_id, flush_body)


def compress_session(tenant_id: str, session_id: str) -> None:
    """RQ entry: summarise the middle of a long session into a continuation session."""
    run_job("compress", tenant_id, session_id, compress_body)


def title_body(ctx: WorkerContext, tenant: TenantId, session_id: str) -> None:
    raise NotImplementedError("title job is not implemented yet")


def flush_body(ctx: WorkerContext, tenant: TenantId, session_id: str) -> None:
    raise NotImplementedError("memory flush job is not implemented yet")


def compress_body(ctx: WorkerContext, tenant: TenantId, session_id: str) -> None:
    raise NotImplementedError("compression job is not implemented yet")
