"""Chat commands ``/link`` and ``/unlink``: a person links their accounts themselves.

``/link`` (direct message) answers a one-time code of the writing account. ``/link CODE``
in a direct message of another account claims it and says what linking will do; ``/link
CODE confirm`` (same account, while the code is valid) links and merges (see
:mod:`gateway.identity.merge`). A code typed in a group is refused and voided — it has been
seen by others. Both accounts must be allowed on their own (the gateway checks the writing
one; the issuer is checked here): linking never grants access.

``/unlink`` in a direct message of a linked account detaches it: its next turns use its own
tenant again; what it said while linked stays in the shared history.
"""

from __future__ import annotations

import asyncio

from gateway.access import AccessPolicy
from gateway.agent.agent import Agent
from gateway.agent.commands import command
from gateway.errors import UserInputError
from gateway.identity.links import LinkStore
from gateway.identity.merge import link_accounts
from gateway.pairing import clock_time
from gateway.routing import Conversation

LINK_USAGE = "Usage: /link (get a code), /link <code>, then /link <code> confirm."


@command(
    "link",
    "/link [code [confirm]]",
    "Link your accounts on other platforms to this memory (one-time code).",
)
async def _link(agent: Agent, conversation: Conversation, args: str) -> str:
    links = LinkStore(agent.sessions.db)
    words = args.split()
    if conversation.chat_type != "dm":
        if words:
            await asyncio.to_thread(links.void, words[0])
            return (
                "Link codes only work in a direct message with me. That code was shown "
                "here, so it is void now: send /link in a direct message for a new one."
            )
        return "/link only works in a direct message with me."
    account = conversation.account
    try:
        if not words:
            issued = await asyncio.to_thread(links.issue_code, account)
            return (
                f"Your link code is {issued.code} (valid until {clock_time(issued.expires_at)}, "
                "single use).\nIn a direct message with me from your other account, send "
                f"/link {issued.code}. That account then shares this account's memory: its "
                "conversations move here and its memory entries are merged in."
            )
        if len(words) > 2 or (len(words) == 2 and words[1].lower() != "confirm"):
            return LINK_USAGE
        if len(words) == 1:
            code = await asyncio.to_thread(links.claim, words[0], account)
            await asyncio.to_thread(links.check_linkable, code.issuer, account)
            return (
                f"This links {account} to {code.issuer}: from then on both use "
                f"{code.issuer}'s memory. Your conversations here move into it and your "
                "memory entries are merged (entries that do not fit are kept as pending "
                "changes for you to decide).\n"
                f"To go ahead, send: /link {code.code} confirm "
                f"(until {clock_time(code.expires_at)})"
            )
        code = await asyncio.to_thread(links.redeem, words[0], account)
        if not AccessPolicy(agent.settings, agent.sessions.db).is_allowed(code.issuer):
            return f"{code.issuer} may not talk to me, so it cannot be linked."
        async with agent.session_lock(conversation):
            report = await asyncio.to_thread(
                link_accounts,
                agent.sessions.db,
                agent.settings.home,
                agent.memory,
                code.issuer,
                account,
                by=str(account),
            )
    except UserInputError as exc:
        return str(exc)
    return "\n".join(report.lines())


@command(
    "unlink",
    "/unlink",
    "Stop this account from using the memory it is linked to.",
    dm_only=True,
)
async def _unlink(agent: Agent, conversation: Conversation, args: str) -> str:
    account = conversation.account
    try:
        was = await asyncio.to_thread(LinkStore(agent.sessions.db).unlink, account)
    except UserInputError as exc:
        return str(exc)
    if was is None:
        return f"{account} is not linked to another account."
    return (
        f"Unlinked {account} from {was}. From your next message on I use this account's own "
        f"memory; what you said while linked stays in {was}'s history."
    )
