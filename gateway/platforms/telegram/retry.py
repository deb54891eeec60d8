"""Telegram flood control: wait the ``retry_after`` Telegram names, then try again (bounded)."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import warnings
from collections.abc import Awaitable, Callable
from typing import TypeVar

from telegram.error import RetryAfter
from telegram.warnings import PTBDeprecationWarning

log = logging.getLogger(__name__)

T = TypeVar("T")

SEND_ATTEMPTS = 4
MAX_RETRY_AFTER_S = 120.0


def retry_after_seconds(exc: RetryAfter) -> float:
    """Seconds to wait, whether PTB reports an int (v22) or a timedelta (later versions)."""
    with warnings.catch_warnings():
        # PTB 22.2+ warns on every read that the type will become timedelta; both are handled.
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = exc.retry_after
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    return float(value)


async def with_flood_retry(
    call: Callable[[], Awaitable[T]],
    *,
    what: str,
    attempts: int = SEND_ATTEMPTS,
    max_wait_s: float = MAX_RETRY_AFTER_S,
) -> T:
    """Run ``call``; on ``RetryAfter`` sleep as told and retry, at most ``attempts`` times.

    A wait longer than ``max_wait_s`` is not sat out: the ``RetryAfter`` is raised for the
    caller to report, as is the last one when the attempts run out.
    """
    for attempt in range(1, attempts + 1):
        try:
            return await call()
        except RetryAfter as exc:
            delay = retry_after_seconds(exc)
            if attempt == attempts or delay > max_wait_s:
                raise
            log.warning("Telegram flood control on %s: retrying in %.1f s", what, delay)
            await asyncio.sleep(delay)
    raise AssertionError("unreachable: the last attempt returns or raises")
