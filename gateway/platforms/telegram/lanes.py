"""Ordered dispatch of Telegram updates: in order within a chat, concurrently across chats.

Each chat gets a lane (a FIFO drained by one task) that exists only while it has work, so
memory stays flat however many chats have written. A semaphore bounds how many handlers run
at once. :meth:`ChatLanes.submit` returns a future resolved when the update's handling has
finished; that is the signal pollers and the webhook use to acknowledge it. This is also the
one error sink: a handler that raises is logged with its traceback and counts as handled
(redelivering it would only fail again). A handler cancelled by :meth:`ChatLanes.close`
leaves its future cancelled, and the update is not acknowledged.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable

from telegram import Update

log = logging.getLogger(__name__)

UpdateHandler = Callable[[Update], Awaitable[None]]
_Item = tuple[Update, "asyncio.Future[None]"]


def lane_key(update: Update) -> str:
    """Updates of one chat share a lane; updates without a chat each get their own."""
    chat = update.effective_chat
    return f"chat:{chat.id}" if chat is not None else f"update:{update.update_id}"


class ChatLanes:
    """Per-chat FIFO lanes feeding ``handle``; at most ``concurrency`` handlers at a time."""

    def __init__(self, handle: UpdateHandler, *, concurrency: int = 64) -> None:
        self._handle = handle
        self._slots = asyncio.Semaphore(concurrency)
        self._lanes: dict[str, deque[_Item]] = {}
        self._workers: set[asyncio.Task[None]] = set()
        self._inflight: dict[int, asyncio.Future[None]] = {}
        self._closing = False

    @property
    def busy(self) -> bool:
        return bool(self._inflight)

    def submit(self, update: Update) -> asyncio.Future[None]:
        """Queue ``update`` on its chat's lane; an update already queued is not queued twice."""
        if self._closing:
            raise RuntimeError("ChatLanes is closed")
        existing = self._inflight.get(update.update_id)
        if existing is not None:
            return existing
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._inflight[update.update_id] = done
        done.add_done_callback(lambda _: self._inflight.pop(update.update_id, None))
        key = lane_key(update)
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = deque()
            worker = asyncio.create_task(self._drain(key, lane), name=f"telegram-lane-{key}")
            self._workers.add(worker)
            worker.add_done_callback(self._workers.discard)
        lane.append((update, done))
        return done

    async def close(self, grace_s: float) -> None:
        """Take no more updates; let running handlers finish for ``grace_s``, then cancel."""
        self._closing = True
        workers = set(self._workers)
        if not workers:
            return
        _, late = await asyncio.wait(workers, timeout=grace_s)
        for worker in late:
            worker.cancel()
        if late:
            log.warning("cancelled %d Telegram handler(s) still running at shutdown", len(late))
            await asyncio.gather(*late, return_exceptions=True)

    async def _drain(self, key: str, lane: deque[_Item]) -> None:
        try:
            while lane and not self._closing:
                update, done = lane[0]
                async with self._slots:
                    await self._run(update)
                lane.popleft()
                if not done.done():
                    done.set_result(None)
        finally:
            for _, pending in lane:  # cancelled or closing: these were never handled
                pending.cancel()
            lane.clear()
            if self._lanes.get(key) is lane:
                del self._lanes[key]

    async def _run(self, update: Update) -> None:
        try:
            await self._handle(update)
        except Exception:
            log.exception("handling Telegram update %s failed", update.update_id)
