"""Telegram Bot API wire shapes for the fake server: users, chats, messages, updates, errors.

Also the two server-side checks the fake applies to ``sendMessage`` like Telegram does:
:func:`html_error` (Telegram's HTML parser refuses unknown or unbalanced tags and bare
``<``/``&``) and :func:`visible_text` (the text whose length the 4096 limit counts).
"""

from __future__ import annotations

import html
import json
import re
import time
from typing import Any

ALLOWED_TAGS = frozenset(
    {
        "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span",
        "tg-spoiler", "a", "tg-emoji", "code", "pre", "blockquote",
    }
)  # fmt: skip
_TOKEN = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)((?:\s[^<>]*)?)>|<|&(#\d+|#x[0-9A-Fa-f]+|\w+)?;?")
_ENTITIES = frozenset({"lt", "gt", "amp", "quot"})
_COMMAND = re.compile(r"^/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{3,32})?")
_MENTION = re.compile(r"(?<![\w@])@[A-Za-z0-9_]{3,32}")


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def ok(result: Any) -> bytes:
    return json.dumps({"ok": True, "result": result}).encode()


def error(code: int, description: str, parameters: dict[str, Any] | None = None) -> bytes:
    body: dict[str, Any] = {"ok": False, "error_code": code, "description": description}
    if parameters:
        body["parameters"] = parameters
    return json.dumps(body).encode()


def user(
    user_id: int, first_name: str, username: str | None = None, *, bot: bool = False
) -> dict[str, Any]:
    found: dict[str, Any] = {"id": user_id, "is_bot": bot, "first_name": first_name}
    if username is not None:
        found["username"] = username
    return found


def chat(
    chat_id: int, chat_type: str, *, first_name: str = "", forum: bool = False
) -> dict[str, Any]:
    if chat_type == "private":
        return {"id": chat_id, "type": "private", "first_name": first_name}
    found: dict[str, Any] = {"id": chat_id, "type": chat_type, "title": f"Group {chat_id}"}
    if forum:
        found["is_forum"] = True
    return found


def auto_entities(text: str) -> list[dict[str, Any]]:
    """The entities Telegram itself attaches: a leading bot command and @mentions."""
    found: list[dict[str, Any]] = []
    command = _COMMAND.match(text)
    if command is not None:
        found.append({"type": "bot_command", "offset": 0, "length": utf16_len(command.group())})
    for mention in _MENTION.finditer(text):
        offset = utf16_len(text[: mention.start()])
        found.append({"type": "mention", "offset": offset, "length": utf16_len(mention.group())})
    return found


def message(
    message_id: int,
    chat_info: dict[str, Any],
    sender: dict[str, Any],
    *,
    text: str | None = None,
    thread_id: int | None = None,
) -> dict[str, Any]:
    found: dict[str, Any] = {
        "message_id": message_id,
        "date": int(time.time()),
        "chat": chat_info,
        "from": sender,
    }
    if text is not None:
        found["text"] = text
    if thread_id is not None:
        found["message_thread_id"] = thread_id
        found["is_topic_message"] = True
    return found


def photo_sizes(file_id: str) -> list[dict[str, Any]]:
    return [
        {"file_id": f"{file_id}-s", "file_unique_id": f"{file_id}s", "width": 90, "height": 90},
        {"file_id": file_id, "file_unique_id": f"{file_id}m", "width": 800, "height": 800},
    ]


def html_error(text: str) -> str | None:
    """Telegram's complaint about ``text`` as HTML, or None when it parses."""
    stack: list[str] = []
    for token in _TOKEN.finditer(text):
        closing, name, entity = token.group(1), token.group(2), token.group(4)
        raw = token.group(0)
        if raw.startswith("&"):
            if entity is None or not raw.endswith(";"):
                return f"Can't find end of the entity starting at byte offset {token.start()}"
            if not entity.startswith("#") and entity not in _ENTITIES:
                return f'Unsupported HTML entity "{raw}" at byte offset {token.start()}'
            continue
        if name is None:
            return f"Unexpected end of name token at byte offset {token.start()}"
        name = name.lower()
        if name not in ALLOWED_TAGS:
            return f'Unsupported start tag "{name}" at byte offset {token.start()}'
        if not closing:
            stack.append(name)
        elif not stack or stack.pop() != name:
            return f'Unmatched end tag at byte offset {token.start()}, expected "</{name}>"'
    if stack:
        return f'Can\'t find end tag corresponding to start tag "{stack[-1]}"'
    return None


def visible_text(text: str, parse_mode: str | None) -> str:
    if parse_mode is None or parse_mode.upper() != "HTML":
        return text
    return html.unescape(re.sub(r"<[^>]*>", "", text))
