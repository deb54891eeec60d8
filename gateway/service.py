"""The gateway: one inbound message from any platform → authorised, answered, delivered.

Order of a message (SPEC §5, §7, §8): skip what is not for us (bots, unaddressed group
chatter), authorise (unknown DM users get a pairing code, at most one reply a minute;
nothing they send is stored),
claim the update (handled once across restarts), rate limit and token budget, chat
commands without the LLM, otherwise a turn with "typing…" shown; the reply is split to the
platform's limit; staged memory writes come with Approve/Reject buttons where the platform
has them. Notices from background work are delivered after the reply they follow.
"""

from __future__ import annotations

import asyncio
import logging

from gateway.access import AccessPolicy
from gateway.agent.account_commands import export_caption, export_for_chat
from gateway.agent.commands import COMMANDS
from gateway.agent.dispatch import dispatch, parse_command
from gateway.agent.replies import cap_reply
from gateway.app import App
from gateway.errors import MnemogateError, NotFound, UserInputError
from gateway.identity import LinkStore
from gateway.limits import Limits
from gateway.memory.approval import ApprovalStore, PendingWrite, parse_write_id
from gateway.notices import Notice
from gateway.observability import metrics
from gateway.platforms.base import (
    BUTTON_PREFIX,
    Adapter,
    ButtonPress,
    InboundMessage,
    OutboundMessage,
)
from gateway.platforms.ledger import UpdateLedger
from gateway.routing import Conversation
from gateway.tenants import TenantId

log = logging.getLogger(__name__)

UNSUPPORTED = "I can only read text messages for now — please send your message as text."
INTERNAL_ERROR = "Sorry — something went wrong on my side. Please try again in a moment."
APPROVE, REJECT = f"{BUTTON_PREFIX}approve:", f"{BUTTON_PREFIX}reject:"


class Gateway:
    """Routes inbound messages of every connected platform through the agent."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.access = AccessPolicy(app.settings, app.db)
        self.limits = Limits.from_settings(app.settings, app.db)
        self.ledger = UpdateLedger(app.db)
        self.approvals = ApprovalStore(app.db)
        self.links = LinkStore(app.db)
        self.adapters: dict[str, Adapter] = {}

    def attach(self, adapter: Adapter) -> None:
        self.adapters[adapter.platform] = adapter

    @staticmethod
    def command_menu() -> list[tuple[str, str]]:
        """(command, description) pairs platforms show in their menus."""
        return [(c.name, c.help[:256]) for c in COMMANDS.values()]

    # --- inbound ------------------------------------------------------------------------
    async def on_message(self, message: InboundMessage) -> None:
        """The adapters' handler; never raises (errors are logged, the user told)."""
        try:
            await self._handle(message)
        except Exception:
            log.exception("handling %s update %s failed", message.platform, message.update_id)
            try:
                await self._send_text(message, INTERNAL_ERROR)
            except Exception:
                log.exception("could not tell the user about the failure either")

    async def _handle(self, message: InboundMessage) -> None:
        if message.is_bot:
            return
        require_mention = self.app.settings.groups.require_mention
        if message.chat_type == "group" and require_mention and not message.addressed:
            return
        # Access, the stranger rate limit and the update ledger are about the ACCOUNT that
        # wrote; linking never grants access. Only then is it resolved to its tenant.
        tenant = message.tenant
        conversation = message.conversation()
        if not self.access.is_allowed(tenant):
            if message.chat_type != "dm":
                return  # strangers in groups are ignored without a word
            due = await asyncio.to_thread(self.limits.rate.stranger_reply_due, tenant)
            if not due:
                return  # one pairing reply per window; a flood is not answered
            reply = await asyncio.to_thread(self.access.pairing_reply, conversation)
            if reply:
                await self._send_text(message, reply)
            return
        claimed = await asyncio.to_thread(
            self.ledger.claim, tenant, message.platform, message.update_id
        )
        if not claimed:
            metrics.duplicate_update(message.platform)
            log.info("update %s/%s already handled", message.platform, message.update_id)
            return
        try:
            await self._answer(message)
        except BaseException:
            await asyncio.to_thread(
                self.ledger.release, tenant, message.platform, message.update_id
            )
            raise
        await asyncio.to_thread(self.ledger.finish, tenant, message.platform, message.update_id)

    async def _resolved(self, message: InboundMessage) -> Conversation:
        """The message's conversation with its memory owned by the account's tenant."""
        tenant = await asyncio.to_thread(self.links.resolve, message.tenant)
        return message.conversation().resolved(tenant)

    async def _answer(self, message: InboundMessage) -> None:
        conversation = await self._resolved(message)
        if message.kind != "text" or not message.text.strip():
            if message.kind != "text":
                await self._send_text(message, UNSUPPORTED)
            return
        decision = await asyncio.to_thread(self.limits.check, conversation.tenant)
        if not decision.allowed:
            if decision.reply:
                await self._send_text(message, decision.reply)
            return
        parsed = parse_command(message.text)
        if parsed is not None and parsed[0] == "export":
            await self._export(message, conversation)
            return
        answer = await dispatch(self.app.agent, conversation, message.text)
        if answer is not None:
            await self._send_text(message, answer)
            return
        adapter = self.adapters[message.platform]
        try:
            async with adapter.typing(message.chat_id, message.thread_id):
                result = await self.app.agent.run_turn(
                    conversation, message.text, platform_message_id=message.message_id
                )
        except UserInputError as exc:
            await self._send_text(message, f"⚠ {exc}")
            return
        await self._send_reply(message, result.reply or "(no answer)")
        for write in result.staged:
            await self._offer_approval(message, write)

    async def _export(self, message: InboundMessage, conversation: Conversation) -> None:
        if message.chat_type != "dm":
            await self._send_text(message, "/export only works in a direct message with me.")
            return
        try:
            filename, data = await asyncio.to_thread(export_for_chat, self.app.agent, conversation)
        except NotFound as exc:
            await self._send_text(message, str(exc))
            return
        await self.adapters[message.platform].send(
            OutboundMessage(
                chat_id=message.chat_id,
                text=export_caption(filename, data),
                document=(filename, data),
            )
        )

    # --- buttons: approve/reject staged memory writes ----------------------------------
    async def _offer_approval(self, message: InboundMessage, write: PendingWrite) -> None:
        text = f"📝 Memory change waiting for your approval (#{write.id}):\n{write.describe()}"
        await self.adapters[message.platform].send(
            OutboundMessage(
                chat_id=message.chat_id,
                text=text,
                thread_id=message.thread_id,
                buttons=(("Approve", f"{APPROVE}{write.id}"), ("Reject", f"{REJECT}{write.id}")),
            )
        )

    async def on_button(self, press: ButtonPress) -> str | None:
        """Approve/Reject presses; only the tenant who owns a staged write can decide it."""
        action, _, raw_id = press.data.rpartition(":")
        write_id = parse_write_id(raw_id)
        if write_id is None or f"{action}:" not in (APPROVE, REJECT):
            log.warning(
                "ignored a %s button press with unknown data %.80r", press.platform, press.data
            )
            return None
        if not self.access.is_allowed(press.tenant):
            return "You are not allowed to use this bot."
        tenant = await asyncio.to_thread(self.links.resolve, press.tenant)
        try:
            if f"{action}:" == APPROVE:
                done = await asyncio.to_thread(
                    self.approvals.approve, tenant, write_id, self.app.memory
                )
                return (
                    "Saved to memory."
                    if all(r.success for _, r in done)
                    else ("That change no longer applies; nothing was saved.")
                )
            await asyncio.to_thread(self.approvals.reject, tenant, write_id)
            return "Discarded."
        except (NotFound, UserInputError) as exc:
            return str(exc)

    # --- outbound -----------------------------------------------------------------------
    async def _send_reply(self, message: InboundMessage, reply: str) -> None:
        """A turn's reply within ``agent.max_reply_chars``; an over-long one also as a file."""
        capped = cap_reply(reply, self.app.settings.agent.max_reply_chars)
        await self._send_text(message, capped.text)
        if capped.document is not None:
            log.info(
                "reply of %d characters to %s cut; sent whole as a file",
                len(reply),
                message.tenant.namespace,
            )
            await self.adapters[message.platform].send(
                OutboundMessage(
                    chat_id=message.chat_id, thread_id=message.thread_id, document=capped.document
                )
            )

    async def _send_text(self, message: InboundMessage, text: str) -> None:
        adapter = self.adapters[message.platform]
        reply_to = message.message_id if message.chat_type == "group" else None
        for chunk in adapter.split(text):
            await adapter.send(
                OutboundMessage(
                    chat_id=message.chat_id,
                    text=chunk,
                    thread_id=message.thread_id,
                    reply_to_message_id=reply_to,
                )
            )
            reply_to = None

    async def deliver_notices(self, stop: asyncio.Event, *, poll_s: float = 5.0) -> None:
        """Deliver background notices (e.g. "💾 Memory updated") until ``stop`` is set."""
        while not stop.is_set():
            tenant = await self.app.notices.next_ready(poll_s)
            if tenant is None:
                continue
            for notice in await self.app.notices.take(tenant):
                await self._deliver(tenant, notice)

    async def _deliver(self, tenant: TenantId, notice: Notice) -> None:
        # The notice's own platform: a Discord account linked into a Telegram tenant gets
        # its notices on Discord.
        adapter = self.adapters.get(notice.platform)
        if adapter is None or self.app.settings.memory.notifications == "off":
            return
        # After the reply it follows: wait for that conversation's turn to finish.
        async with self.app.agent.locks.hold(f"{tenant}|{notice.session_key}"):
            try:
                for chunk in adapter.split(notice.text):
                    await adapter.send(
                        OutboundMessage(
                            chat_id=notice.chat_id, text=chunk, thread_id=notice.thread_id
                        )
                    )
            except MnemogateError as exc:
                log.warning("notice for %s not delivered: %s", tenant.namespace, exc)

    async def close(self) -> None:
        await asyncio.to_thread(self.limits.close)
