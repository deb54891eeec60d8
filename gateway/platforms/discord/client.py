"""The discord.py client wired to our URLs: per-client REST/gateway/webhook routing.

URL overrides are per client, never process-wide: discord.py builds REST URLs from the
class attribute ``discord.http.Route.BASE`` and the gateway URL from
``DiscordWebSocket.DEFAULT_GATEWAY``; changing either would redirect every discord.py client
in the process. Instead the client gets a :class:`RoutedHTTPClient` that rewrites each
request's URL onto ``discord.api_base_url`` and opens every websocket at
``discord.gateway_url``. Interaction responses go through discord.py's webhook adapter, so
:class:`RoutedWebhookAdapter` routes those (set per press task by the adapter). The
connection state logs and skips events it cannot parse instead of dropping the connection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any

import aiohttp
import discord
import yarl
from discord.http import HTTPClient, Route
from discord.state import ConnectionState
from discord.webhook.async_ import AsyncWebhookAdapter

log = logging.getLogger(__name__)


def intents() -> discord.Intents:
    intents = discord.Intents.none()
    intents.guilds = True
    intents.messages = True  # guild and direct messages
    intents.dm_messages = True
    intents.message_content = True
    return intents


class RoutedHTTPClient(HTTPClient):
    """discord.py's HTTP client aimed at a configured API base and gateway (see module doc)."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, *, api_base: str | None, gateway: str | None
    ) -> None:
        super().__init__(loop)
        self.api_base = api_base
        self.gateway = gateway

    async def request(
        self,
        route: Route,
        *,
        files: Sequence[discord.File] | None = None,
        form: Any = None,
        **kwargs: Any,
    ) -> Any:
        reroute(route, self.api_base)
        return await super().request(route, files=files, form=form, **kwargs)

    async def ws_connect(self, url: str, *, compress: int = 0) -> aiohttp.ClientWebSocketResponse:
        # Every websocket is the main gateway (no voice here); keep discord.py's query
        # (v, encoding, compress) on the configured URL, for RESUMEs too.
        if self.gateway is not None:
            url = str(yarl.URL(self.gateway).with_query(yarl.URL(url).query))
        return await super().ws_connect(url, compress=compress)


class RoutedWebhookAdapter(AsyncWebhookAdapter):
    """discord.py's webhook/interaction-response adapter aimed at a configured API base."""

    def __init__(self, api_base: str) -> None:
        super().__init__()
        self.api_base = api_base

    async def request(self, route: Route, session: aiohttp.ClientSession, **kwargs: Any) -> Any:
        reroute(route, self.api_base)
        return await super().request(route, session, **kwargs)


def reroute(route: Route, api_base: str | None) -> None:
    if api_base is not None and route.url.startswith(Route.BASE):
        route.url = api_base + route.url[len(Route.BASE) :]


class GuardedState(ConnectionState["GatewayClient"]):
    """Connection state whose event parsers skip, and log, payloads they cannot read.

    discord.py lets a parser's exception escape ``Client.connect``, which would end the
    connection for good; one malformed event must not take the bot offline.
    """

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.parsers = {name: _guarded(name, fn) for name, fn in self.parsers.items()}


def _guarded(event: str, parser: Callable[[Any], None]) -> Callable[[Any], None]:
    def parse(data: Any) -> None:
        try:
            parser(data)
        except Exception as exc:  # malformed data from outside: one line, no traceback
            log.warning(
                "skipped a malformed %s event from the Discord gateway: %s: %.200s",
                event,
                type(exc).__name__,
                exc,
            )

    return parse


class GatewayClient(discord.Client):
    """discord.Client with routed HTTP, guarded parsers, and events handed to callbacks."""

    def __init__(
        self,
        *,
        http: RoutedHTTPClient,
        deliver: Callable[[discord.Message], None],
        pressed: Callable[[discord.Interaction], None],
        guild_ready_timeout: float,
    ) -> None:
        self._routed_http = http
        self._deliver = deliver
        self._pressed = pressed
        super().__init__(
            intents=intents(),
            guild_ready_timeout=guild_ready_timeout,
            max_messages=None,  # replies carry the referenced message; no cache needed
            chunk_guilds_at_startup=False,
        )

    def _get_state(self, **options: Any) -> GuardedState:
        # The subclass hook discord.py's own AutoShardedClient uses to supply its state.
        self.http = self._routed_http
        return GuardedState(
            dispatch=self.dispatch,
            handlers=self._handlers,
            hooks=self._hooks,
            http=self.http,
            **options,
        )

    async def on_message(self, message: discord.Message) -> None:
        self._deliver(message)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        self._pressed(interaction)
