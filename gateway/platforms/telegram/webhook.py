"""The webhook endpoint: checks Telegram's secret and answers 200 only once an update is handled.

PTB's built-in webhook server (tornado) answers before the handlers run, so a crash mid-turn
would lose the update. This small aiohttp server awaits the update's handling first; any
other answer (403 for a wrong secret, 503 while shutting down or when the handler was
cancelled) makes Telegram deliver the update again later. A body that is not a parsable
update is logged and answered 200, because Telegram would only retry it forever.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from typing import Any

from aiohttp import web
from telegram import Bot

from gateway.platforms.telegram.lanes import ChatLanes
from gateway.platforms.telegram.translate import MalformedUpdate, parse_update

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
MAX_BODY_BYTES = 1024 * 1024


class WebhookServer:
    """``POST <path>`` on ``host:port`` feeding ``lanes``; start with :meth:`start`."""

    def __init__(
        self, bot: Bot, lanes: ChatLanes, *, path: str, secret: str, host: str, port: int
    ) -> None:
        self._bot = bot
        self._lanes = lanes
        self._secret = secret.encode("utf-8")
        self._host = host
        self._port = port
        self._closing = False
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        app.router.add_post(path or "/", self._receive)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=5.0)

    @property
    def address(self) -> tuple[str, int]:
        """(host, port) actually listened on (the port is chosen by the OS when 0)."""
        for address in self._runner.addresses:
            return str(address[0]), int(address[1])
        raise RuntimeError("the webhook server is not listening")

    async def start(self) -> None:
        await self._runner.setup()
        await web.TCPSite(self._runner, self._host, self._port).start()

    async def stop(self, grace_s: float) -> None:
        """Refuse new updates, let handlers finish for ``grace_s``, then close the server."""
        self._closing = True
        await self._lanes.close(grace_s)
        await self._runner.cleanup()

    async def _receive(self, request: web.Request) -> web.Response:
        offered = request.headers.get(SECRET_HEADER, "").encode("utf-8")
        if not hmac.compare_digest(offered, self._secret):
            log.warning("webhook call from %s with a wrong secret token", request.remote)
            return web.Response(status=403, text="forbidden")
        try:
            data: Any = json.loads(await request.read())
        except ValueError:
            return web.Response(status=400, text="body is not JSON")
        try:
            update = parse_update(data, self._bot)
        except MalformedUpdate as exc:
            log.warning("skipping a Telegram update: %s (data: %.500r)", exc, data)
            return web.Response(status=200)
        if self._closing:
            return web.Response(status=503, text="shutting down")
        done = self._lanes.submit(update)
        try:
            # Shielded: if Telegram hangs up, the update is still handled to the end.
            await asyncio.shield(done)
        except asyncio.CancelledError:
            if done.cancelled():
                return web.Response(status=503, text="not handled")
            raise
        return web.Response(status=200)
