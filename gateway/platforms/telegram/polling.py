"""Long polling that acknowledges a Telegram update only after it has been handled.

Telegram confirms every update below the ``offset`` of a ``getUpdates`` call, so PTB's
``Updater`` (which asks for the next batch while the previous one is still being handled)
would lose in-flight messages if the process died. :class:`Poller` instead sends as offset
the lowest update id whose handling has not finished. Telegram therefore keeps returning
updates that are still in flight; they are recognised by id and not dispatched twice.
While anything is in flight, Telegram answers ``getUpdates`` at once, so the loop waits for
a handler to finish (or :data:`BUSY_POLL_S`) between calls instead of spinning; new
messages for other chats then arrive with at most that delay. Intake can run at most one
batch (:data:`BATCH_LIMIT` updates) ahead of the oldest unfinished update.

A batch holding an update PTB cannot parse would make ``Bot.get_updates`` fail as a whole
and block the chat forever; :class:`TolerantUpdatesRequest` logs such an update and
replaces it by its bare ``update_id``, which the adapter skips and acknowledges.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Any

from telegram import Bot, Update
from telegram.error import InvalidToken, RetryAfter, TelegramError, TimedOut
from telegram.request import HTTPXRequest

from gateway.platforms.telegram.lanes import ChatLanes
from gateway.platforms.telegram.retry import retry_after_seconds
from gateway.platforms.telegram.translate import MalformedUpdate, parse_update

log = logging.getLogger(__name__)

BUSY_POLL_S = 0.5
MAX_BACKOFF_S = 30.0
BATCH_LIMIT = 100


class TolerantUpdatesRequest(HTTPXRequest):
    """The ``getUpdates`` transport: malformed updates become ``{"update_id": n}``."""

    @staticmethod
    def parse_json_payload(payload: bytes) -> dict[str, Any]:
        data = HTTPXRequest.parse_json_payload(payload)
        result = data.get("result")
        if isinstance(result, list):
            data["result"] = [_checked(item) for item in result]
        return data


def _checked(item: Any) -> Any:
    try:
        parse_update(item, None)
    except MalformedUpdate as exc:
        log.warning("skipping a Telegram update: %s (data: %.500r)", exc, item)
        if exc.update_id is None:
            return {"update_id": -1}  # cannot be acknowledged by id; dropped below
        return {"update_id": exc.update_id}
    return item


class Poller:
    """Feeds ``lanes`` from ``getUpdates`` until :meth:`stop`; see the module docstring."""

    def __init__(
        self,
        bot: Bot,
        lanes: ChatLanes,
        *,
        timeout_s: int,
        allowed_updates: Sequence[str],
    ) -> None:
        self._bot = bot
        self._lanes = lanes
        self._timeout_s = timeout_s
        self._allowed = list(allowed_updates)
        self._pending: dict[int, asyncio.Future[None]] = {}  # dispatched, not finished
        self._finished: set[int] = set()  # finished but not yet below the offset
        self._highest: int | None = None
        self._progress = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def next_offset(self) -> int | None:
        """Lowest unfinished update id, else one past the highest seen (None: nothing yet)."""
        if self._pending:
            return min(self._pending)
        return None if self._highest is None else self._highest + 1

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="telegram-poller")

    async def stop(self, grace_s: float) -> None:
        """Stop fetching, give handlers ``grace_s``, then confirm what was handled."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await self._lanes.close(grace_s)
        offset = self.next_offset()
        if offset is None:
            return
        try:  # one last call so handled updates are not delivered again after a restart
            await self._bot.get_updates(offset=offset, limit=1, timeout=0)
        except TelegramError as exc:
            log.warning("could not confirm handled Telegram updates at shutdown: %s", exc)

    async def _run(self) -> None:
        backoff = 1.0
        while True:
            self._progress.clear()
            busy = bool(self._pending)
            try:
                updates = await self._bot.get_updates(
                    offset=self.next_offset(),
                    limit=BATCH_LIMIT,
                    timeout=0 if busy else self._timeout_s,
                    allowed_updates=self._allowed,
                )
            except RetryAfter as exc:
                await asyncio.sleep(retry_after_seconds(exc))
                continue
            except TimedOut:
                continue  # the long poll outlived the read timeout: just ask again
            except InvalidToken:
                log.critical("Telegram rejected the bot token; polling stopped")
                return
            except TelegramError as exc:  # network trouble, 5xx, a webhook still set (409)
                log.warning("getUpdates failed (%s); retrying in %.0f s", exc, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                continue
            except Exception:
                log.exception("getUpdates failed unexpectedly; retrying in %.0f s", backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_S)
                continue
            backoff = 1.0
            for update in updates:
                self._admit(update)
            if self._pending:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._progress.wait(), BUSY_POLL_S)

    def _admit(self, update: Update) -> None:
        update_id = update.update_id
        if update_id < 0:
            return
        offset = self.next_offset()
        if offset is not None and update_id < offset and update_id not in self._pending:
            return  # already handled and confirmed
        if update_id in self._pending or update_id in self._finished:
            return  # still in flight, or handled but not yet confirmable
        self._highest = update_id if self._highest is None else max(self._highest, update_id)
        done = self._lanes.submit(update)
        self._pending[update_id] = done
        done.add_done_callback(lambda future: self._finish(update_id, future))

    def _finish(self, update_id: int, future: asyncio.Future[None]) -> None:
        if future.cancelled():
            return  # never handled: it stays pending so the offset does not pass it
        self._pending.pop(update_id, None)
        self._finished.add(update_id)
        offset = self.next_offset()
        if offset is not None:
            self._finished = {done for done in self._finished if done >= offset}
        self._progress.set()
