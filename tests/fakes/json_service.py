"""A base for fake JSON services over real HTTP on loopback: routing, recording, faults.

Subclasses implement :meth:`JsonService.route`; the base serves it on a ``ThreadingHTTPServer``
(restartable on the same port, for outage tests), records every request with its headers,
and injects failures with :meth:`JsonService.fail`.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

Answer = tuple[int, Any]


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    status: int = 0

    def header(self, name: str) -> str:
        return self.headers.get(name.lower(), "")


@dataclass(slots=True)
class _Fault:
    times: int
    status: int
    path_part: str | None
    payload: Any = field(default=None)


class JsonService:
    """Serve :meth:`route` answers; ``requests`` holds everything received, in order."""

    label = "fake-service"

    def __init__(self, port: int = 0) -> None:
        self.lock = threading.RLock()
        self._port = port
        self._faults: list[_Fault] = []
        self._requests: list[Request] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def route(self, request: Request) -> Answer:
        raise NotImplementedError

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> Self:
        if self._server is not None:
            raise RuntimeError(f"{self.label} already started")
        self._server = _Server(("127.0.0.1", self._port), _Handler, self)
        self._port = self._server.server_address[1]  # a restart comes back on the same port
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), name=self.label, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
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
        return f"http://127.0.0.1:{self._port}"

    # -- scripting and inspection --------------------------------------------------------

    def fail(self, times: int = 1, *, status: int = 500, path_part: str | None = None) -> None:
        """The next ``times`` requests whose path contains ``path_part`` answer ``status``."""
        with self.lock:
            self._faults.append(_Fault(times, status, path_part))

    @property
    def requests(self) -> list[Request]:
        with self.lock:
            return list(self._requests)

    def calls(self, method: str, path_part: str) -> list[Request]:
        return [r for r in self.requests if r.method == method and path_part in r.path]

    def handle(self, method: str, target: str, headers: dict[str, str], body: Any) -> Answer:
        split = urlsplit(target)
        query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        request = Request(method, split.path, query, headers, body)
        with self.lock:
            fault = next(
                (f for f in self._faults if f.path_part is None or f.path_part in split.path),
                None,
            )
            if fault is not None:
                fault.times -= 1
                if fault.times <= 0:
                    self._faults.remove(fault)
                status, payload = fault.status, {"error": "injected failure"}
            else:
                try:
                    status, payload = self.route(request)
                except (KeyError, TypeError, ValueError) as exc:
                    status, payload = 422, {"error": f"bad request: {exc!r}"}
            self._requests.append(Request(method, split.path, query, headers, body, status))
        return status, payload


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, address: tuple[str, int], handler: type[_Handler], fake: JsonService
    ) -> None:
        super().__init__(address, handler)
        self.fake = fake


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            self._send(400, {"error": "invalid JSON"})
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, payload = self.server.fake.handle(self.command, self.path, headers, body)
        try:
            self._send(status, payload)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _send(self, status: int, payload: Any) -> None:
        data = b"" if payload is None else json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data:
            self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = _serve
