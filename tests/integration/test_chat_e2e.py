"""End to end: piped ``mnemogate chat`` against the fake LLM over HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script, chat_requests, tool_call

pytestmark = pytest.mark.integration

FACT = "Name is Alice; drinks oolong tea, no sugar"


def chat(home: Path, llm: FakeLLM, user: str, lines: list[str]) -> list[str]:
    proc = run_cli(
        ["chat", "--user", user],
        home=home,
        input_text="\n".join(lines) + "\n",
        MNEMOGATE_LLM__BASE_URL=llm.base_url,
        MNEMOGATE_LLM__MODEL="fake-model",
        MNEMOGATE_LLM__MAX_RETRIES="0",
        MNEMOGATE_JOBS__MODE="inline",
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def system_prompt(request: dict) -> str:
    first = request["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def test_memory_written_in_chat_is_private_and_frozen(home: Path, fake_llm: FakeLLM) -> None:
    fake_llm.handler = Script(
        [
            tool_call("memory", {"action": "add", "target": "user", "content": FACT}),
            "Nice to meet you, Alice.",
            "Still here.",
        ]
    )
    out = chat(home, fake_llm, "alice", ["I'm Alice and I only drink oolong tea.", "ping"])
    assert out == ["Nice to meet you, Alice.", "Still here."]

    user_md = home / "tenants" / "console-alice" / "memories" / "USER.md"
    assert FACT in user_md.read_text(encoding="utf-8")
    assert user_md.stat().st_mode & 0o777 == 0o600
    assert user_md.parent.stat().st_mode & 0o777 == 0o700

    first, after_tool, second_turn = chat_requests(fake_llm.requests)
    # The tool result went back to the model in the same turn.
    tool_result = json.loads(after_tool["messages"][-1]["content"])
    assert tool_result["success"] is True
    # Frozen: every request of the session carries the same system prompt and tools, bytes.
    assert system_prompt(first) == system_prompt(after_tool) == system_prompt(second_turn)
    assert FACT not in system_prompt(second_turn)
    tools = [json.dumps(r["tools"], ensure_ascii=False) for r in chat_requests(fake_llm.requests)]
    assert len(set(tools)) == 1
    raw = [r.decode("utf-8") for r in fake_llm.raw_requests if b"session_search" in r]
    prefix = raw[0][: raw[0].index('"content":"I')]
    assert all(body.startswith(prefix) for body in raw)

    # A new session (new process, /new) sees the entry in its snapshot.
    fake_llm.clear()
    fake_llm.handler = Script(["Hello again, Alice."])
    out = chat(home, fake_llm, "alice", ["/new", "hello"])
    assert out[-1] == "Hello again, Alice."
    assert FACT in system_prompt(chat_requests(fake_llm.requests)[-1])

    # Another tenant never sees it.
    fake_llm.clear()
    fake_llm.handler = Script(["Hi Bob."])
    chat(home, fake_llm, "bob", ["hello"])
    assert FACT not in json.dumps(fake_llm.requests, ensure_ascii=False)
    assert not (home / "tenants" / "console-bob" / "memories" / "USER.md").exists() or (
        FACT not in (home / "tenants" / "console-bob" / "memories" / "USER.md").read_text()
    )


def test_session_survives_restart_with_same_prompt(home: Path, fake_llm: FakeLLM) -> None:
    fake_llm.handler = Script(["one", "two"])
    chat(home, fake_llm, "carol", ["first"])
    # Memory changes between processes must not alter the live session's prompt.
    proc = run_cli(
        ["memory", "add", "--tenant", "console:carol", "--target", "user", "Prefers short answers"],
        home=home,
    )
    assert proc.returncode == 0, proc.stderr
    chat(home, fake_llm, "carol", ["second"])
    first, second = chat_requests(fake_llm.requests)
    assert system_prompt(first) == system_prompt(second)
    assert "Prefers short answers" not in system_prompt(second)
    # History of the session was replayed.
    assert [m["content"] for m in second["messages"][1:]] == ["first", "one", "second"]


def test_help_and_memory_commands(home: Path, fake_llm: FakeLLM) -> None:
    proc = run_cli(
        [
            "memory",
            "add",
            "--tenant",
            "console:dave",
            "--target",
            "memory",
            "Deploys with make deploy",
        ],
        home=home,
    )
    assert proc.returncode == 0, proc.stderr
    out = "\n".join(chat(home, fake_llm, "dave", ["/help", "/memory"]))
    assert "/new" in out and "/memory" in out
    assert "Deploys with make deploy" in out and "operator" in out
    assert fake_llm.requests == []


def test_llm_down_keeps_the_message(home: Path, fake_llm: FakeLLM) -> None:
    fake_llm.fail(503, times=1)
    out = chat(home, fake_llm, "erin", ["remember the milk"])
    assert "can't reach the language model" in out[0]
    fake_llm.handler = Script(["Got it."])
    chat(home, fake_llm, "erin", ["again"])
    contents = [m["content"] for m in chat_requests(fake_llm.requests)[-1]["messages"][1:]]
    assert contents == ["remember the milk", "again"]


def test_chat_without_llm_config_fails_clearly(home: Path) -> None:
    proc = run_cli(["chat", "--user", "x"], home=home, input_text="hi\n")
    assert proc.returncode != 0
    assert "MNEMOGATE_LLM__BASE_URL" in proc.stderr


def test_oversized_message_is_refused_and_nothing_stored(home: Path, fake_llm: FakeLLM) -> None:
    fake_llm.handler = Script(["short one answered"])
    out = chat(home, fake_llm, "fay", ["x" * 20_000, "short one"])
    assert out[0].startswith("⚠ The message is 20,000 characters long")
    assert out[1] == "short one answered"
    (only,) = chat_requests(fake_llm.requests)
    assert [m["content"] for m in only["messages"][1:]] == ["short one"]


def test_llm_garbage_is_a_clear_error(home: Path, fake_llm: FakeLLM) -> None:
    fake_llm.garbage(times=1)
    out = chat(home, fake_llm, "gus", ["hello?"])
    assert out[0].startswith("Sorry — the language model sent back an answer I could not read")
    fake_llm.handler = Script(["fine now"])
    assert chat(home, fake_llm, "gus", ["again"]) == ["fine now"]
    contents = [m["content"] for m in chat_requests(fake_llm.requests)[-1]["messages"][1:]]
    assert contents == ["hello?", "again"]
