"""The image's HEALTHCHECK: ``python3 -m gateway.observability.healthcheck``.

Exit 0 when this container's process answers ``GET /healthz`` on ``MNEMOGATE_METRICS__LISTEN``
(alive — not necessarily ready: a gateway waiting for Telegram stays healthy, so nothing
restarts it), 1 otherwise, including when the endpoint is switched off.
"""

from __future__ import annotations

import sys
import urllib.request

from gateway.errors import MnemogateError
from gateway.observability.server import parse_listen
from gateway.settings import load_settings


def probe_url(listen: str) -> str:
    host, port = parse_listen(listen)
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"  # bound to every interface: loopback is one of them
    return f"http://{host}:{port}/healthz"


def main() -> int:
    try:
        listen = load_settings().metrics.listen
    except MnemogateError as exc:
        print(f"unhealthy: {exc}", file=sys.stderr)
        return 1
    if not listen:
        print("unhealthy: MNEMOGATE_METRICS__LISTEN is not set", file=sys.stderr)
        return 1
    try:
        with urllib.request.urlopen(probe_url(listen), timeout=4) as response:
            return 0 if response.status == 200 else 1
    except OSError as exc:
        print(f"unhealthy: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
