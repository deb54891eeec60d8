"""Chat commands about curated memory: ``/memory`` and its sub-commands, and ``/forget``.

``/memory`` lists the memory, and with a sub-command from :data:`MEMORY_SUBCOMMANDS` (a table
like the command table itself) lists, approves or rejects staged writes and sets the
tenant's approval preference. Every command here shows or changes private memory, so all
work only in DMs. Staged writes live in state.db
(:class:`~gateway.memory.approval.ApprovalStore`, built on demand over the agent's
database); deciding them needs no LLM.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from gateway.agent.agent import Agent
from gateway.agent.commands import command
from gateway.errors import MemoryFileCorrupt, MnemogateError, NotFound, UserInputError
from gateway.memory.approval import ApprovalStore, PendingWrite, parse_write_id
from gateway.memory.operations import Operation, WriteResult
from gateway.memory.store import Target
from gateway.routing import Conversation
from gateway.tenants import MemoryScope

SubHandler = Callable[[Agent, Conversation, str], Awaitable[str]]
MEMORY_SUBCOMMANDS: dict[str, SubHandler] = {}
MEMORY_USAGE = "/memory [pending | approve <id|all> | reject <id> | approval on|off]"
SECTIONS: tuple[tuple[Target, str], ...] = (
    ("user", "About you (USER.md)"),
    ("memory", "My notes (MEMORY.md)"),
)
SHORT_LABELS: tuple[tuple[Target, str], ...] = (("user", "your profile"), ("memory", "my notes"))


def subcommand(name: str) -> Callable[[SubHandler], SubHandler]:
    def register(func: SubHandler) -> SubHandler:
        MEMORY_SUBCOMMANDS[name] = func
        return func

    return register


def approvals(agent: Agent) -> ApprovalStore:
    """The approval store over the agent's state.db (cheap: no connection of its own)."""
    return ApprovalStore(agent.sessions.db)


def _date(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M")


@command(
    "memory",
    MEMORY_USAGE,
    "Show what I remember about you (usage, origins) and changes awaiting your approval.",
    dm_only=True,
)
async def _memory(agent: Agent, conversation: Conversation, args: str) -> str:
    name, _, rest = args.strip().partition(" ")
    handler = MEMORY_SUBCOMMANDS.get(name.lower())
    if handler is None:
        return f"Usage: {MEMORY_USAGE}"
    return await handler(agent, conversation, rest.strip())


@subcommand("")
async def _listing(agent: Agent, conversation: Conversation, args: str) -> str:
    scope = agent.scope_for(conversation)
    if scope is None:
        return "Memory is switched off in this chat."
    return await asyncio.to_thread(render_memory_listing, agent, scope)


def unreadable_file_help(exc: MemoryFileCorrupt, scope: MemoryScope, target: Target) -> str:
    """What is wrong with a memory file nobody can read, and how the operator fixes it."""
    group = f" --group {scope.group}" if scope.group is not None else ""
    return (
        f"⚠ I can't read {exc.path.name}: it is {exc.reason}, probably from an edit by "
        f"hand. A copy was kept as {exc.backup.name}. Nothing else was changed. To fix it, "
        f"re-save the file as UTF-8, or empty it with `mnemogate memory reset --tenant "
        f"{scope.tenant} --target {target}{group}` (the copy stays)."
    )


def render_memory_listing(agent: Agent, scope: MemoryScope) -> str:
    out: list[str] = []
    for target, label in SECTIONS:
        try:
            entries = agent.memory.read(scope, target)
        except MemoryFileCorrupt as exc:
            out.extend([label, f"  {unreadable_file_help(exc, scope, target)}", ""])
            continue
        used, limit = agent.memory.usage(scope, target)
        out.append(f"{label} — {used:,}/{limit:,} chars")
        if not entries:
            out.append("  (empty)")
        for i, entry in enumerate(entries, 1):
            when = (
                datetime.fromtimestamp(entry.updated_at, UTC).strftime("%Y-%m-%d")
                if entry.updated_at
                else "unknown date"
            )
            out.append(f"  {i}. {entry.text}\n     [{entry.origin}, {when}]")
        out.append("")
    return "\n".join(out).rstrip()


@subcommand("pending")
async def _pending(agent: Agent, conversation: Conversation, args: str) -> str:
    store = approvals(agent)
    waiting = await asyncio.to_thread(store.pending, conversation.tenant)
    if not waiting:
        on = await asyncio.to_thread(
            store.enabled, conversation.tenant, default=agent.settings.memory.write_approval
        )
        state = "on" if on else "off"
        return f"No memory changes are waiting for your approval (write approval is {state})."
    lines = [
        "Memory changes waiting for your approval (/memory approve <id|all>, /memory reject <id>):"
    ]
    lines.extend(f"  {format_pending(write)}" for write in waiting)
    return "\n".join(lines)


def format_pending(write: PendingWrite) -> str:
    """``#3 user: + "Prefers metric units" — background-review, 2024-05-01 10:00``."""
    where = f" (in group {write.scope.group})" if write.scope.group is not None else ""
    return f"#{write.id} {write.describe()}{where} — {write.origin}, {_date(write.created_at)}"


@subcommand("approve")
async def _approve(agent: Agent, conversation: Conversation, args: str) -> str:
    wanted = args.lower()
    write_id = parse_write_id(wanted)
    if wanted != "all" and write_id is None:
        return "Usage: /memory approve <id|all> — /memory pending lists the ids."
    store = approvals(agent)
    try:
        done = await asyncio.to_thread(
            store.approve,
            conversation.tenant,
            "all" if write_id is None else write_id,
            agent.memory,
        )
    except (NotFound, UserInputError) as exc:
        return str(exc)
    if not done:
        return "No memory changes are waiting for your approval."
    return "\n".join(_decision(write, result) for write, result in done)


def _decision(write: PendingWrite, result: WriteResult) -> str:
    if result.success:
        return f"✅ #{write.id} saved: {write.describe()}"
    return (
        f"⚠️ #{write.id} could not be saved and was marked failed: "
        f"{first_sentence(result.error or 'unknown error')} (the change was {write.describe()})"
    )


def first_sentence(text: str) -> str:
    """The first sentence of an error written for the model (the rest says how to retry)."""
    head, found, _ = text.partition(". ")
    return head + "." if found else text


@subcommand("reject")
async def _reject(agent: Agent, conversation: Conversation, args: str) -> str:
    write_id = parse_write_id(args)
    if write_id is None:
        return "Usage: /memory reject <id> — /memory pending lists the ids."
    try:
        write = await asyncio.to_thread(approvals(agent).reject, conversation.tenant, write_id)
    except (NotFound, UserInputError) as exc:
        return str(exc)
    return f"❌ #{write.id} dropped; nothing was saved."


@subcommand("approval")
async def _approval(agent: Agent, conversation: Conversation, args: str) -> str:
    store = approvals(agent)
    wanted = args.lower()
    if wanted not in {"on", "off", ""}:
        return "Usage: /memory approval on|off"
    if wanted:
        await asyncio.to_thread(store.set_enabled, conversation.tenant, wanted == "on")
    on = await asyncio.to_thread(
        store.enabled, conversation.tenant, default=agent.settings.memory.write_approval
    )
    if on:
        return (
            "Write approval is on: new memories wait for you in /memory pending until "
            "you approve or reject them."
        )
    return "Write approval is off: I save memories directly (you can /forget them any time)."


@command("forget", "/forget <text>", "Remove every memory entry containing the text.", dm_only=True)
async def _forget(agent: Agent, conversation: Conversation, args: str) -> str:
    if not args:
        return "Usage: /forget <text> — removes every memory entry that contains the text."
    scope = agent.scope_for(conversation)
    if scope is None:
        return "Memory is switched off in this chat."
    return await asyncio.to_thread(forget, agent, scope, args)


def forget(agent: Agent, scope: MemoryScope, text: str) -> str:
    """Remove the entries of both files that contain ``text`` (ignoring case), one batch per
    file so each file loses all of them or none; the reply says what happened."""
    needle = text.casefold()
    removed: list[str] = []
    problems: list[str] = []
    count = 0
    for target, label in SHORT_LABELS:
        try:
            matching = [
                e.text for e in agent.memory.read(scope, target) if needle in e.text.casefold()
            ]
            if not matching:
                continue
            operations = [Operation("remove", old_text=entry) for entry in matching]
            result = agent.memory.apply(scope, target, operations, origin="user-chat")
        except MnemogateError as exc:
            problems.append(f"{label}: {exc}")
            continue
        if result.success:
            count += len(matching)
            removed.append(f"{len(matching)} from {label}")
        else:
            problems.append(f"{label}: {first_sentence(result.error or 'unknown error')}")
    if count:
        noun = "entry" if count == 1 else "entries"
        reply = f"Forgot {count} {noun} ({', '.join(removed)})."
    elif not problems:
        return f"Nothing in your memory contains “{text}”."
    else:
        reply = "Nothing was removed."
    if problems:
        reply += " Not changed: " + "; ".join(problems)
    return reply
