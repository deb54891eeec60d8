"""The plumbing of a fake JSON API over real HTTP on loopback: lifecycle, faults, recording.

A fake subclasses :class:`FakeHTTPServer` and implements :meth:`~FakeHTTPServer.route`
(method, path, query, JSON body → status and JSON payload). Tests then get:

* ``requests`` / ``calls(method, path_suffix)`` — every request received, with its status;
* ``fail(times, status=500, …)`` / ``drop(times, …)`` — the next matching requests answer an
  error status (and change nothing), or are handled and then have their connection closed
  without an answer (the client cannot know whether the write happened);
* ``stop()`` / ``start()`` — an outage, on the same port when one was given.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

Query = dict[str, list[str]]


@dataclass(frozen=True, slots=True)
class Recorded:
    method: str
    path: str
    query: Query
    body: Any
    status: int  # 0: the connection was dropped


@dataclass
class _Fault:
    times: int
    status: int  # 0: drop the connection
    method: str | None
    path_suffix: str | None
    skip: int = 0  # matching requests to let through first

    def matches(self, method: str, path: str) -> bool:
        return (self.method is None or self.method == method) and (
            self.path_suffix is None or path.endswith(self.path_suffix)
        )


class FakeHTTPServer:
    """Base of the fakes; ``base_url`` is what a client should be given."""

    name = "fake"

    def __init__(self, port: int = 0) -> None:
        self._port = port
        self._lock = threading.RLock()
        self._faults: list[_Fault] = []
        self._requests: list[Recorded] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- what a fake implements ----------------------------------------------------------

    def route(self, method: str, path: str, query: Query, body: Any) -> tuple[int, Any]:
        """(status, JSON payload) of one request; runs under the fake's lock."""
        raise NotImplementedError

    def before(self, method: str, path: str) -> None:
        """Runs outside the lock before a request is handled (e.g. to delay it)."""

    def release(self) -> None:
        """Let any request held in :meth:`before` finish (called by :meth:`stop`)."""

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> Self:
        if self._server is not None:
            raise RuntimeError(f"{type(self).__name__} already started")
        self._server = _Server(("127.0.0.1", self._port), _Handler, self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), name=self.name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self.release()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5.0)
        self._server = self._thread = None

    def __enter__(self) -> Self:
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
            raise RuntimeError(f"{type(self).__name__} is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # -- scripting and inspection --------------------------------------------------------

    def fail(
        self,
        times: int = 1,
        *,
        status: int = 500,
        method: str | None = None,
        path_suffix: str | None = None,
        skip: int = 0,
    ) -> None:
        """The next ``times`` matching requests (after ``skip`` more) get ``status`` and
        change nothing."""
        with self._lock:
            self._faults.append(_Fault(times, status, method, path_suffix, skip))

    def drop(
        self, times: int = 1, *, method: str | None = None, path_suffix: str | None = None
    ) -> None:
        """The next ``times`` matching requests are handled, then their connection is closed
        without an answer (the client cannot know whether the write happened)."""
        self.fail(times, status=0, method=method, path_suffix=path_suffix)

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    def calls(self, method: str, path_suffix: str) -> list[Recorded]:
        """Recorded requests with this method whose path ends with ``path_suffix``."""
        return [r for r in self.requests if r.method == method and r.path.endswith(path_suffix)]

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    # -- dispatch (called by the request handler) ----------------------------------------

    def handle(self, method: str, target: str, body: Any) -> tuple[int, Any, bool]:
        """(status, payload, drop connection) for one request."""
        split = urlsplit(target)
        path, query = split.path, parse_qs(split.query, keep_blank_values=True)
        self.before(method, path)
        with self._lock:
            fault = self._take_fault(method, path)
            if fault is not None and fault.status:
                status, payload, dropped = fault.status, {"detail": "injected failure"}, False
            else:
                status, payload = self.route(method, path, query, body)
                dropped = fault is not None
            self._requests.append(Recorded(method, path, query, body, 0 if dropped else status))
        return status, payload, dropped

    def _take_fault(self, method: str, path: str) -> _Fault | None:
        for fault in self._faults:
            if fault.matches(method, path):
                if fault.skip > 0:
                    fault.skip -= 1
                    return None
                fault.times -= 1
                if fault.times <= 0:
                    self._faults.remove(fault)
                return fault
        return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, address: tuple[str, int], handler: type[_Handler], fake: FakeHTTPServer
    ) -> None:
        super().__init__(address, handler)
        self.fake = fake


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body leave at once: no 40 ms ACK stalls
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return  # keep test output quiet

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            self._send(422, {"detail": [{"loc": ["body"], "msg": "JSON decode error"}]})
            return
        status, payload, dropped = self.server.fake.handle(self.command, self.path, body)
        if dropped:
            self.close_connection = True
            return
        try:
            self._send(status, payload)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (its timeout) before the answer

    def _send(self, status: int, payload: Any) -> None:
        data = b"" if payload is None else json.dumps(payload).encode("utf-8")
        self.send_response(status)
        if data:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data:
            self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve
