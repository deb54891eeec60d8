"""A fake OpenAI-compatible LLM served over real HTTP on loopback, scriptable and recording.

Tests enqueue answers (``reply``, ``tool_call``, ``fail``, ``garbage``, ``malformed``); each
``POST /v1/chat/completions`` takes the next one, else asks ``handler``, else answers
``default_reply``. Every request body is recorded. ``POST /v1/embeddings`` answers
deterministic hashed bag-of-words vectors (texts sharing words are close; see
:func:`~tests.fakes.llm_payloads.embedding_vector`) and records its inputs apart, in
``embedding_inputs``. Usage figures imitate a provider with a
prefix cache: ``cached_tokens`` is the byte length shared with the previous request, over 4.

Standalone: ``python -m tests.fakes.llm_server --port 8011 [--reply TEXT]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import socket
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from tests.fakes.llm_payloads import (
    EMBEDDING_DIMS,
    common_prefix_len,
    completion_body,
    embeddings_body,
    error_body,
    models_body,
    text_message,
    tool_message,
)

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], dict[str, Any] | str | None]


@dataclass(frozen=True)
class _Step:
    """One scripted answer: an assistant message to wrap, or a raw status and body."""

    message: dict[str, Any] | None = None
    status: int = 200
    body: bytes = b""
    retry_after: float | None = None


def orphan_tool_message(messages: list[Any]) -> str | None:
    """The error real endpoints give a ``tool`` message that answers no preceding call."""
    calls: set[str] = set()
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            calls = {str(c.get("id")) for c in message.get("tool_calls") or ()}
        elif message.get("role") == "tool" and message.get("tool_call_id") not in calls:
            return (
                f"Invalid parameter: messages[{index}] with role 'tool' must be a response to "
                "a preceeding message with 'tool_calls'."
            )
    return None


class FakeLLM:
    """The fake server; ``with FakeLLM() as llm:`` starts it on an OS-chosen port.

    ``handler`` answers when nothing is queued. It gets the request body and returns a str (a
    text reply), ``{"tool_calls": [(name, args), ...], "text": optional}``, a full response
    dict (has ``choices``; sent verbatim) or None (``default_reply``). If it raises, the
    request gets a 500 naming the exception. Requests whose body is not JSON with a
    ``messages`` list, that ask to stream, or that send a ``tool`` message answering no
    preceding tool call (as real endpoints do), get a 400 and are not recorded.
    """

    def __init__(self, *, latency_s: float = 0.0, model: str = "fake-model", port: int = 0) -> None:
        self.latency_s = latency_s
        self.model = model
        self.handler: Handler | None = None
        self.default_reply = "ok"
        self._port = port
        self._cond = threading.Condition()
        self._queue: deque[_Step] = deque()
        self._requests: list[dict[str, Any]] = []
        self._raw: list[bytes] = []
        self._headers: list[dict[str, str]] = []
        self._embedded: list[str] = []
        self._previous = b""
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> FakeLLM:
        if self._server is not None:
            raise RuntimeError("FakeLLM already started")
        self._stopping.clear()
        self._server = _Server(("127.0.0.1", self._port), _RequestHandler, self)
        # A short poll interval: stop() waits for the serve loop to notice, once per interval.
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), name="fake-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._stopping.set()
        server.shutdown()
        server.close_connections(timeout=5.0)
        server.server_close()
        thread.join(timeout=5.0)
        self._server = self._thread = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeLLM is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    # -- recordings ----------------------------------------------------------------------

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Parsed bodies received at /v1/chat/completions, oldest first (a copy)."""
        with self._cond:
            return list(self._requests)

    @property
    def raw_requests(self) -> list[bytes]:
        """The same requests' bodies exactly as received (a copy)."""
        with self._cond:
            return list(self._raw)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        """The same requests' headers, names in lower case (a copy)."""
        with self._cond:
            return [dict(headers) for headers in self._headers]

    @property
    def embedding_inputs(self) -> list[str]:
        """Every text received at /v1/embeddings, oldest first (a copy)."""
        with self._cond:
            return list(self._embedded)

    def _embed(self, body: dict[str, Any]) -> tuple[int, bytes]:
        raw = body.get("input")
        inputs = [raw] if isinstance(raw, str) else raw
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            return 400, error_body(400, "'input' must be a string or a list of strings")
        dims = body.get("dimensions") or EMBEDDING_DIMS
        with self._cond:
            self._embedded.extend(inputs)
        return 200, embeddings_body(str(body.get("model") or self.model), inputs, int(dims))

    def wait_for_requests(self, n: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        """Block until at least ``n`` requests have arrived; raise TimeoutError otherwise."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._requests) >= n, timeout):
                raise TimeoutError(
                    f"FakeLLM got {len(self._requests)} of {n} requests within {timeout}s"
                )
            return list(self._requests)

    def clear(self) -> None:
        """Forget queued answers and recorded requests (``handler`` is kept)."""
        with self._cond:
            self._queue.clear()
            self._requests.clear()
            self._raw.clear()
            self._headers.clear()
            self._embedded.clear()
            self._previous = b""

    # -- scripting -----------------------------------------------------------------------

    def reply(self, text: str) -> None:
        self._enqueue(_Step(message=text_message(text)))

    def tool_call(self, name: str, arguments: dict[str, Any], *, text: str | None = None) -> None:
        self.tool_calls([(name, arguments)], text=text)

    def tool_calls(
        self, calls: list[tuple[str, dict[str, Any]]], *, text: str | None = None
    ) -> None:
        self._enqueue(_Step(message=tool_message(calls, text)))

    def fail(
        self,
        status: int,
        *,
        times: int = 1,
        retry_after: float | None = None,
        body: str | None = None,
    ) -> None:
        """Answer the next ``times`` requests with HTTP ``status`` (an OpenAI error by default)."""
        raw = body.encode("utf-8") if body is not None else error_body(status)
        self._enqueue(_Step(status=status, body=raw, retry_after=retry_after), times)

    def garbage(self, *, times: int = 1) -> None:
        """Answer 200 with a body that is not JSON."""
        self._enqueue(_Step(body=b"<html><body>502 Bad Gateway (not JSON)</body></html>"), times)

    def malformed(self, *, times: int = 1) -> None:
        """Answer 200 with JSON that has no ``choices``."""
        body = {"id": "chatcmpl-broken", "object": "chat.completion", "model": self.model}
        self._enqueue(_Step(body=json.dumps(body).encode()), times)

    def _enqueue(self, step: _Step, times: int = 1) -> None:
        with self._cond:
            self._queue.extend([step] * times)

    # -- answering (called on server threads) --------------------------------------------

    def _record(
        self, raw: bytes, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[_Step | None, int]:
        """Record a request; return the scripted step (if any) and the cached prefix length."""
        with self._cond:
            cached = common_prefix_len(self._previous, raw)
            self._previous = raw
            self._requests.append(body)
            self._raw.append(raw)
            self._headers.append(headers)
            self._cond.notify_all()
            step = self._queue.popleft() if self._queue else None
        return step, cached

    def _answer(
        self, raw: bytes, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, bytes, dict[str, str]]:
        step, cached = self._record(raw, body, headers)
        if self.latency_s > 0:
            self._stopping.wait(self.latency_s)
        if step is None:
            step = self._unscripted(body)
        if step.message is None:
            headers = {}
            if step.retry_after is not None:
                headers["Retry-After"] = f"{step.retry_after:g}"
            return step.status, step.body, headers
        return 200, completion_body(self.model, step.message, len(raw), cached), {}

    def _unscripted(self, body: dict[str, Any]) -> _Step:
        handler = self.handler
        if handler is None:
            return _Step(message=text_message(self.default_reply))
        try:
            result = handler(body)
        except Exception as exc:
            log.exception("FakeLLM handler raised")
            return _Step(status=500, body=error_body(500, f"fake handler raised {exc!r}"))
        if result is None:
            return _Step(message=text_message(self.default_reply))
        if isinstance(result, str):
            return _Step(message=text_message(result))
        if "choices" in result:
            return _Step(body=json.dumps(result).encode())
        if "tool_calls" in result:
            calls = [(str(name), dict(args)) for name, args in result["tool_calls"]]
            return _Step(message=tool_message(calls, result.get("text")))
        return _Step(status=500, body=error_body(500, f"fake handler returned {result!r}"))


class _Server(ThreadingHTTPServer):
    """ThreadingHTTPServer that can close its keep-alive connections on shutdown."""

    daemon_threads = True
    block_on_close = False  # close_connections() joins, with a timeout
    request_queue_size = 256
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handler: type[_RequestHandler], fake: FakeLLM):
        super().__init__(address, handler)
        self.fake = fake
        self._live: dict[socket.socket, threading.Thread] = {}
        self._live_lock = threading.Lock()

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        with self._live_lock:
            self._live[request] = threading.current_thread()
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._live_lock:
                self._live.pop(request, None)

    def close_connections(self, timeout: float) -> None:
        with self._live_lock:
            live = list(self._live.items())
        for conn, _ in live:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        for _, thread in live:
            thread.join(timeout)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that hang up mid-answer (timeouts in tests) are expected; stay quiet.
        log.debug("FakeLLM connection from %s ended with an error", client_address, exc_info=True)


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self._send(200, models_body(self.server.fake.model))
        else:
            self._not_found()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") == "/v1/embeddings":
            try:
                request = json.loads(raw)
            except ValueError:
                request = None
            if not isinstance(request, dict):
                self._send(400, error_body(400, "We could not parse the JSON body."))
                return
            self._send(*self.server.fake._embed(request))
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._not_found()
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._send(400, error_body(400, "We could not parse the JSON body of your request."))
            return
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self._send(400, error_body(400, "'messages' is a required property"))
            return
        if body.get("stream"):
            self._send(400, error_body(400, "FakeLLM does not stream"))
            return
        orphan = orphan_tool_message(body["messages"])
        if orphan is not None:
            self._send(400, error_body(400, orphan))
            return
        received = {name.lower(): value for name, value in self.headers.items()}
        status, payload, headers = self.server.fake._answer(raw, body, received)
        self._send(status, payload, headers)

    def _not_found(self) -> None:
        message = f"Unknown request URL: {self.command} {self.path}."
        self._send(404, error_body(404, message, code="unknown_url"))

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        is_json = payload[:1] in (b"{", b"[")
        self.send_header("Content-Type", "application/json" if is_json else "text/html")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("FakeLLM %s", format % args)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a fake OpenAI-compatible LLM.")
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--reply", default="ok", help="the answer to every request")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before answering")
    parser.add_argument("--model", default="fake-model")
    args = parser.parse_args(argv)
    fake = FakeLLM(latency_s=args.latency, model=args.model, port=args.port)
    fake.default_reply = args.reply
    with fake:
        print(f"fake LLM serving {fake.base_url} (model {fake.model}); Ctrl-C stops", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
