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
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from gateway import outbox
from gateway.app import App
from gateway.errors import ConfigError
from gateway.history.retention import prune
from gateway.platforms.base import Adapter
from gateway.platforms.ledger import UpdateLedger
from gateway.platforms.registry import build_adapter, configured_platforms
from gateway.service import Gateway
from gateway.settings import Settings

log = logging.getLogger(__name__)


@asynccontextmanager
async def gateway_running(settings: Settings) -> AsyncIterator[Gateway]:
    """The App, the Gateway and every configured platform connected; stopped in reverse."""
    entries = configured_platforms(settings)
    if not entries:
        raise ConfigError("no platform configured: set TELEGRAM_BOT_TOKEN and/or DISCORD_BOT_TOKEN")
    async with App(settings) as app:
        gateway = Gateway(app)
        started: list[Adapter] = []
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
            yield gateway
        finally:
            for adapter in reversed(started):
                await adapter.stop()
            await gateway.close()


async def serve(settings: Settings, *, stop: asyncio.Event | None = None) -> None:
    """Run the gateway until ``stop`` is set (or SIGTERM/SIGINT arrives)."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        async with gateway_running(settings) as gateway:
            tasks = [
                asyncio.create_task(gateway.deliver_notices(stop), name="notices"),
                asyncio.create_task(keep_tidy(gateway.app, stop), name="housekeeping"),
            ]
            try:
                await stop.wait()
                log.info("shutting down")
            finally:
                for task in tasks:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)


async def keep_tidy(app: App, stop: asyncio.Event, *, every_s: float = 86_400) -> None:
    """Daily: retention pruning (``sessions.retention_days``), old ledger and outbox rows."""
    while not stop.is_set():
        days = app.settings.sessions.retention_days
        try:
            if days is not None:
                report = await asyncio.to_thread(
                    prune, app.db, app.sessions, retention_days=days, now=time.time()
                )
                log.info("retention: %s", report)
            await asyncio.to_thread(UpdateLedger(app.db).prune)
            week_ago = time.time() - 7 * 86_400
            await asyncio.to_thread(outbox.purge_done, app.db, week_ago)
        except Exception:
            log.exception("housekeeping failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every_s)
