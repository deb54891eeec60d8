"""The Discord adapter: a discord.py client that delivers messages and sends replies.

Lifecycle: ``start()`` logs in, connects the gateway in a background task and returns once
discord.py reports READY (or raises :class:`DiscordStartError` after
``discord.ready_timeout_s``); ``stop()`` stops taking messages, gives handlers in flight
``discord.shutdown_grace_s`` to finish, then closes the websocket and the HTTP session.
Messages are handled one at a time per channel, concurrently across channels (at most
``discord.concurrency`` at once).

URL routing lives in :mod:`gateway.platforms.discord.client`.

Button presses arrive as INTERACTION_CREATE; presses on our buttons go to ``on_button`` and
the returned text is shown to the presser alone (ephemeral), otherwise the press is just
acknowledged. Every component interaction is answered, even when the handler fails.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, ClassVar

import discord
from discord.abc import Messageable
from discord.context_managers import Typing
from discord.webhook.async_ import async_context

from gateway.errors import ConfigError, MnemogateError
from gateway.platforms.base import (
    Adapter,
    ButtonHandler,
    InboundHandler,
    InboundMessage,
    OutboundMessage,
    TypingContext,
)
from gateway.platforms.discord.client import (
    GatewayClient,
    RoutedHTTPClient,
    RoutedWebhookAdapter,
)
from gateway.platforms.discord.translate import (
    MAX_MESSAGE_CHARS,
    PLATFORM,
    button_from_interaction,
    inbound_from_message,
    send_kwargs,
    target_channel_id,
)
from gateway.settings import DiscordSettings, Settings

log = logging.getLogger(__name__)

CHANNEL_CACHE = 1024  # channels fetched by id (DMs are not in discord.py's cache)
BUTTON_FAILED = "Something went wrong."


class DiscordStartError(MnemogateError):
    """The Discord client could not connect; the message says what happened."""


class _OrderedDispatch:
    """Runs the handler in order per key, concurrently across keys, ``limit`` at a time."""

    def __init__(self, handler: InboundHandler, limit: int) -> None:
        self._handler = handler
        self._slots = asyncio.Semaphore(limit)
        self._pending: dict[str, deque[InboundMessage]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def submit(self, key: str, message: InboundMessage) -> None:
        queue = self._pending.get(key)
        if queue is not None:  # a drain task for this key is running and will take it
            queue.append(message)
            return
        self._pending[key] = deque([message])
        task = asyncio.create_task(self._drain(key), name=f"discord-chat-{key}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _drain(self, key: str) -> None:
        queue = self._pending[key]
        try:
            while queue:
                message = queue.popleft()
                async with self._slots:
                    try:
                        await self._handler(message)
                    except Exception:
                        log.exception("handling Discord message %s failed", message.message_id)
        finally:
            del self._pending[key]  # no await since the queue emptied: nothing can slip in

    async def close(self, grace_s: float) -> None:
        if not self._tasks:
            return
        _, late = await asyncio.wait(set(self._tasks), timeout=grace_s)
        for task in late:
            task.cancel()
        if late:
            log.warning("cancelled %d Discord handlers still running at stop", len(late))
            await asyncio.wait(late)


class _Typing(TypingContext):
    """discord.py's typing indicator for a channel resolved when entered; best effort."""

    def __init__(self, resolve: Callable[[], Awaitable[Messageable]]) -> None:
        self._resolve = resolve
        self._inner: Typing | None = None

    async def __aenter__(self) -> None:
        try:
            inner = (await self._resolve()).typing()
            await inner.__aenter__()
        except discord.HTTPException as exc:  # no typing is no reason to fail the reply
            log.warning("Discord typing indicator failed: %s", exc)
            return
        self._inner = inner

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._inner is not None:
            await self._inner.__aexit__(exc_type, exc, tb)
            self._inner = None


class DiscordAdapter(Adapter):
    """Discord through discord.py: DMs, guild channels and threads."""

    platform: ClassVar[str] = PLATFORM
    max_message_chars: ClassVar[int] = MAX_MESSAGE_CHARS

    def __init__(
        self,
        settings: Settings,
        on_message: InboundHandler,
        on_button: ButtonHandler | None = None,
    ) -> None:
        self._settings: DiscordSettings = settings.discord
        self._on_message = on_message
        self._on_button = on_button
        self._channels = frozenset(settings.discord.channels)
        self._client: GatewayClient | None = None
        self._runner: asyncio.Task[None] | None = None
        self._dispatch: _OrderedDispatch | None = None
        self._fetched: OrderedDict[int, Any] = OrderedDict()
        self._webhooks: RoutedWebhookAdapter | None = None
        self._presses: set[asyncio.Task[None]] = set()
        self._closing = False

    @property
    def bot_user_id(self) -> int | None:
        """The bot's own user id once logged in, else None."""
        user = self._client.user if self._client is not None else None
        return user.id if user is not None else None

    async def start(self) -> None:
        if self._client is not None:
            raise RuntimeError("DiscordAdapter already started")
        token = self._settings.bot_token
        if token is None or not token.get_secret_value().strip():
            raise ConfigError("discord: no bot token; set DISCORD_BOT_TOKEN")
        http = RoutedHTTPClient(
            asyncio.get_running_loop(),
            api_base=self._settings.api_base_url,
            gateway=self._settings.gateway_url,
        )
        client = GatewayClient(
            http=http,
            deliver=self._received,
            pressed=self._pressed,
            guild_ready_timeout=self._settings.guild_ready_timeout_s,
        )
        self._client, self._closing = client, False
        self._dispatch = _OrderedDispatch(self._on_message, self._settings.concurrency)
        api_base = self._settings.api_base_url
        self._webhooks = None if api_base is None else RoutedWebhookAdapter(api_base)
        try:
            try:
                await client.login(token.get_secret_value())
            except discord.LoginFailure as exc:
                raise ConfigError(
                    "discord: the bot token was rejected (DISCORD_BOT_TOKEN)"
                ) from exc
            if http.gateway is None and http.api_base is not None:
                _, http.gateway, _ = await http.get_bot_gateway()
            self._runner = asyncio.create_task(client.connect(reconnect=True), name="discord")
            self._runner.add_done_callback(self._runner_ended)
            await self._wait_ready(client, self._runner, http.gateway)
        except BaseException:
            await self._disconnect()
            raise
        log.info("Discord connected as %s", client.user)

    async def _wait_ready(
        self, client: GatewayClient, runner: asyncio.Task[None], gateway: str | None
    ) -> None:
        timeout = self._settings.ready_timeout_s
        ready = asyncio.create_task(client.wait_until_ready())
        done, _ = await asyncio.wait(
            {ready, runner}, timeout=timeout, return_when="FIRST_COMPLETED"
        )
        if ready in done:
            return
        ready.cancel()
        where = gateway or "Discord's default gateway"
        if runner in done:
            cause = runner.exception()
            raise DiscordStartError(f"Discord gateway {where} closed before READY: {cause!r}")
        raise DiscordStartError(f"no READY from Discord gateway {where} within {timeout:g}s")

    def _runner_ended(self, task: asyncio.Task[None]) -> None:
        cause = None if task.cancelled() else task.exception()
        if not self._closing:  # discord.py reconnects by itself; this is the end of that
            log.error("Discord gateway connection ended: %r", cause, exc_info=cause)

    async def stop(self) -> None:
        if self._client is None:
            return
        self._closing = True
        if self._dispatch is not None:
            await self._dispatch.close(self._settings.shutdown_grace_s)
        if self._presses:
            await asyncio.wait(set(self._presses), timeout=self._settings.shutdown_grace_s)
        await self._disconnect()

    async def _disconnect(self) -> None:
        client, runner = self._client, self._runner
        self._closing = True
        self._client = self._runner = self._dispatch = None
        self._fetched.clear()
        if client is not None:
            await client.close()  # closes the websocket and discord.py's aiohttp session
        if runner is not None:
            await asyncio.wait({runner})  # connect() returns once the client is closed

    def _received(self, message: discord.Message) -> None:
        bot_id, dispatch = self.bot_user_id, self._dispatch
        if self._closing or bot_id is None or dispatch is None:
            return
        try:
            inbound = inbound_from_message(message, bot_user_id=bot_id, channels=self._channels)
        except Exception as exc:  # a payload discord.py accepted but we cannot read
            log.warning(
                "skipped Discord message %s that could not be translated: %s: %.200s",
                message.id,
                type(exc).__name__,
                exc,
            )
            return
        if inbound is not None:
            dispatch.submit(inbound.thread_id or inbound.chat_id, inbound)

    def _pressed(self, interaction: discord.Interaction) -> None:
        if self._closing or interaction.type is not discord.InteractionType.component:
            return  # we register no commands or modals; those are not ours to answer
        task = asyncio.create_task(
            self._answer(interaction), name=f"discord-press-{interaction.id}"
        )
        self._presses.add(task)
        task.add_done_callback(self._presses.discard)

    async def _answer(self, interaction: discord.Interaction) -> None:
        """Run ``on_button`` for a press on our buttons; always answer the interaction."""
        if self._webhooks is not None:
            async_context.set(self._webhooks)  # this task's context only (see module doc)
        text: str | None = None
        try:
            press = button_from_interaction(interaction)
            if press is not None and self._on_button is not None:
                text = await self._on_button(press)
        except Exception:
            log.exception("handling Discord button press %s failed", interaction.id)
            text = BUTTON_FAILED
        try:
            if text:
                await interaction.response.send_message(text, ephemeral=True)
            else:
                await interaction.response.defer()
        except discord.HTTPException:
            log.exception("answering Discord interaction %s failed", interaction.id)

    async def _channel(self, channel_id: int) -> Messageable:
        """A channel or thread by id: discord.py's cache, else fetched (DMs) and kept (LRU)."""
        client = self._client
        if client is None:
            raise RuntimeError("DiscordAdapter is not started")
        channel = client.get_channel(channel_id)
        if channel is None:
            channel = self._fetched.get(channel_id) or await client.fetch_channel(channel_id)
            self._fetched[channel_id] = channel
            self._fetched.move_to_end(channel_id)
            while len(self._fetched) > CHANNEL_CACHE:
                self._fetched.popitem(last=False)
        if not isinstance(channel, Messageable):
            raise ValueError(f"Discord channel {channel_id} cannot hold messages")
        return channel

    async def send(self, message: OutboundMessage) -> str | None:
        kwargs = send_kwargs(message, limit=self.max_message_chars)
        channel = await self._channel(target_channel_id(message))
        sent = await channel.send(**kwargs)
        return str(sent.id)

    def typing(self, chat_id: str, thread_id: str | None) -> TypingContext:
        target = target_channel_id(OutboundMessage(chat_id=chat_id, thread_id=thread_id))
        return _Typing(lambda: self._channel(target))
