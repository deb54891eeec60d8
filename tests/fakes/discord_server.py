"""A fake Discord (REST under ``/api/v10`` and the gateway websocket) served on loopback.

``with FakeDiscord(guilds=[FakeGuild(...)]) as discord:`` serves aiohttp in a background
thread with its own event loop. The real discord.py client logs in (``GET /users/@me``,
``GET /oauth2/applications/@me``), finds the gateway (``GET /gateway/bot``), gets HELLO,
IDENTIFYs and receives READY, then one GUILD_CREATE per guild. Tests inject events
(``push_dm``, ``push_channel_message``, ``push_raw``) and read what the bot did (``sent``,
``wait_for_sent``, ``typing_calls``). Payload builders are module functions so unit tests
build ``discord.Message`` objects from the very same JSON.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from aiohttp import BodyPartReader, WSMsgType, web

API = "/api/v10"
SUPPRESS_EMBEDS = 1 << 2
TEXT, DM, THREAD = 0, 1, 11  # channel types
REPLY = 19  # message type
_ids = itertools.count(1_300_000_000_000_000_000)

Payload = dict[str, Any]


def snowflake() -> int:
    return next(_ids)


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def user_payload(user_id: int, username: str, *, bot: bool = False) -> Payload:
    body: Payload = {"id": str(user_id), "username": username, "global_name": username.title()}
    return body | {"discriminator": "0", "avatar": None, "bot": bot, "public_flags": 0}


def member_payload(nick: str | None = None, user: Payload | None = None) -> Payload:
    body: Payload = {"nick": nick, "roles": [], "joined_at": now_iso(), "flags": 0}
    body |= {"deaf": False, "mute": False, "pending": False, "avatar": None}
    return body | ({"user": user} if user else {})


def channel_payload(channel_id: int, name: str, guild_id: int) -> Payload:
    body: Payload = {"id": str(channel_id), "type": TEXT, "guild_id": str(guild_id), "name": name}
    return body | {"position": 0, "permission_overwrites": [], "nsfw": False, "parent_id": None}


def thread_payload(thread_id: int, parent_id: int, guild_id: int, owner_id: int) -> Payload:
    meta: Payload = {"archived": False, "locked": False, "archive_timestamp": now_iso()}
    body: Payload = {"id": str(thread_id), "type": THREAD, "owner_id": str(owner_id)}
    body |= {"guild_id": str(guild_id), "parent_id": str(parent_id), "name": f"thread-{thread_id}"}
    meta |= {"auto_archive_duration": 1440}
    return body | {"message_count": 0, "member_count": 1, "thread_metadata": meta}


def dm_channel_payload(channel_id: int, recipient: Payload) -> Payload:
    return {"id": str(channel_id), "type": DM, "last_message_id": None, "recipients": [recipient]}


def attachment_payload(filename: str, size: int, content_type: str | None = None) -> Payload:
    attachment_id = snowflake()
    url = f"https://cdn.invalid/attachments/{attachment_id}/{filename}"
    body: Payload = {"id": str(attachment_id), "filename": filename, "size": size, "url": url}
    return body | {"proxy_url": url} | ({"content_type": content_type} if content_type else {})


def message_payload(
    channel_id: int,
    author: Payload,
    content: str,
    *,
    guild_id: int | None = None,
    member: Payload | None = None,
    mentions: Sequence[Payload] = (),
    referenced: Payload | None = None,
    attachments: Sequence[Payload] = (),
    message_type: int = 0,
    webhook_id: int | None = None,
    flags: int = 0,
) -> Payload:
    """A MESSAGE_CREATE ``d`` (with ``guild_id``/``member``) or a REST message object."""
    body: Payload = {"id": str(snowflake()), "channel_id": str(channel_id), "author": author}
    body |= {"type": REPLY if referenced else message_type, "content": content, "flags": flags}
    body |= {"attachments": list(attachments), "mentions": list(mentions), "mention_roles": []}
    body |= {"embeds": [], "components": [], "pinned": False, "tts": False}
    body |= {"mention_everyone": False, "timestamp": now_iso(), "edited_timestamp": None}
    if guild_id is not None:
        body["guild_id"] = str(guild_id)
    if member is not None:
        body["member"] = member
    if webhook_id is not None:
        body["webhook_id"] = str(webhook_id)
    if referenced is not None:
        reference = {"message_id": referenced["id"], "channel_id": referenced["channel_id"]}
        if guild_id is not None:
            reference["guild_id"] = str(guild_id)
        body["message_reference"] = reference
        body["referenced_message"] = referenced
    return body


@dataclass
class FakeGuild:
    """A guild the bot is in: text channels ``{id: name}`` and members ``{id: username}``."""

    id: int
    name: str = "guild"
    channels: dict[int, str] = field(default_factory=dict)
    members: dict[int, str] = field(default_factory=dict)
    threads: dict[int, int] = field(default_factory=dict)  # thread id -> parent channel id


@dataclass(frozen=True)
class SentMessage:
    """One ``POST /channels/{id}/messages`` the bot made."""

    id: str
    channel_id: str
    content: str
    flags: int
    message_reference: Payload | None
    attachments: tuple[tuple[str, bytes], ...]  # (filename, data)
    payload: Payload

    @property
    def suppress_embeds(self) -> bool:
        return bool(self.flags & SUPPRESS_EMBEDS)


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
        self.identifies = 0
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
        app = web.Application()
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

    def wait_until_disconnected(self, timeout: float = 5.0) -> None:
        """Block until no gateway websocket is open."""
        with self._cond:
            if not self._cond.wait_for(lambda: not self._conns, timeout):
                raise TimeoutError(f"{len(self._conns)} gateway connections still open")

    def dm_channel_id(self, user_id: int, username: str = "user") -> int:
        with self._cond:
            self._users.setdefault(user_id, user_payload(user_id, username))
            return self._dms.setdefault(user_id, snowflake())

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
            thread = thread_payload(thread_id, channel_id, guild_id, user_id)
            self.push_raw({"t": "THREAD_CREATE", "d": thread | {"newly_created": True}})
        bot = self.bot_user
        payload = message_payload(
            where,
            user_payload(user_id, name),
            f"<@{self.bot_id}> {text}" if mention_bot else text,
            guild_id=guild_id,
            member=member_payload(nick=f"{name}-nick"),
            mentions=[bot] if mention_bot else [],
            referenced=message_payload(where, bot, "earlier", guild_id=guild_id)
            if reply_to_bot
            else None,
            attachments=attachments,
        )
        return self.push_raw({"t": "MESSAGE_CREATE", "d": payload})

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
            conn.session_id = f"session-{snowflake()}"
            await conn.send(0, self._ready(conn.session_id), "READY")
            for guild in self.guilds.values():
                await conn.send(0, self._guild_create(guild), "GUILD_CREATE")
        elif op == 6:  # RESUME: sessions are not kept, so ask for a fresh IDENTIFY
            await conn.send(9, False)

    def _ready(self, session_id: str) -> Payload:
        guilds = [{"id": str(gid), "unavailable": True} for gid in self.guilds]
        body = {"v": 10, "user": self.bot_user, "guilds": guilds, "session_id": session_id}
        application = {"id": str(self.bot_id), "flags": 0}
        return body | {"resume_gateway_url": self.gateway_url, "application": application}

    def _guild_create(self, guild: FakeGuild) -> Payload:
        users = [user_payload(uid, name) for uid, name in guild.members.items()]
        members = [member_payload(user=user) for user in [self.bot_user, *users]]
        threads = [thread_payload(t, p, guild.id, self.bot_id) for t, p in guild.threads.items()]
        channels = [channel_payload(c, name, guild.id) for c, name in guild.channels.items()]
        everyone = {"id": str(guild.id), "name": "@everyone", "permissions": "68608"}
        body: Payload = {
            "id": str(guild.id),
            "name": guild.name,
            "unavailable": False,
            "large": False,
        }
        body |= {"owner_id": str(self.bot_id), "joined_at": now_iso(), "roles": [everyone]}
        body |= {"members": members, "member_count": len(members), "channels": channels}
        return body | {"threads": threads, "emojis": [], "stickers": [], "features": []}

    # -- REST ----------------------------------------------------------------------------

    async def _rest(self, request: web.Request) -> web.Response:
        path, method = "/" + request.match_info["tail"], request.method
        if path in ("/gateway", "/gateway/bot") and method == "GET":
            limit = {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
            return _json({"url": self.gateway_url, "shards": 1, "session_start_limit": limit})
        if request.headers.get("Authorization") != f"Bot {self.token}":
            return _json({"message": "401: Unauthorized", "code": 0}, 401)
        parts = path.strip("/").split("/")
        if path == "/users/@me" and method == "GET":
            return _json(self.bot_user)
        if path in ("/applications/@me", "/oauth2/applications/@me") and method == "GET":
            return _json(self._application())
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
                return channel_payload(channel_id, guild.channels[channel_id], guild.id)
            if channel_id in guild.threads:
                parent = guild.threads[channel_id]
                return thread_payload(channel_id, parent, guild.id, self.bot_id)
        with self._cond:
            for user_id, dm_id in self._dms.items():
                if dm_id == channel_id:
                    return dm_channel_payload(dm_id, self._users[user_id])
        return None

    async def _create_message(self, channel_id: str, request: web.Request) -> Payload:
        files: list[tuple[str, bytes]] = []
        payload: Payload = {}
        if request.content_type.startswith("multipart/"):
            async for part in await request.multipart():
                if isinstance(part, BodyPartReader) and part.name == "payload_json":
                    payload = json.loads(await part.text())
                elif isinstance(part, BodyPartReader):
                    files.append((part.filename or "", bytes(await part.read())))
        else:
            payload = await request.json()
        attachments = [attachment_payload(name, len(data)) for name, data in files]
        content, flags = payload.get("content") or "", payload.get("flags", 0)
        body = message_payload(
            int(channel_id), self.bot_user, content, flags=flags, attachments=attachments
        )
        reference = payload.get("message_reference")
        if reference:
            body |= {"type": REPLY, "message_reference": reference}
        record = SentMessage(
            body["id"], channel_id, content, flags, reference, tuple(files), payload
        )
        with self._cond:
            self.sent.append(record)
            self._cond.notify_all()
        return body

    def _application(self) -> Payload:
        app: Payload = {
            "id": str(self.bot_id),
            "name": self.bot_user["username"],
            "description": "",
        }
        app |= {"icon": None, "bot_public": False, "bot_require_code_grant": False, "flags": 0}
        return app | {"owner": user_payload(1, "owner"), "verify_key": "0" * 64}


def _json(data: Any, status: int = 200) -> web.Response:
    # discord.py parses JSON only when Content-Type is exactly "application/json".
    body = json.dumps(data).encode()
    return web.Response(body=body, status=status, headers={"Content-Type": "application/json"})
