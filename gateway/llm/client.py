"""HTTP client for an OpenAI-compatible chat-completions endpoint: requests and retries.

One :class:`LLMClient` per configured model (``role`` names it in logs and errors: "main",
"auxiliary"). It speaks ``POST {base_url}/chat/completions`` with tools and
``GET {base_url}/models``, which OpenAI, OpenRouter, vLLM, llama.cpp server and Ollama all
offer. Transient failures (connection errors, timeouts, 429 and 502/503/504/500) are retried
with exponential backoff and jitter, honouring ``Retry-After``; everything else surfaces at
once as an :class:`~gateway.errors.LLMError`. Reading the answer lives in
:mod:`gateway.llm.parse`. The API key is sent only in the ``Authorization`` header and is
scrubbed from every error message and log line.
"""

from __future__ import annotations

import json
import logging
import random
import time
from types import TracebackType
from typing import Any

import httpx
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from gateway.errors import LLMBadResponse, LLMError, LLMUnavailable
from gateway.llm.parse import NotACompletion, parse_completion, parse_retry_after
from gateway.llm.types import Completion
from gateway.observability import metrics
from gateway.settings import LLMSettings

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
RETRY_AFTER_STATUSES = frozenset({429, 503})
MAX_RETRY_AFTER_S = 30.0
MAX_BACKOFF_S = 20.0
EXCERPT_CHARS = 200


class _Transient(Exception):
    """One attempt failed in a way worth retrying; converted to LLMUnavailable when exhausted."""

    def __init__(self, reason: str, *, status: int | None = None, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.retry_after = retry_after


class LLMClient:
    """Async chat-completions client; use as ``async with LLMClient(settings) as llm``.

    The underlying ``httpx.AsyncClient`` (and its connection pool) is opened on first use and
    released by :meth:`aclose`. ``transport`` replaces the network layer (tests, proxies);
    ``backoff_s`` is the first retry delay, doubled on every further attempt.
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        role: str = "main",
        backoff_s: float = 0.5,
    ) -> None:
        self._settings = settings
        self._transport = transport
        self._role = role
        self._backoff_s = backoff_s
        self._http: httpx.AsyncClient | None = None
        self._secret = settings.api_key.get_secret_value() if settings.api_key else ""

    @property
    def model(self) -> str | None:
        return self._settings.model

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close pooled connections; the client may be used again afterwards."""
        if self._http is not None:
            http, self._http = self._http, None
            await http.aclose()

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """Ask the model for the next assistant message.

        ``messages`` and ``tools`` are serialised exactly as given (no key sorting, no
        reordering) so that a stable prefix stays byte-identical and the provider's prompt
        cache can serve it.
        """
        base_url, model = self._endpoint()
        body: dict[str, Any] = {"model": model, "messages": messages}
        if tools:
            body["tools"] = tools
        if tool_choice is not None:
            body["tool_choice"] = tool_choice
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if self._settings.temperature is not None:
            body["temperature"] = self._settings.temperature
        body["stream"] = False
        payload = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

        retrying = AsyncRetrying(
            stop=stop_after_attempt(self._settings.max_retries + 1),
            wait=self._wait,
            retry=retry_if_exception_type(_Transient),
            before_sleep=self._log_retry,
            reraise=True,
        )
        url = f"{base_url}/chat/completions"
        started = time.perf_counter()
        try:
            response: httpx.Response = await retrying(self._post_once, url, payload)
        except _Transient as exc:
            attempts = self._settings.max_retries + 1
            raise LLMUnavailable(
                self._scrub(
                    f"LLM ({self._role}) at {base_url} failed after {attempts} attempt(s): "
                    f"{exc.reason}"
                ),
                status=exc.status,
            ) from None
        completion = self._parse(response)
        metrics.llm_call(model, completion.usage, time.perf_counter() - started)
        return completion

    async def ping(self) -> str:
        """One ``GET {base_url}/models`` without retries; a one-line description for doctor."""
        base_url, model = self._endpoint()
        try:
            response = await self._client().get(f"{base_url}/models", headers=self._headers())
        except httpx.HTTPError as exc:
            reason = _describe_transport_error(exc, self._settings)
            raise LLMUnavailable(
                self._scrub(f"LLM ({self._role}) at {base_url}: {reason}")
            ) from None
        if response.status_code in (404, 405):
            return f"reachable; /models not offered (HTTP {response.status_code})"
        if response.status_code in (401, 403):
            raise LLMError(
                self._scrub(
                    f"LLM ({self._role}) at {base_url} refused the credentials "
                    f"(HTTP {response.status_code}): {_error_message(response)}; "
                    "check MNEMOGATE_LLM__API_KEY"
                ),
                status=response.status_code,
            )
        if response.is_error:
            raise LLMError(
                self._scrub(
                    f"LLM ({self._role}) at {base_url} answered HTTP {response.status_code} "
                    f"to /models: {_error_message(response)}"
                ),
                status=response.status_code,
            )
        try:
            listed = [entry["id"] for entry in response.json()["data"]]
        except (ValueError, KeyError, TypeError):
            raise LLMBadResponse(
                self._scrub(
                    f"LLM ({self._role}) at {base_url}: /models did not answer a model list "
                    f"(does base_url need /v1?): {_excerpt(response.text)}"
                ),
                status=response.status_code,
            ) from None
        if model in listed:
            return f"reachable, model {model} listed"
        shown = ", ".join(str(name) for name in listed[:5]) or "none"
        return f"reachable, but model {model} is not among the {len(listed)} listed ({shown})"

    # -- internals --------------------------------------------------------------------------

    def _endpoint(self) -> tuple[str, str]:
        base_url, model = self._settings.base_url, self._settings.model
        if not base_url or not model:
            aux = "" if self._role == "main" else " (MNEMOGATE_AUX_LLM__* for the auxiliary model)"
            raise LLMUnavailable(
                f"the {self._role} LLM is not configured: set MNEMOGATE_LLM__BASE_URL "
                f"(e.g. http://127.0.0.1:11434/v1) and MNEMOGATE_LLM__MODEL{aux}"
            )
        return base_url, model

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            timeout = httpx.Timeout(
                self._settings.timeout_s, connect=self._settings.connect_timeout_s
            )
            # The pool bounds concurrent model calls; httpx's default (100) would cap a busy
            # gateway at 100 turns in flight, so it is a setting.
            limits = httpx.Limits(
                max_connections=self._settings.max_connections,
                max_keepalive_connections=min(self._settings.max_connections, 100),
            )
            self._http = httpx.AsyncClient(
                transport=self._transport, timeout=timeout, limits=limits
            )
        return self._http

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._secret:
            headers["Authorization"] = f"Bearer {self._secret}"
        return headers

    async def _post_once(self, url: str, payload: bytes) -> httpx.Response:
        try:
            response = await self._client().post(url, content=payload, headers=self._headers())
        except httpx.UnsupportedProtocol as exc:
            raise LLMUnavailable(self._scrub(f"LLM ({self._role}) at {url}: {exc}")) from None
        except httpx.HTTPError as exc:
            raise _Transient(_describe_transport_error(exc, self._settings)) from None
        status = response.status_code
        if status in RETRY_STATUSES:
            retry_after = None
            if status in RETRY_AFTER_STATUSES:
                retry_after = parse_retry_after(response.headers.get("Retry-After"))
            raise _Transient(
                f"HTTP {status}: {_error_message(response)}", status=status, retry_after=retry_after
            )
        if status >= 300:
            raise LLMError(
                self._scrub(
                    f"LLM ({self._role}) answered HTTP {status}: {_error_message(response)}"
                ),
                status=status,
            )
        return response

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Transient) and exc.retry_after is not None:
            return min(exc.retry_after, MAX_RETRY_AFTER_S)
        exponential = self._backoff_s * 2 ** (state.attempt_number - 1)
        return min(exponential, MAX_BACKOFF_S) + random.uniform(0, self._backoff_s)

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        delay = state.next_action.sleep if state.next_action else 0.0
        log.warning(
            "LLM (%s) attempt %d failed (%s); retrying in %.2fs",
            self._role,
            state.attempt_number,
            self._scrub(str(exc)),
            delay,
        )

    def _parse(self, response: httpx.Response) -> Completion:
        try:
            return parse_completion(response.json())
        except NotACompletion as exc:
            what = str(exc)
        except ValueError:
            what = "body is not JSON"
        raise LLMBadResponse(
            self._scrub(
                f"LLM ({self._role}) answered something that is not a chat completion "
                f"({what}): {_excerpt(response.text)}"
            ),
            status=response.status_code,
        )

    def _scrub(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret else text


def _error_message(response: httpx.Response) -> str:
    """The server's own explanation: ``{"error": {"message": ...}}`` when present."""
    try:
        data = response.json()
    except ValueError:
        return _excerpt(response.text) or response.reason_phrase
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return _excerpt(error["message"])
        if isinstance(error, str):
            return _excerpt(error)
        if isinstance(data.get("message"), str):
            return _excerpt(data["message"])
    return _excerpt(response.text)


def _describe_transport_error(exc: httpx.HTTPError, settings: LLMSettings) -> str:
    if isinstance(exc, httpx.ConnectTimeout):
        return f"could not connect within {settings.connect_timeout_s:g}s"
    if isinstance(exc, httpx.TimeoutException):
        return f"no answer within {settings.timeout_s:g}s ({type(exc).__name__})"
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect ({str(exc) or 'connection refused'})"
    return f"{type(exc).__name__}: {exc}"


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1] + "…"
