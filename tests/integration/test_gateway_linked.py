"""One person on Telegram and Discord: the fake Telegram and fake Discord drive ONE gateway."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.history.db import Database
from gateway.history.store import SessionStore
from gateway.identity import link_accounts
from gateway.memory.approval import ApprovalStore
from gateway.memory.store import MemoryStore, Operation
from gateway.notices import Notice, NoticeBus
from gateway.settings import Settings, load_settings
from gateway.tenants import MemoryScope, TenantId
from tests.fakes.discord_server import FakeDiscord, FakeGuild
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script, chat_requests, tool_call
from tests.fakes.telegram_server import TOKEN, FakeTelegram
from tests.integration.gateway_harness import (
    files_mentioning,
    running_gateway,
    state_db_mentions,
)

pytestmark = pytest.mark.integration

ALICE_TG, ALICE_DC, MALLORY_DC = 1001, 501, 503
GROUP = -100777
CODE = re.compile(r"link code is ([A-Z2-9]{8})")


@pytest.fixture
def tg() -> Iterator[FakeTelegram]:
    with FakeTelegram() as fake:
        yield fake


@pytest.fixture
def discord() -> Iterator[FakeDiscord]:
    guild = FakeGuild(10, channels={11: "general"}, members={ALICE_DC: "alice"})
    with FakeDiscord(guilds=[guild]) as server:
        yield server


@pytest.fixture
def settings(
    home: Path,
    tg: FakeTelegram,
    discord: FakeDiscord,
    fake_llm: FakeLLM,
    redis_url: str,
    redis_prefix: str,
) -> Settings:
    allowed = [f"telegram:{ALICE_TG}", f"discord:{ALICE_DC}", f"discord:{MALLORY_DC}"]
    return load_settings(
        home=home,
        redis_url=redis_url,
        redis_prefix=redis_prefix,
        llm={"base_url": fake_llm.base_url, "model": "m", "max_retries": 0},
        jobs={"mode": "inline"},
        access={"allowed_users": allowed, "admins": []},
        telegram={"bot_token": TOKEN, "base_url": tg.base_url, "poll_timeout_s": 2},
        discord={
            "bot_token": discord.token,
            "api_base_url": discord.api_base_url,
            "guild_ready_timeout_s": 0.05,
            "ready_timeout_s": 10,
        },
    )


class Chats:
    """Send as Alice on either platform and wait for the gateway's answer there."""

    def __init__(self, tg: FakeTelegram, discord: FakeDiscord) -> None:
        self.tg, self.discord = tg, discord

    async def telegram(self, text: str, chat_id: int = ALICE_TG, **kw: Any) -> str:
        before = len(self.tg.calls("sendMessage"))
        self.tg.push_message(ALICE_TG, chat_id, text, **kw)
        calls = await asyncio.to_thread(self.tg.wait_for_sent, before + 1, 10.0)
        return str(calls[before].params["text"])

    async def on_discord(self, user: int, text: str) -> str:
        before = len(self.discord.sent)
        self.discord.push_dm(user, text)
        sent = await asyncio.to_thread(self.discord.wait_for_sent, before + 1, 10)
        assert sent[before].channel_id == str(self.discord.dm_channel_id(user))
        return str(sent[before].content)

    async def link(self) -> None:
        """Telegram issues a code; Discord claims and confirms it."""
        code_reply = await self.telegram("/link")
        match = CODE.search(code_reply)
        assert match, code_reply
        asked = await self.on_discord(ALICE_DC, f"/link {match.group(1)}")
        assert f"/link {match.group(1)} confirm" in asked
        done = await self.on_discord(ALICE_DC, f"/link {match.group(1)} confirm")
        assert f"Linked discord:{ALICE_DC} to telegram:{ALICE_TG}" in done, done


def _system(request: dict[str, Any]) -> str:
    return str(request["messages"][0]["content"])


async def test_linked_accounts_share_memory_and_search_until_unlinked(
    settings: Settings, tg: FakeTelegram, discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    fake_llm.handler = Script(
        [
            tool_call(
                "memory", {"action": "add", "target": "user", "content": "Allergic to peanuts"}
            ),
            "Noted.",
            tool_call("memory", {"action": "add", "target": "user", "content": "Plays the cello"}),
            "Nice.",
            "You are allergic to peanuts.",
            tool_call("session_search", {"query": "peanuts"}),
            "Found it.",
            "I don't know.",
        ]
    )
    chats = Chats(tg, discord)
    async with running_gateway(settings):
        assert await chats.telegram("I am allergic to peanuts") == "Noted."
        assert await chats.on_discord(ALICE_DC, "I play the cello") == "Nice."
        await chats.link()
        assert await chats.on_discord(ALICE_DC, "what am I allergic to?") == (
            "You are allergic to peanuts."
        )
        linked_turn = chat_requests(fake_llm.requests)[-1]
        assert await chats.on_discord(ALICE_DC, "when did I mention peanuts?") == "Found it."
        search_result = chat_requests(fake_llm.requests)[-1]["messages"][-1]
        whoami = await chats.on_discord(ALICE_DC, "/whoami")
        unlinked = await chats.on_discord(ALICE_DC, "/unlink")
        assert await chats.on_discord(ALICE_DC, "what am I allergic to?") == "I don't know."
        separate_turn = chat_requests(fake_llm.requests)[-1]
    # The next Discord session's prompt holds the Telegram fact and its own merged one.
    assert "Allergic to peanuts" in _system(linked_turn)
    assert "Plays the cello" in _system(linked_turn)
    assert search_result["role"] == "tool" and "allergic to peanuts" in search_result["content"]
    assert f"telegram:{ALICE_TG}" in whoami and "Linked accounts" in whoami
    assert f"Unlinked discord:{ALICE_DC} from telegram:{ALICE_TG}" in unlinked
    assert "peanuts" not in _system(separate_turn) and "cello" not in _system(separate_turn)
    shared = settings.home / "tenants" / f"telegram-{ALICE_TG}" / "memories" / "USER.md"
    assert "Plays the cello" in shared.read_text(encoding="utf-8")  # history stays


async def test_forgetme_from_discord_erases_the_whole_linked_identity(
    settings: Settings, tg: FakeTelegram, discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    fake_llm.handler = Script(
        [
            tool_call("memory", {"action": "add", "target": "user", "content": "Lives in Tromsø"}),
            "Noted.",
            "Hello zebrafinch.",
        ]
    )
    chats = Chats(tg, discord)
    async with running_gateway(settings):
        await chats.telegram("I live in Tromsø")
        await chats.on_discord(ALICE_DC, "my bird is a zebrafinch")
        await chats.link()
        warning = await chats.on_discord(ALICE_DC, "/forgetme")
        assert f"telegram:{ALICE_TG}" in warning and f"discord:{ALICE_DC}" in warning
        code = re.search(r"/forgetme confirm (\S+)", warning)
        assert code, warning
        done = await chats.on_discord(ALICE_DC, f"/forgetme confirm {code.group(1)}")
        assert done.startswith("Done"), done
        again = await chats.on_discord(ALICE_DC, "/whoami")
    assert "Linked accounts" not in again
    assert state_db_mentions(settings.home, ["Tromsø", "zebrafinch"]) == []
    assert files_mentioning(settings.home, ["Tromsø", "zebrafinch"]) == []


async def test_brute_forcing_codes_locks_out_and_a_group_code_is_void(
    settings: Settings, tg: FakeTelegram, discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    chats = Chats(tg, discord)
    async with running_gateway(settings):
        replies = [await chats.on_discord(MALLORY_DC, f"/link WRONG{n}AA") for n in range(5)]
        code = CODE.search(await chats.telegram("/link"))
        assert code
        refused = await chats.on_discord(MALLORY_DC, f"/link {code.group(1)}")
        # A code typed in a group is refused and voided, even for its rightful user.
        fresh = CODE.search(await chats.telegram("/link"))
        assert fresh
        in_group = await chats.telegram(
            f"/link {fresh.group(1)}", chat_id=GROUP, chat_type="supergroup"
        )
        void = await chats.on_discord(ALICE_DC, f"/link {fresh.group(1)}")
    assert "4 more wrong attempts" in replies[0]
    assert "locked" in replies[-1] and "locked" in refused
    assert "void" in in_group
    assert "wrong, expired or already used" in void
    assert "Linked" not in void


async def test_linking_never_grants_access_or_admin_rights(
    settings: Settings, tg: FakeTelegram, discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    stranger = 777
    access = settings.access.model_copy(update={"admins": [f"telegram:{ALICE_TG}"]})
    settings = settings.model_copy(update={"access": access})
    db = Database(settings.state_db)
    memory = MemoryStore(settings.home, settings.memory)
    admin = TenantId.of("telegram", ALICE_TG)
    link_accounts(db, settings.home, memory, admin, TenantId.of("discord", ALICE_DC), by="t")
    link_accounts(db, settings.home, memory, admin, TenantId.of("discord", stranger), by="t")
    db.close()
    chats = Chats(tg, discord)
    async with running_gateway(settings):
        pairing = await chats.on_discord(stranger, "hello, I am linked")
        allow = await chats.on_discord(ALICE_DC, f"/allow discord:{stranger}")
        whoami = await chats.on_discord(ALICE_DC, "/whoami")
        as_admin = await chats.telegram("/whoami")
    assert "pairing code" in pairing  # linked into an allowed tenant, still a stranger
    assert allow == "Only the bot's admins can do that."
    assert "Role: user." in whoami and f"You are discord:{ALICE_DC}." in whoami
    assert "Role: admin." in as_admin and f"discord:{ALICE_DC}" in as_admin


async def test_a_linked_discord_account_approves_the_shared_pending_change(
    settings: Settings, tg: FakeTelegram, discord: FakeDiscord
) -> None:
    owner = TenantId.of("telegram", ALICE_TG)
    db = Database(settings.state_db)
    staged = ApprovalStore(db).stage(
        MemoryScope.private(owner), "user", [Operation("add", "Drinks rooibos")], origin="user-chat"
    )
    memory = MemoryStore(settings.home, settings.memory)
    link_accounts(db, settings.home, memory, owner, TenantId.of("discord", ALICE_DC), by="t")
    db.close()
    async with running_gateway(settings):
        discord.push_button_press(
            ALICE_DC, discord.dm_channel_id(ALICE_DC), f"mem:approve:{staged.id}"
        )
        [answer] = await asyncio.to_thread(discord.wait_for_callbacks, 1, 10.0)
    assert answer.data["content"] == "Saved to memory."
    assert [e.text for e in memory.read(MemoryScope.private(owner), "user")] == ["Drinks rooibos"]


async def test_a_notice_for_a_linked_discord_session_is_delivered_on_discord(
    settings: Settings, tg: FakeTelegram, discord: FakeDiscord, fake_llm: FakeLLM
) -> None:
    owner = TenantId.of("telegram", ALICE_TG)
    db = Database(settings.state_db)
    memory = MemoryStore(settings.home, settings.memory)
    link_accounts(db, settings.home, memory, owner, TenantId.of("discord", ALICE_DC), by="t")
    db.close()
    chats = Chats(tg, discord)
    async with running_gateway(settings) as gateway:
        await chats.on_discord(ALICE_DC, "hello")
        [session] = SessionStore(gateway.app.db).list_sessions(owner, limit=5)
        bus = NoticeBus(gateway.app.keys, client=gateway.app.redis)
        assert bus.publish(owner, Notice.for_session(session, "💾 Memory updated"))
        stop = asyncio.Event()
        delivering = asyncio.create_task(gateway.deliver_notices(stop, poll_s=0.2))
        before = len(discord.sent)
        sent = await asyncio.to_thread(discord.wait_for_sent, before + 1, 10)
        stop.set()
        await delivering
    assert sent[before].content == "💾 Memory updated"
    assert sent[before].channel_id == str(discord.dm_channel_id(ALICE_DC))
    assert tg.calls("sendMessage") == []
