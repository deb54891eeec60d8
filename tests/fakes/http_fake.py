"""The one base of the fake JSON services over real HTTP on loopback: lifecycle, faults, recording.

A fake subclasses :class:`FakeHTTPServer` and implements :meth:`~FakeHTTPServer.route`
(a :class:`Request` → status and JSON payload), or sets ``routes`` — ``(method, regex,
handler)`` rows, a handler getting ``(self, match, request)`` — and keeps the default
:meth:`~FakeHTTPServer.route_table`. Tests then get:

* ``requests`` / ``calls(method, path_suffix)`` — every request received, with its headers
  and the status it was answered;
* ``fail(times, status=500, …)`` / ``drop(times, …)`` — the next matching requests answer an
  error status (and change nothing), or are handled and then have their connection closed
  without an answer (the client cannot know whether the write happened);
* ``stop()`` / ``start()`` — an outage: the fake comes back on the port it first bound.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Self
from urllib.parse import parse_qs, urlsplit

Query = dict[str, list[str]]
Answer = tuple[int, Any]
Routes = Sequence[tuple[str, re.Pattern[str], Any]]


@dataclass(frozen=True, slots=True)
class Request:
    """One request as received; ``status`` is its answer (0: dropped; unset while routing)."""

    method: str
    path: str
    query: Query
    headers: dict[str, str]  # names lower-cased
    body: Any
    status: int = 0

    def header(self, name: str) -> str:
        return self.headers.get(name.lower(), "")

    def arg(self, name: str, default: str | None = None) -> str | None:
        """The last value of query parameter ``name``."""
        values = self.query.get(name)
        return values[-1] if values else default


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


def find_route(routes: Routes, method: str, path: str) -> tuple[Any, re.Match[str]] | int:
    """The handler and match of the first row serving ``method`` on ``path``; else 405 when
    another method serves the path, else 404."""
    allowed = False
    for verb, pattern, handler in routes:
        match = pattern.fullmatch(path)
        if match is None:
            continue
        if verb == method:
            return handler, match
        allowed = True
    return 405 if allowed else 404


class FakeHTTPServer:
    """Base of the fakes; ``base_url`` is what a client should be given."""

    name = "fake"
    routes: ClassVar[Routes] = ()
    invalid_status = 422  # the answer to a body the route cannot read (a missing field…)
    error_field = "detail"  # the field of the answers the base gives, as the service names it

    def __init__(self, port: int = 0) -> None:
        self._port = port
        self.lock = threading.RLock()
        self._faults: list[_Fault] = []
        self._requests: list[Request] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- what a fake implements ----------------------------------------------------------

    def route(self, request: Request) -> Answer:
        """(status, JSON payload) of one request; runs under the fake's lock."""
        return self.route_table(request)

    def route_table(self, request: Request) -> Answer:
        """Answer from ``routes``; a path no row serves answers 404."""
        found = find_route(self.routes, request.method, request.path)
        if isinstance(found, int):
            return self.error(404, f"no route {request.method} {request.path}")
        handler, match = found
        answer: Answer = handler(self, match, request)
        return answer

    def error(self, status: int, message: str) -> Answer:
        """The answer the base gives to an injected fault or an unreadable request."""
        return status, {self.error_field: message}

    def before(self, method: str, path: str) -> None:
        """Runs outside the lock before a request is handled (e.g. to delay it)."""

    def release(self) -> None:
        """Let any request held in :meth:`before` finish (called by :meth:`stop`)."""

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> Self:
        if self._server is not None:
            raise RuntimeError(f"{self.name} already started")
        self._server = _Server(("127.0.0.1", self._port), _Handler, self)
        self._port = self._server.server_address[1]  # a restart comes back on the same port
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
        if not self._port:
            raise RuntimeError(f"{self.name} was never started")
        return f"http://127.0.0.1:{self._port}"

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
        with self.lock:
            self._faults.append(_Fault(times, status, method, path_suffix, skip))

    def drop(
        self, times: int = 1, *, method: str | None = None, path_suffix: str | None = None
    ) -> None:
        """The next ``times`` matching requests are handled, then their connection is closed
        without an answer (the client cannot know whether the write happened)."""
        self.fail(times, status=0, method=method, path_suffix=path_suffix)

    @property
    def requests(self) -> list[Request]:
        with self.lock:
            return list(self._requests)

    def calls(self, method: str, path_suffix: str = "") -> list[Request]:
        """Recorded requests with this method whose path ends with ``path_suffix``."""
        return [r for r in self.requests if r.method == method and r.path.endswith(path_suffix)]

    def clear_requests(self) -> None:
        with self.lock:
            self._requests.clear()

    # -- dispatch (called by the request handler) ----------------------------------------

    def handle(
        self, method: str, target: str, headers: dict[str, str], body: Any
    ) -> tuple[int, Any, bool]:
        """(status, payload, drop connection) for one request."""
        split = urlsplit(target)
        query = parse_qs(split.query, keep_blank_values=True)
        request = Request(method, split.path, query, headers, body)
        self.before(method, request.path)
        with self.lock:
            fault = self._take_fault(method, request.path)
            if fault is not None and fault.status:
                # the status in the message too: some clients surface only the body's text
                status, payload = self.error(fault.status, f"injected failure {fault.status}")
                dropped = False
            else:
                try:
                    status, payload = self.route(request)
                except (KeyError, TypeError, ValueError) as exc:
                    status, payload = self.error(self.invalid_status, f"bad request: {exc!r}")
                dropped = fault is not None
            self._requests.append(replace(request, status=0 if dropped else status))
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
    allow_reuse_address = True  # a restart rebinds the port at once

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
            self._send(*self.server.fake.error(400, "invalid JSON body"))
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, payload, dropped = self.server.fake.handle(self.command, self.path, headers, body)
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
