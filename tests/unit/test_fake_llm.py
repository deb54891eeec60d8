"""The fake LLM server itself: wire shapes, scripting, recording, concurrency, clean stop."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fakes import FakeLLM

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
BODY: dict[str, Any] = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
def http(fake: FakeLLM) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fake.base_url, timeout=5) as client:
        yield client


def chat(http: httpx.Client, body: dict[str, Any] | None = None) -> httpx.Response:
    return http.post("/chat/completions", json=body or BODY)


def message(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["choices"][0]["message"]
    return result


def test_answers_in_queue_order_then_default(fake: FakeLLM, http: httpx.Client) -> None:
    fake.reply("one")
    fake.tool_call("memory", {"content": "x"}, text="saving")
    fake.fail(503, retry_after=2)
    assert message(chat(http))["content"] == "one"

    second = chat(http).json()
    assert second["object"] == "chat.completion"
    assert second["choices"][0]["finish_reason"] == "tool_calls"
    (call,) = second["choices"][0]["message"]["tool_calls"]
    assert call["type"] == "function" and call["id"].startswith("call_")
    assert (call["function"]["name"], json.loads(call["function"]["arguments"])) == (
        "memory",
        {"content": "x"},
    )

    failed = chat(http)
    assert (failed.status_code, failed.headers["retry-after"]) == (503, "2")
    assert "message" in failed.json()["error"]
    assert message(chat(http))["content"] == "ok"
    assert len(fake.requests) == 4


def test_garbage_and_malformed(fake: FakeLLM, http: httpx.Client) -> None:
    fake.garbage()
    fake.malformed()
    garbage = chat(http)
    assert garbage.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(garbage.content)
    malformed = chat(http)
    assert malformed.status_code == 200 and "choices" not in malformed.json()


def test_usage_simulates_a_prefix_cache(fake: FakeLLM, http: httpx.Client) -> None:
    first = chat(http).json()["usage"]
    second = chat(http).json()["usage"]
    assert first["prompt_tokens_details"]["cached_tokens"] == 0
    assert second["prompt_tokens_details"]["cached_tokens"] == second["prompt_tokens"] > 0
    other = {"model": "m", "messages": [{"role": "user", "content": "different"}]}
    third = chat(http, other).json()["usage"]
    assert third["prompt_tokens_details"]["cached_tokens"] < third["prompt_tokens"]


def test_handler_answers_when_queue_is_empty(fake: FakeLLM, http: httpx.Client) -> None:
    seen: list[str] = []

    def handler(body: dict[str, Any]) -> dict[str, Any] | str | None:
        text = body["messages"][-1]["content"]
        seen.append(text)
        if text == "tool":
            return {"tool_calls": [("memory", {"a": 1})]}
        if text == "boom":
            raise RuntimeError("scripted failure")
        return None if text == "default" else f"echo {text}"

    fake.handler = handler
    fake.default_reply = "fallback"

    def ask(text: str) -> httpx.Response:
        return chat(http, {"model": "m", "messages": [{"role": "user", "content": text}]})

    assert message(ask("hello"))["content"] == "echo hello"
    assert message(ask("tool"))["tool_calls"][0]["function"]["name"] == "memory"
    assert message(ask("default"))["content"] == "fallback"
    broken = ask("boom")
    assert broken.status_code == 500 and "scripted failure" in broken.json()["error"]["message"]
    assert seen == ["hello", "tool", "default", "boom"]


def test_models_unknown_paths_and_bad_requests(fake: FakeLLM, http: httpx.Client) -> None:
    models = http.get("/models").json()
    assert [entry["id"] for entry in models["data"]] == ["fake-model"]
    missing = http.get("/embeddings")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "unknown_url"
    not_json = http.post("/chat/completions", content=b"{nope")
    assert not_json.status_code == 400
    streaming = chat(http, {**BODY, "stream": True})
    assert streaming.status_code == 400
    assert fake.requests == []


def test_records_exact_bytes_and_headers(fake: FakeLLM, http: httpx.Client) -> None:
    raw = b'{"messages":[{"role":"user","content":"h\\u00e9"}],"model":"m"}'
    http.post("/chat/completions", content=raw, headers={"X-Probe": "1"})
    assert fake.raw_requests == [raw]
    assert fake.requests[0]["messages"][0]["content"] == "hé"
    assert fake.request_headers[0]["x-probe"] == "1"
    fake.reply("queued")
    fake.clear()
    assert (fake.requests, fake.raw_requests) == ([], [])
    assert message(chat(http))["content"] == "ok"


def test_wait_for_requests(fake: FakeLLM, http: httpx.Client) -> None:
    with pytest.raises(TimeoutError, match="0 of 1"):
        fake.wait_for_requests(1, timeout=0.05)
    sender = threading.Thread(target=lambda: [chat(http) for _ in range(3)])
    sender.start()
    try:
        assert len(fake.wait_for_requests(3, timeout=5)) == 3
    finally:
        sender.join()


async def test_serves_many_connections_at_once() -> None:
    with FakeLLM(latency_s=0.2) as slow:
        limits = httpx.Limits(max_connections=64)
        async with httpx.AsyncClient(base_url=slow.base_url, limits=limits, timeout=10) as client:
            started = time.monotonic()
            answers = await asyncio.gather(
                *(client.post("/chat/completions", json=BODY) for _ in range(64))
            )
            elapsed = time.monotonic() - started
        assert all(answer.status_code == 200 for answer in answers)
        assert len(slow.requests) == 64
        assert elapsed < 64 * 0.2 / 4  # far from one-at-a-time


def test_stop_closes_idle_keepalive_connections() -> None:
    fake = FakeLLM().start()
    with httpx.Client(base_url=fake.base_url, timeout=5) as client:
        assert client.get("/models").status_code == 200
        started = time.monotonic()
        fake.stop()
        assert time.monotonic() - started < 1
        with pytest.raises(httpx.TransportError):
            client.get("/models")


def test_standalone_command() -> None:
    command = [sys.executable, "-m", "tests.fakes.llm_server", "--port", "0", "--reply", "hey"]
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        base_url = banner.split()[3]
        with httpx.Client(base_url=base_url, timeout=5) as client:
            assert message(chat(client))["content"] == "hey"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
