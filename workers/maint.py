"""Maintenance jobs (``maint`` queue): session titles, memory flush and compression.

Each ``*_session`` function is an RQ entry with primitive arguments; each ``*_body``
receives the worker context explicitly, like every job body. Bodies are synchronous; the
auxiliary-model calls run in a short-lived event loop of their own.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3

from gateway.agent.compression import (
    CompressionPlan,
    child_messages,
    flush_memory,
    plan_compression,
    summarize,
)
from gateway.agent.replay import replay
from gateway.agent.sessions import conversation_of
from gateway.agent.titles import continuation_title, generate_title
from gateway.history import endings, lineage
from gateway.history.records import SessionRecord, StoredMessage, session_from_row
from gateway.history.store import SessionStore
from gateway.history.transcripts import write_transcript
from gateway.tenants import TenantId
from workers.context import WorkerContext
from workers.jobs import notify_provider, run_job

log = logging.getLogger(__name__)


def title_session(tenant_id: str, session_id: str) -> None:
    """RQ entry: give the session a title."""
    run_job("title", tenant_id, session_id, title_body)


def flush_session(tenant_id: str, session_id: str) -> None:
    """RQ entry: let the model save memories before the session's context is dropped."""
    run_job("flush", tenant_id, session_id, flush_body)


def compress_session(tenant_id: str, session_id: str) -> None:
    """RQ entry: summarise the middle of a long session into a continuation session."""
    run_job("compress", tenant_id, session_id, compress_body)


def title_body(ctx: WorkerContext, tenant: TenantId, session_id: str) -> str | None:
    """Title an untitled session from its first exchange; the title actually stored."""
    session = ctx.sessions.get_session(tenant, session_id)
    if session.title is not None or session.incognito:
        return None
    messages = ctx.sessions.messages(tenant, session_id)
    user = next((m.content for m in messages if m.role == "user"), "")
    reply = next((m.content for m in messages if m.role == "assistant" and m.content), "")
    if not user:
        return None
    title = asyncio.run(_title(ctx, user, reply))
    stored = lineage.set_generated_title(ctx.db, tenant, session_id, title)
    if ctx.settings.sessions.write_transcripts:
        write_transcript(ctx.settings.home, ctx.sessions, tenant, session_id)
    return stored


async def _title(ctx: WorkerContext, user: str, reply: str) -> str:
    async with ctx.aux_llm() as aux:
        return await generate_title(aux, user, reply)


def flush_body(ctx: WorkerContext, tenant: TenantId, session_id: str) -> int:
    """Save what matters from the part of the session compression is about to drop."""
    session = ctx.sessions.get_session(tenant, session_id)
    cfg = ctx.settings.sessions
    plan = plan_compression(
        ctx.sessions.messages(tenant, session_id), cfg.protect_first, cfg.protect_last
    )
    if plan is None:
        return 0
    return asyncio.run(_flush(ctx, session, plan))


async def _flush(ctx: WorkerContext, session: SessionRecord, plan: CompressionPlan) -> int:
    scope = conversation_of(session).memory_scope(ctx.settings.groups.memory)
    if scope is None or session.incognito:
        return 0
    if session.user_turns < ctx.settings.memory.flush_min_turns:
        return 0
    async with ctx.aux_llm() as aux:
        changes = await flush_memory(aux, ctx.memory, scope, plan.middle)
    notify_provider(ctx, session, changes, scope)
    return len(changes)


def compress_body(ctx: WorkerContext, tenant: TenantId, session_id: str) -> str | None:
    """Flush, summarise the middle, continue in a child session; the child's id."""
    parent = ctx.sessions.get_session(tenant, session_id)
    if parent.ended_at is not None:
        return None  # already compressed, or the user moved on
    seen = ctx.sessions.messages(tenant, session_id)
    cfg = ctx.settings.sessions
    plan = plan_compression(seen, cfg.protect_first, cfg.protect_last)
    if plan is None:
        return None
    summary, base_title = asyncio.run(_prepare(ctx, parent, plan, seen))
    conversation = conversation_of(parent)
    frozen = ctx.opener.frozen(conversation, incognito=parent.incognito)

    def switch(conn: sqlite3.Connection) -> tuple[str, list[int]] | None:
        row = SessionStore.require(conn, tenant, parent.id)
        if row["ended_at"] is not None:
            return None
        newer = [m for m in ctx.sessions.messages(tenant, parent.id) if m.id > seen[-1].id]
        full = CompressionPlan(plan.head, plan.middle, [*plan.tail, *newer])
        title = lineage.unique_title(conn, tenant, continuation_title(base_title, "Chat"))
        spec = ctx.opener.spec(
            conversation,
            frozen,
            incognito=parent.incognito,
            parent=parent,
            title=title,
            session_key=parent.session_key,
        )
        child_id = ctx.sessions.insert_session(conn, tenant, spec)
        child = session_from_row(SessionStore.require(conn, tenant, child_id))
        ctx.sessions.insert_messages(conn, child, child_messages(full, summary))
        notify = ctx.manager.provider is not None
        rows = endings.end(
            conn, tenant, parent.id, "compression", notify=notify, successor=child_id
        )
        return child_id, rows

    switched = ctx.db.write(switch)
    if switched is None:
        return None
    child_id, rows = switched
    log.info(
        "compressed %s into %s (%d messages summarised)", parent.id, child_id, len(plan.middle)
    )
    ctx.hand_off(rows)  # the provider hears of the end and the switch
    return child_id


async def _prepare(
    ctx: WorkerContext, parent: SessionRecord, plan: CompressionPlan, seen: list[StoredMessage]
) -> tuple[str, str]:
    """Flush memories, then the summary and a base title for the continuation."""
    await _flush(ctx, parent, plan)
    provider_note = ""
    if ctx.manager.provider is not None and not parent.incognito:
        provider_note = ctx.manager.on_pre_compress(
            ctx.provider_context(parent.tenant, parent), replay(plan.middle)
        )
    async with ctx.aux_llm() as aux:
        summary = await summarize(aux, plan.middle, provider_note)
        title = parent.title
        if title is None:
            first_user = next((m.content for m in seen if m.role == "user"), "")
            title = await generate_title(aux, first_user, "")
    return summary, title or "Chat"
