"""Golden tests: Telegram update JSON → InboundMessage/ButtonPress, Markdown → Telegram HTML."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from telegram import InlineKeyboardMarkup, Update

from gateway.platforms.base import ButtonPress, InboundMessage, OutboundMessage
from gateway.platforms.chunking import utf16_len
from gateway.platforms.telegram.markup import to_telegram_html, visible_length
from gateway.platforms.telegram.translate import (
    MalformedUpdate,
    button_from_update,
    inbound_from_update,
    parse_update,
    send_message_kwargs,
)
from tests.fakes.telegram_payloads import html_error

BOT_ID = 424242
BOT = "mnemo_test_bot"
ADA = {"id": 42, "is_bot": False, "first_name": "Ada", "last_name": "Lovelace", "username": "ada"}
BOT_USER = {"id": BOT_ID, "is_bot": True, "first_name": "Mnemo", "username": BOT}
DM = {"id": 42, "type": "private", "first_name": "Ada"}
GROUP = {"id": -1001234, "type": "supergroup", "title": "Team"}
FORUM = {"id": -1005555, "type": "supergroup", "title": "Forum", "is_forum": True}


def _message(chat: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"message_id": 7, "date": 1_700_000_000, "chat": chat, "from": ADA, **fields}


def _update(**fields: Any) -> Update:
    return Update.de_json({"update_id": 1001, **fields}, None)


def _inbound(update: Update) -> InboundMessage | None:
    return inbound_from_update(update, bot_id=BOT_ID, bot_username=BOT)


def _expected(**fields: Any) -> InboundMessage:
    values: dict[str, Any] = {
        "platform": "telegram",
        "update_id": "1001",
        "user_id": "42",
        "chat_id": "42",
        "chat_type": "dm",
        "message_id": "7",
        "text": "hello",
        "display_name": "Ada Lovelace",
        "addressed": True,
    }
    values.update(fields)
    return InboundMessage(**values)


def _group(**fields: Any) -> dict[str, Any]:
    return {"chat_id": "-1001234", "chat_type": "group", "addressed": False, **fields}


def _mention(offset: int, length: int) -> list[dict[str, Any]]:
    return [{"type": "mention", "offset": offset, "length": length}]


def _command(length: int) -> list[dict[str, Any]]:
    return [{"type": "bot_command", "offset": 0, "length": length}]


GOLDEN: list[tuple[str, dict[str, Any], InboundMessage | None]] = [
    ("private text", {"message": _message(DM, text="hello")}, _expected()),
    (
        "group, no mention",
        {"message": _message(GROUP, text="lunch?")},
        _expected(text="lunch?", **_group()),
    ),
    (
        "group mention entity",
        {"message": _message(GROUP, text=f"@{BOT} hi", entities=_mention(0, 15))},
        _expected(text="hi", **_group(addressed=True)),
    ),
    (
        "our mention in the middle, with a comma, and another user's mention kept",
        {
            "message": _message(
                GROUP,
                text=f"ask @bob_smith, @{BOT}, about lunch",
                entities=[*_mention(4, 10), *_mention(16, 15)],
            )
        },
        _expected(text="ask @bob_smith, about lunch", **_group(addressed=True)),
    ),
    (
        "mention first, then a comma",
        {"message": _message(GROUP, text=f"@{BOT}, what's up?", entities=_mention(0, 15))},
        _expected(text="what's up?", **_group(addressed=True)),
    ),
    (
        "only the mention",
        {"message": _message(GROUP, text=f"@{BOT}", entities=_mention(0, 15))},
        _expected(text="", **_group(addressed=True)),
    ),
    (
        "command for us followed by our mention",
        {
            "message": _message(
                GROUP,
                text=f"/search@{BOT} trip @{BOT}",
                entities=[*_command(22), *_mention(28, 15)],
            )
        },
        _expected(text="/search trip", **_group(addressed=True)),
    ),
    (
        "mention after an emoji (UTF-16 offsets)",
        {"message": _message(GROUP, text=f"👋 @{BOT.upper()}", entities=_mention(3, 15))},
        _expected(text="👋", **_group(addressed=True)),
    ),
    (
        "someone else mentioned",
        {"message": _message(GROUP, text="@bob_smith hi", entities=_mention(0, 10))},
        _expected(text="@bob_smith hi", **_group()),
    ),
    (
        "text mention of the bot",
        {
            "message": _message(
                GROUP,
                text="Mnemo, hi",
                entities=[{"type": "text_mention", "offset": 0, "length": 5, "user": BOT_USER}],
            )
        },
        _expected(text="Mnemo, hi", **_group(addressed=True)),
    ),
    (
        "reply to the bot",
        {
            "message": _message(
                GROUP,
                text="and then?",
                reply_to_message={
                    "message_id": 6,
                    "date": 1_699_999_990,
                    "chat": GROUP,
                    "from": BOT_USER,
                    "text": "Once upon a time",
                },
            )
        },
        _expected(text="and then?", **_group(addressed=True)),
    ),
    (
        "reply to a person",
        {
            "message": _message(
                GROUP,
                text="+1",
                reply_to_message={"message_id": 6, "date": 1, "chat": GROUP, "from": ADA},
            )
        },
        _expected(text="+1", **_group()),
    ),
    (
        "command with our @botname",
        {"message": _message(GROUP, text=f"/new@{BOT} private", entities=_command(19))},
        _expected(text="/new private", **_group(addressed=True)),
    ),
    (
        "command for another bot",
        {"message": _message(GROUP, text="/new@other_bot", entities=_command(14))},
        _expected(text="/new@other_bot", **_group()),
    ),
    (
        "bare command in a group",
        {"message": _message(GROUP, text="/help", entities=_command(5))},
        _expected(text="/help", **_group(addressed=True)),
    ),
    (
        "forum topic message (implicit reply to the topic notice is no reply)",
        {
            "message": _message(
                FORUM,
                text="in the topic",
                message_thread_id=77,
                is_topic_message=True,
                reply_to_message={
                    "message_id": 77,
                    "date": 1,
                    "chat": FORUM,
                    "from": BOT_USER,
                    "message_thread_id": 77,
                    "forum_topic_created": {"name": "Plans", "icon_color": 7322096},
                },
            )
        },
        _expected(text="in the topic", thread_id="77", **_group(chat_id="-1005555")),
    ),
    (
        "reply thread in a non-forum group is not a topic",
        {"message": _message(GROUP, text="x", message_thread_id=5)},
        _expected(text="x", **_group()),
    ),
    (
        "photo with a caption mentioning the bot",
        {
            "message": _message(
                GROUP,
                photo=[{"file_id": "p", "file_unique_id": "pu", "width": 90, "height": 90}],
                caption=f"look @{BOT}",
                caption_entities=_mention(5, 15),
            )
        },
        _expected(text="look", kind="photo", **_group(addressed=True)),
    ),
    (
        "sticker",
        {
            "message": _message(
                DM,
                sticker={
                    "file_id": "s",
                    "file_unique_id": "su",
                    "type": "regular",
                    "width": 512,
                    "height": 512,
                    "is_animated": False,
                    "is_video": False,
                },
            )
        },
        _expected(text="", kind="sticker"),
    ),
    (
        "voice",
        {"message": _message(DM, voice={"file_id": "v", "file_unique_id": "vu", "duration": 3})},
        _expected(text="", kind="voice"),
    ),
    (
        "document with caption",
        {
            "message": _message(
                DM, document={"file_id": "d", "file_unique_id": "du"}, caption="my notes"
            )
        },
        _expected(text="my notes", kind="document"),
    ),
    (
        "location",
        {"message": _message(DM, location={"latitude": 1.5, "longitude": 2.5})},
        _expected(text="", kind="other"),
    ),
    (
        "last name only",
        {"message": _message(DM, text="hello", **{"from": {**ADA, "first_name": ""}})},
        _expected(display_name="Lovelace"),
    ),
    ("edited message", {"edited_message": {**_message(DM, text="x"), "edit_date": 2}}, None),
    (
        "channel post",
        {"channel_post": {"message_id": 1, "date": 1, "chat": {"id": -1009, "type": "channel"}}},
        None,
    ),
    ("message from a bot", {"message": _message(GROUP, text="beep", **{"from": BOT_USER})}, None),
    ("service message", {"message": _message(GROUP, new_chat_members=[ADA])}, None),
    ("pinned notice", {"message": _message(GROUP, pinned_message=_message(GROUP, text="x"))}, None),
]


@pytest.mark.parametrize(
    ("payload", "expected"), [case[1:] for case in GOLDEN], ids=[case[0] for case in GOLDEN]
)
def test_inbound_golden(payload: dict[str, Any], expected: InboundMessage | None) -> None:
    assert _inbound(_update(**payload)) == expected


def test_display_name_falls_back_to_username() -> None:
    sender = {"id": 9, "is_bot": False, "first_name": "", "username": "zed"}
    found = _inbound(_update(message=_message(DM, text="hi", **{"from": sender})))
    assert found is not None and found.display_name == "zed"
    assert found.tenant.namespace == "telegram-9"  # identity is the id, never the name


CALLBACK = {
    "id": "cq1",
    "from": ADA,
    "chat_instance": "ci",
    "data": "mem:approve:3",
    "message": {"message_id": 9, "date": 1, "chat": DM, "from": BOT_USER, "text": "Save?"},
}


def test_button_press() -> None:
    update = _update(callback_query=CALLBACK)
    assert button_from_update(update) == ButtonPress(
        platform="telegram",
        user_id="42",
        chat_id="42",
        data="mem:approve:3",
        display_name="Ada Lovelace",
    )
    assert _inbound(update) is None


def test_inline_mode_callback_is_not_a_button_press() -> None:
    inline = {k: v for k, v in CALLBACK.items() if k != "message"} | {"inline_message_id": "i"}
    assert button_from_update(_update(callback_query=inline)) is None


@pytest.mark.parametrize(
    ("data", "update_id"),
    [
        ({"update_id": 5, "message": {"message_id": 1}}, 5),
        ({"update_id": 6, "message": "not an object"}, 6),
        ({"message": {}}, None),
        ([1, 2], None),
    ],
)
def test_malformed_updates_are_refused_with_their_id(data: Any, update_id: int | None) -> None:
    with pytest.raises(MalformedUpdate) as caught:
        parse_update(data, None)
    assert caught.value.update_id == update_id


def test_send_message_kwargs() -> None:
    message = OutboundMessage(
        chat_id="-1005555",
        text="**Saved** <ok>",
        thread_id="77",
        reply_to_message_id="12",
        buttons=(("Approve", "mem:approve:3"), ("Reject", "mem:reject:3")),
    )
    kwargs = send_message_kwargs(message)
    assert kwargs["chat_id"] == -1005555
    assert kwargs["text"] == "<b>Saved</b> &lt;ok&gt;"
    assert kwargs["parse_mode"] == "HTML"
    assert kwargs["message_thread_id"] == 77
    assert kwargs["link_preview_options"].is_disabled is True
    assert kwargs["reply_parameters"] is not None
    assert kwargs["reply_parameters"].message_id == 12
    markup = kwargs["reply_markup"]
    assert isinstance(markup, InlineKeyboardMarkup)
    assert [(b.text, b.callback_data) for b in markup.inline_keyboard[0]] == list(message.buttons)
    plain = send_message_kwargs(message, formatted=False)
    assert (plain["text"], plain["parse_mode"]) == (message.text, None)


def test_oversized_callback_data_is_refused() -> None:
    with pytest.raises(ValueError, match="64 bytes"):
        send_message_kwargs(OutboundMessage(chat_id="1", text="x", buttons=(("B", "x" * 65),)))


HTML_CASES = [
    ("plain & <simple>", "plain &amp; &lt;simple&gt;"),
    ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
    ("**bold *and italic* inside**", "<b>bold <i>and italic</i> inside</b>"),
    ("***both***", "<b><i>both</i></b>"),
    ("_it_ and __bold__ and snake_case_name", "<i>it</i> and <b>bold</b> and snake_case_name"),
    ("unbalanced **bold and *it", "unbalanced **bold and *it"),
    ("2 * 3 * 4 = 24", "2 * 3 * 4 = 24"),
    ("* a list item", "* a list item"),
    ("~~gone~~ `a <b> **c**`", "<s>gone</s> <code>a &lt;b&gt; **c**</code>"),
    (
        "```python\nif a < b and c:\n    print('**x**')\n```\ndone",
        "<pre><code class=\"language-python\">if a &lt; b and c:\n    print('**x**')"
        "</code></pre>\ndone",
    ),
    ("```\nno language & <tags>\n```", "<pre>no language &amp; &lt;tags&gt;</pre>"),
    ("```sh\nunclosed fence", '<pre><code class="language-sh">unclosed fence</code></pre>'),
    (
        '[docs](https://example.com/q?a=1&b="2")',
        '<a href="https://example.com/q?a=1&amp;b=&quot;2&quot;">docs</a>',
    ),
    (
        "[wiki](https://en.wikipedia.org/wiki/Tea_(meal))",
        '<a href="https://en.wikipedia.org/wiki/Tea_(meal)">wiki</a>',
    ),
    ("[**bold** link](https://x.org)", '<a href="https://x.org"><b>bold</b> link</a>'),
    ("[click](javascript:alert(1))", "[click](javascript:alert(1))"),
    ("## Plan & steps", "<b>Plan &amp; steps</b>"),
]


@pytest.mark.parametrize(("markdown", "expected"), HTML_CASES)
def test_to_telegram_html(markdown: str, expected: str) -> None:
    converted = to_telegram_html(markdown)
    assert converted == expected
    assert html_error(converted) is None


TOKENS = [
    "a", "b c", " ", "\n", "\n\n", "*", "**", "***", "_", "__", "~~", "`", "```", "```py\n",
    "[", "]", "(", ")", "](https://x.org/?a=1&b=2)", "#", "## ", "<", ">", "&", "&amp;",
    '"', "é", "👋", "<b>", "</i>",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=40).map("".join))
def test_html_is_always_accepted_and_never_longer(markdown: str) -> None:
    converted = to_telegram_html(markdown)
    assert html_error(converted) is None, converted
    # What Telegram counts never exceeds the source: a chunk that fits stays within limits.
    assert visible_length(converted) <= utf16_len(markdown)
