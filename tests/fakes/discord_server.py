"""A fake Discord (REST under ``/api/v10`` and the gateway websocket) served on loopback.

``with FakeDiscord(guilds=[FakeGuild(...)]) as discord:`` serves aiohttp in a background
thread with its own event loop. The real discord.py client logs in (``GET /users/@me``,
``GET /oauth2/applications/@me``), finds the gateway (``GET /gateway/bot``), gets HELLO,
IDENTIFYs and receives READY, then one GUILD_CREATE per guild. Tests inject events
(``push_dm``, ``push_channel_message``, ``push_button_press``, ``push_raw``) and read what
the bot did (``sent``, ``wait_for_sent``, ``typing_calls``, ``interaction_callbacks``,
``wait_for_callbacks``). Payloads are built in :mod:`tests.fakes.discord_payloads`, where
unit tests build ``discord.Message`` objects from the very same JSON.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes import discord_payloads as wire
from tests.fakes.discord_payloads import (  # the fake's results; builders tests use
    InteractionCallback,
    Payload,
    SentMessage,
    attachment_payload,
    message_payload,
    user_payload,
)

API = "/api/v10"
INTERACTION_CALLBACK = re.compile(r"/interactions/(\d+)/([^/]+)/callback")


UPLOAD_LIMIT = 10 * 1024 * 1024


@dataclass
class FakeGuild:
    """A guild the bot is in: text channels ``{id: name}`` and members ``{id: username}``."""

    id: int
    name: str = "guild"
    channels: dict[int, str] = field(default_factory=dict)
    members: dict[int, str] = field(default_factory=dict)
    threads: dict[int, int] = field(default_factory=dict)  # thread id -> parent channel id


class _Connection:
    """One gateway websocket; sends are serialised so sequence numbers arrive in order."""

    def __init__(self, ws: web.WebSocketResponse) -> None:
        self.ws = ws
        self.seq = 0
        self.lock = asyncio.Lock()
        self.session_id: str | None = None

    async def send(self, op: int, data: Any, event: str | None = None) -> None:
        async with self.lock:
            self.seq += op == 0
            frame = {"op": op, "d": data, "s": self.seq if op == 0 else None, "t": event}
            await self.ws.send_str(json.dumps(frame))


class FakeDiscord:
    """The fake; see the module docstring. Public methods are safe from any thread.

    ``hold_ready = True`` makes IDENTIFY go unanswered (a gateway that never gets READY).
    """

    def __init__(
        self,
        *,
        token: str = "fake-discord-token",
        guilds: Iterable[FakeGuild] = (),
        bot_id: int = 1_100_000_000_000_000_001,
        bot_name: str = "mnemobot",
    ) -> None:
        self.token = token
        self.guilds = {guild.id: guild for guild in guilds}
        self.bot_id = bot_id
        self.bot_user = user_payload(bot_id, bot_name, bot=True)
        self.hold_ready = False
        self.sent: list[SentMessage] = []
        self.typing_calls: list[str] = []
        self.interaction_callbacks: list[InteractionCallback] = []
        self.identifies = 0
        self._messages: dict[str, Payload] = {}  # sent message id -> the message object
        self._interactions: dict[str, str] = {}  # pushed interaction id -> token, until answered
        self._users: dict[int, Payload] = {}
        self._dms: dict[int, int] = {}  # user id -> DM channel id
        self._cond = threading.Condition()
        self._conns: list[_Connection] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._port = 0

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> FakeDiscord:
        if self._thread is not None:
            raise RuntimeError("FakeDiscord already started")
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self._port = sock.getsockname()[1]
        started = threading.Event()
        self._thread = threading.Thread(
            target=self._serve, args=(sock, started), name="fake-discord", daemon=True
        )
        self._thread.start()
        if not started.wait(10) or self._loop is None:
            raise RuntimeError("FakeDiscord did not start")
        return self

    def _serve(self, sock: socket.socket, started: threading.Event) -> None:
        """The server thread: its own loop, serving until ``stop`` stops it."""
        loop = asyncio.new_event_loop()
        # Discord accepts uploads up to 10 MiB for every bot (aiohttp's default is 1 MiB).
        app = web.Application(client_max_size=UPLOAD_LIMIT + 64 * 1024)
        app.router.add_get("/ws", self._gateway)
        app.router.add_route("*", API + "/{tail:.*}", self._rest)
        runner = web.AppRunner(app, handle_signals=False, access_log=None)
        try:
            loop.run_until_complete(runner.setup())
            loop.run_until_complete(web.SockSite(runner, sock).start())
            self._loop = loop
            started.set()
            loop.run_forever()
            loop.run_until_complete(self._shutdown(runner))
        finally:
            sock.close()
            loop.close()
            started.set()

    async def _shutdown(self, runner: web.AppRunner) -> None:
        for conn in list(self._conns):
            await conn.ws.close(code=1001, message=b"server shutting down")
        await runner.cleanup()

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        self._loop = self._thread = None

    def __enter__(self) -> FakeDiscord:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    @property
    def api_base_url(self) -> str:
        return self.base_url + API

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self._port}/ws"

    # -- test-side API -------------------------------------------------------------------

    def wait_for_sent(self, n: int, timeout: float = 5.0) -> list[SentMessage]:
        """Block until at least ``n`` messages were sent; returns them all."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.sent) >= n, timeout):
                raise TimeoutError(f"{len(self.sent)} messages sent, expected {n}")
            return list(self.sent)

    def wait_until_sent(
        self, predicate: Callable[[list[SentMessage]], bool], timeout: float = 10.0
    ) -> list[SentMessage]:
        """Block until ``predicate(sent messages)`` holds; returns them all."""
        with self._cond:
            if not self._cond.wait_for(lambda: predicate(self.sent), timeout):
                raise TimeoutError(f"{len(self.sent)} messages sent, condition not met")
            return list(self.sent)

    def wait_for_callbacks(self, n: int, timeout: float = 5.0) -> list[InteractionCallback]:
        """Block until at least ``n`` interactions were answered; returns all the answers."""
        with self._cond:
            done = self._cond.wait_for(lambda: len(self.interaction_callbacks) >= n, timeout)
            if not done:
                raise TimeoutError(f"{len(self.interaction_callbacks)} answered, expected {n}")
            return list(self.interaction_callbacks)

    def wait_until_disconnected(self, timeout: float = 5.0) -> None:
        """Block until no gateway websocket is open."""
        with self._cond:
            if not self._cond.wait_for(lambda: not self._conns, timeout):
                raise TimeoutError(f"{len(self._conns)} gateway connections still open")

    def dm_channel_id(self, user_id: int, username: str = "user") -> int:
        with self._cond:
            self._users.setdefault(user_id, user_payload(user_id, username))
            return self._dms.setdefault(user_id, wire.snowflake())

    def push_dm(self, user_id: int, text: str, *, username: str = "user") -> Payload:
        channel_id = self.dm_channel_id(user_id, username)
        payload = message_payload(channel_id, self._users[user_id], text)
        return self.push_raw({"t": "MESSAGE_CREATE", "d": payload})

    def push_channel_message(
        self,
        guild_id: int,
        channel_id: int,
        user_id: int,
        text: str,
        *,
        mention_bot: bool = False,
        thread_id: int | None = None,
        reply_to_bot: bool = False,
        attachments: Sequence[Payload] = (),
    ) -> Payload:
        """A member's message; a new ``thread_id`` is announced with THREAD_CREATE first."""
        guild = self.guilds[guild_id]
        name = guild.members.get(user_id, f"user{user_id}")
        where = channel_id if thread_id is None else thread_id
        if thread_id is not None and thread_id not in guild.threads:
            guild.threads[thread_id] = channel_id
            thread = wire.thread_payload(thread_id, channel_id, guild_id, user_id)
            self.push_raw({"t": "THREAD_CREATE", "d": thread | {"newly_created": True}})
        bot = self.bot_user
        payload = message_payload(
            where,
            user_payload(user_id, name),
            f"<@{self.bot_id}> {text}" if mention_bot else text,
            guild_id=guild_id,
            member=wire.member_payload(nick=f"{name}-nick"),
            mentions=[bot] if mention_bot else [],
            referenced=message_payload(where, bot, "earlier", guild_id=guild_id)
            if reply_to_bot
            else None,
            attachments=attachments,
        )
        return self.push_raw({"t": "MESSAGE_CREATE", "d": payload})

    def push_button_press(
        self,
        user_id: int,
        channel_id: int,
        custom_id: str,
        *,
        message_id: str | None = None,
        guild_id: int | None = None,
    ) -> Payload:
        """A press on button ``custom_id`` of a bot message (a sent one, by ``message_id``)."""
        if guild_id is None:
            with self._cond:
                user = self._users.get(user_id) or user_payload(user_id, f"user{user_id}")
            member = None
        else:
            user = user_payload(user_id, self.guilds[guild_id].members.get(user_id, "user"))
            member = wire.member_payload(nick=f"{user['username']}-nick")
        channel = self._channel(channel_id) or wire.dm_channel_payload(channel_id, user)
        with self._cond:
            message = (
                self._messages[message_id]
                if message_id is not None
                else message_payload(channel_id, self.bot_user, "pick one", guild_id=guild_id)
            )
        payload = wire.interaction_payload(
            self.bot_id,
            channel,
            custom_id,
            user=user,
            guild_id=guild_id,
            member=member,
            message=message,
        )
        with self._cond:
            self._interactions[payload["id"]] = payload["token"]
        return self.push_raw({"t": "INTERACTION_CREATE", "d": payload})

    def push_raw(self, event: Payload, timeout: float = 5.0) -> Payload:
        """Dispatch ``{"t": NAME, "d": {...}}`` to every identified connection; returns ``d``."""
        if self._loop is None:
            raise RuntimeError("FakeDiscord is not running")
        asyncio.run_coroutine_threadsafe(self._broadcast(event), self._loop).result(timeout)
        data: Payload = event.get("d") or {}
        return data

    async def _broadcast(self, event: Payload) -> None:
        conns = [conn for conn in self._conns if conn.session_id is not None]
        if not conns:
            raise RuntimeError("no identified gateway connection to dispatch to")
        for conn in conns:
            await conn.send(0, event.get("d"), event.get("t"))

    # -- gateway -------------------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        conn = _Connection(ws)
        self._conns.append(conn)
        try:
            await conn.send(10, {"heartbeat_interval": 41_250})  # HELLO
            async for msg in ws:
                if msg.type is WSMsgType.TEXT:
                    await self._on_frame(conn, json.loads(msg.data))
        finally:
            with self._cond:
                self._conns.remove(conn)
                self._cond.notify_all()
        return ws

    async def _on_frame(self, conn: _Connection, frame: Payload) -> None:
        op, data = frame.get("op"), frame.get("d") or {}
        if op == 1:  # HEARTBEAT
            await conn.send(11, None)
        elif op == 2 and data.get("token") != self.token:  # IDENTIFY, wrong token
            await conn.ws.close(code=4004, message=b"Authentication failed.")
        elif op == 2 and not self.hold_ready:
            self.identifies += 1
            conn.session_id = f"session-{wire.snowflake()}"
            ready = wire.ready_payload(
                self.bot_user, self.guilds, conn.session_id, self.gateway_url
            )
            await conn.send(0, ready, "READY")
            for guild in self.guilds.values():
                await conn.send(0, self._guild_create(guild), "GUILD_CREATE")
        elif op == 6:  # RESUME: sessions are not kept, so ask for a fresh IDENTIFY
            await conn.send(9, False)

    def _guild_create(self, guild: FakeGuild) -> Payload:
        return wire.guild_create_payload(
            guild.id,
            guild.name,
            owner=self.bot_user,
            channels=guild.channels,
            members=guild.members,
            threads=guild.threads,
        )

    # -- REST ----------------------------------------------------------------------------

    async def _rest(self, request: web.Request) -> web.Response:
        path, method = "/" + request.match_info["tail"], request.method
        if path in ("/gateway", "/gateway/bot") and method == "GET":
            limit = {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
            return _json({"url": self.gateway_url, "shards": 1, "session_start_limit": limit})
        callback = INTERACTION_CALLBACK.fullmatch(path)
        if callback is not None and method == "POST":  # authorised by the token in the path
            return await self._interaction_callback(callback[1], callback[2], request)
        if request.headers.get("Authorization") != f"Bot {self.token}":
            return _json({"message": "401: Unauthorized", "code": 0}, 401)
        parts = path.strip("/").split("/")
        if path == "/users/@me" and method == "GET":
            return _json(self.bot_user)
        if path in ("/applications/@me", "/oauth2/applications/@me") and method == "GET":
            return _json(wire.application_payload(self.bot_user))
        if path == "/users/@me/channels" and method == "POST":
            user_id = int((await request.json())["recipient_id"])
            return _json(self._channel(self.dm_channel_id(user_id)))
        is_channel = parts[0] == "channels" and len(parts) > 1 and parts[1].isdigit()
        channel = self._channel(int(parts[1])) if is_channel else None
        if is_channel and channel is None:
            return _json({"message": "Unknown Channel", "code": 10003}, 404)
        if channel is not None and len(parts) == 2 and method == "GET":
            return _json(channel)
        if channel is not None and parts[2:] == ["typing"] and method == "POST":
            with self._cond:
                self.typing_calls.append(parts[1])
            return web.Response(status=204)
        if channel is not None and parts[2:] == ["messages"] and method == "POST":
            return _json(await self._create_message(parts[1], request))
        return _json({"message": "404: Not Found", "code": 0}, 404)

    def _channel(self, channel_id: int) -> Payload | None:
        for guild in self.guilds.values():
            if channel_id in guild.channels:
                return wire.channel_payload(channel_id, guild.channels[channel_id], guild.id)
            if channel_id in guild.threads:
                parent = guild.threads[channel_id]
                return wire.thread_payload(channel_id, parent, guild.id, self.bot_id)
        with self._cond:
            for user_id, dm_id in self._dms.items():
                if dm_id == channel_id:
                    return wire.dm_channel_payload(dm_id, self._users[user_id])
        return None

    async def _create_message(self, channel_id: str, request: web.Request) -> Payload:
        payload, files = await wire.read_body(request)
        attachments = [attachment_payload(name, len(data)) for name, data in files]
        content, flags = payload.get("content") or "", payload.get("flags", 0)
        body = message_payload(
            int(channel_id), self.bot_user, content, flags=flags, attachments=attachments
        )
        reference = payload.get("message_reference")
        if reference:
            body |= {"type": wire.REPLY, "message_reference": reference}
        body["components"] = payload.get("components") or []
        record = SentMessage(
            body["id"], channel_id, content, flags, reference, tuple(files), payload
        )
        with self._cond:
            self.sent.append(record)
            self._messages[record.id] = body
            self._cond.notify_all()
        return body

    async def _interaction_callback(
        self, interaction_id: str, token: str, request: web.Request
    ) -> web.Response:
        payload, _ = await wire.read_body(request)
        with self._cond:
            if self._interactions.get(interaction_id) != token:
                return _json({"message": "Unknown interaction", "code": 10062}, 404)
            del self._interactions[interaction_id]  # Discord takes one initial response
            answer = InteractionCallback(interaction_id, payload["type"], payload.get("data") or {})
            self.interaction_callbacks.append(answer)
            self._cond.notify_all()
        flags = answer.data.get("flags", 0)
        return _json(wire.interaction_callback_payload(interaction_id, answer.type, flags))


def _json(data: Any, status: int = 200) -> web.Response:
    # discord.py parses JSON only when Content-Type is exactly "application/json".
    body = json.dumps(data).encode()
    return web.Response(body=body, status=status, headers={"Content-Type": "application/json"})
