"""Helpers of the provider end-to-end tests: what the model was sent, and `tenants forget`.

The fake LLM records every request; a chat request of a turn carries the recall fenced in
its last user message. "Never reaches tenant B's model" is checked on the raw requests.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

from gateway.security.fence import FENCE_OPEN
from gateway.settings import Settings
from tests.conftest import run_cli
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import chat_requests
from tests.integration.background import settings_env


def last_user_message(fake_llm: FakeLLM) -> str:
    return str(chat_requests(fake_llm.requests)[-1]["messages"][-1]["content"])


def recalled(fake_llm: FakeLLM) -> str:
    """The fenced recall of the last chat turn ("" when there was none)."""
    last = last_user_message(fake_llm)
    return last.split(FENCE_OPEN, 1)[1] if FENCE_OPEN in last else ""


def requests_since(fake_llm: FakeLLM, start: int) -> str:
    """Every request the model received from index ``start`` on, as one JSON text."""
    sent: list[dict[str, Any]] = fake_llm.requests[start:]
    return json.dumps(sent, ensure_ascii=False)


def tool_results(fake_llm: FakeLLM) -> list[dict[str, Any]]:
    """The tool answers of the current turn the last chat request carried to the model."""
    messages = chat_requests(fake_llm.requests)[-1]["messages"]
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    turn = messages[users[-1] :] if users else messages
    return [json.loads(m["content"]) for m in turn if m["role"] == "tool"]


def forget(settings: Settings, tenant: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``mnemogate tenants forget --tenant TENANT --yes`` in a subprocess with ``settings``."""
    return run_cli(
        ["tenants", "forget", "--tenant", tenant, "--yes"],
        home=settings.home,
        **{**settings_env(settings), **env},
    )
