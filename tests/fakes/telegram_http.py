"""HTTP plumbing of the fake Telegram Bot API: a threaded loopback server and body decoding.

The server parses ``/bot<token>/<method>`` requests (query string, form, multipart or JSON
bodies, the way python-telegram-bot sends them) and hands them to a :class:`BotApi`.
:func:`post_webhook` plays Telegram calling a bot's webhook.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from email import policy
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit

log = logging.getLogger(__name__)

# PTB sends every non-string parameter JSON-encoded; these stay strings even if they look
# like JSON (a message text "123" is text, not a number).
STRING_FIELDS = frozenset(
    {"text", "caption", "parse_mode", "callback_query_id", "url", "secret_token", "action"}
)
Files = dict[str, tuple[str, bytes]]


class BotApi(Protocol):
    def answer(
        self, token: str, method: str, params: dict[str, Any], files: Files
    ) -> tuple[int, bytes]: ...


class ApiServer(ThreadingHTTPServer):
    """Serves one :class:`BotApi` on ``address``; handler threads are daemons."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], api: BotApi) -> None:
        super().__init__(address, _RequestHandler)
        self.api = api


def post_webhook(url: str, update: dict[str, Any], secret: str | None) -> tuple[int, str]:
    """POST ``update`` as Telegram would; returns (status, body). Blocking: use a thread."""
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        headers["X-Telegram-Bot-Api-Secret-Token"] = secret
    request = urllib.request.Request(url, json.dumps(update).encode(), headers, method="POST")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read().decode()


def _decode(fields: dict[str, str], files: Files) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for name, raw in fields.items():
        if raw.startswith("attach://") and raw[9:] in files:
            files[name] = files.pop(raw[9:])
            continue
        if name in STRING_FIELDS:
            params[name] = raw
            continue
        try:
            params[name] = json.loads(raw)
        except ValueError:
            params[name] = raw
    return params


def _multipart(content_type: str, body: bytes) -> tuple[dict[str, str], Files]:
    head = f"Content-Type: {content_type}\r\n\r\n".encode()
    parsed = BytesParser(policy=policy.HTTP).parsebytes(head + body)
    fields: dict[str, str] = {}
    files: dict[str, tuple[str, bytes]] = {}
    for part in parsed.iter_parts():
        name = str(part.get_param("name", header="content-disposition"))
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        filename = part.get_filename()
        if filename is not None:
            files[name] = (filename, data)
        else:
            fields[name] = data.decode("utf-8")
    return fields, files


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ApiServer

    def do_GET(self) -> None:
        self._serve(b"")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self._serve(self.rfile.read(length) if length else b"")

    def _serve(self, body: bytes) -> None:
        url = urlsplit(self.path)
        fields = dict(parse_qsl(url.query, keep_blank_values=True))
        files: Files = {}
        content_type = self.headers.get("Content-Type") or ""
        if content_type.startswith("multipart/form-data"):
            more, files = _multipart(content_type, body)
            fields.update(more)
        elif content_type.startswith("application/json") and body:
            decoded = json.loads(body)
            fields.update(
                {k: v if isinstance(v, str) else json.dumps(v) for k, v in decoded.items()}
            )
        elif body:
            fields.update(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
        token, _, method = url.path.removeprefix("/bot").partition("/")
        status, payload = self.server.api.answer(token, method, _decode(fields, files), files)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("FakeTelegram %s", format % args)
