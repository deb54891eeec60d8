"""The whole gateway on Discord: the real discord.py client, the fake Discord, the fake LLM."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.access import AccessPolicy
from gateway.history.db import Database
from gateway.platforms.chunking import split_message
from gateway.service import INTERNAL_ERROR, UNSUPPORTED
from gateway.settings import Settings, load_settings
from tests.fakes.discord_server import (
    FakeDiscord,
    FakeGuild,
    attachment_payload,
    message_payload,
    user_payload,
)
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script, chat_requests, tool_call
from tests.integration.gateway_harness import (
    files_mentioning,
    redis_keys_mentioning,
    running_gateway,
    state_db_mentions,
)

pytestmark = pytest.mark.integration

GUILD, GENERAL = 10, 11
ALICE, BOB, STRANGER = 501, 502, 503


@pytest.fixture
def discord() -> Iterator[FakeDiscord]:
    guild = FakeGuild(GUILD, channels={GENERAL: "general"}, members={ALICE: "alice", BOB: "bob"})
    with FakeDiscord(guilds=[guild]) as server:
        yield server


@pytest.fixture
def settings(
    home: Path, fake_llm: FakeLLM, discord: FakeDiscord, redis_url: str, redis_prefix: str
) -> Settings:
    return load_settings(
        home=home,
        redis_url=redis_url,
        redis_prefix=redis_prefix,
        llm={"base_url": fake_llm.base_url, "model": "m", "max_retries": 0},
        jobs={"mode": "inline"},
        access={"allowed_users": [f"discord:{ALICE}", f"discord:{BOB}"], "admins": []},
        discord={
            "bot_token": discord.token,
            "api_base_url": discord.api_base_url,
            "guild_ready_timeout_s": 0.05,
            "ready_timeout_s": 10,
        },
    )


def push_photo(discord: FakeDiscord, user_id: int) -> None:
    channel = discord.dm_channel_id(user_id)
    photo = attachment_payload("cat.png", 2048, "image/png")
    payload = message_payload(channel, user_payload(user_id, "user"), "", attachments=[photo])
    discord.push_raw({"t": "MESSAGE_CREATE", "d": payload})


def sent_after(discord: FakeDiscord, before: int, n: int) -> list[Any]:
    return discord.wait_for_sent(before + n, timeout=10)[before:]


async def exchange(discord: FakeDiscord, push: Any, n: int = 1) -> list[Any]:
    before = len(discord.sent)
    push()
    return await asyncio.to_thread(sent_after, discord, before, n)


async def test_two_users_dm_and_group_memory_stays_private(
    settings: Settings, discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    fake_llm.handler = Script(
        [
            tool_call("memory", {"action": "add", "target": "user", "content": "Loves oolong tea"}),
            "Noted, Alice.",
            "Hello Bob.",
            "Hi in the group.",
        ]
    )
    async with running_gateway(settings):
        (to_alice,) = await exchange(discord, lambda: discord.push_dm(ALICE, "I love oolong tea"))
        (to_bob,) = await exchange(discord, lambda: discord.push_dm(BOB, "hi"))
        (in_group,) = await exchange(
            discord,
            lambda: discord.push_channel_message(
                GUILD, GENERAL, ALICE, "what do I drink?", mention_bot=True
            ),
        )
    assert to_alice.content == "Noted, Alice." and to_bob.content == "Hello Bob."
    assert to_alice.channel_id == str(discord.dm_channel_id(ALICE))
    assert to_bob.channel_id == str(discord.dm_channel_id(BOB))
    assert in_group.channel_id == str(GENERAL) and in_group.content == "Hi in the group."
    assert all(m.suppress_embeds for m in discord.sent)
    memory = settings.home / "tenants" / f"discord-{ALICE}" / "memories" / "USER.md"
    assert "Loves oolong tea" in memory.read_text(encoding="utf-8")
    requests = chat_requests(fake_llm.requests)
    bob_request, group_request = requests[-2], requests[-1]
    assert "oolong" not in str(bob_request["messages"])
    assert "oolong" not in group_request["messages"][0]["content"]  # isolated group scope


async def test_unknown_user_gets_pairing_code_and_nothing_is_stored(
    settings: Settings, discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    fake_llm.handler = Script(["Welcome aboard."])
    async with running_gateway(settings):
        (code_reply,) = await exchange(
            discord, lambda: discord.push_dm(STRANGER, "my secret plan is zanzibar")
        )
        match = re.search(r"\b([A-HJ-NP-Z2-9]{8})\b", code_reply.content)
        assert match, code_reply.content
        assert not state_db_mentions(settings.home, ["zanzibar"])
        assert fake_llm.requests == []
        db = Database(settings.state_db)
        AccessPolicy(settings, db).approve(match.group(1), "operator")
        db.close()
        (answer,) = await exchange(discord, lambda: discord.push_dm(STRANGER, "hello again"))
    assert answer.content == "Welcome aboard."


async def test_long_reply_is_split_and_bad_input_is_answered(
    settings: Settings, discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    code = "\n".join(f"line_{i} = {i}" for i in range(400))
    long_reply = ("Here you go.\n\n```python\n" + code + "\n```\n\n" + "word " * 1200).strip()
    assert len(long_reply) > 10_000
    fake_llm.handler = Script([long_reply, "still here"])
    async with running_gateway(settings):
        before = len(discord.sent)
        discord.push_dm(ALICE, "give me a long answer")
        expected = len(split_message(long_reply, 2000))
        chunks = await asyncio.to_thread(sent_after, discord, before, expected)
        (unsupported,) = await exchange(discord, lambda: push_photo(discord, ALICE))
        (too_long,) = await exchange(discord, lambda: discord.push_dm(ALICE, "x" * 20_000))
        discord.push_raw({"t": "MESSAGE_CREATE", "d": {"id": "1", "channel_id": "2"}})
        (still,) = await exchange(discord, lambda: discord.push_dm(ALICE, "are you ok?"))
    body = [m for m in discord.sent[before:] if m.content.startswith(("Here", "line", "```"))]
    assert expected >= 6 and all(len(m.content) <= 2000 for m in discord.sent)
    assert "".join(m.content for m in chunks).count("line_399 = 399") == 1
    assert all(m.content.count("```") % 2 == 0 for m in body)
    assert unsupported.content == UNSUPPORTED
    assert too_long.content.startswith("⚠ The message is 20,000 characters long")
    assert still.content == "still here"


async def test_forgetme_erases_everything(
    settings: Settings, discord: FakeDiscord, fake_llm: FakeLLM, redis_url: str
) -> None:
    canary = "canary-kumquat-77"
    fake_llm.handler = Script(
        [
            tool_call("memory", {"action": "add", "target": "user", "content": f"Likes {canary}"}),
            "Saved.",
            "Bob's answer.",
        ]
    )
    async with running_gateway(settings):
        await exchange(discord, lambda: discord.push_dm(ALICE, f"remember {canary}"))
        await exchange(discord, lambda: discord.push_dm(BOB, "bob stays"))
        (warning,) = await exchange(discord, lambda: discord.push_dm(ALICE, "/forgetme"))
        code = re.search(r"/forgetme confirm (\S+)", warning.content)
        assert code, warning.content
        (done,) = await exchange(
            discord, lambda: discord.push_dm(ALICE, f"/forgetme confirm {code.group(1)}")
        )
    assert "erased" in done.content.lower()
    needles = [canary, f"discord:{ALICE}", f"discord-{ALICE}"]
    assert state_db_mentions(settings.home, needles) == []
    assert files_mentioning(settings.home, needles) == []
    assert redis_keys_mentioning(redis_url, needles) == []
    assert state_db_mentions(settings.home, [f"discord:{BOB}"])  # Bob untouched


async def test_group_messages_from_strangers_and_unaddressed_chatter_are_ignored(
    settings: Settings, discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    fake_llm.handler = Script(["Answer for Alice."])
    async with running_gateway(settings):
        discord.push_channel_message(
            GUILD, GENERAL, STRANGER, "hey bot, note kiwi", mention_bot=True
        )
        discord.push_channel_message(GUILD, GENERAL, ALICE, "just chatting about mango")
        # Same channel, so handled after the two above (per-channel order).
        (reply,) = await exchange(
            discord,
            lambda: discord.push_channel_message(
                GUILD, GENERAL, ALICE, "a question for the bot", mention_bot=True
            ),
        )
    assert reply.content == "Answer for Alice."
    assert [m.content for m in discord.sent] == ["Answer for Alice."]
    assert state_db_mentions(settings.home, ["kiwi", "mango"]) == []
    assert len(chat_requests(fake_llm.requests)) == 1


async def test_an_internal_failure_is_told_to_the_user(
    settings: Settings, discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    fake_llm.handler = Script(["never stored"])
    async with running_gateway(settings):
        broken = sqlite3.connect(settings.state_db)
        broken.execute("DROP TABLE outbox")  # the turn's commit will fail
        broken.commit()
        broken.close()
        (reply,) = await exchange(discord, lambda: discord.push_dm(ALICE, "hello?"))
    assert reply.content == INTERNAL_ERROR


async def test_staged_write_approved_with_a_discord_button(
    settings: Settings, discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    fake_llm.handler = Script(
        [
            tool_call("memory", {"action": "add", "target": "user", "content": "Plays the oboe"}),
            "Saved once you approve.",
        ]
    )
    user_md = settings.home / "tenants" / f"discord-{ALICE}" / "memories" / "USER.md"
    async with running_gateway(settings):
        await exchange(discord, lambda: discord.push_dm(ALICE, "/memory approval on"))
        _reply, offer = await exchange(discord, lambda: discord.push_dm(ALICE, "I play oboe"), 2)
        approve = next(c for c in offer.custom_ids if "approve" in c)
        channel = discord.dm_channel_id(ALICE)
        discord.push_button_press(BOB, channel, approve, message_id=offer.id)  # not Bob's
        await asyncio.to_thread(discord.wait_for_callbacks, 1)
        assert not user_md.exists() or "oboe" not in user_md.read_text(encoding="utf-8")
        discord.push_button_press(ALICE, channel, approve, message_id=offer.id)
        answers = await asyncio.to_thread(discord.wait_for_callbacks, 2)
    assert answers[-1].data.get("content") == "Saved to memory." and answers[-1].ephemeral
    assert "Plays the oboe" in user_md.read_text(encoding="utf-8")
