"""The real python-telegram-bot adapter against the fake Bot API over loopback HTTP."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from gateway.errors import ConfigError
from gateway.platforms.base import ButtonPress, InboundMessage, OutboundMessage
from gateway.platforms.chunking import utf16_len
from gateway.platforms.telegram import TelegramAdapter
from gateway.settings import load_settings
from tests.fakes.telegram_payloads import html_error, visible_text
from tests.fakes.telegram_server import BOT_USERNAME, TOKEN, FakeTelegram, post_webhook

pytestmark = pytest.mark.integration

COMMANDS = [("help", "What I can do"), ("new", "Start a new session")]
Handler = Callable[[InboundMessage], Awaitable[None]]


class Inbox:
    """A recording handler; ``reply`` (if set) runs for each message after it is recorded."""

    def __init__(self, reply: Handler | None = None) -> None:
        self.messages: list[InboundMessage] = []
        self.reply = reply
        self._changed = asyncio.Condition()

    async def __call__(self, message: InboundMessage) -> None:
        async with self._changed:
            self.messages.append(message)
            self._changed.notify_all()
        if self.reply is not None:
            await self.reply(message)

    async def wait_for(self, n: int, timeout: float = 10.0) -> list[InboundMessage]:
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: len(self.messages) >= n)
            return list(self.messages)


@pytest.fixture
def tg() -> Iterator[FakeTelegram]:
    with FakeTelegram() as fake:
        yield fake


@asynccontextmanager
async def running(
    tg: FakeTelegram,
    inbox: Inbox,
    on_button: Callable[[ButtonPress], Awaitable[str | None]] | None = None,
    **telegram: Any,
) -> AsyncIterator[TelegramAdapter]:
    """A started adapter; on exit it is stopped and must leave no task behind."""
    config = {"bot_token": TOKEN, "base_url": tg.base_url, "poll_timeout_s": 5, **telegram}
    adapter = TelegramAdapter(load_settings(telegram=config), inbox, on_button, commands=COMMANDS)
    async with adapter:
        yield adapter
    leftovers = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert leftovers == []


async def wait_sent(tg: FakeTelegram, n: int, method: str = "sendMessage") -> list[Any]:
    return await asyncio.to_thread(tg.wait_for_sent, n, 10.0, method=method)


def assert_previews_disabled(tg: FakeTelegram) -> None:
    calls = tg.calls("sendMessage", ok_only=False)
    assert calls
    assert all(c.params["link_preview_options"] == {"is_disabled": True} for c in calls)


async def test_dm_round_trip_with_typing_and_commands(tg: FakeTelegram) -> None:
    async def reply(message: InboundMessage) -> None:
        async with adapter.typing(message.chat_id, message.thread_id):
            # A reply this fast could leave before "typing…" does; wait for it to be seen.
            await wait_sent(tg, 1, "sendChatAction")
            await adapter.send(OutboundMessage(message.chat_id, f"**Hi** {message.text}"))

    inbox = Inbox(reply)
    async with running(tg, inbox) as adapter:
        update_id = tg.push_message(42, 42, "I like <green> tea & https://x.org")
        [message] = await inbox.wait_for(1)
        [sent] = await wait_sent(tg, 1)
        [action] = await wait_sent(tg, 1, "sendChatAction")
    assert message == InboundMessage(
        platform="telegram",
        update_id=str(update_id),
        user_id="42",
        chat_id="42",
        chat_type="dm",
        message_id=message.message_id,
        text="I like <green> tea & https://x.org",
        display_name="Alice",
        addressed=True,
    )
    assert sent.params["chat_id"] == 42
    assert sent.params["parse_mode"] == "HTML"
    assert sent.params["text"] == "<b>Hi</b> I like &lt;green&gt; tea &amp; https://x.org"
    assert action.params == {"chat_id": 42, "action": "typing"}
    assert tg.commands == [{"command": c, "description": d} for c, d in COMMANDS]
    assert_previews_disabled(tg)
    assert tg.confirmed_offset == update_id + 1


async def test_group_messages_carry_addressed(tg: FakeTelegram) -> None:
    inbox = Inbox()
    async with running(tg, inbox):
        tg.push_message(1, -100, "lunch anyone?", chat_type="supergroup")
        tg.push_message(1, -100, f"@{BOT_USERNAME} what's for lunch?", chat_type="supergroup")
        tg.push_message(1, -100, "and dessert?", chat_type="supergroup", reply_to_bot=True)
        tg.push_message(1, -100, "/new@other_bot", chat_type="supergroup")
        tg.push_message(1, -100, f"/new@{BOT_USERNAME} private", chat_type="supergroup")
        messages = await inbox.wait_for(5)
    assert [m.addressed for m in messages] == [False, True, True, False, True]
    assert {m.chat_type for m in messages} == {"group"}
    assert messages[-1].text == "/new private"


async def test_long_reply_is_split_within_limits_with_fences_balanced(tg: FakeTelegram) -> None:
    code = "\n".join(f"print('line {i} 👋 <&>')" for i in range(150))
    prose = " ".join(["**Memory** is *private* per person 😀."] * 120)
    text = f"{prose}\n\n```python\n{code}\n```\n\n{prose}"
    assert len(text) > 10_000

    async def reply(message: InboundMessage) -> None:
        for chunk in adapter.split(text):
            await adapter.send(OutboundMessage(message.chat_id, chunk))

    inbox = Inbox(reply)
    async with running(tg, inbox) as adapter:
        tg.push_message(42, 42, "write a lot")
        await inbox.wait_for(1)
        expected = len(adapter.split(text))
        sent = await wait_sent(tg, expected)
    assert expected >= 3
    assert all(c.params["parse_mode"] == "HTML" for c in sent)  # no fallback was needed
    for call in sent:
        body = call.params["text"]
        assert utf16_len(visible_text(body, "HTML")) <= 4096
        assert html_error(body) is None
        assert body.count("<pre") == body.count("</pre>")
    shown = "".join(visible_text(c.params["text"], "HTML") for c in sent)
    assert "print('line 149 👋 <&>')" in shown and "print('line 0 👋 <&>')" in shown
    assert_previews_disabled(tg)


async def test_send_splits_an_oversized_text_itself(tg: FakeTelegram) -> None:
    async with running(tg, Inbox()) as adapter:
        await adapter.send(OutboundMessage("42", "word " * 2000))
        sent = tg.calls("sendMessage")
    assert len(sent) == 3
    assert all(utf16_len(visible_text(c.params["text"], "HTML")) <= 4096 for c in sent)


async def test_rejected_markup_is_resent_as_plain_text(tg: FakeTelegram) -> None:
    async with running(tg, Inbox()) as adapter:
        tg.reject_markup_next()
        message_id = await adapter.send(OutboundMessage("42", "**hi** <there>"))
    rejected, delivered = tg.calls("sendMessage", ok_only=False)
    assert (rejected.status, rejected.params["parse_mode"]) == (400, "HTML")
    assert delivered.status == 200
    assert delivered.params["text"] == "**hi** <there>"
    assert "parse_mode" not in delivered.params
    assert message_id is not None
    assert_previews_disabled(tg)


# PTB 22 itself reads RetryAfter.retry_after while building the exception, which warns that
# the attribute will become a timedelta; the adapter accepts both types (see retry.py).
@pytest.mark.filterwarnings("ignore:.*`retry_after`.*:telegram.warnings.PTBDeprecationWarning")
async def test_retry_after_is_honoured(tg: FakeTelegram) -> None:
    async with running(tg, Inbox()) as adapter:
        tg.fail_next("sendMessage", status=429, retry_after=1)
        started = time.monotonic()
        await adapter.send(OutboundMessage("42", "after the flood"))
        elapsed = time.monotonic() - started
    limited, delivered = tg.calls("sendMessage", ok_only=False)
    assert (limited.status, delivered.status) == (429, 200)
    assert elapsed >= 1.0
    assert delivered.at - limited.at >= 1.0
    assert delivered.params["text"] == "after the flood"


async def test_forum_topic_thread_is_kept(tg: FakeTelegram) -> None:
    async def reply(message: InboundMessage) -> None:
        async with adapter.typing(message.chat_id, message.thread_id):
            await adapter.send(OutboundMessage(message.chat_id, "in topic", message.thread_id))

    inbox = Inbox(reply)
    async with running(tg, inbox) as adapter:
        tg.push_message(
            1, -1005, f"@{BOT_USERNAME} hi", chat_type="supergroup", message_thread_id=77
        )
        [message] = await inbox.wait_for(1)
        [sent] = await wait_sent(tg, 1)
        [action] = await wait_sent(tg, 1, "sendChatAction")
    assert (message.thread_id, message.addressed) == ("77", True)
    assert sent.params["message_thread_id"] == 77
    assert action.params["message_thread_id"] == 77
    assert_previews_disabled(tg)


async def test_update_is_acknowledged_only_after_it_was_handled(tg: FakeTelegram) -> None:
    release = asyncio.Event()

    async def reply(message: InboundMessage) -> None:
        if message.text == "slow":
            await release.wait()

    inbox = Inbox(reply)
    async with running(tg, inbox):
        slow = tg.push_message(1, 1, "slow")
        await inbox.wait_for(1)
        same_chat = tg.push_message(1, 1, "queued behind slow")
        other_chat = tg.push_message(2, 2, "another chat")
        await inbox.wait_for(2)  # the other chat is not held up by the slow one
        polls = tg.polls
        await asyncio.to_thread(tg.wait_until, lambda: tg.polls >= polls + 2)
        assert tg.confirmed_offset <= slow  # polled again, yet nothing at or past it confirmed
        assert [m.text for m in inbox.messages] == ["slow", "another chat"]
        release.set()
        messages = await inbox.wait_for(3)
        await asyncio.to_thread(tg.wait_until, lambda: tg.confirmed_offset > same_chat)
    assert [m.text for m in messages][-1] == "queued behind slow"  # in order within a chat
    assert other_chat > slow


async def test_unacknowledged_update_comes_again_after_restart(tg: FakeTelegram) -> None:
    async def never_finish(message: InboundMessage) -> None:
        await asyncio.Event().wait()

    first = Inbox(never_finish)
    async with running(tg, first, shutdown_grace_s=0.1):
        update_id = tg.push_message(1, 1, "are you there?")
        await first.wait_for(1)
    assert tg.confirmed_offset <= update_id  # the cancelled turn was not acknowledged

    second = Inbox()
    async with running(tg, second):
        [again] = await second.wait_for(1)
        await asyncio.to_thread(tg.wait_until, lambda: tg.confirmed_offset > update_id)
    # The same update id again: the gateway's handler dedupes ids it has fully handled.
    assert again.update_id == first.messages[0].update_id == str(update_id)


async def test_duplicate_update_id_is_dispatched_once(tg: FakeTelegram) -> None:
    inbox = Inbox()
    duplicate = {
        "update_id": 500,
        "message": {
            "message_id": 9,
            "date": 1_700_000_000,
            "chat": {"id": 7, "type": "private", "first_name": "Bo"},
            "from": {"id": 7, "is_bot": False, "first_name": "Bo"},
            "text": "twice",
        },
    }
    tg.push_raw(duplicate)
    tg.push_raw(duplicate)
    async with running(tg, inbox):
        await inbox.wait_for(1)
        tg.push_message(7, 7, "after")
        messages = await inbox.wait_for(2)
    assert [m.text for m in messages] == ["twice", "after"]


async def test_malformed_update_is_skipped_and_serving_continues(
    tg: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    inbox = Inbox()
    with caplog.at_level(logging.WARNING, logger="gateway.platforms.telegram"):
        async with running(tg, inbox):
            broken = tg.push_raw({"message": {"message_id": 1, "text": "no chat, no date"}})
            tg.push_message(1, 1, "still here?")
            [message] = await inbox.wait_for(1)
            await asyncio.to_thread(tg.wait_until, lambda: tg.confirmed_offset > broken + 1)
    assert message.text == "still here?"
    assert any(f"malformed Telegram update {broken}" in r.getMessage() for r in caplog.records)


async def test_failing_handler_is_logged_acknowledged_and_serving_continues(
    tg: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    async def reply(message: InboundMessage) -> None:
        if message.text == "boom":
            raise RuntimeError("handler bug")

    inbox = Inbox(reply)
    with caplog.at_level(logging.ERROR, logger="gateway.platforms.telegram"):
        async with running(tg, inbox):
            boom = tg.push_message(1, 1, "boom")
            tg.push_message(1, 1, "next")
            messages = await inbox.wait_for(2)
            # Redelivering a message that crashes the handler would only crash it again.
            await asyncio.to_thread(tg.wait_until, lambda: tg.confirmed_offset > boom + 1)
    assert [m.text for m in messages] == ["boom", "next"]
    [record] = [r for r in caplog.records if r.exc_info]
    assert f"update {boom} failed" in record.getMessage()


async def test_callback_query_reaches_on_button_and_is_answered(tg: FakeTelegram) -> None:
    presses: list[ButtonPress] = []

    async def on_button(press: ButtonPress) -> str | None:
        presses.append(press)
        return "Saved ✓"

    async with running(tg, Inbox(), on_button) as adapter:
        await adapter.send(OutboundMessage("42", "Save this?", buttons=(("Yes", "mem:ok:1"),)))
        tg.push_callback(42, 42, "mem:ok:1")
        [answer] = await wait_sent(tg, 1, "answerCallbackQuery")
    [offer] = tg.calls("sendMessage")
    assert offer.params["reply_markup"] == {
        "inline_keyboard": [[{"text": "Yes", "callback_data": "mem:ok:1"}]]
    }
    assert presses == [ButtonPress("telegram", "42", "42", "mem:ok:1", "Alice")]
    assert answer.params["text"] == "Saved ✓"
    assert answer.params["callback_query_id"].startswith("cq")


async def test_document_is_uploaded(tg: FakeTelegram) -> None:
    async with running(tg, Inbox()) as adapter:
        document = ("export.json", b'{"memories": []}')
        await adapter.send(OutboundMessage("42", "Your data", "9", document=document))
        [upload] = tg.calls("sendDocument")
    assert upload.files["document"] == document
    assert (upload.params["caption"], upload.params["message_thread_id"]) == ("Your data", 9)


async def test_rejected_token_is_a_config_error_without_the_token(tg: FakeTelegram) -> None:
    config = {"bot_token": "999:wrong-token", "base_url": tg.base_url}
    adapter = TelegramAdapter(load_settings(telegram=config), Inbox())
    with pytest.raises(ConfigError) as caught:
        await adapter.start()
    assert "wrong-token" not in str(caught.value)


async def test_webhook_checks_the_secret_and_answers_after_handling(tg: FakeTelegram) -> None:
    release = asyncio.Event()

    async def reply(message: InboundMessage) -> None:
        await release.wait()

    inbox = Inbox(reply)
    secret = "s3cret-Token_1"
    hook: dict[str, Any] = {
        "webhook_url": "https://bot.example.org/tg/hook",
        "webhook_secret": secret,
        "webhook_port": 0,
    }
    update = {
        "update_id": 900,
        "message": {
            "message_id": 3,
            "date": 1_700_000_000,
            "chat": {"id": 5, "type": "private", "first_name": "Cy"},
            "from": {"id": 5, "is_bot": False, "first_name": "Cy"},
            "text": "via webhook",
        },
    }
    async with running(tg, inbox, **hook) as adapter:
        assert adapter.webhook_address is not None
        host, port = adapter.webhook_address
        url = f"http://{host}:{port}/tg/hook"
        assert (tg.webhook_url, tg.webhook_secret) == (hook["webhook_url"], secret)
        assert await asyncio.to_thread(post_webhook, url, update, "wrong") == (403, "forbidden")
        assert (await asyncio.to_thread(post_webhook, url, update, None))[0] == 403
        assert inbox.messages == []

        posting = asyncio.ensure_future(asyncio.to_thread(post_webhook, url, update, secret))
        await inbox.wait_for(1)
        done, _ = await asyncio.wait({posting}, timeout=0.3)
        assert not done  # still handling: Telegram has no answer yet
        release.set()
        status, _ = await posting
        assert status == 200
        broken = {"update_id": 901, "message": {"message_id": 1}}
        assert (await asyncio.to_thread(post_webhook, url, broken, secret))[0] == 200
    assert [m.text for m in inbox.messages] == ["via webhook"]
    assert tg.polls == 0  # no getUpdates in webhook mode
