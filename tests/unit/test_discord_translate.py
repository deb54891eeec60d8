"""Golden tests of Discord ⇄ neutral message translation, on real ``discord.Message`` objects.

Messages and interactions are built the way the gateway builds them: the JSON the fake
Discord dispatches goes through discord.py's own ``ConnectionState`` parsers (GUILD_CREATE,
THREAD_CREATE, MESSAGE_CREATE, INTERACTION_CREATE) and the dispatched ``discord.Message`` or
``discord.Interaction`` is translated.
"""

# isort: off
# Our package imports discord.py first with its stdlib-audioop DeprecationWarning filtered;
# importing discord.py directly first would fail collection under ``filterwarnings = error``.
from gateway.platforms.discord import translate
import discord

# isort: on
import asyncio
from types import SimpleNamespace
from typing import Any, cast

import pytest
from discord.http import HTTPClient
from discord.state import ConnectionState

from gateway.platforms.base import ButtonPress, InboundMessage, OutboundMessage
from tests.fakes.discord_payloads import (
    Payload,
    attachment_payload,
    channel_payload,
    dm_channel_payload,
    interaction_payload,
    member_payload,
    message_payload,
    thread_payload,
    user_payload,
)

BOT, ALICE, OTHER_BOT = 900, 501, 777
GUILD, GENERAL, CONFIGURED, THREAD = 10, 11, 12, 13
DM_CHANNEL = 60
BOT_USER = user_payload(BOT, "mnemobot", bot=True)
BOT_ROLE, OTHER_ROLE = 31, 32
ROLES = [
    {"id": str(GUILD), "name": "@everyone", "permissions": "0", "position": 0},
    {
        "id": str(BOT_ROLE),
        "name": "mnemobot",
        "permissions": "0",
        "position": 1,
        "managed": True,
        "tags": {"bot_id": str(BOT)},
    },
    {"id": str(OTHER_ROLE), "name": "helpers", "permissions": "0", "position": 2},
]
ALICE_USER = user_payload(ALICE, "alice")


class Gateway:
    """discord.py's connection state fed by hand, capturing the messages it dispatches."""

    def __init__(self) -> None:
        self.messages: list[discord.Message] = []
        self.interactions: list[discord.Interaction] = []
        intents = discord.Intents(guilds=True, messages=True, message_content=True)
        self.state: ConnectionState[Any] = ConnectionState(
            dispatch=self._dispatch,
            handlers={},
            hooks={},
            http=HTTPClient(asyncio.get_running_loop()),
            intents=intents,
            chunk_guilds_at_startup=False,
        )
        # Logged in as the bot, as after READY; interactions ask the client for that user.
        self.state.user = discord.ClientUser(state=self.state, data=cast(Any, BOT_USER))
        self.state._get_client = lambda: SimpleNamespace(user=self.state.user)
        guild = {"id": str(GUILD), "name": "g", "unavailable": False, "member_count": 2}
        guild |= {"roles": ROLES, "emojis": [], "stickers": [], "features": [], "threads": []}
        guild["channels"] = [channel_payload(c, f"c{c}", GUILD) for c in (GENERAL, CONFIGURED)]
        guild["members"] = [member_payload(None, BOT_USER), member_payload("Ally", ALICE_USER)]
        self.state.parsers["GUILD_CREATE"](guild)
        thread = thread_payload(THREAD, GENERAL, GUILD, ALICE)
        self.state.parsers["THREAD_CREATE"](thread | {"newly_created": True})

    def _dispatch(self, event: str, *args: Any) -> None:
        if event == "message":
            self.messages.append(args[0])
        elif event == "interaction":
            self.interactions.append(args[0])

    def message(self, payload: Payload) -> discord.Message:
        self.state.parsers["MESSAGE_CREATE"](payload)
        return self.messages.pop()

    def press(self, payload: Payload) -> ButtonPress | None:
        self.state.parsers["INTERACTION_CREATE"](payload)
        return translate.button_from_interaction(self.interactions.pop())

    def translate(self, payload: Payload) -> InboundMessage | None:
        return translate.inbound_from_message(
            self.message(payload), bot_user_id=BOT, channels={str(CONFIGURED)}
        )


@pytest.fixture
async def gw() -> Gateway:
    return Gateway()


def in_guild(channel: int, content: str, **extra: Any) -> Payload:
    member = member_payload("Ally")
    return message_payload(channel, ALICE_USER, content, guild_id=GUILD, member=member, **extra)


def test_dm(gw: Gateway) -> None:
    payload = message_payload(DM_CHANNEL, ALICE_USER, "hello there")
    assert gw.translate(payload) == InboundMessage(
        platform="discord",
        update_id=payload["id"],
        user_id=str(ALICE),
        chat_id=str(DM_CHANNEL),
        chat_type="dm",
        message_id=payload["id"],
        text="hello there",
        display_name="Alice",
        addressed=True,
    )


def test_guild_mention_is_addressed_and_stripped(gw: Gateway) -> None:
    payload = in_guild(GENERAL, f"hey <@{BOT}>   what is up?", mentions=[BOT_USER])
    inbound = gw.translate(payload)
    assert inbound is not None
    assert (inbound.chat_type, inbound.chat_id, inbound.thread_id) == ("group", str(GENERAL), None)
    assert inbound.text == "hey what is up?"
    assert inbound.addressed
    assert inbound.display_name == "Ally"  # the member's nickname in this guild


def test_legacy_nickname_mention_in_text_only(gw: Gateway) -> None:
    inbound = gw.translate(in_guild(GENERAL, f"<@!{BOT}> /help"))
    assert inbound is not None
    assert (inbound.text, inbound.addressed) == ("/help", True)


def test_mention_of_the_bots_own_role_is_addressed_and_stripped(gw: Gateway) -> None:
    payload = in_guild(GENERAL, f"<@&{BOT_ROLE}> what is up?", mention_roles=[str(BOT_ROLE)])
    inbound = gw.translate(payload)
    assert inbound is not None
    assert (inbound.text, inbound.addressed) == ("what is up?", True)


def test_mention_of_another_role_stays(gw: Gateway) -> None:
    payload = in_guild(GENERAL, f"<@&{OTHER_ROLE}> standup", mention_roles=[str(OTHER_ROLE)])
    inbound = gw.translate(payload)
    assert inbound is not None
    assert (inbound.text, inbound.addressed) == (f"<@&{OTHER_ROLE}> standup", False)


def test_guild_message_without_mention_is_not_addressed(gw: Gateway) -> None:
    inbound = gw.translate(in_guild(GENERAL, "just chatting <@123>"))
    assert inbound is not None
    assert (inbound.text, inbound.addressed) == ("just chatting <@123>", False)


def test_command_is_addressed(gw: Gateway) -> None:
    inbound = gw.translate(in_guild(GENERAL, "/whoami"))
    assert inbound is not None and inbound.addressed


def test_configured_channel_is_addressed_without_mention(gw: Gateway) -> None:
    inbound = gw.translate(in_guild(CONFIGURED, "anyone?"))
    assert inbound is not None
    assert (inbound.chat_id, inbound.addressed) == (str(CONFIGURED), True)


def test_thread_uses_parent_channel_as_chat(gw: Gateway) -> None:
    inbound = gw.translate(in_guild(THREAD, f"<@{BOT}> in a thread", mentions=[BOT_USER]))
    assert inbound is not None
    assert (inbound.chat_type, inbound.chat_id, inbound.thread_id) == (
        "group",
        str(GENERAL),
        str(THREAD),
    )
    assert inbound.conversation().session_key == f"discord:group:{GENERAL}:{THREAD}:{ALICE}"


def test_reply_to_bot_is_addressed(gw: Gateway) -> None:
    earlier = message_payload(GENERAL, BOT_USER, "an answer", guild_id=GUILD)
    inbound = gw.translate(in_guild(GENERAL, "thanks, and also", referenced=earlier))
    assert inbound is not None
    assert (inbound.text, inbound.addressed) == ("thanks, and also", True)


def test_reply_to_someone_else_is_not_addressed(gw: Gateway) -> None:
    earlier = message_payload(GENERAL, user_payload(502, "bob"), "hi", guild_id=GUILD)
    inbound = gw.translate(in_guild(GENERAL, "hi bob", referenced=earlier))
    assert inbound is not None and not inbound.addressed


@pytest.mark.parametrize(
    "author", [BOT_USER, user_payload(OTHER_BOT, "otherbot", bot=True)], ids=["self", "bot"]
)
def test_bots_are_ignored(gw: Gateway, author: Payload) -> None:
    payload = message_payload(GENERAL, author, f"<@{BOT}> hi", guild_id=GUILD)
    assert gw.translate(payload) is None


def test_webhook_and_system_messages_are_ignored(gw: Gateway) -> None:
    webhook = in_guild(GENERAL, f"<@{BOT}> from a webhook", webhook_id=4242)
    joined = in_guild(GENERAL, "", message_type=7)  # MessageType.new_member
    assert gw.translate(webhook) is None
    assert gw.translate(joined) is None


@pytest.mark.parametrize(
    ("content_type", "kind"),
    [("application/pdf", "document"), ("image/png", "photo"), (None, "document")],
)
def test_attachment_without_text(gw: Gateway, content_type: str | None, kind: str) -> None:
    attachment = attachment_payload("file.bin", 123, content_type)
    inbound = gw.translate(message_payload(DM_CHANNEL, ALICE_USER, "", attachments=[attachment]))
    assert inbound is not None
    assert (inbound.kind, inbound.text) == (kind, "")


def test_attachment_with_text_is_text(gw: Gateway) -> None:
    attachment = attachment_payload("a.png", 10, "image/png")
    inbound = gw.translate(
        message_payload(DM_CHANNEL, ALICE_USER, "look", attachments=[attachment])
    )
    assert inbound is not None and (inbound.kind, inbound.text) == ("text", "look")


# -- button presses -------------------------------------------------------------------------


def press_in_guild(channel: int, custom_id: str) -> Payload:
    where = channel_payload(channel, "c", GUILD)
    if channel == THREAD:
        where = thread_payload(THREAD, GENERAL, GUILD, ALICE)
    bot_message = message_payload(channel, BOT_USER, "approve?", guild_id=GUILD)
    member = member_payload("Ally")
    return interaction_payload(
        BOT, where, custom_id, user=ALICE_USER, guild_id=GUILD, member=member, message=bot_message
    )


def test_press_in_dm(gw: Gateway) -> None:
    channel = dm_channel_payload(DM_CHANNEL, ALICE_USER)
    bot_message = message_payload(DM_CHANNEL, BOT_USER, "approve?")
    payload = interaction_payload(
        BOT, channel, "mem:approve:12", user=ALICE_USER, message=bot_message
    )
    assert gw.press(payload) == ButtonPress(
        platform="discord",
        user_id=str(ALICE),
        chat_id=str(DM_CHANNEL),
        data="mem:approve:12",
        display_name="Alice",
    )


def test_press_in_guild_channel(gw: Gateway) -> None:
    assert gw.press(press_in_guild(GENERAL, "mem:reject:3")) == ButtonPress(
        platform="discord",
        user_id=str(ALICE),
        chat_id=str(GENERAL),
        data="mem:reject:3",
        display_name="Ally",  # the member's nickname in this guild
    )


def test_press_in_thread_uses_parent_channel_as_chat(gw: Gateway) -> None:
    press = gw.press(press_in_guild(THREAD, "mem:approve:4"))
    assert press is not None
    assert (press.chat_id, press.user_id) == (str(GENERAL), str(ALICE))


def test_press_on_someone_elses_component_is_ignored(gw: Gateway) -> None:
    assert gw.press(press_in_guild(GENERAL, "poll:yes")) is None


def test_select_menu_is_not_a_button_press(gw: Gateway) -> None:
    payload = press_in_guild(GENERAL, "mem:approve:1")
    payload["data"] |= {"component_type": 3, "values": ["a"]}  # string select
    assert gw.press(payload) is None


# -- outbound ------------------------------------------------------------------------------


def test_send_kwargs_suppress_embeds_and_mentions() -> None:
    kwargs = translate.send_kwargs(OutboundMessage(chat_id="11", text="see https://x.test"))
    assert kwargs["content"] == "see https://x.test"
    assert kwargs["suppress_embeds"] is True
    assert kwargs["allowed_mentions"].to_dict() == {"parse": [], "replied_user": True}
    assert "reference" not in kwargs and "file" not in kwargs


def test_send_kwargs_reply_and_thread_target() -> None:
    message = OutboundMessage(chat_id="11", thread_id="13", text="hi", reply_to_message_id="99")
    kwargs = translate.send_kwargs(message)
    assert translate.target_channel_id(message) == 13
    reference = kwargs["reference"]
    assert (reference.message_id, reference.channel_id) == (99, 13)
    assert reference.fail_if_not_exists is False


def test_send_kwargs_document() -> None:
    kwargs = translate.send_kwargs(OutboundMessage(chat_id="11", document=("e.json", b"{}")))
    assert kwargs["content"] is None
    assert (kwargs["file"].filename, kwargs["file"].fp.read()) == ("e.json", b"{}")


@pytest.mark.parametrize(
    "message",
    [OutboundMessage(chat_id="11", text="x" * 2001), OutboundMessage(chat_id="11", text=" ")],
    ids=["too-long", "empty"],
)
def test_send_kwargs_refuses_unsendable(message: OutboundMessage) -> None:
    with pytest.raises(ValueError):
        translate.send_kwargs(message)


def test_target_channel_id_refuses_non_snowflake() -> None:
    with pytest.raises(ValueError, match="not a Discord channel id"):
        translate.target_channel_id(OutboundMessage(chat_id="console", text="x"))


def test_send_kwargs_buttons_are_one_component_row() -> None:
    buttons = (("Approve", "mem:approve:12"), ("Reject", "mem:reject:12"))
    kwargs = translate.send_kwargs(OutboundMessage(chat_id="11", text="ok?", buttons=buttons))
    [row] = kwargs["view"].to_components()
    assert row["type"] == 1
    assert [(b["type"], b["label"], b["custom_id"]) for b in row["components"]] == [
        (2, "Approve", "mem:approve:12"),
        (2, "Reject", "mem:reject:12"),
    ]
    assert not kwargs["view"].is_dispatchable()  # presses are answered from the interaction
    assert "view" not in translate.send_kwargs(OutboundMessage(chat_id="11", text="no buttons"))


def test_send_kwargs_refuses_custom_id_over_discords_limit() -> None:
    message = OutboundMessage(chat_id="11", text="ok?", buttons=(("Go", "mem:" + "x" * 97),))
    with pytest.raises(ValueError, match="exceeds 100"):
        translate.send_kwargs(message)
