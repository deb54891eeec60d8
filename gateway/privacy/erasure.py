"""Erase a tenant from every store (SPEC §11): ``/forgetme`` and ``mnemogate tenants forget``.

Order, so that nothing queued can bring data back: the tenant's RQ jobs (found by
``meta["tenant"]`` in every queue and registry of the deployment; running jobs cannot be
stopped and are reported), then state.db in one transaction with ``secure_delete`` on (index
rows, messages, sessions, outbox, pending writes, preferences, access rows, any other table's
rows with the tenant's ``tenant_id``, the tenant record; then the index is optimised and the
WAL checkpointed), then ``tenants/<namespace>/``, then the tenant's Redis keys (SCAN on
``RedisKeys.tenant_pattern``), then the provider through an optional callback. A store that
fails is listed in the report and the others are still erased; erasing twice is harmless.

``/forgetme`` asks for confirmation first: :func:`request_erasure` issues a one-time code
valid for :data:`CONFIRM_TTL_S`, :func:`confirm_erasure` uses it up.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

import redis
from rq import Queue
from rq.job import Job, JobStatus
from rq.registry import (
    CanceledJobRegistry,
    DeferredJobRegistry,
    FailedJobRegistry,
    FinishedJobRegistry,
    ScheduledJobRegistry,
    StartedJobRegistry,
)
from rq.results import Result

from gateway import access, outbox
from gateway.errors import MnemogateError
from gateway.history.db import Database
from gateway.history.fts import optimize, unindex_tenant
from gateway.keys import RedisKeys
from gateway.pairing import new_code, normalize_code
from gateway.privacy.export import opened_database
from gateway.provider_scopes import SqliteScopeRegistry, provider_services
from gateway.settings import Settings
from gateway.tenants import TenantId, tenant_dir
from providers.registry import build_manager
from workers import queues
from workers.queues import QUEUE_ORDER, one_line, queue_name

log = logging.getLogger(__name__)
ProviderForget = Callable[[TenantId], int]
"""Erases the tenant at the provider and returns how many items it removed; raises
NotImplementedError when the provider's API cannot erase."""
CONFIRM_TTL_S = 300.0
CONFIRM_LENGTH = 6
_REMOVABLE = (
    ScheduledJobRegistry,
    DeferredJobRegistry,
    FailedJobRegistry,
    FinishedJobRegistry,
    CanceledJobRegistry,
)
# Tables whose tenant rows _erase_sqlite erases by name; any other table with a tenant_id
# column is swept generically, so a store added later is not forgotten.
_KNOWN = {"messages", "sessions", "outbox", "pending_writes", "tenant_prefs", "tenants"}
_KNOWN |= {"access_grants", "pairing_codes", "erasure_confirmations"}
# Kept while the provider still holds data (so erasure can be retried); see _forget_scopes.
_KNOWN |= {"provider_scopes"}
# Links name the account in account_id (erasing a linked account detaches it) and the
# owner in tenant_id (erasing the owner detaches everyone linked to it).
_KNOWN |= {"account_links"}


@dataclass(slots=True)
class ErasureReport:
    """What was erased (counts per store) and what could not be (store → reason)."""

    tenant: TenantId
    erased: dict[str, int] = field(default_factory=dict)
    not_erased: dict[str, str] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return not self.not_erased

    def lines(self) -> list[str]:
        out = [f"Erased for {self.tenant}:"]
        out.extend(f"  {what}: {count}" for what, count in self.erased.items())
        out.extend(f"Could not erase {what}: {why}" for what, why in self.not_erased.items())
        return out


def _erase_sqlite(conn: sqlite3.Connection, tenant: TenantId) -> dict[str, int]:
    tid = str(tenant)
    counts = {"index rows": unindex_tenant(conn, tenant)}
    counts["messages"] = conn.execute("DELETE FROM messages WHERE tenant_id = ?", (tid,)).rowcount
    counts["sessions"] = conn.execute("DELETE FROM sessions WHERE tenant_id = ?", (tid,)).rowcount
    counts["outbox rows"] = outbox.forget_tenant(conn, tenant)
    counts["pending writes"] = conn.execute(
        "DELETE FROM pending_writes WHERE tenant_id = ?", (tid,)
    ).rowcount
    counts["preferences"] = conn.execute(
        "DELETE FROM tenant_prefs WHERE tenant_id = ?", (tid,)
    ).rowcount
    counts["access records"] = access.erase_tenant(conn, tenant)
    counts["access records"] += conn.execute(
        "DELETE FROM erasure_confirmations WHERE tenant_id = ?", (tid,)
    ).rowcount
    counts["account links"] = conn.execute(
        "DELETE FROM account_links WHERE account_id = ? OR tenant_id = ?", (tid, tid)
    ).rowcount
    conn.execute("UPDATE link_codes SET claimant_id = NULL WHERE claimant_id = ?", (tid,))
    tables = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
    ).fetchall()
    for (table,) in tables:
        quoted = '"' + table.replace('"', '""') + '"'
        columns = {row[1] for row in conn.execute(f"PRAGMA table_info({quoted})")}
        if table not in _KNOWN and "tenant_id" in columns:
            deleted = conn.execute(f"DELETE FROM {quoted} WHERE tenant_id = ?", (tid,)).rowcount
            if deleted:
                counts[f"{table} rows"] = deleted
    counts["tenant record"] = conn.execute("DELETE FROM tenants WHERE id = ?", (tid,)).rowcount
    return counts


def _erase_database(db: Database, tenant: TenantId, report: ErasureReport) -> None:
    conn = db.connection()
    previous = int(conn.execute("PRAGMA secure_delete").fetchone()[0])
    conn.execute("PRAGMA secure_delete = ON")  # overwrite freed pages instead of leaving them
    try:
        report.erased.update(db.write(lambda c: _erase_sqlite(c, tenant)))
        db.write(optimize)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except (MnemogateError, sqlite3.Error) as exc:
        log.exception("erasure of %s: state.db failed", tenant.namespace)
        report.not_erased["database records"] = one_line(exc)
    finally:
        conn.execute(f"PRAGMA secure_delete = {previous}")


def _erase_files(settings: Settings, tenant: TenantId, report: ErasureReport) -> None:
    root = tenant_dir(settings.home, tenant)
    try:
        count = sum(len(files) for _, _, files in os.walk(root))
        if root.exists() or root.is_symlink():
            if root.is_symlink():
                root.unlink()
            else:
                shutil.rmtree(root)
        report.erased["files"] = count
    except OSError as exc:
        report.not_erased["files"] = f"{root}: {exc.strerror or exc}"


def _owned_by(job_id: str, namespace: str) -> bool:
    """A job id ``<kind>-<namespace>-…`` of this tenant (for ids whose job hash is gone)."""
    _kind, _, rest = job_id.partition("-")
    return rest.startswith(namespace + "-")


def _erase_jobs(
    connection: redis.Redis, settings: Settings, tenant: TenantId, report: ErasureReport
) -> int:
    """Delete the tenant's jobs from every queue and registry; how many were deleted.

    Running jobs cannot be stopped: they are listed in the report as not erased.
    """
    deleted = running = 0
    for name in QUEUE_ORDER:
        queue = Queue(queue_name(settings.redis_prefix, name), connection=connection)
        registries = [kind(queue.name, connection=connection) for kind in _REMOVABLE]
        ids = set(queue.get_job_ids())
        ids.update(StartedJobRegistry(queue.name, connection=connection).get_job_ids())
        for registry in registries:
            ids.update(registry.get_job_ids())
        ordered = sorted(ids)
        for job_id, job in zip(
            ordered, Job.fetch_many(ordered, connection=connection), strict=True
        ):
            if job is None:  # only a dangling id is left; it may name the tenant
                mine = _owned_by(job_id, tenant.namespace)
            else:
                mine = job.meta.get("tenant") == tenant.namespace
            if not mine:
                continue
            if job is not None and job.get_status(refresh=False) == JobStatus.STARTED:
                running += 1
                continue
            if job is not None:
                job.delete(remove_from_queue=True)
                Result.delete_all(job)
                deleted += 1
            queue.remove(job_id)
            for registry in registries:
                registry.remove(job_id)
    if running:
        report.not_erased["running jobs"] = (
            f"{running} job(s) still running; erase again once they finish"
        )
    return deleted


def _erase_keys(connection: redis.Redis, settings: Settings, tenant: TenantId) -> int:
    keys = RedisKeys(settings.redis_prefix)
    removed = 0
    batch: list[bytes | str] = []
    for key in connection.scan_iter(match=keys.tenant_pattern(tenant), count=500):
        batch.append(key)
        if len(batch) >= 500:
            removed += _unlink(connection, batch)
    removed += _unlink(connection, batch)
    connection.lrem(keys.notices_ready(), 0, tenant.namespace)
    return removed


def _unlink(connection: redis.Redis, batch: list[bytes | str]) -> int:
    """UNLINK the keys of ``batch`` and empty it; how many existed."""
    if not batch:
        return 0
    removed = cast(int, connection.unlink(*batch))  # a sync client answers an int
    batch.clear()
    return removed


def _erase_provider(
    settings: Settings,
    tenant: TenantId,
    forget: ProviderForget | None,
    report: ErasureReport,
    registry: SqliteScopeRegistry | None,
) -> None:
    """Erase at the provider first, while the scope registry still lists the tenant's keys."""
    if forget is None:
        if not settings.memory.provider:
            _forget_scopes(tenant, registry, report)
            return
        forget = _configured_provider(settings, report, registry)
    try:
        report.erased["provider items"] = forget(tenant)
    except NotImplementedError as exc:
        report.not_erased["provider data"] = f"the provider cannot erase data ({exc})".replace(
            " ()", ""
        )
    except Exception as exc:  # the provider is outside our control; report, do not stop
        log.exception("erasure of %s: provider failed", tenant.namespace)
        report.not_erased["provider data"] = f"provider erasure failed: {one_line(exc)}"
    if not any(key.startswith("provider data") for key in report.not_erased):
        _forget_scopes(tenant, registry, report)


def _forget_scopes(
    tenant: TenantId, registry: SqliteScopeRegistry | None, report: ErasureReport
) -> None:
    """Drop the scope records once nothing is left at the provider (kept for a retry else)."""
    if registry is not None:
        report.erased["provider scope records"] = registry.forget_tenant(tenant)


def _configured_provider(
    settings: Settings, report: ErasureReport, registry: SqliteScopeRegistry | None
) -> ProviderForget:
    """The configured provider's own ``erase`` over every recorded scope of the tenant."""

    def forget(tenant: TenantId) -> int:
        services = provider_services(registry.db) if registry else None
        manager = build_manager(settings, services)
        try:
            removed, leftovers = manager.erase(tenant)
        finally:
            manager.shutdown()
        if leftovers:
            report.not_erased["provider data (partly)"] = "; ".join(leftovers)
        return removed

    return forget


def forget_tenant(
    settings: Settings,
    tenant: TenantId,
    *,
    redis_client: redis.Redis | None = None,
    provider_forget: ProviderForget | None = None,
    db: Database | None = None,
) -> ErasureReport:
    """Erase ``tenant`` from every store (see module docstring); never raises for one store.

    ``redis_client`` must return bytes (RQ needs them); without one, a client is opened on
    ``settings.redis_url`` and closed again. ``db`` defaults to opening state.db.
    """
    report = ErasureReport(tenant)
    connection = redis_client if redis_client is not None else _open_client(settings)
    try:
        redis_up = _erase_redis(
            report, "queued jobs", lambda: _erase_jobs(connection, settings, tenant, report)
        )
        try:
            with opened_database(settings, db) as opened:
                registry = SqliteScopeRegistry(opened)
                _erase_provider(settings, tenant, provider_forget, report, registry)
                _erase_database(opened, tenant, report)
        except MnemogateError as exc:  # state.db could not even be opened
            report.not_erased["database records"] = one_line(exc)
            if not any(key.startswith("provider") for key in report.erased):
                _erase_provider(settings, tenant, provider_forget, report, None)
        _erase_files(settings, tenant, report)
        if redis_up:
            _erase_redis(report, "redis keys", lambda: _erase_keys(connection, settings, tenant))
        else:
            report.not_erased["redis keys"] = report.not_erased["queued jobs"]
    finally:
        if redis_client is None:
            connection.close()
    return report


def _open_client(settings: Settings) -> redis.Redis:
    return queues.redis_client(settings.redis_url)


def _erase_redis(report: ErasureReport, what: str, step: Callable[[], int]) -> bool:
    """Run one Redis step into the report; False when Redis could not be reached."""
    try:
        report.erased[what] = step()
    except redis.RedisError as exc:
        report.not_erased[what] = f"Redis unreachable ({one_line(exc)})"
        return False
    return True


def request_erasure(
    db: Database, tenant: TenantId, *, clock: Callable[[], float] = time.time
) -> tuple[str, float]:
    """A fresh one-time confirmation code for the tenant and when it expires."""
    code = new_code(CONFIRM_LENGTH)
    expires = clock() + CONFIRM_TTL_S
    db.write(
        lambda c: c.execute(
            "INSERT INTO erasure_confirmations (tenant_id, code, expires_at) VALUES (?, ?, ?) "
            "ON CONFLICT(tenant_id) DO UPDATE SET code = excluded.code, "
            "expires_at = excluded.expires_at",
            (str(tenant), code, expires),
        )
    )
    return code, expires


def confirm_erasure(
    db: Database, tenant: TenantId, code: str, *, clock: Callable[[], float] = time.time
) -> bool:
    """True (and the code is used up) when ``code`` is the tenant's live confirmation code."""
    wanted = normalize_code(code)

    def consume(conn: sqlite3.Connection) -> bool:
        cur = conn.execute(
            "DELETE FROM erasure_confirmations WHERE tenant_id = ? AND code = ? AND expires_at > ?",
            (str(tenant), wanted, clock()),
        )
        return cur.rowcount > 0

    return db.write(consume)


def forget_identity(
    settings: Settings,
    accounts: list[TenantId],
    *,
    redis_client: redis.Redis | None = None,
    db: Database | None = None,
) -> ErasureReport:
    """Erase a linked identity: the owner tenant (``accounts[0]``, whose erasure also drops
    the links into it) and then each linked account's own data; one summed report."""
    total = ErasureReport(accounts[0])
    for account in accounts:
        part = forget_tenant(settings, account, redis_client=redis_client, db=db)
        for what, count in part.erased.items():
            total.erased[what] = total.erased.get(what, 0) + count
        for what, why in part.not_erased.items():
            total.not_erased[f"{what} ({account})"] = why
    return total
