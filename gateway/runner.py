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
from gateway.history.retention import prune
from gateway.observability.endpoint import start_endpoint
from gateway.platforms.base import Adapter
from gateway.platforms.ledger import UpdateLedger
from gateway.platforms.registry import PlatformEntry, build_adapter, configured_platforms
from gateway.service import Gateway
from gateway.settings import Settings
from workers.queues import one_line

log = logging.getLogger(__name__)
NO_PLATFORM = "no platform configured: set TELEGRAM_BOT_TOKEN and/or DISCORD_BOT_TOKEN"
RETRY_FIRST_S, RETRY_MAX_S = 1.0, 60.0


class Connections:
    """Which configured platforms are connected: what ``/readyz`` of ``run`` reports."""

    def __init__(self, names: list[str]) -> None:
        self.wanted = names
        self.connected: set[str] = set()

    def problem(self) -> str | None:
        if not self.wanted:
            return NO_PLATFORM
        missing = [name for name in self.wanted if name not in self.connected]
        return f"not connected yet: {', '.join(missing)}" if missing else None


@asynccontextmanager
async def gateway_running(
    settings: Settings, connections: Connections | None = None
) -> AsyncIterator[Gateway]:
    """The App, the Gateway and every configured platform; stopped in reverse.

    A platform that cannot connect at start (network down, Telegram unreachable) is retried
    in the background with backoff while the rest runs, instead of ending the process: under
    a restart policy that would only crash-loop. ``connections`` tells who is connected.
    """
    entries = configured_platforms(settings)
    connections = connections or Connections([entry.name for entry in entries])
    async with App(settings) as app:
        gateway = Gateway(app)
        started: list[Adapter] = []
        retrying: list[asyncio.Task[None]] = []

        async def connect(entry: PlatformEntry) -> bool:
            adapter = build_adapter(
                entry, settings, gateway.on_message, gateway.on_button, gateway.command_menu()
            )
            gateway.attach(adapter)
            try:
                await adapter.start()
            except Exception as exc:
                log.warning("%s could not connect: %s", entry.name, one_line(exc))
                gateway.adapters.pop(adapter.platform, None)
                with contextlib.suppress(Exception):
                    await adapter.stop()
                return False
            started.append(adapter)
            connections.connected.add(entry.name)
            log.info("%s connected", entry.name)
            return True

        async def keep_trying(entry: PlatformEntry) -> None:
            delay = RETRY_FIRST_S
            while True:
                await asyncio.sleep(delay)
                if await connect(entry):
                    return
                delay = min(delay * 2, RETRY_MAX_S)
                log.warning("%s: next attempt in %.0fs", entry.name, delay)

        try:
            for entry in entries:
                if not await connect(entry):
                    retrying.append(asyncio.create_task(keep_trying(entry)))
            yield gateway
        finally:
            for task in retrying:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
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
    connections = Connections([entry.name for entry in configured_platforms(settings)])
    if not connections.wanted:
        log.error("%s; staying up, not ready, until stopped", NO_PLATFORM)
    endpoint = start_endpoint(settings, "gateway", lambda _redis: connections.problem())
    try:
        async with gateway_running(settings, connections) as gateway:
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
        if endpoint is not None:
            endpoint.close()
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
