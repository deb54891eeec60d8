"""Hand committed outbox rows (a turn's, a session end's) to the background plane: RQ queues,
or this process.

``QueueRunner`` enqueues right after the turn commits (the relay loop re-enqueues whatever
Redis did not take). ``InlineRunner`` runs the same job bodies in worker threads of this
process, one task per turn, in the order the rows were written — for single-process setups
and the terminal. Neither delays the reply.
"""

from __future__ import annotations

import asyncio
import logging

from gateway import outbox
from gateway.agent.hooks import TurnEvent
from gateway.history.db import Database
from gateway.observability import metrics
from gateway.outbox import OutboxRow, Relay
from workers.bodies import BODIES
from workers.context import WorkerContext
from workers.queues import JOBS, one_line

log = logging.getLogger(__name__)


class QueueRunner:
    """Enqueue a turn's rows on RQ after commit, without holding up the reply.

    The rows are already durable in the outbox: if this enqueue fails or the process dies
    first, the relay loop enqueues them later.
    """

    def __init__(self, db: Database, relay: Relay) -> None:
        self.db = db
        self.relay = relay
        self._tasks: set[asyncio.Task[None]] = set()

    async def after_turn(self, event: TurnEvent) -> None:
        await self.schedule(event.outbox_ids)

    async def schedule(self, outbox_ids: list[int]) -> None:
        if outbox_ids:
            task = asyncio.create_task(asyncio.to_thread(self._enqueue, outbox_ids))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _enqueue(self, ids: list[int]) -> None:
        self.relay.enqueue_rows(outbox.get_rows(self.db, ids))

    async def drain(self) -> None:
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)


class InlineRunner:
    """Run a turn's rows in this process; failures stay pending for the next start."""

    def __init__(self, context: WorkerContext) -> None:
        self.context = context
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        context.follow_ups = self._from_job

    async def after_turn(self, event: TurnEvent) -> None:
        await self.schedule(event.outbox_ids)

    async def schedule(self, outbox_ids: list[int]) -> None:
        if outbox_ids:
            rows = await asyncio.to_thread(outbox.get_rows, self.context.db, outbox_ids)
            self._spawn(rows)

    def _from_job(self, ids: list[int]) -> None:
        """Rows a job body committed (it runs in a worker thread): run them after it."""
        if self._loop is None:  # a body run outside this runner: the rows stay pending
            log.info("outbox rows %s left for the next inline run", ids)
            return
        rows = outbox.get_rows(self.context.db, ids)
        self._loop.call_soon_threadsafe(self._spawn, rows)

    async def run_pending(self) -> None:
        """Run rows left pending by an earlier process (crash, Redis down, failure)."""
        rows = await asyncio.to_thread(outbox.pending, self.context.db, 500, redeliver_after_s=0)
        if rows:
            self._spawn(rows)

    async def drain(self) -> None:
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _spawn(self, rows: list[OutboxRow]) -> None:
        self._loop = asyncio.get_running_loop()
        task = asyncio.create_task(self._run_all(rows), name="mnemogate-inline-jobs")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_all(self, rows: list[OutboxRow]) -> None:
        for row in rows:
            await self._run(row)

    async def _run(self, row: OutboxRow) -> None:
        tenant = row.tenant
        spec = JOBS[row.kind]
        kwargs = {name: row.payload[name] for name in spec.args if name in row.payload}
        try:
            with metrics.job(row.kind):
                await asyncio.to_thread(
                    BODIES[row.kind], self.context, tenant, row.session_id, **kwargs
                )
        except Exception as exc:
            log.exception("inline %s job for %s failed", row.kind, tenant.namespace)
            await asyncio.to_thread(outbox.record_failure, self.context.db, {row.id: one_line(exc)})
            return
        await asyncio.to_thread(outbox.mark_done, self.context.db, tenant, [row.id])
