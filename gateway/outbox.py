"""The transactional outbox: background work recorded with the turn, relayed to RQ after commit.

A turn writes its messages and its outbox rows in one SQLite transaction (:func:`add` runs
inside the caller's transaction), then hands the new rows to :meth:`Relay.enqueue_rows`.
If Redis is down the rows simply stay open; :meth:`Relay.run_forever` re-enqueues them
when it is back. Nothing is lost, and nothing runs twice: job ids are deterministic per row
(or per unit of work), RQ refuses a second job with the same id, and the jobs are idempotent.

A row is *open* until ``done_at`` is set, which happens when

* its job succeeds (the job wrapper marks the rows named in ``job.meta["outbox"]``; a sync
  job also closes every sync row of its session that its pass covered), or
* the relay finds its job finished, or failed for good and not safe to repeat — the failure
  then sits in RQ's FailedJobRegistry for the operator and ``last_error`` says so.

:func:`pending` lists open rows never enqueued, or enqueued more than ``redeliver_after_s``
ago (the relay then checks what became of the job and re-enqueues it if it vanished).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast, get_args

import redis
from redis.exceptions import LockError

from gateway.history.db import Database
from gateway.settings import JobsSettings
from gateway.tenants import TenantId
from workers.queues import JOBS, ConnectionHealth, JobKind, JobQueues, Primitive, one_line

log = logging.getLogger(__name__)

KINDS: tuple[JobKind, ...] = get_args(JobKind)
_COLUMNS = (
    "id, tenant_id, session_id, kind, payload, created_at, enqueued_at, attempts, last_error, "
    "done_at"
)


@dataclass(frozen=True, slots=True)
class OutboxRow:
    id: int
    tenant: TenantId
    session_id: str
    kind: JobKind
    payload: dict[str, Primitive]
    created_at: float
    enqueued_at: float | None = None
    attempts: int = 0
    last_error: str | None = None
    done_at: float | None = None


def _row(row: sqlite3.Row) -> OutboxRow:
    return OutboxRow(
        id=int(row["id"]),
        tenant=TenantId.parse(row["tenant_id"]),
        session_id=row["session_id"],
        kind=cast(JobKind, row["kind"]),
        payload=json.loads(row["payload"]),
        created_at=row["created_at"],
        enqueued_at=row["enqueued_at"],
        attempts=row["attempts"],
        last_error=row["last_error"],
        done_at=row["done_at"],
    )


def add(
    conn: sqlite3.Connection,
    tenant: TenantId,
    session_id: str,
    kind: JobKind,
    payload: Mapping[str, Primitive] | None = None,
) -> int:
    """Record background work inside the caller's open transaction; the new row's id."""
    if kind not in KINDS:
        raise ValueError(f"unknown outbox kind {kind!r}; expected one of {KINDS}")
    data = dict(payload or {})
    bad = sorted(k for k, v in data.items() if not isinstance(v, str | int | float | bool | None))
    if bad:
        raise ValueError(f"outbox payload values must be primitives; not {', '.join(bad)}")
    cur = conn.execute(
        "INSERT INTO outbox (tenant_id, session_id, kind, payload, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (str(tenant), session_id, kind, json.dumps(data, ensure_ascii=False), time.time()),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid


def get_rows(db: Database, ids: Sequence[int]) -> list[OutboxRow]:
    """The rows with these ids, in id order (what a turn passes to the relay after commit)."""
    if not ids:
        return []
    marks = ", ".join("?" * len(ids))
    rows = db.read(
        lambda c: c.execute(
            f"SELECT {_COLUMNS} FROM outbox WHERE id IN ({marks}) ORDER BY id", tuple(ids)
        ).fetchall()
    )
    return [_row(r) for r in rows]


def pending(
    db: Database,
    limit: int,
    *,
    redeliver_after_s: float,
    after_id: int = 0,
    now: float | None = None,
) -> list[OutboxRow]:
    """Open rows never enqueued or enqueued more than ``redeliver_after_s`` ago, oldest first.

    ``after_id`` pages through one pass (rows with a larger id only).
    """
    cutoff = (time.time() if now is None else now) - redeliver_after_s
    rows = db.read(
        lambda c: c.execute(
            f"SELECT {_COLUMNS} FROM outbox WHERE done_at IS NULL AND id > ? "
            "AND (enqueued_at IS NULL OR enqueued_at <= ?) ORDER BY id LIMIT ?",
            (after_id, cutoff, limit),
        ).fetchall()
    )
    return [_row(r) for r in rows]


def mark_enqueued(db: Database, ids: Iterable[int]) -> None:
    """RQ holds a job for each row: one more attempt, no error, not listed again for a while."""
    params = [(time.time(), i) for i in ids]
    if params:
        db.write(
            lambda c: c.executemany(
                "UPDATE outbox SET enqueued_at = ?, attempts = attempts + 1, last_error = NULL "
                "WHERE id = ? AND done_at IS NULL",
                params,
            )
        )


def record_failure(db: Database, errors: Mapping[int, str]) -> None:
    """Enqueueing these rows failed (e.g. Redis down): count the attempt, keep them open."""
    params = [(error[:500], i) for i, error in errors.items()]
    if params:
        db.write(
            lambda c: c.executemany(
                "UPDATE outbox SET attempts = attempts + 1, last_error = ? "
                "WHERE id = ? AND done_at IS NULL",
                params,
            )
        )


def mark_done(
    db: Database, tenant: TenantId, ids: Iterable[int], *, error: str | None = None
) -> int:
    """Close the tenant's rows with these ids; how many were still open."""
    params = [(time.time(), error, str(tenant), i) for i in ids]
    if not params:
        return 0
    return db.write(
        lambda c: (
            c.executemany(
                "UPDATE outbox SET done_at = ?, last_error = COALESCE(?, last_error) "
                "WHERE tenant_id = ? AND id = ? AND done_at IS NULL",
                params,
            ).rowcount
        )
    )


def last_row_id(db: Database, tenant: TenantId, session_id: str, kind: JobKind) -> int:
    """The newest row id of this kind for the session (0 when there is none)."""
    row = db.read(
        lambda c: c.execute(
            "SELECT COALESCE(MAX(id), 0) FROM outbox WHERE tenant_id = ? AND session_id = ? "
            "AND kind = ?",
            (str(tenant), session_id, kind),
        ).fetchone()
    )
    return int(row[0])


def mark_session_done(
    db: Database, tenant: TenantId, session_id: str, kind: JobKind, *, through_id: int | None = None
) -> int:
    """Close the session's open rows of ``kind`` (those with id ≤ ``through_id``, if given)."""
    limit = through_id if through_id is not None else -1

    def close(conn: sqlite3.Connection) -> int:
        return conn.execute(
            "UPDATE outbox SET done_at = ? WHERE tenant_id = ? AND session_id = ? "
            "AND kind = ? AND done_at IS NULL AND (? < 0 OR id <= ?)",
            (time.time(), str(tenant), session_id, kind, limit, limit),
        ).rowcount

    return db.write(close)


def backlog(db: Database) -> tuple[int, float | None]:
    """Open rows and the creation time of the oldest one (operators' backlog figure)."""
    row = db.read(
        lambda c: c.execute(
            "SELECT COUNT(*), MIN(created_at) FROM outbox WHERE done_at IS NULL"
        ).fetchone()
    )
    return int(row[0]), row[1]


def purge_done(db: Database, older_than: float) -> int:
    """Delete rows closed before the timestamp ``older_than``; how many went."""
    return db.write(
        lambda c: (
            c.execute(
                "DELETE FROM outbox WHERE done_at IS NOT NULL AND done_at < ?", (older_than,)
            ).rowcount
        )
    )


def forget_tenant(conn: sqlite3.Connection, tenant: TenantId) -> int:
    """Delete every row of the tenant inside the caller's transaction (erasure)."""
    return conn.execute("DELETE FROM outbox WHERE tenant_id = ?", (str(tenant),)).rowcount


@dataclass
class _Settle:
    enqueued: list[int] = field(default_factory=list)
    done: dict[TenantId, list[int]] = field(default_factory=lambda: defaultdict(list))
    gave_up: dict[TenantId, list[int]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[int, str] = field(default_factory=dict)


class Relay:
    """Moves outbox rows onto RQ queues: right after a commit, and periodically as a safety net.

    Synchronous (SQLite and RQ are); the gateway calls :meth:`enqueue_rows` off the event
    loop. Several gateways may run the loop: a Redis lock lets one pass run at a time, and
    a row enqueued twice still yields one job (same job id).
    """

    def __init__(
        self,
        db: Database,
        queues: JobQueues,
        settings: JobsSettings,
        *,
        redeliver_after_s: float | None = None,
        batch: int = 200,
    ) -> None:
        self.db = db
        self.queues = queues
        self.settings = settings
        # A job still in RQ is only looked at again after this long; default: a job's time
        # limit plus RQ's own detection of abandoned jobs, so RQ retries first.
        self.redeliver_after_s = (
            redeliver_after_s if redeliver_after_s is not None else settings.job_timeout_s + 120
        )
        self.batch = batch
        self.health = ConnectionHealth(log, "outbox relay")

    def enqueue_rows(self, rows: Sequence[OutboxRow]) -> int:
        """Hand rows to RQ; never raises. Rows left open on error. How many were settled."""
        settle = _Settle()
        for index, row in enumerate(rows):
            try:
                result = self.queues.enqueue_payload(
                    row.kind, row.tenant, row.session_id, row.payload, outbox_id=row.id
                )
            except redis.RedisError as exc:
                self.health.failed(exc)
                for rest in rows[index:]:
                    settle.errors[rest.id] = f"redis: {one_line(exc)}"
                break
            except Exception as exc:  # a malformed row must not hold back the others
                log.exception(
                    "outbox row %s (%s for %s) could not be enqueued",
                    row.id,
                    row.kind,
                    row.tenant.namespace,
                )
                settle.errors[row.id] = f"{type(exc).__name__}: {one_line(exc)}"
                continue
            self.health.ok()
            if result.outcome in ("enqueued", "active"):
                settle.enqueued.append(row.id)
            elif result.outcome == "finished":
                settle.done[row.tenant].append(row.id)
            else:
                settle.gave_up[row.tenant].append(row.id)
                log.warning(
                    "job %s failed for good; left in RQ's failed registry (%s)",
                    result.job_id,
                    self.queues.name(JOBS[row.kind].queue),
                )
        return self._record(settle)

    def _record(self, settle: _Settle) -> int:
        try:
            mark_enqueued(self.db, settle.enqueued)
            for tenant, ids in settle.done.items():
                mark_done(self.db, tenant, ids)
            for tenant, ids in settle.gave_up.items():
                mark_done(self.db, tenant, ids, error="job failed; see RQ's failed job registry")
            record_failure(self.db, settle.errors)
        except Exception:  # the jobs are in RQ; the rows are simply looked at again later
            log.exception("outbox: could not record what was enqueued")
        settled = len(settle.enqueued) + sum(len(v) for v in settle.done.values())
        return settled + sum(len(v) for v in settle.gave_up.values())

    def run_once(self, *, redeliver_after_s: float | None = None) -> int:
        """One relay pass over pending rows under the relay lock; how many rows were settled.

        ``redeliver_after_s`` overrides how old an enqueue must be before its job is looked
        at again (0 after Redis came back empty: every open row at once).
        """
        redeliver = self.redeliver_after_s if redeliver_after_s is None else redeliver_after_s
        lock = self.queues.connection.lock(
            self.queues.keys.relay_lock(),
            timeout=max(30.0, 4 * self.settings.relay_interval_s),
            blocking=False,
        )
        try:
            if not lock.acquire():
                return 0  # another gateway is relaying right now
        except redis.RedisError as exc:
            self.health.failed(exc)
            return 0
        try:
            total = last_id = 0
            while True:
                rows = pending(self.db, self.batch, redeliver_after_s=redeliver, after_id=last_id)
                settled = self.enqueue_rows(rows)
                total += settled
                if settled < len(rows) or len(rows) < self.batch:
                    return total
                last_id = rows[-1].id
        finally:
            # Expired, or Redis gone: the lock times out on its own.
            with contextlib.suppress(LockError, redis.RedisError):
                lock.release()

    async def run_forever(self, stop: asyncio.Event) -> None:
        """Relay every ``jobs.relay_interval_s`` until ``stop`` is set."""
        while not stop.is_set():
            try:
                await asyncio.to_thread(self.run_once)
            except Exception:
                log.exception("outbox relay pass failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.settings.relay_interval_s)
