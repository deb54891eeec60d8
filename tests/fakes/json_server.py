"""A small JSON-over-HTTP fake server on loopback: route table, recording, scripted failures.

Subclass :class:`JsonFake`, set ``routes`` to ``(method, regex, handler)`` rows; a handler
gets ``(match, query, body, headers)`` and returns ``(status, payload)``. ``requests``
records every call; ``fail(times, status)`` answers the next calls with an error (to test
that writes are not retried); ``with fake:`` starts it on ``port`` (0 = any free port).
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Self
from urllib.parse import parse_qs, urlsplit

Query = dict[str, list[str]]
Reply = tuple[int, Any]
Handler = Callable[[re.Match[str], Query, Any, dict[str, str]], Reply]


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: Query
    body: Any
    headers: dict[str, str]
    status: int


class JsonFake:
    """Serve ``routes`` over HTTP; see the module docstring."""

    routes: ClassVar[list[tuple[str, re.Pattern[str], Handler]]] = []

    def __init__(self, port: int = 0) -> None:
        self._port = port
        self.lock = threading.RLock()
        self._requests: list[Recorded] = []
        self._failures: list[int] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Self:
        fake = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, payload = fake.handle(self.command, self.path, body, headers)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

        server = ThreadingHTTPServer(("127.0.0.1", self._port), _Handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        server, thread = self._server, self._thread
        if server is not None and thread is not None:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)
        self._server = self._thread = None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the fake is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[Recorded]:
        with self.lock:
            return list(self._requests)

    def calls(self, method: str, path_prefix: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and r.path.startswith(path_prefix)]

    def fail(self, times: int = 1, status: int = 503) -> None:
        with self.lock:
            self._failures.extend([status] * times)

    def handle(self, method: str, target: str, body: Any, headers: dict[str, str]) -> Reply:
        parts = urlsplit(target)
        query = parse_qs(parts.query)
        with self.lock:
            status, payload = self._answer(method, parts.path, query, body, headers)
            self._requests.append(Recorded(method, parts.path, query, body, headers, status))
        return status, payload

    def _answer(
        self, method: str, path: str, query: Query, body: Any, headers: dict[str, str]
    ) -> Reply:
        if self._failures:
            status = self._failures.pop(0)
            return status, {"detail": f"scripted failure {status}"}
        denied = self.authorize(headers)
        if denied is not None:
            return denied
        for verb, pattern, handler in self.routes:
            match = pattern.match(path)
            if verb == method and match:
                with contextlib.suppress(KeyError):
                    return handler(self, match, query, body, headers)  # type: ignore[call-arg]
                return 400, {"detail": "missing field"}
        return 404, {"detail": f"no route {method} {path}"}

    def authorize(self, headers: dict[str, str]) -> Reply | None:
        """None to let the request through; subclasses check their auth header."""
        return None
