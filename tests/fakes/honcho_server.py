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
import re
import threading
from collections.abc import Callable
from typing import Any

from tests.fakes.honcho_payloads import Query, WorkspaceRec
from tests.fakes.honcho_world import Answer, NotFound, Params, World
from tests.fakes.http_fake import FakeHTTPServer, Request, find_route

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


class FakeHoncho(FakeHTTPServer):
    """The fake server; ``base_url`` is what an SDK client should be given."""

    name = "fake-honcho"

    def __init__(self, port: int = 0) -> None:
        super().__init__(port)
        self.world = World()
        self.chat_delay_s = 0.0
        self.chat_gate: threading.Event | None = None

    def before(self, method: str, path: str) -> None:
        if not path.endswith("/chat"):
            return
        gate, delay = self.chat_gate, self.chat_delay_s
        if gate is not None:
            gate.wait(timeout=30.0)
        elif delay > 0:
            threading.Event().wait(delay)

    def release(self) -> None:
        if self.chat_gate is not None:
            self.chat_gate.set()  # release any held dialectic so its thread can finish

    def set_summary(self, session_id: str, text: str) -> None:
        with self.lock:
            for ws in self.world.workspaces.values():
                if session_id in ws.sessions:
                    ws.sessions[session_id].summary = text

    def route(self, request: Request) -> Answer:
        method, path, body = request.method, request.path, request.body
        if method == "POST" and path == "/v3/workspaces":
            return self.world.create_workspace(body or {})
        found = find_route(ROUTES, method, path)
        if found == 405:
            return 405, {"detail": "Method Not Allowed"}
        if isinstance(found, int):
            return 404, {"detail": "Not Found"}
        handler, match = found
        params = {k: v for k, v in match.groupdict().items() if k != "ws"}
        try:
            ws = self.world.workspace(match.group("ws"))
            answer: Answer = handler(self.world, ws, params, request.query, body)
        except NotFound as exc:
            return 404, {"detail": str(exc)}
        except (KeyError, TypeError, ValueError) as exc:
            return 422, {"detail": [{"loc": ["body"], "msg": repr(exc), "type": "value"}]}
        return answer


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve a fake Honcho v3 API on loopback.")
    parser.add_argument("--port", type=int, default=8000)
    port = parser.parse_args().port
    with FakeHoncho(port=port) as fake:
        print(f"fake Honcho at {fake.base_url}", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
