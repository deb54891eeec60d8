"""Background memory review (``review`` queue): the auxiliary model reads a digest of the
conversation and may write memory. Placeholder: the body is written separately.

``review_session`` is the RQ entry (primitive arguments); :func:`review_body` receives the
worker context explicitly, like every job body.
"""

from __future__ import annotations

from gateway.tenants import TenantId
from workers.context import WorkerContext
from workers.jobs import run_job


def review_session(tenant_id: str, session_id: str) -> None:
    """RQ entry: review one session of the tenant for things worth remembering."""
    run_job("review", tenant_id, session_id, review_body)


def review_body(ctx: WorkerContext, tenant: TenantId, session_id: str) -> None:
    raise NotImplementedError("background memory review is not implemented yet")
