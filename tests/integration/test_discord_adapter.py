"""The real discord.py client, through DiscordAdapter, against the fake Discord on loopback."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest

from gateway.errors import ConfigError
from gateway.platforms.base import InboundMessage, OutboundMessage
from gateway.platforms.discord import DiscordAdapter, DiscordStartError
from gateway.settings import Settings, load_settings
from tests.fakes.discord_payloads import attachment_payload
from tests.fakes.discord_server import FakeDiscord, FakeGuild

pytestmark = pytest.mark.integration

GUILD, GENERAL, CONFIGURED, OTHER = 10, 11, 12, 14
ALICE, BOB = 501, 502
Reply = Callable[[DiscordAdapter, InboundMessage], Awaitable[None]]


class Recorder:
    """The inbound handler: records each message, then runs ``reply`` (if set) for it."""

    def __init__(self) -> None:
        self.messages: list[InboundMessage] = []
        self.reply: Reply | None = None
        self.adapter: DiscordAdapter | None = None
        self._changed = asyncio.Condition()

    async def __call__(self, message: InboundMessage) -> None:
        if self.reply is not None and self.adapter is not None:
            await self.reply(self.adapter, message)
        async with self._changed:
            self.messages.append(message)
            self._changed.notify_all()

    async def wait_for(self, n: int, timeout: float = 5.0) -> list[InboundMessage]:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: len(self.messages) >= n), timeout)
        return list(self.messages)


async def echo(adapter: DiscordAdapter, message: InboundMessage) -> None:
    async with adapter.typing(message.chat_id, message.thread_id):
        await adapter.send(
            OutboundMessage(
                chat_id=message.chat_id,
                thread_id=message.thread_id,
                text=f"echo: {message.text} https://example.test/link",
                reply_to_message_id=message.message_id,
            )
        )


@pytest.fixture
def fake() -> Iterator[FakeDiscord]:
    guild = FakeGuild(
        GUILD,
        channels={GENERAL: "general", CONFIGURED: "ask-the-bot", OTHER: "other"},
        members={ALICE: "alice", BOB: "bob"},
    )
    with FakeDiscord(guilds=[guild]) as server:
        yield server


def discord_settings(fake: FakeDiscord, **extra: Any) -> Settings:
    values = {
        "bot_token": fake.token,
        "api_base_url": fake.api_base_url,
        "channels": [str(CONFIGURED)],
        "guild_ready_timeout_s": 0.05,
        "ready_timeout_s": 10,
    }
    return load_settings(discord=values | extra)


@pytest.fixture
async def recorder(fake: FakeDiscord) -> AsyncIterator[Recorder]:
    recorder = Recorder()
    recorder.adapter = DiscordAdapter(discord_settings(fake), recorder)
    async with recorder.adapter:
        yield recorder


@pytest.mark.parametrize("explicit_gateway", [True, False], ids=["gateway-url", "discovered"])
async def test_connects_until_ready_and_stops_cleanly(
    fake: FakeDiscord, explicit_gateway: bool
) -> None:
    extra = {"gateway_url": fake.gateway_url} if explicit_gateway else {}
    adapter = DiscordAdapter(discord_settings(fake, **extra), Recorder())
    await adapter.start()
    assert adapter.bot_user_id == fake.bot_id
    assert fake.identifies == 1
    await adapter.stop()
    await asyncio.to_thread(fake.wait_until_disconnected)
    await adapter.stop()  # idempotent


async def test_dm_round_trip(fake: FakeDiscord, recorder: Recorder) -> None:
    recorder.reply = echo
    pushed = fake.push_dm(ALICE, "hello bot", username="alice")
    [inbound] = await recorder.wait_for(1)
    dm = str(fake.dm_channel_id(ALICE))
    assert (inbound.chat_type, inbound.chat_id, inbound.user_id) == ("dm", dm, str(ALICE))
    assert (inbound.text, inbound.addressed, inbound.update_id) == ("hello bot", True, pushed["id"])
    [sent] = await asyncio.to_thread(fake.wait_for_sent, 1)
    assert (sent.channel_id, sent.content) == (dm, "echo: hello bot https://example.test/link")
    assert sent.suppress_embeds
    assert sent.message_reference is not None
    assert str(sent.message_reference["message_id"]) == pushed["id"]
    assert fake.typing_calls == [dm]


async def test_guild_messages_addressed_only_when_meant(
    fake: FakeDiscord, recorder: Recorder
) -> None:
    fake.push_channel_message(GUILD, GENERAL, ALICE, "what's new?", mention_bot=True)
    fake.push_channel_message(GUILD, GENERAL, BOB, "just us humans")
    fake.push_channel_message(GUILD, GENERAL, BOB, "go on", reply_to_bot=True)
    fake.push_channel_message(GUILD, CONFIGURED, BOB, "no mention needed here")
    mention, plain, reply, configured = await recorder.wait_for(4)
    assert (mention.chat_type, mention.chat_id, mention.thread_id) == ("group", str(GENERAL), None)
    assert (mention.text, mention.addressed, mention.display_name) == (
        "what's new?",
        True,
        "alice-nick",
    )
    assert (plain.text, plain.addressed, plain.user_id) == ("just us humans", False, str(BOB))
    assert reply.addressed
    assert (configured.chat_id, configured.addressed) == (str(CONFIGURED), True)


async def test_thread_replies_go_to_the_thread(fake: FakeDiscord, recorder: Recorder) -> None:
    recorder.reply = echo
    thread = 777
    fake.push_channel_message(
        GUILD, GENERAL, ALICE, "in thread", mention_bot=True, thread_id=thread
    )
    [inbound] = await recorder.wait_for(1)
    assert (inbound.chat_id, inbound.thread_id) == (str(GENERAL), str(thread))
    [sent] = await asyncio.to_thread(fake.wait_for_sent, 1)
    assert sent.channel_id == str(thread)
    assert fake.typing_calls == [str(thread)]


async def test_long_reply_is_split_with_fences_balanced(
    fake: FakeDiscord, recorder: Recorder
) -> None:
    adapter = recorder.adapter
    assert adapter is not None
    code = "\n".join(f"    value_{i} = compute({i})  # step {i}" for i in range(120))
    prose = " ".join(f"word{i}" for i in range(700))
    text = f"{prose}\n\n```python\n{code}\n```\n\n{prose}"
    assert len(text) >= 10_000
    chunks = adapter.split(text)
    for chunk in chunks:
        await adapter.send(OutboundMessage(chat_id=str(GENERAL), text=chunk))
    sent = await asyncio.to_thread(fake.wait_for_sent, len(chunks))
    assert len(sent) == len(chunks) >= 6
    for message in sent:
        assert len(message.content) <= 2000
        assert message.suppress_embeds
        fences = [line for line in message.content.split("\n") if line.startswith("```")]
        assert len(fences) % 2 == 0, message.content
    received = "\n".join(message.content for message in sent)
    assert all(f"value_{i} = compute({i})" in received for i in range(120))
    assert received.count("word699") == 2


async def test_document_upload(fake: FakeDiscord, recorder: Recorder) -> None:
    adapter = recorder.adapter
    assert adapter is not None
    data = b'{"memories": ["likes tea"]}\n' * 100
    dm = str(fake.dm_channel_id(ALICE))  # not in discord.py's cache: fetched by id
    message_id = await adapter.send(OutboundMessage(chat_id=dm, document=("export.json", data)))
    [sent] = fake.sent
    assert (sent.id, sent.channel_id, sent.attachments) == (
        message_id,
        dm,
        (("export.json", data),),
    )
    assert sent.suppress_embeds


async def test_attachment_only_message(fake: FakeDiscord, recorder: Recorder) -> None:
    photo = attachment_payload("cat.png", 2048, "image/png")
    fake.push_channel_message(GUILD, CONFIGURED, ALICE, "", attachments=[photo])
    [inbound] = await recorder.wait_for(1)
    assert (inbound.kind, inbound.text, inbound.addressed) == ("photo", "", True)


async def test_malformed_events_are_skipped_and_serving_continues(
    fake: FakeDiscord, recorder: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    no_type = {"id": "1", "channel_id": str(GENERAL), "guild_id": str(GUILD), "content": "x"}
    no_author = no_type | {"type": 0, "attachments": [], "embeds": []}
    with caplog.at_level(logging.WARNING, logger="gateway.platforms.discord"):
        fake.push_raw({"t": "MESSAGE_CREATE", "d": no_type})
        fake.push_raw({"t": "MESSAGE_CREATE", "d": no_author})
        fake.push_raw({"t": "MESSAGE_CREATE", "d": None})
        fake.push_dm(ALICE, "still there?")
        [inbound] = await recorder.wait_for(1)
    assert inbound.text == "still there?"
    assert fake.identifies == 1  # the same connection kept serving
    skipped = [r for r in caplog.records if "malformed MESSAGE_CREATE" in r.getMessage()]
    assert len(skipped) >= 2 and all(r.levelno == logging.WARNING for r in skipped)
    assert not any(r.exc_info for r in caplog.records)  # one line each, no traceback


async def test_per_channel_order_and_concurrency_across_channels(fake: FakeDiscord) -> None:
    release = asyncio.Event()
    handled = {text: asyncio.Event() for text in ("slow", "after slow", "meanwhile")}
    started: list[str] = []
    done: list[str] = []

    async def handler(message: InboundMessage) -> None:
        started.append(message.text)
        if message.text == "slow":
            await release.wait()
        done.append(message.text)
        handled[message.text].set()

    adapter = DiscordAdapter(discord_settings(fake), handler)
    async with adapter:
        fake.push_channel_message(GUILD, CONFIGURED, ALICE, "slow")
        fake.push_channel_message(GUILD, CONFIGURED, ALICE, "after slow")
        fake.push_dm(BOB, "meanwhile")
        # Another channel is served while "slow" holds its own channel.
        await asyncio.wait_for(handled["meanwhile"].wait(), 5)
        assert started == ["slow", "meanwhile"]
        release.set()
        await asyncio.wait_for(handled["after slow"].wait(), 5)
    assert done == ["meanwhile", "slow", "after slow"]


async def test_bad_token_is_a_config_error(fake: FakeDiscord) -> None:
    settings = discord_settings(fake, bot_token="not-the-token")
    with pytest.raises(ConfigError, match="DISCORD_BOT_TOKEN"):
        await DiscordAdapter(settings, Recorder()).start()


async def test_no_ready_times_out_with_a_clear_error(fake: FakeDiscord) -> None:
    fake.hold_ready = True
    adapter = DiscordAdapter(discord_settings(fake, ready_timeout_s=0.5), Recorder())
    with pytest.raises(DiscordStartError, match=r"no READY .* within 0\.5s"):
        await adapter.start()
    await asyncio.to_thread(fake.wait_until_disconnected)
