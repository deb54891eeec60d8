"""The health and metrics endpoint: ``/metrics``, ``/healthz`` and ``/readyz`` over HTTP.

One daemon thread serves requests one at a time (scrapes and probes are rare and short), so
the readiness checks reuse a single SQLite connection and Redis client. ``/healthz``: the
process is alive. ``/readyz``: 200 with ``ready`` or 503 with the reason, from the role's
readiness function (see :mod:`gateway.observability.readiness`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest

from gateway.errors import ConfigError

log = logging.getLogger(__name__)
Readiness = Callable[[], tuple[bool, str]]


def parse_listen(listen: str) -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    return host.strip("[]") or "0.0.0.0", int(port)


class HealthServer:
    """Serves the three endpoints on ``listen`` (``host:port``; port 0 picks a free one)."""

    def __init__(
        self, listen: str, ready: Readiness, registry: CollectorRegistry = REGISTRY
    ) -> None:
        self.ready = ready
        self.registry = registry
        try:
            self._server = HTTPServer(parse_listen(listen), self._handler())
        except OSError as exc:
            raise ConfigError(
                f"cannot listen on {listen} (MNEMOGATE_METRICS__LISTEN): {exc}"
            ) from None
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="mnemogate-metrics", daemon=True
        )

    @property
    def address(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{host!s}:{port}"

    def start(self) -> HealthServer:
        self._thread.start()
        log.info("metrics and health on http://%s", self.address)
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            timeout = 10  # a client that sends nothing must not hold the only thread

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    self._send(200, generate_latest(server.registry), CONTENT_TYPE_LATEST)
                elif path == "/healthz":
                    self._send(200, b"ok\n")
                elif path == "/readyz":
                    ok, reason = server.check()
                    self._send(200 if ok else 503, (reason + "\n").encode())
                else:
                    self._send(404, b"not found\n")

            def _send(self, status: int, body: bytes, ctype: str = "text/plain") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass  # probes every few seconds would drown the log

        return Handler

    def check(self) -> tuple[bool, str]:
        try:
            return self.ready()
        except Exception as exc:  # a readiness bug reads as "not ready", with the reason
            log.debug("readiness check failed", exc_info=True)
            return False, f"readiness check failed: {type(exc).__name__}"
