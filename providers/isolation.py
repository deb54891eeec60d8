"""Running provider calls safely: one thread per call, a timeout, failures logged and counted.

A provider's own errors (:class:`~providers.errors.ProviderError`: a server down, an HTTP
error) are logged as one WARNING line; anything else is a bug and keeps its traceback. A
blocking call cannot be interrupted, so a call that overruns is abandoned: its daemon
thread finishes (or hangs) on its own and releases its slot when it ends. At most
``max_inflight`` calls run at once; when every slot is held by a stuck call, new calls fail
at once instead of piling up threads. Nothing here raises into the caller.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future, wait
from dataclasses import dataclass, replace
from typing import Literal, ParamSpec, TypeVar

from gateway.observability import metrics
from providers.errors import ProviderError

log = logging.getLogger(__name__)

T = TypeVar("T")
P = ParamSpec("P")
Outcome = Literal["ok", "error", "timeout"]
FAILED = object()  # what IsolatedCalls.run answers when the call did not deliver


@dataclass(frozen=True, slots=True)
class MethodStats:
    """Counters of one provider method; ``errors`` and ``timeouts`` are among ``calls``."""

    calls: int = 0
    errors: int = 0
    timeouts: int = 0
    seconds: float = 0.0
    last_error: str | None = None


class ProviderStats:
    """Thread-safe counters per (provider, method), read by ``doctor`` and metrics."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[tuple[str, str], MethodStats] = {}

    def record(
        self, provider: str, method: str, outcome: Outcome, seconds: float, detail: str = ""
    ) -> None:
        metrics.provider_call(provider, method, outcome, seconds)
        with self._lock:
            row = self._rows.get((provider, method), MethodStats())
            self._rows[(provider, method)] = replace(
                row,
                calls=row.calls + 1,
                errors=row.errors + (outcome == "error"),
                timeouts=row.timeouts + (outcome == "timeout"),
                seconds=row.seconds + seconds,
                last_error=detail or row.last_error,
            )

    def get(self, provider: str, method: str) -> MethodStats:
        with self._lock:
            return self._rows.get((provider, method), MethodStats())

    def snapshot(self) -> dict[tuple[str, str], MethodStats]:
        with self._lock:
            return dict(self._rows)

    @property
    def failures(self) -> int:
        """Errors plus timeouts over every provider and method."""
        with self._lock:
            return sum(row.errors + row.timeouts for row in self._rows.values())


class IsolatedCalls:
    """Runs calls in daemon threads with a timeout, recording each outcome in ``stats``."""

    def __init__(self, timeout_s: float, max_inflight: int, stats: ProviderStats) -> None:
        if timeout_s <= 0 or max_inflight < 1:
            raise ValueError("timeout_s must be positive and max_inflight at least 1")
        self.timeout_s = timeout_s
        self.max_inflight = max_inflight
        self.stats = stats
        self._slots = threading.BoundedSemaphore(max_inflight)

    def run(
        self, provider: str, method: str, where: str, call: Callable[[], object], expected: type
    ) -> object:
        """``call()``'s result if it returns an ``expected`` in time, else :data:`FAILED`."""
        started = time.monotonic()
        if not self._slots.acquire(blocking=False):
            detail = f"all {self.max_inflight} provider calls are still running"
            log.error("memory provider %s skipped: %s", where, detail)
            self.stats.record(provider, method, "timeout", 0.0, detail)
            return FAILED
        future: Future[object] = Future()
        worker = threading.Thread(
            target=self._work, args=(call, future), name=f"provider-{method}", daemon=True
        )
        worker.start()
        wait([future], timeout=self.timeout_s)
        seconds = time.monotonic() - started
        if not future.done():
            frame = sys._current_frames().get(worker.ident or -1)
            stack = "".join(traceback.format_stack(frame)) if frame else "(finished meanwhile)"
            log.error("memory provider %s timed out after %.1fs at:\n%s", where, seconds, stack)
            self.stats.record(provider, method, "timeout", seconds, "timed out")
            return FAILED
        error = future.exception()
        if isinstance(error, ProviderError):
            # The provider said what went wrong (server down, HTTP error): one line, no
            # traceback — an outage would otherwise print one per call.
            log.warning("memory provider %s failed: %s", where, _one_line(error))
            self.stats.record(provider, method, "error", seconds, repr(error))
            return FAILED
        if error is not None:
            log.error("memory provider %s failed", where, exc_info=error)
            self.stats.record(provider, method, "error", seconds, repr(error))
            return FAILED
        result = future.result()
        if not isinstance(result, expected):
            detail = f"returned {type(result).__name__}, expected {expected.__name__}"
            log.error("memory provider %s %s", where, detail)
            self.stats.record(provider, method, "error", seconds, detail)
            return FAILED
        self.stats.record(provider, method, "ok", seconds)
        return result

    def _work(self, call: Callable[[], object], future: Future[object]) -> None:
        try:
            _settle(future, call)
        finally:
            self._slots.release()


def _one_line(error: BaseException, limit: int = 300) -> str:
    return (" ".join(str(error).split()) or type(error).__name__)[:limit]


def _settle(future: Future[T], call: Callable[[], T]) -> None:
    """Resolve ``future`` with ``call()``'s result or exception (unless it was cancelled)."""
    if future.set_running_or_notify_cancel():
        try:
            future.set_result(call())
        except BaseException as exc:  # the future must settle whatever the call does
            future.set_exception(exc)


async def off_loop(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Await ``fn`` run in a fresh daemon thread rather than the loop's shared executor.

    Meant for calls that always end in bounded time (the manager's): a stuck provider then
    holds no thread of the default pool that other ``to_thread`` users need.
    """
    future: Future[T] = Future()
    thread = threading.Thread(
        target=_settle, args=(future, lambda: fn(*args, **kwargs)), daemon=True
    )
    thread.start()
    return await asyncio.wrap_future(future)
