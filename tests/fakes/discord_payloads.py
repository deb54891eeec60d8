"""Discord wire shapes for the fake and unit tests: users, channels, messages, interactions.

Also the records the fake keeps of what the bot sent (:class:`SentMessage`,
:class:`InteractionCallback`) and :func:`read_body` for its REST requests.

The fake dispatches these over its gateway and unit tests feed the very same JSON through
discord.py's own parsers, so both layers see one shape of each payload.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from aiohttp import BodyPartReader, web

SUPPRESS_EMBEDS = 1 << 2
TEXT, DM, THREAD = 0, 1, 11  # channel types
REPLY = 19  # message type
COMPONENT, BUTTON = 3, 2  # interaction type, component type
EPHEMERAL = 1 << 6  # message flag
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
    mention_roles: Sequence[str] = (),
    referenced: Payload | None = None,
    attachments: Sequence[Payload] = (),
    message_type: int = 0,
    webhook_id: int | None = None,
    flags: int = 0,
) -> Payload:
    """A MESSAGE_CREATE ``d`` (with ``guild_id``/``member``) or a REST message object."""
    body: Payload = {"id": str(snowflake()), "channel_id": str(channel_id), "author": author}
    body |= {"type": REPLY if referenced else message_type, "content": content, "flags": flags}
    body |= {"attachments": list(attachments), "mentions": list(mentions)}
    body["mention_roles"] = list(mention_roles)
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


def ready_payload(
    bot_user: Payload, guild_ids: Iterable[int], session_id: str, gateway_url: str
) -> Payload:
    guilds = [{"id": str(gid), "unavailable": True} for gid in guild_ids]
    body = {"v": 10, "user": bot_user, "guilds": guilds, "session_id": session_id}
    application = {"id": bot_user["id"], "flags": 0}
    return body | {"resume_gateway_url": gateway_url, "application": application}


def guild_create_payload(
    guild_id: int,
    name: str,
    *,
    owner: Payload,
    channels: Mapping[int, str],
    members: Mapping[int, str],
    threads: Mapping[int, int],
) -> Payload:
    """GUILD_CREATE for a guild ``owner`` (the bot) owns: text channels, members, threads."""
    users = [user_payload(uid, username) for uid, username in members.items()]
    everyone = {"id": str(guild_id), "name": "@everyone", "permissions": "68608"}
    owner_id = int(owner["id"])
    body: Payload = {"id": str(guild_id), "name": name, "unavailable": False, "large": False}
    body |= {"owner_id": owner["id"], "joined_at": now_iso(), "roles": [everyone]}
    body["members"] = [member_payload(user=user) for user in [owner, *users]]
    body["member_count"] = len(body["members"])
    body["channels"] = [channel_payload(c, title, guild_id) for c, title in channels.items()]
    body["threads"] = [thread_payload(t, p, guild_id, owner_id) for t, p in threads.items()]
    return body | {"emojis": [], "stickers": [], "features": []}


def application_payload(bot_user: Payload) -> Payload:
    app: Payload = {"id": bot_user["id"], "name": bot_user["username"], "description": ""}
    app |= {"icon": None, "bot_public": False, "bot_require_code_grant": False, "flags": 0}
    return app | {"owner": user_payload(1, "owner"), "verify_key": "0" * 64}


def interaction_payload(
    application_id: int,
    channel: Payload,
    custom_id: str,
    *,
    user: Payload,
    guild_id: int | None = None,
    member: Payload | None = None,
    message: Payload | None = None,
) -> Payload:
    """An INTERACTION_CREATE ``d`` for a button press (type 3, component type 2).

    In a guild the presser is ``member.user`` (``member`` is built from ``user`` if not
    given); in a DM it is ``user``, as Discord sends them.
    """
    body: Payload = {"id": str(snowflake()), "application_id": str(application_id)}
    body |= {"type": COMPONENT, "token": f"interaction-token-{body['id']}", "version": 1}
    body |= {"channel_id": channel["id"], "channel": channel, "locale": "en-US"}
    body |= {"data": {"custom_id": custom_id, "component_type": BUTTON}}
    body |= {"app_permissions": "0", "entitlements": [], "attachment_size_limit": 10 << 20}
    if message is not None:
        body["message"] = message
    if guild_id is None:
        return body | {"user": user, "context": 1}
    member = member if member is not None else member_payload(user=user)
    return body | {"guild_id": str(guild_id), "member": member | {"user": user}, "context": 0}


def interaction_callback_payload(interaction_id: str, response_type: int, flags: int) -> Payload:
    """The ``?with_response=1`` body of ``POST /interactions/{id}/{token}/callback``."""
    ephemeral = bool(flags & EPHEMERAL)
    interaction: Payload = {"id": interaction_id, "type": COMPONENT}
    interaction |= {"response_message_loading": False, "response_message_ephemeral": ephemeral}
    return {"interaction": interaction, "resource": {"type": response_type}}


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

    @property
    def custom_ids(self) -> list[str]:
        """The custom ids of the buttons in the message's component rows, in order."""
        rows = self.payload.get("components") or []
        return [item["custom_id"] for row in rows for item in row.get("components", [])]


@dataclass(frozen=True)
class InteractionCallback:
    """One ``POST /interactions/{id}/{token}/callback``: the bot's answer to an interaction."""

    interaction_id: str
    type: int  # 4 channel message, 6 deferred update, ...
    data: Payload  # {} when the response carries none

    @property
    def ephemeral(self) -> bool:
        return bool(self.data.get("flags", 0) & EPHEMERAL)


async def read_body(request: web.Request) -> tuple[Payload, list[tuple[str, bytes]]]:
    """A JSON body, or a multipart one's ``payload_json`` and files ``(filename, data)``."""
    if not request.content_type.startswith("multipart/"):
        return await request.json(), []
    payload: Payload = {}
    files: list[tuple[str, bytes]] = []
    async for part in await request.multipart():
        if isinstance(part, BodyPartReader) and part.name == "payload_json":
            payload = json.loads(await part.text())
        elif isinstance(part, BodyPartReader):
            files.append((part.filename or "", bytes(await part.read())))
    return payload, files
