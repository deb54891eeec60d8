"""``mnemogate run``: start every configured platform, the relay and notice delivery.

Start-up order: stores and clients (App, which also starts the outbox relay), the gateway,
then each platform adapter; shutdown (SIGTERM/SIGINT) runs it backwards: adapters stop
taking messages and finish in-flight turns, notice delivery stops, background work this
process scheduled is drained, connections close.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal

from gateway.app import App
from gateway.errors import ConfigError
from gateway.platforms.base import Adapter
from gateway.platforms.registry import build_adapter, configured_platforms
from gateway.service import Gateway
from gateway.settings import Settings

log = logging.getLogger(__name__)


async def serve(settings: Settings, *, stop: asyncio.Event | None = None) -> None:
    """Run the gateway until ``stop`` is set (or SIGTERM/SIGINT arrives)."""
    entries = configured_platforms(settings)
    if not entries:
        raise ConfigError("no platform configured: set TELEGRAM_BOT_TOKEN and/or DISCORD_BOT_TOKEN")
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    async with App(settings) as app:
        gateway = Gateway(app)
        started: list[Adapter] = []
        notices: asyncio.Task[None] | None = None
        try:
            for entry in entries:
                adapter = build_adapter(
                    entry,
                    settings,
                    gateway.on_message,
                    gateway.on_button,
                    gateway.command_menu(),
                )
                gateway.attach(adapter)
                await adapter.start()
                started.append(adapter)
                log.info("%s connected", entry.name)
            notices = asyncio.create_task(gateway.deliver_notices(stop), name="notices")
            await stop.wait()
            log.info("shutting down")
        finally:
            for adapter in reversed(started):
                await adapter.stop()
            if notices is not None:
                notices.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await notices
            await gateway.close()
            for sig in (signal.SIGTERM, signal.SIGINT):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(sig)
