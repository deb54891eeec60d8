"""Opening sessions: capture the frozen prompt (memory snapshot, provider block and tools).

Used by the agent for new sessions (and for imported sessions resumed without a prompt) and
by the compression job for continuations, so all freeze the prompt the same way. Replacing
the live session (``/new``, ``/reset``, idle) and idle expiry end it through
:mod:`gateway.history.endings`, in the transaction that opens its successor.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import replace

from gateway.agent.prompt import FrozenPrompt, build_frozen_prompt
from gateway.history import endings, lineage
from gateway.history.records import NewSession, SessionRecord
from gateway.history.store import SessionStore
from gateway.memory.store import MemoryStore
from gateway.routing import ChatType, Conversation
from gateway.settings import Settings
from gateway.tenants import PLATFORMS, TenantId
from providers.manager import MemoryManager


class SessionOpener:
    """Freezes prompts and opens sessions for conversations."""

    def __init__(
        self,
        settings: Settings,
        sessions: SessionStore,
        memory: MemoryStore,
        providers: MemoryManager,
    ) -> None:
        self.settings = settings
        self.sessions = sessions
        self.memory = memory
        self.providers = providers

    def frozen(self, conversation: Conversation, *, incognito: bool = False) -> FrozenPrompt:
        """The system prompt and tools a session of ``conversation`` starting now would get."""
        scope = conversation.memory_scope(self.settings.groups.memory)
        with_provider = not incognito
        return build_frozen_prompt(
            self.settings.agent,
            self.memory,
            conversation,
            scope,
            incognito=incognito,
            provider_block=self.providers.system_prompt_block() if with_provider else "",
            provider_tools=self.providers.tool_schemas() if with_provider else (),
        )

    def spec(
        self,
        conversation: Conversation,
        frozen: FrozenPrompt,
        *,
        incognito: bool = False,
        parent: SessionRecord | None = None,
        title: str | None = None,
        session_key: str | None = None,
    ) -> NewSession:
        return NewSession(
            session_key=session_key or conversation.session_key,
            source=conversation.platform,
            system_prompt=frozen.system_prompt,
            tools_json=frozen.tools_json,
            scope_key=conversation.search_scope_key(),
            started_at=time.time(),
            chat_id=conversation.chat_id,
            chat_type=conversation.chat_type,
            model=self.settings.llm.model,
            parent_id=parent.id if parent else None,
            title=title,
            incognito=incognito,
        )

    def open(
        self,
        conversation: Conversation,
        *,
        incognito: bool = False,
        parent: SessionRecord | None = None,
        title: str | None = None,
    ) -> SessionRecord:
        """Capture a frozen prompt from the memory on disk now and open a session."""
        frozen = self.frozen(conversation, incognito=incognito)
        spec = self.spec(conversation, frozen, incognito=incognito, parent=parent, title=title)

        def insert(conn: sqlite3.Connection) -> str:
            return self.sessions.insert_session(conn, conversation.tenant, spec)

        session_id = self.sessions.db.write(insert)
        return self.sessions.get_session(conversation.tenant, session_id)

    def replace(
        self, conversation: Conversation, *, incognito: bool, reason: endings.Reason
    ) -> tuple[SessionRecord, list[int]]:
        """End the live session(s) of the conversation and open another, in one transaction;
        the new session and the outbox rows telling the provider (run them after commit)."""
        frozen = self.frozen(conversation, incognito=incognito)
        spec = self.spec(conversation, frozen, incognito=incognito)
        tenant, notify = conversation.tenant, self.providers.provider is not None

        def write(conn: sqlite3.Connection) -> tuple[str, list[int]]:
            # Read inside the transaction: a compression may have opened a continuation.
            live = conn.execute(
                "SELECT id FROM sessions WHERE tenant_id = ? AND session_key = ? "
                "AND ended_at IS NULL ORDER BY started_at, rowid",
                (str(tenant), spec.session_key),
            ).fetchall()
            session_id = self.sessions.insert_session(conn, tenant, spec)
            rows: list[int] = []
            for row in live:
                rows += endings.end(
                    conn, tenant, row["id"], reason, notify=notify, successor=session_id
                )
            return session_id, rows

        session_id, rows = self.sessions.db.write(write)
        return self.sessions.get_session(tenant, session_id), rows

    def expire(self, tenant: TenantId, session_id: str, cutoff: float) -> tuple[bool, list[int]]:
        """End the session with reason ``idle`` if it is live and saw nothing since ``cutoff``:
        whether it ended, and the outbox rows telling the provider."""
        notify = self.providers.provider is not None

        def write(conn: sqlite3.Connection) -> tuple[bool, list[int]]:
            seen = endings.last_activity(conn, tenant, session_id)
            live = conn.execute(
                "SELECT 1 FROM sessions WHERE tenant_id = ? AND id = ? AND ended_at IS NULL",
                (str(tenant), session_id),
            ).fetchone()
            if live is None or seen is None or seen >= cutoff:
                return False, []  # ended meanwhile, or a message arrived
            return True, endings.end(conn, tenant, session_id, "idle", notify=notify)

        return self.sessions.db.write(write)

    def idle_since(self, session: SessionRecord) -> float:
        """When the session last saw anything (a message, its start, its resumption)."""
        seen = self.sessions.db.read(lambda c: endings.last_activity(c, session.tenant, session.id))
        return session.started_at if seen is None else seen

    def refreeze(self, conversation: Conversation, session: SessionRecord) -> SessionRecord:
        """Give a session stored without a frozen prompt (an imported one) the prompt and
        tools a session of ``conversation`` starting now would get; then it is frozen."""
        frozen = self.frozen(conversation, incognito=session.incognito)
        lineage.freeze_prompt(
            self.sessions.db, session.tenant, session.id, frozen.system_prompt, frozen.tools_json
        )
        return self.sessions.get_session(session.tenant, session.id)


def conversation_of(session: SessionRecord) -> Conversation:
    """The conversation a stored session belongs to (thread id lives in its session key).

    A session of an account linked into another platform's tenant keeps its own platform
    (the session key's first part), so its group scope and notices stay on that platform.
    The account stands in as the group key's user, or the chat for a DM (a DM key has no
    user): enough to name the chat; workers never decide access with it.
    """
    chat_type: ChatType = "group" if session.chat_type == "group" else "dm"
    tenant = session.tenant
    chat_id = session.chat_id or tenant.user
    conversation = Conversation(tenant, chat_id=chat_id, chat_type=chat_type)
    platform = session.session_key.partition(":")[0]
    if platform == tenant.platform or platform not in PLATFORMS:
        return conversation
    user = session.session_key.rpartition(":")[2] if chat_type == "group" else chat_id
    return replace(conversation, linked_account=TenantId(platform, user))
