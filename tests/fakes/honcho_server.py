"""A fake Honcho v3 server over real HTTP on loopback: stateful, scriptable and recording.

``with FakeHoncho() as honcho:`` serves the routes the ``honcho-ai`` SDK uses (see the
table :data:`ROUTES`) from :class:`~tests.fakes.honcho_world.World`, answering with the
status codes and field sets of the real 3.0.12 server. For tests it offers:

* ``requests`` — every request received (method, path, query, JSON body, status);
* ``fail(times, status=500, …)`` / ``drop(times, …)`` — the next matching requests answer
  an error status or have their connection closed without an answer;
* ``chat_delay_s`` and ``chat_gate`` — dialectic latency: each ``…/chat`` waits the delay,
  or until the gate (a ``threading.Event``) is set;
* ``set_summary(session_id, text)`` — a session summary, as Honcho's summarizer would write.

Standalone: ``python -m tests.fakes.honcho_server --port 8000``.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes.honcho_payloads import Query, WorkspaceRec
from tests.fakes.honcho_world import Answer, NotFound, Params, World

Route = Callable[[World, WorkspaceRec, Params, Query, Any], Answer]
_WS = r"/v3/workspaces/(?P<ws>[^/]+)"
_S = _WS + r"/sessions/(?P<session>[^/]+)"
_P = _WS + r"/peers/(?P<peer>[^/]+)"
ROUTES: list[tuple[str, re.Pattern[str], Route]] = [
    (method, re.compile(f"^{pattern}$"), handler)
    for method, pattern, handler in [
        ("POST", _WS + "/peers/list", World.list_peers),
        ("POST", _WS + "/peers", World.create_peer),
        ("PUT", _P, World.update_peer),
        ("POST", _P + "/sessions", World.peer_sessions),
        ("POST", _P + "/chat", World.chat),
        ("POST", _P + "/representation", World.representation),
        ("GET", _P + "/card", World.get_card),
        ("PUT", _P + "/card", World.set_card),
        ("GET", _P + "/context", World.peer_context),
        ("POST", _P + "/search", World.search_peer),
        ("POST", _WS + "/sessions/list", World.list_sessions),
        ("POST", _WS + "/sessions", World.create_session),
        ("DELETE", _S, World.delete_session),
        ("POST", _S + "/peers", World.add_session_peers),
        ("GET", _S + "/peers", World.session_peers),
        ("GET", _S + "/peers/(?P<peer>[^/]+)/config", World.get_peer_config),
        ("PUT", _S + "/peers/(?P<peer>[^/]+)/config", World.set_peer_config),
        ("POST", _S + "/messages", World.add_messages),
        ("POST", _S + "/messages/list", World.list_messages),
        ("GET", _S + "/context", World.session_context),
        ("GET", _S + "/summaries", World.summaries),
        ("POST", _S + "/search", World.search_session),
        ("POST", _WS + "/search", World.search_workspace),
        ("GET", _WS + "/queue/status", World.queue_status),
        ("POST", _WS + "/conclusions", World.create_conclusions),
        ("POST", _WS + "/conclusions/list", World.list_conclusions),
        ("POST", _WS + "/conclusions/query", World.query_conclusions),
        ("DELETE", _WS + "/conclusions/(?P<conclusion>[^/]+)", World.delete_conclusion),
    ]
]


@dataclass(frozen=True, slots=True)
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
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


class FakeHoncho:
    """The fake server; ``base_url`` is what an SDK client should be given."""

    def __init__(self, port: int = 0) -> None:
        self.world = World()
        self.chat_delay_s = 0.0
        self.chat_gate: threading.Event | None = None
        self._port = port
        self._lock = threading.RLock()
        self._faults: list[_Fault] = []
        self._requests: list[Recorded] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> FakeHoncho:
        if self._server is not None:
            raise RuntimeError("FakeHoncho already started")
        self._server = _Server(("127.0.0.1", self._port), _Handler, self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), name="fake-honcho", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        if self.chat_gate is not None:
            self.chat_gate.set()  # release any held dialectic so its thread can finish
        server.shutdown()
        server.server_close()
        thread.join(timeout=5.0)
        self._server = self._thread = None

    def __enter__(self) -> FakeHoncho:
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
            raise RuntimeError("FakeHoncho is not running")
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

    def set_summary(self, session_id: str, text: str) -> None:
        with self._lock:
            for ws in self.world.workspaces.values():
                if session_id in ws.sessions:
                    ws.sessions[session_id].summary = text

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
        if path.endswith("/chat"):
            self._wait_for_chat()
        with self._lock:
            fault = self._take_fault(method, path)
            if fault is not None and fault.status:
                status, payload, dropped = fault.status, {"detail": "injected failure"}, False
            else:
                status, payload = self._route(method, path, query, body)
                dropped = fault is not None
            self._requests.append(Recorded(method, path, query, body, 0 if dropped else status))
        return status, payload, dropped

    def _wait_for_chat(self) -> None:
        gate, delay = self.chat_gate, self.chat_delay_s
        if gate is not None:
            gate.wait(timeout=30.0)
        elif delay > 0:
            threading.Event().wait(delay)

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

    def _route(self, method: str, path: str, query: Query, body: Any) -> Answer:
        if method == "POST" and path == "/v3/workspaces":
            return self.world.create_workspace(body or {})
        allowed = False
        for verb, pattern, handler in ROUTES:
            match = pattern.match(path)
            if match is None:
                continue
            allowed = True
            if verb != method:
                continue
            params = {k: v for k, v in match.groupdict().items() if k != "ws"}
            try:
                ws = self.world.workspace(match.group("ws"))
                return handler(self.world, ws, params, query, body)
            except NotFound as exc:
                return 404, {"detail": str(exc)}
            except (KeyError, TypeError, ValueError) as exc:
                return 422, {"detail": [{"loc": ["body"], "msg": repr(exc), "type": "value"}]}
        if allowed:
            return 405, {"detail": "Method Not Allowed"}
        return 404, {"detail": "Not Found"}


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[_Handler], fake: FakeHoncho) -> None:
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

    do_GET = do_POST = do_PUT = do_DELETE = _serve


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve a fake Honcho v3 API on loopback.")
    parser.add_argument("--port", type=int, default=8000)
    port = parser.parse_args().port
    with FakeHoncho(port=port) as fake:
        print(f"fake Honcho at {fake.base_url}", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
