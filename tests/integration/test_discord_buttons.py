"""Approve/Reject buttons on Discord: the real discord.py client against the fake Discord.

Messages with buttons carry a component row; presses arrive as INTERACTION_CREATE, reach
``on_button`` and are answered through ``POST /interactions/{id}/{token}/callback``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator

import pytest

from gateway.platforms.base import ButtonPress, OutboundMessage
from gateway.platforms.discord import DiscordAdapter
from gateway.tenants import TenantId
from tests.fakes.discord_payloads import EPHEMERAL
from tests.fakes.discord_server import FakeDiscord, FakeGuild
from tests.integration.test_discord_adapter import ALICE, GENERAL, GUILD, Recorder, discord_settings

pytestmark = pytest.mark.integration

APPROVE_12 = (("Approve", "mem:approve:12"), ("Reject", "mem:reject:12"))
CHANNEL_MESSAGE, DEFERRED_UPDATE = 4, 6  # interaction callback types


class Buttons:
    """The button handler: records each press and answers ``answer`` (raises an exception)."""

    def __init__(self) -> None:
        self.presses: list[ButtonPress] = []
        self.answer: str | Exception | None = "Saved to memory."

    async def __call__(self, press: ButtonPress) -> str | None:
        self.presses.append(press)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.fixture
def fake() -> Iterator[FakeDiscord]:
    guild = FakeGuild(GUILD, channels={GENERAL: "general"}, members={ALICE: "alice"})
    with FakeDiscord(guilds=[guild]) as server:
        yield server


@pytest.fixture
def buttons() -> Buttons:
    return Buttons()


@pytest.fixture
async def adapter(fake: FakeDiscord, buttons: Buttons) -> AsyncIterator[DiscordAdapter]:
    adapter = DiscordAdapter(discord_settings(fake), Recorder(), on_button=buttons)
    async with adapter:
        yield adapter


async def send_with_buttons(fake: FakeDiscord, adapter: DiscordAdapter, chat_id: str) -> str:
    message_id = await adapter.send(
        OutboundMessage(chat_id=chat_id, text="ok?", buttons=APPROVE_12)
    )
    assert message_id is not None
    return message_id


async def test_buttons_are_sent_as_one_component_row(
    fake: FakeDiscord, adapter: DiscordAdapter
) -> None:
    message_id = await send_with_buttons(fake, adapter, str(GENERAL))
    [sent] = fake.sent
    assert (sent.id, sent.content, sent.suppress_embeds) == (message_id, "ok?", True)
    [row] = sent.payload["components"]
    assert [(button["label"], button["custom_id"]) for button in row["components"]] == list(
        APPROVE_12
    )
    assert sent.custom_ids == ["mem:approve:12", "mem:reject:12"]


@pytest.mark.parametrize("where", ["dm", "guild"])
async def test_press_reaches_handler_and_is_answered_ephemerally(
    fake: FakeDiscord, adapter: DiscordAdapter, buttons: Buttons, where: str
) -> None:
    guild_id = GUILD if where == "guild" else None
    channel_id = GENERAL if where == "guild" else fake.dm_channel_id(ALICE, "alice")
    message_id = await send_with_buttons(fake, adapter, str(channel_id))
    pushed = fake.push_button_press(
        ALICE, channel_id, "mem:approve:12", message_id=message_id, guild_id=guild_id
    )
    [answer] = await asyncio.to_thread(fake.wait_for_callbacks, 1)
    assert (answer.interaction_id, answer.type) == (pushed["id"], CHANNEL_MESSAGE)
    assert answer.data["content"] == "Saved to memory."
    assert answer.data["flags"] & EPHEMERAL and answer.ephemeral
    [press] = buttons.presses
    assert press.tenant == TenantId.of("discord", str(ALICE))
    assert (press.chat_id, press.data) == (str(channel_id), "mem:approve:12")
    assert press.display_name == ("alice-nick" if where == "guild" else "Alice")


async def test_press_on_a_foreign_button_is_acknowledged_without_the_handler(
    fake: FakeDiscord, adapter: DiscordAdapter, buttons: Buttons
) -> None:
    fake.push_button_press(ALICE, GENERAL, "poll:yes", guild_id=GUILD)
    [answer] = await asyncio.to_thread(fake.wait_for_callbacks, 1)
    assert (answer.type, answer.data) == (DEFERRED_UPDATE, {})
    assert buttons.presses == []


async def test_handler_without_text_defers(
    fake: FakeDiscord, adapter: DiscordAdapter, buttons: Buttons
) -> None:
    buttons.answer = None
    fake.push_button_press(ALICE, fake.dm_channel_id(ALICE), "mem:approve:1x")
    [answer] = await asyncio.to_thread(fake.wait_for_callbacks, 1)
    assert answer.type == DEFERRED_UPDATE
    assert [press.data for press in buttons.presses] == ["mem:approve:1x"]


async def test_failing_handler_is_logged_and_the_press_still_answered(
    fake: FakeDiscord,
    adapter: DiscordAdapter,
    buttons: Buttons,
    caplog: pytest.LogCaptureFixture,
) -> None:
    buttons.answer = RuntimeError("approvals store is down")
    with caplog.at_level(logging.ERROR, logger="gateway.platforms.discord.adapter"):
        fake.push_button_press(ALICE, GENERAL, "mem:reject:12", guild_id=GUILD)
        [answer] = await asyncio.to_thread(fake.wait_for_callbacks, 1)
    assert (answer.type, answer.data["content"], answer.ephemeral) == (
        CHANNEL_MESSAGE,
        "Something went wrong.",
        True,
    )
    [record] = [r for r in caplog.records if "button press" in r.getMessage()]
    assert record.exc_info is not None and "approvals store is down" in str(record.exc_info[1])
    fake.push_button_press(ALICE, GENERAL, "mem:reject:12", guild_id=GUILD)  # still serving
    assert len(await asyncio.to_thread(fake.wait_for_callbacks, 2)) == 2
