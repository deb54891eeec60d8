"""Rows of state.db as plain records: sessions, messages, and how they map from SQL rows."""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from gateway.tenants import TenantId


def new_session_id(now: float | None = None) -> str:
    """Time-sortable, key-safe session id: ``YYYYMMDD_HHMMSS_<6 hex>``."""
    stamp = datetime.fromtimestamp(now or time.time(), UTC).strftime("%Y%m%d_%H%M%S")
    return f"{stamp}_{secrets.token_hex(3)}"


@dataclass(frozen=True, slots=True)
class Deleted:
    """What a deletion removed."""

    sessions: int
    messages: int


@dataclass(frozen=True, slots=True)
class SessionRecord:
    id: str
    tenant: TenantId
    session_key: str
    source: str
    chat_id: str | None
    chat_type: str
    scope_key: str
    title: str | None
    parent_id: str | None
    started_at: float
    ended_at: float | None
    end_reason: str | None
    system_prompt: str
    tools_json: str
    model: str | None
    incognito: bool
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    user_turns: int

    @property
    def tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = json.loads(self.tools_json)
        return tools


@dataclass(frozen=True, slots=True)
class NewSession:
    """The fields of a session row at creation."""

    session_key: str
    source: str
    system_prompt: str
    tools_json: str
    scope_key: str
    started_at: float
    chat_id: str | None = None
    chat_type: str = "dm"
    model: str | None = None
    parent_id: str | None = None
    title: str | None = None
    incognito: bool = False


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message to append; ``tool_calls`` is the OpenAI-shaped list for assistant turns."""

    role: str
    content: str
    name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    timestamp: float = field(default_factory=time.time)
    platform_message_id: str | None = None


@dataclass(frozen=True, slots=True)
class StoredMessage:
    id: int
    session_id: str
    role: str
    content: str
    name: str | None
    tool_calls: list[dict[str, Any]] | None
    tool_call_id: str | None
    timestamp: float
    platform_message_id: str | None

    def to_llm(self) -> dict[str, Any]:
        """The chat-completions shape of this message (history replay)."""
        msg: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = self.tool_calls
        if self.tool_call_id:
            msg["tool_call_id"] = self.tool_call_id
        return msg


SESSION_COLUMNS = (
    "id, tenant_id, session_key, source, chat_id, chat_type, scope_key, title, parent_id, "
    "started_at, ended_at, end_reason, system_prompt, tools_json, model, incognito, "
    "prompt_tokens, completion_tokens, cached_tokens, user_turns"
)
MESSAGE_COLUMNS = (
    "id, session_id, role, content, name, tool_calls, tool_call_id, timestamp, platform_message_id"
)


def session_from_row(row: sqlite3.Row) -> SessionRecord:
    data = dict(row)
    data["tenant"] = TenantId.parse(data.pop("tenant_id"))
    data["incognito"] = bool(data["incognito"])
    return SessionRecord(**data)


def message_from_row(row: sqlite3.Row) -> StoredMessage:
    data = dict(row)
    data["tool_calls"] = json.loads(data["tool_calls"]) if data["tool_calls"] else None
    return StoredMessage(**data)
