"""Chat commands about the user's account: ``/whoami``, ``/usage``, ``/export``, ``/forgetme``,
and the admin commands ``/pair approve``, ``/allow`` and ``/deny``.

Roles and access are the writing account's (``conversation.account``), never those of the
tenant it is linked into; data commands act on the resolved tenant (``conversation.tenant``).

``/export`` in a platform chat: the router sends the archive as a document. It calls
:func:`export_for_chat` for the file and sends :func:`export_caption` with it instead of
dispatching the command; dispatched directly (the console), the archive is written to a
private temporary directory and the reply names the path.

``/forgetme`` is two-step: the first call answers with a warning and a one-time code valid
for :data:`~gateway.privacy.CONFIRM_TTL_S`; ``/forgetme confirm <code>`` erases everything
through :func:`~gateway.privacy.forget_identity` (every account of a linked identity) and reports.
"""

from __future__ import annotations

import asyncio
import logging

from gateway.access import AccessPolicy, NotRevocable
from gateway.agent.agent import Agent
from gateway.agent.commands import command
from gateway.errors import MnemogateError, NotFound, UserInputError
from gateway.identity import LinkStore
from gateway.limits import TokenBudget
from gateway.pairing import clock_time
from gateway.privacy import (
    ErasureReport,
    confirm_erasure,
    export_bytes,
    export_name,
    export_tenant,
    forget_identity,
    request_erasure,
)
from gateway.routing import Conversation
from gateway.tenants import TenantId

log = logging.getLogger(__name__)
NOT_ADMIN = "Only the bot's admins can do that."
FORGETME_USAGE = "Usage: /forgetme, then /forgetme confirm <code> to erase everything."


def access_policy(agent: Agent) -> AccessPolicy:
    """The access policy over the agent's settings and state.db (cheap to build)."""
    return AccessPolicy(agent.settings, agent.sessions.db)


@command("whoami", "/whoami", "Show who I take you for, your role and the memory used here.")
async def _whoami(agent: Agent, conversation: Conversation, args: str) -> str:
    # Role and access belong to the account that wrote, never to the tenant it links to.
    tenant = conversation.account
    policy = access_policy(agent)
    lines = [f"You are {tenant}."]
    linked = await asyncio.to_thread(LinkStore(agent.sessions.db).accounts, conversation.tenant)
    if len(linked) > 1:
        others = ", ".join(str(a) for a in linked if a != tenant)
        lines.append(
            f"Linked accounts (one shared memory, kept under {conversation.tenant}): {others}."
        )
    if conversation.display_name:
        lines.append(
            f"Display name: {conversation.display_name} (just a label; I know you by the id)."
        )
    lines.append("Role: admin." if policy.is_admin(tenant) else "Role: user.")
    if policy.is_listed(tenant):
        lines.append("Access: allowed by the configuration.")
    elif await asyncio.to_thread(policy.is_granted, tenant):
        lines.append("Access: approved by an admin.")
    elif policy.allow_all:
        lines.append("Access: this bot is open to everyone.")
    scope = agent.scope_for(conversation)
    if scope is None:
        lines.append("Memory here: off (this group does not use memory).")
    elif scope.group is None:
        lines.append("Memory here: your private memory.")
    else:
        lines.append(f"Memory here: your separate memory for this group ({scope.group}).")
    return "\n".join(lines)


@command("usage", "/usage", "Show the tokens you used today and in this conversation.")
async def _usage(agent: Agent, conversation: Conversation, args: str) -> str:
    tenant = conversation.tenant
    budget = TokenBudget(agent.settings, agent.sessions.db)
    today = await asyncio.to_thread(budget.usage_today, tenant)
    live = await asyncio.to_thread(agent.sessions.live_session, tenant, conversation.session_key)
    lines = [f"Tokens today (UTC): {today:,}."]
    if live is None:
        lines.append("This conversation: nothing yet.")
    else:
        lines.append(
            f"This conversation: {live.prompt_tokens + live.completion_tokens:,} tokens "
            f"({live.prompt_tokens:,} prompt, {live.completion_tokens:,} completion)."
        )
    if budget.budget is None:
        lines.append("There is no daily token budget.")
    else:
        left = max(0, budget.budget - today)
        lines.append(
            f"Daily budget: {budget.budget:,} tokens, {left:,} left; it resets at 00:00 UTC."
        )
    return "\n".join(lines)


def export_for_chat(agent: Agent, conversation: Conversation) -> tuple[str, bytes]:
    """(file name, zip bytes) of the tenant's export, for the router to send as a document.

    Raises NotFound when nothing is stored for the tenant.
    """
    tenant = conversation.tenant
    return export_name(tenant), export_bytes(agent.settings, tenant, db=agent.sessions.db)


def export_caption(filename: str, data: bytes) -> str:
    """The text sent with the export document."""
    size = max(1, round(len(data) / 1024))
    return (
        f"Your export is attached: {filename} ({size:,} KB). It holds your memory files, "
        "your conversations (sessions.jsonl), memory changes awaiting approval and your "
        "account records."
    )


@command("export", "/export", "Get a file with all the data I keep about you.", dm_only=True)
async def _export(agent: Agent, conversation: Conversation, args: str) -> str:
    try:
        if conversation.platform == "console":
            path = await asyncio.to_thread(
                export_tenant, agent.settings, conversation.tenant, db=agent.sessions.db
            )
            return f"Your export was written to {path}."
        filename, data = await asyncio.to_thread(export_for_chat, agent, conversation)
    except NotFound:
        return "I don't keep anything about you yet, so there is nothing to export."
    return export_caption(filename, data)


@command(
    "forgetme",
    "/forgetme",
    "Erase everything I keep about you (asks for confirmation first).",
    dm_only=True,
)
async def _forgetme(agent: Agent, conversation: Conversation, args: str) -> str:
    tenant = conversation.tenant
    db = agent.sessions.db
    accounts = await asyncio.to_thread(LinkStore(db).accounts, tenant)
    if not args:
        code, expires = await asyncio.to_thread(request_erasure, db, tenant)
        linked = ""
        if len(accounts) > 1:
            linked = (
                "Your accounts are linked; this erases the whole linked identity — every one "
                f"of {', '.join(str(a) for a in accounts)} and the links between them.\n"
            )
        return (
            linked + "⚠️ This erases everything I keep about you: your memory (in every chat), all "
            "conversations and their search index, memory changes awaiting approval, queued "
            "background work and cached data. It cannot be undone — send /export first if "
            "you want a copy.\n"
            f"To go ahead, send: /forgetme confirm {code}\n"
            f"(valid until {clock_time(expires)})"
        )
    word, _, code = args.partition(" ")
    if word.lower() != "confirm" or not code.strip():
        return FORGETME_USAGE
    if not await asyncio.to_thread(confirm_erasure, db, tenant, code.strip()):
        return "That confirmation code is wrong or has expired. Send /forgetme for a new one."
    policy = access_policy(agent)
    account = conversation.account
    loses_access = not (policy.allow_all or policy.is_listed(account)) and await asyncio.to_thread(
        policy.is_granted, account
    )
    async with agent.session_lock(conversation):
        report = await asyncio.to_thread(forget_identity, agent.settings, accounts, db=db)
    if not report.complete:
        log.warning("erasure of %s incomplete: %s", tenant.namespace, report.not_erased)
    return erasure_reply(report, loses_access=loses_access)


def erasure_reply(report: ErasureReport, *, loses_access: bool) -> str:
    erased = report.erased
    lines = [
        "Done: I erased what I kept about you — "
        f"{erased.get('sessions', 0)} conversation(s) with {erased.get('messages', 0)} "
        f"message(s), {erased.get('files', 0)} stored file(s) (memory and transcripts), "
        f"{erased.get('pending writes', 0)} pending memory change(s), "
        f"{erased.get('queued jobs', 0)} queued job(s) and {erased.get('redis keys', 0)} "
        "cached item(s)."
    ]
    if report.not_erased:
        lines.append("Some things could not be erased yet; the operator has been told:")
        lines.extend(f"  • {what}: {why}" for what, why in report.not_erased.items())
    if loses_access:
        lines.append(
            "Your access approval was erased too: to talk to me again you will need a new "
            "pairing code."
        )
    return "\n".join(lines)


# --- admin --------------------------------------------------------------------------------
@command("pair", "/pair approve <code>", "Admins: approve a user's pairing code.")
async def _pair(agent: Agent, conversation: Conversation, args: str) -> str:
    policy = access_policy(agent)
    if not policy.is_admin(conversation.account):
        return NOT_ADMIN
    action, _, code = args.partition(" ")
    if action.lower() != "approve" or not code.strip():
        return "Usage: /pair approve <code>"
    try:
        approved = await asyncio.to_thread(policy.approve, code.strip(), str(conversation.account))
    except UserInputError as exc:
        return str(exc)
    name = f" ({approved.display_name})" if approved.display_name else ""
    return f"Approved {approved.tenant}{name}: they can talk to me now."


def _tenant_arg(args: str, usage: str) -> TenantId | str:
    """The tenant named in ``args``, or the reply explaining what is wrong."""
    if not args:
        return usage
    try:
        return TenantId.parse(args.split()[0])
    except MnemogateError as exc:
        return str(exc)


@command("allow", "/allow <tenant>", "Admins: let a user talk to me (e.g. telegram:123).")
async def _allow(agent: Agent, conversation: Conversation, args: str) -> str:
    policy = access_policy(agent)
    if not policy.is_admin(conversation.account):
        return NOT_ADMIN
    target = _tenant_arg(args, "Usage: /allow <tenant>, e.g. /allow telegram:123456")
    if isinstance(target, str):
        return target
    if policy.is_listed(target):
        return f"{target} is already allowed by the configuration."
    if await asyncio.to_thread(policy.grant, target, str(conversation.account)):
        return f"{target} may talk to me now."
    return f"{target} was already allowed."


@command("deny", "/deny <tenant>", "Admins: withdraw a user's access.")
async def _deny(agent: Agent, conversation: Conversation, args: str) -> str:
    policy = access_policy(agent)
    if not policy.is_admin(conversation.account):
        return NOT_ADMIN
    target = _tenant_arg(args, "Usage: /deny <tenant>, e.g. /deny telegram:123456")
    if isinstance(target, str):
        return target
    try:
        revoked = await asyncio.to_thread(policy.revoke, target, str(conversation.account))
    except NotRevocable as exc:
        return str(exc)
    note = (
        " Note: access.allow_all is on, so everyone may still talk to me."
        if policy.allow_all
        else ""
    )
    if revoked:
        return f"{target} may no longer talk to me.{note}"
    return f"{target} had no access granted at run time; nothing changed.{note}"
