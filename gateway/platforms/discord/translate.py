"""Pure translation between discord.py messages and our neutral message model.

``inbound_from_message`` turns a received :class:`discord.Message` into an
:class:`InboundMessage` (or None for messages the bot must ignore: its own, other bots',
webhooks', system messages); ``button_from_interaction`` turns a press on one of our buttons
into a :class:`ButtonPress`. ``send_kwargs`` turns an :class:`OutboundMessage` into the
keyword arguments of ``Messageable.send``, buttons as a component row. None does I/O; all
are golden-tested.
"""

from __future__ import annotations

import io
import re
from collections.abc import Collection
from typing import NotRequired, TypedDict

import discord

from gateway.platforms.base import (
    BUTTON_PREFIX,
    ButtonPress,
    ContentKind,
    InboundMessage,
    OutboundMessage,
)
from gateway.routing import ChatType

PLATFORM = "discord"
MAX_MESSAGE_CHARS = 2000
# Agent output never pings @everyone, roles or arbitrary users (a prompt injection could ask
# for it); replying to the user's own message may still notify them.
AGENT_MENTIONS = discord.AllowedMentions(
    everyone=False, users=False, roles=False, replied_user=True
)
# Custom ids of the gateway's own buttons (approve/reject staged memory writes); presses on
# anything else are acknowledged and dropped.
CUSTOM_ID_MAX_CHARS = 100  # Discord's limit for a component's custom_id


class ButtonRow(discord.ui.View):
    """Buttons sent with a message; presses are read from INTERACTION_CREATE, not here.

    The adapter answers every press from the raw interaction, so presses work on messages
    sent before a restart too. The view is therefore never dispatchable: discord.py keeps
    dispatchable views in its view store for good (``timeout=None``), which would only leak.
    """

    def __init__(self, buttons: tuple[tuple[str, str], ...]) -> None:
        super().__init__(timeout=None)
        for label, data in buttons:
            if len(data) > CUSTOM_ID_MAX_CHARS:
                raise ValueError(f"custom id of button {label!r} exceeds {CUSTOM_ID_MAX_CHARS}")
            self.add_item(
                discord.ui.Button(label=label, custom_id=data, style=discord.ButtonStyle.primary)
            )

    def is_dispatchable(self) -> bool:
        return False


class SendKwargs(TypedDict):
    """Keyword arguments for ``Messageable.send`` (embeds are always suppressed)."""

    content: str | None
    suppress_embeds: bool
    allowed_mentions: discord.AllowedMentions
    reference: NotRequired[discord.MessageReference]
    file: NotRequired[discord.File]
    view: NotRequired[ButtonRow]


def _mention_pattern(bot_user_id: int, role_ids: Collection[int] = ()) -> re.Pattern[str]:
    """The bot's mention tokens with the blanks around them: ``<@id>``, legacy ``<@!id>``,
    and ``<@&role>`` of the bot's own managed role (Discord's client inserts that one when
    a user picks the bot's role from the autocomplete)."""
    tokens = [rf"<@!?{bot_user_id}>", *(rf"<@&{role_id}>" for role_id in sorted(role_ids))]
    return re.compile(rf"[ \t]*(?:{'|'.join(tokens)})[ \t]*")


def _own_roles(message: discord.Message, bot_user_id: int) -> set[int]:
    """Ids of the mentioned roles that belong to the bot itself (its integration role)."""
    return {
        role.id
        for role in message.role_mentions
        if role.tags is not None and role.tags.bot_id == bot_user_id
    }


def _is_ignored(message: discord.Message, bot_user_id: int) -> bool:
    author = message.author
    return (
        author.bot
        or author.id == bot_user_id
        or message.webhook_id is not None
        or message.is_system()
    )


def _replies_to_bot(message: discord.Message, bot_user_id: int) -> bool:
    reference = message.reference
    if reference is None:
        return False
    resolved = reference.resolved
    return isinstance(resolved, discord.Message) and resolved.author.id == bot_user_id


def _kind(message: discord.Message, text: str) -> ContentKind:
    if text:
        return "text"
    if message.attachments:
        content_type = message.attachments[0].content_type or ""
        if content_type.startswith("image/"):
            return "photo"
        if message.flags.voice:
            return "voice"
        return "document"
    if message.stickers:
        return "sticker"
    return "other"


def _where(message: discord.Message) -> tuple[ChatType, str, str | None]:
    """(chat type, chat id, thread id): a thread answers in its parent channel's chat."""
    channel = message.channel
    if message.guild is None:
        return "dm", str(channel.id), None
    if isinstance(channel, discord.Thread):
        return "group", str(channel.parent_id), str(channel.id)
    return "group", str(channel.id), None


def inbound_from_message(
    message: discord.Message, *, bot_user_id: int, channels: Collection[str]
) -> InboundMessage | None:
    """The neutral form of ``message``, or None when the bot must not see it.

    ``channels`` are the configured channel ids where the bot answers without a mention
    (a thread counts when its own id or its parent's is configured).
    """
    if _is_ignored(message, bot_user_id):
        return None
    chat_type, chat_id, thread_id = _where(message)
    pattern = _mention_pattern(bot_user_id, _own_roles(message, bot_user_id))
    mentioned = any(user.id == bot_user_id for user in message.mentions) or bool(
        pattern.search(message.content)
    )
    text = pattern.sub(" ", message.content).strip()
    configured = chat_id in channels or (thread_id is not None and thread_id in channels)
    addressed = (
        chat_type == "dm"
        or mentioned
        or _replies_to_bot(message, bot_user_id)
        or text.startswith("/")
        or configured
    )
    return InboundMessage(
        platform=PLATFORM,
        update_id=str(message.id),
        user_id=str(message.author.id),
        chat_id=chat_id,
        chat_type=chat_type,
        message_id=str(message.id),
        text=text,
        kind=_kind(message, text),
        display_name=message.author.display_name,
        thread_id=thread_id,
        addressed=addressed,
    )


def button_from_interaction(interaction: discord.Interaction) -> ButtonPress | None:
    """A press on one of our buttons; None for other interactions and others' components.

    The chat is the channel pressed in (a DM or guild channel), or a thread's parent channel
    as for messages.
    """
    if interaction.type is not discord.InteractionType.component or interaction.data is None:
        return None
    custom_id = interaction.data.get("custom_id")
    component_type = interaction.data.get("component_type")
    if component_type != discord.ComponentType.button.value or not isinstance(custom_id, str):
        return None
    channel, user = interaction.channel, interaction.user  # user is MISSING when not sent
    if not custom_id.startswith(BUTTON_PREFIX) or channel is None:
        return None
    if not isinstance(user, discord.User | discord.Member):
        return None
    chat_id = channel.parent_id if isinstance(channel, discord.Thread) else channel.id
    return ButtonPress(
        platform=PLATFORM,
        user_id=str(user.id),
        chat_id=str(chat_id),
        data=custom_id,
        display_name=user.display_name,
    )


def target_channel_id(message: OutboundMessage) -> int:
    """The channel to post in: the thread when there is one, else the chat."""
    raw = message.thread_id or message.chat_id
    if not raw.isdigit():
        raise ValueError(f"not a Discord channel id: {raw!r}")
    return int(raw)


def send_kwargs(message: OutboundMessage, *, limit: int = MAX_MESSAGE_CHARS) -> SendKwargs:
    """``Messageable.send`` arguments for one chunk or file; raises ValueError if unsendable."""
    if len(message.text) > limit:
        raise ValueError(f"message of {len(message.text)} chars exceeds Discord's {limit}")
    if not message.text.strip() and message.document is None:
        raise ValueError("nothing to send: empty text and no document")
    kwargs = SendKwargs(
        content=message.text or None,
        suppress_embeds=True,
        allowed_mentions=AGENT_MENTIONS,
    )
    if message.reply_to_message_id is not None:
        kwargs["reference"] = discord.MessageReference(
            message_id=int(message.reply_to_message_id),
            channel_id=target_channel_id(message),
            fail_if_not_exists=False,
        )
    if message.document is not None:
        filename, data = message.document
        kwargs["file"] = discord.File(io.BytesIO(data), filename=filename)
    if message.buttons:
        kwargs["view"] = ButtonRow(message.buttons)
    return kwargs
