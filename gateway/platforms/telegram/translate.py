"""Pure translation between Telegram updates and the gateway's neutral messages.

Inbound: :func:`parse_update` (raw JSON → ``telegram.Update``, refusing malformed data),
:func:`inbound_from_update` (a user's message → :class:`InboundMessage`, or None for what the
gateway ignores: edits, channel posts, bots, service messages) and
:func:`button_from_update` (a callback query → :class:`ButtonPress`). Outbound:
:func:`send_message_kwargs` turns an :class:`OutboundMessage` into ``Bot.send_message``
arguments. Nothing here performs I/O.
"""

from __future__ import annotations

from typing import Any, TypedDict

from telegram import (
    Bot,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    LinkPreviewOptions,
    Message,
    MessageEntity,
    ReplyParameters,
    Update,
)
from telegram.constants import ChatType as TelegramChatType
from telegram.constants import ParseMode

from gateway.platforms.base import ButtonPress, ContentKind, InboundMessage, OutboundMessage
from gateway.platforms.telegram.markup import to_telegram_html
from gateway.routing import ChatType

PLATFORM = "telegram"
CALLBACK_DATA_MAX_BYTES = 64  # Bot API limit for InlineKeyboardButton.callback_data
BUTTONS_PER_ROW = 3
_CHAT_TYPES: dict[str, ChatType] = {
    TelegramChatType.PRIVATE: "dm",
    TelegramChatType.GROUP: "group",
    TelegramChatType.SUPERGROUP: "group",
}
_ADDRESSING: list[str | None] = [
    MessageEntity.MENTION,
    MessageEntity.TEXT_MENTION,
    MessageEntity.BOT_COMMAND,
]

__all__ = [
    "MalformedUpdate",
    "SendMessageKwargs",
    "button_from_update",
    "inbound_from_update",
    "inline_keyboard",
    "parse_update",
    "send_message_kwargs",
    "to_telegram_html",
]


class MalformedUpdate(ValueError):
    """An update body that python-telegram-bot cannot parse; ``update_id`` when it had one."""

    def __init__(self, update_id: int | None, reason: str) -> None:
        super().__init__(f"malformed Telegram update {update_id}: {reason}")
        self.update_id = update_id
        self.reason = reason


def parse_update(data: Any, bot: Bot | None) -> Update:
    """JSON of one update → ``Update``; raises :class:`MalformedUpdate` instead of crashing."""
    if not isinstance(data, dict):
        raise MalformedUpdate(None, f"expected an object, got {type(data).__name__}")
    update_id = data.get("update_id")
    if not isinstance(update_id, int) or isinstance(update_id, bool):
        raise MalformedUpdate(None, "no integer update_id")
    try:
        return Update.de_json(data, bot)
    except Exception as exc:  # PTB raises TypeError/KeyError/ValueError on missing fields
        raise MalformedUpdate(update_id, f"{type(exc).__name__}: {exc}") from exc


def inbound_from_update(update: Update, *, bot_id: int, bot_username: str) -> InboundMessage | None:
    """A new message from a person in a private chat or group, in neutral form.

    ``addressed`` is true in private chats, and in groups when the bot is @mentioned, the
    message replies to one of the bot's messages, or it starts with a command that is not
    meant for another bot. A command addressed ``/cmd@thisbot`` loses the suffix, so the
    gateway's command table sees ``/cmd``, and ``@thisbot`` mentions are removed from the
    text: they address the bot, they are not part of what the user asks. (A text mention —
    the bot's name linked to it — reads as a name and stays.)
    """
    message = update.message
    if message is None:  # edited messages, channel posts, and every other update type
        return None
    sender = message.from_user
    chat_type = _CHAT_TYPES.get(message.chat.type)
    if sender is None or sender.is_bot or chat_type is None:
        return None
    kind = _content_kind(message)
    if kind is None:  # service message: someone joined, a pin, a topic was created …
        return None
    text = message.text if message.text is not None else (message.caption or "")
    entities = (
        message.parse_entities(_ADDRESSING)
        if message.text is not None
        else message.parse_caption_entities(_ADDRESSING)
        if message.caption is not None
        else {}
    )
    mentioned = _mentions(entities, bot_id, bot_username)
    text = _without_own_mentions(text, entities, bot_username)
    text, commanded = _command(text, entities, bot_username)
    addressed = chat_type == "dm" or commanded or mentioned or _replies_to(message, bot_id)
    thread_id = message.message_thread_id if message.is_topic_message else None
    return InboundMessage(
        platform=PLATFORM,
        update_id=str(update.update_id),
        user_id=str(sender.id),
        chat_id=str(message.chat.id),
        chat_type=chat_type,
        message_id=str(message.message_id),
        text=text,
        kind=kind,
        display_name=_display_name(sender.first_name, sender.last_name, sender.username),
        thread_id=None if thread_id is None else str(thread_id),
        addressed=addressed,
    )


def button_from_update(update: Update) -> ButtonPress | None:
    """A press on one of our inline buttons; None for inline-mode or game callbacks."""
    query = update.callback_query
    if query is None or query.data is None or query.message is None:
        return None
    user = query.from_user
    return ButtonPress(
        platform=PLATFORM,
        user_id=str(user.id),
        chat_id=str(query.message.chat.id),
        data=query.data,
        display_name=_display_name(user.first_name, user.last_name, user.username),
    )


class SendMessageKwargs(TypedDict):
    """The ``Bot.send_message`` arguments for one outbound chunk."""

    chat_id: int | str
    text: str
    parse_mode: str | None
    message_thread_id: int | None
    link_preview_options: LinkPreviewOptions
    reply_markup: InlineKeyboardMarkup | None
    reply_parameters: ReplyParameters | None


def send_message_kwargs(message: OutboundMessage, *, formatted: bool = True) -> SendMessageKwargs:
    """Arguments to send ``message.text``: as Telegram HTML, or as plain text."""
    reply = (
        None
        if message.reply_to_message_id is None
        else ReplyParameters(int(message.reply_to_message_id), allow_sending_without_reply=True)
    )
    return SendMessageKwargs(
        chat_id=chat_id_arg(message.chat_id),
        text=to_telegram_html(message.text) if formatted else message.text,
        parse_mode=ParseMode.HTML if formatted else None,
        message_thread_id=thread_id_arg(message.thread_id),
        link_preview_options=LinkPreviewOptions(is_disabled=True),
        reply_markup=inline_keyboard(message.buttons),
        reply_parameters=reply,
    )


def inline_keyboard(buttons: tuple[tuple[str, str], ...]) -> InlineKeyboardMarkup | None:
    """(label, callback data) pairs → rows of up to three buttons; None when there are none."""
    if not buttons:
        return None
    for label, data in buttons:
        if len(data.encode("utf-8")) > CALLBACK_DATA_MAX_BYTES:
            raise ValueError(f"callback data of button {label!r} exceeds 64 bytes")
    keys = [InlineKeyboardButton(label, callback_data=data) for label, data in buttons]
    rows = [keys[i : i + BUTTONS_PER_ROW] for i in range(0, len(keys), BUTTONS_PER_ROW)]
    return InlineKeyboardMarkup(rows)


def chat_id_arg(chat_id: str) -> int | str:
    """Numeric chat ids go to Telegram as integers; ``@channelname`` stays a string."""
    try:
        return int(chat_id)
    except ValueError:
        return chat_id


def thread_id_arg(thread_id: str | None) -> int | None:
    return None if thread_id is None else int(thread_id)


def _content_kind(message: Message) -> ContentKind | None:
    if message.text is not None:
        return "text"
    if message.photo:
        return "photo"
    if message.sticker is not None:
        return "sticker"
    if message.voice is not None:
        return "voice"
    if message.animation is not None:  # GIFs carry a ``document`` too: check them first
        return "other"
    if message.document is not None:
        return "document"
    others = (
        message.audio,
        message.video,
        message.video_note,
        message.location,
        message.venue,
        message.contact,
        message.poll,
        message.dice,
        message.game,
        message.story,
    )
    return "other" if any(item is not None for item in others) else None


def _command(text: str, entities: dict[MessageEntity, str], bot_username: str) -> tuple[str, bool]:
    """(text with our ``@botname`` suffix removed, whether it is a command for us)."""
    for entity, value in entities.items():
        if entity.type != MessageEntity.BOT_COMMAND or entity.offset != 0:
            continue
        command, _, target = value.partition("@")
        if not target:
            return text, True
        if target.casefold() != bot_username.casefold():
            return text, False  # addressed to another bot in the same group
        return command + text[len(value) :], True
    return text, False


def _is_own_mention(entity: MessageEntity, value: str, bot_username: str) -> bool:
    return entity.type == MessageEntity.MENTION and value[1:].casefold() == bot_username.casefold()


def _without_own_mentions(text: str, entities: dict[MessageEntity, str], bot_username: str) -> str:
    """``text`` without its ``@thisbot`` mentions and the blanks around them.

    Entity offsets count UTF-16 code units, so the cuts are made on the UTF-16 encoding.
    The bot command entity sits at offset 0, before any mention, so its offset still holds.
    """
    spans = sorted(
        (
            (entity.offset, entity.offset + entity.length)
            for entity, value in entities.items()
            if _is_own_mention(entity, value, bot_username)
        ),
        reverse=True,
    )
    if not spans:
        return text
    units = text.encode("utf-16-le", "surrogatepass")
    for start, end in spans:
        left = units[: start * 2].decode("utf-16-le", "surrogatepass").rstrip(" \t")
        right = units[end * 2 :].decode("utf-16-le", "surrogatepass").lstrip(" \t")
        if not left or left.endswith((",", ":", ";")):
            right = right.lstrip(",:;").lstrip(" \t")  # "@bot, what's up" → "what's up"
        joined = f"{left} {right}" if left and right and not left.endswith("\n") else left + right
        units = joined.encode("utf-16-le", "surrogatepass")
    return units.decode("utf-16-le", "surrogatepass").strip()


def _mentions(entities: dict[MessageEntity, str], bot_id: int, bot_username: str) -> bool:
    for entity, value in entities.items():
        if _is_own_mention(entity, value, bot_username):
            return True
        if entity.type == MessageEntity.TEXT_MENTION and entity.user and entity.user.id == bot_id:
            return True
    return False


def _replies_to(message: Message, bot_id: int) -> bool:
    replied = message.reply_to_message
    if replied is None or replied.from_user is None:
        return False
    # In forum topics every message "replies" to the topic's creation notice; that is no reply.
    return replied.from_user.id == bot_id and replied.forum_topic_created is None


def _display_name(first: str | None, last: str | None, username: str | None) -> str | None:
    name = " ".join(part for part in (first, last) if part).strip()
    return name or username or None
