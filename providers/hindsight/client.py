"""The Hindsight client: the real ``hindsight-client`` SDK, driven from synchronous code.

The SDK is asynchronous (aiohttp) and its sync wrappers run each call on the calling
thread's event loop. Provider calls arrive on short-lived worker threads, so that would
create an event loop per thread and share one aiohttp session across them — which aiohttp
refuses. Instead this client owns one event loop on one daemon thread and submits every
call there; callers wait with a deadline a little beyond the SDK's own timeout.

Three SDK instances share that loop, one per timeout class: ``recall`` (short: it runs
before a reply is ready), ``retain`` (long: extraction runs an LLM) and ``reflect``. Writes
are never retried (the SDK retries only idempotent reads on 429/503, ``max_attempts``).
Errors become :class:`HindsightCallError` with the HTTP status when there is one.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from gateway.settings import HindsightSettings

log = logging.getLogger(__name__)
T = TypeVar("T")
GRACE_S = 2.0  # beyond the SDK timeout before a caller stops waiting
RECALL_TYPES = ["observation", "world"]


class HindsightCallError(Exception):
    """A Hindsight call failed; ``status`` is the HTTP status (None: no answer)."""

    def __init__(self, operation: str, message: str, status: int | None = None) -> None:
        super().__init__(f"hindsight {operation}: {message}")
        self.status = status

    @property
    def not_found(self) -> bool:
        return self.status == 404


@dataclass(frozen=True, slots=True)
class Memory:
    """One recalled memory unit."""

    text: str
    type: str


class HindsightClient:
    """Synchronous calls on a private event loop (see the module docstring)."""

    def __init__(self, settings: HindsightSettings) -> None:
        from hindsight_client import Hindsight  # the extra; imported on first use only

        if not settings.base_url:
            raise ValueError("hindsight.base_url (HINDSIGHT_API_URL) is not set")
        key = settings.api_key.get_secret_value() if settings.api_key else None
        self.settings = settings
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="hindsight-loop", daemon=True
        )
        self._thread.start()

        def sdk(timeout: float, attempts: int) -> Any:
            return Hindsight(
                base_url=settings.base_url or "",
                api_key=key,
                timeout=timeout,
                user_agent="mnemogate",
                max_attempts=attempts,
            )

        self._read = sdk(settings.recall_timeout_s, 1 + settings.read_retries)
        self._write = sdk(settings.retain_timeout_s, 1)
        self._reflect = sdk(settings.reflect_timeout_s, 1)

    def retain(
        self,
        bank: str,
        content: str,
        *,
        context: str,
        metadata: dict[str, str],
        timestamp: datetime | None = None,
        document_id: str | None = None,
        append: bool = False,
        background: bool = False,
    ) -> None:
        """Store ``content`` in ``bank`` (created by the server if new); never retried."""
        self._run(
            "retain",
            self.settings.retain_timeout_s,
            lambda: self._write.aretain(
                bank_id=bank,
                content=content,
                timestamp=timestamp,
                context=context,
                document_id=document_id,
                metadata=metadata,
                update_mode="append" if append and document_id else None,
                retain_async=background,
            ),
        )

    def document_text(self, bank: str, document_id: str) -> str | None:
        """The stored text of a document; None when the document (or bank) does not exist."""
        try:
            doc = self._run(
                "document",
                self.settings.recall_timeout_s,
                lambda: self._read.documents.get_document(
                    bank, document_id, _request_timeout=self.settings.recall_timeout_s
                ),
            )
        except HindsightCallError as exc:
            if exc.not_found:
                return None
            raise
        return str(doc.original_text or "")

    def recall(self, bank: str, query: str, budget: str, max_tokens: int) -> list[Memory]:
        """Observations and world facts for ``query``; [] when the bank does not exist yet."""
        try:
            answer = self._run(
                "recall",
                self.settings.recall_timeout_s,
                lambda: self._read.arecall(
                    bank_id=bank,
                    query=query,
                    types=RECALL_TYPES,
                    max_tokens=max_tokens,
                    budget=budget,
                    prefer_observations=True,
                ),
            )
        except HindsightCallError as exc:
            if exc.not_found:
                return []
            raise
        return [Memory(r.text, r.type or "") for r in answer.results]

    def reflect(self, bank: str, query: str, budget: str) -> str | None:
        """A reasoned answer from the bank's memories; None when the bank does not exist."""
        try:
            answer = self._run(
                "reflect",
                self.settings.reflect_timeout_s,
                lambda: self._reflect.areflect(bank_id=bank, query=query, budget=budget),
            )
        except HindsightCallError as exc:
            if exc.not_found:
                return None
            raise
        return str(answer.text)

    def delete_bank(self, bank: str) -> int | None:
        """Delete ``bank``: how many memories went (0 if unknown); None when there was none."""
        try:
            answer = self._run(
                "delete bank",
                self.settings.retain_timeout_s,
                lambda: self._write.adelete_bank(bank),
            )
        except HindsightCallError as exc:
            if exc.not_found:
                return None
            raise
        return int(getattr(answer, "deleted_count", None) or 0)

    def version(self) -> str:
        answer = self._run(
            "version", self.settings.recall_timeout_s, lambda: self._read.aget_version()
        )
        return str(answer.api_version)

    def close(self) -> None:
        for sdk in (self._read, self._write, self._reflect):
            try:
                self._submit(sdk.aclose()).result(timeout=GRACE_S)
            except Exception as exc:  # closing is best effort: the process may be going away
                log.debug("hindsight: closing a client session failed: %s", exc)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=GRACE_S)
        if not self._thread.is_alive():
            self._loop.close()

    def _submit(self, coro: Coroutine[Any, Any, T]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def _run(self, operation: str, timeout: float, call: Callable[[], Awaitable[T]]) -> T:
        from hindsight_client_api.exceptions import ApiException

        async def guarded() -> T:
            return await call()

        future = self._submit(guarded())
        try:
            result: T = future.result(timeout=timeout + GRACE_S)
            return result
        except FutureTimeout:
            future.cancel()
            raise HindsightCallError(operation, f"no answer within {timeout:g} s") from None
        except ApiException as exc:
            reason = str(exc.reason or "error")
            raise HindsightCallError(operation, f"HTTP {exc.status} {reason}", exc.status) from exc
        except HindsightCallError:
            raise
        except Exception as exc:  # aiohttp connection errors, SDK timeouts, bad answers
            raise HindsightCallError(operation, f"{type(exc).__name__}: {exc}") from exc
