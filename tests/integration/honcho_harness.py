"""Settings, contexts and readers shared by the Honcho tests (provider, end to end)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gateway.routing import Conversation, session_key
from gateway.settings import Settings
from gateway.tenants import TenantId
from providers.base import MemoryWriteEvent, ProviderContext, SyncedTurn, WriteMetadata
from providers.honcho.identity import session_id_for
from tests.fakes.honcho_payloads import WorkspaceRec
from tests.fakes.honcho_server import FakeHoncho
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import chat_requests
from tests.integration.background import make_settings

WORKSPACE = "e2e"
AI = "mnemogate"
BUDGET = 0.3  # recall.first_turn_budget_s


def honcho_settings(
    home: Path,
    redis_url: str,
    redis_prefix: str,
    fake_llm: FakeLLM,
    fake: FakeHoncho,
    **overrides: dict[str, Any],
) -> Settings:
    """Queue mode, the Honcho provider on ``fake``, the fake LLM; ``overrides`` per section."""
    values: dict[str, dict[str, Any]] = {
        "llm": {"base_url": fake_llm.base_url, "model": "fake-model", "max_retries": 0},
        "memory": {"provider": "honcho"},
        "honcho": {"base_url": fake.base_url, "workspace": WORKSPACE, "read_retries": 0},
        "recall": {"first_turn_budget_s": BUDGET},
        "jobs": {"mode": "queue"},
    }
    for key, value in overrides.items():
        values[key] = {**values.get(key, {}), **value}
    return make_settings(home, redis_url, redis_prefix, **values)


def world(fake: FakeHoncho) -> WorkspaceRec:
    return fake.world.workspaces[WORKSPACE]


def honcho_session(conversation: Conversation) -> str:
    return session_id_for("", conversation.tenant.namespace, conversation.session_key)


def last_user_message(fake_llm: FakeLLM) -> str:
    return str(chat_requests(fake_llm.requests)[-1]["messages"][-1]["content"])


def group_context(home: Path, user: str, group: str = "g1") -> ProviderContext:
    """A console tenant's context in an isolated group chat."""
    tenant = TenantId.of("console", user)
    return ProviderContext(
        tenant=tenant,
        namespace=tenant.namespace,
        user_peer_id=tenant.namespace,
        ai_peer_id=AI,
        session_id="gs1",
        session_key=session_key("console", "group", group, user),
        platform="console",
        chat_type="group",
        memory_scope_key=f"{tenant.namespace}.console-{group}",
        home=home,
    )


def turn(user: str, assistant: str = "Noted.", turn_id: str = "t1") -> SyncedTurn:
    return SyncedTurn(user, assistant, "s1", turn_id, datetime.now(UTC))


def write_event(ctx: ProviderContext, content: str, target: str = "user") -> MemoryWriteEvent:
    meta = WriteMetadata("user-chat", datetime.now(UTC), ctx.memory_scope_key)
    return MemoryWriteEvent("add", target, content, meta)  # type: ignore[arg-type]
