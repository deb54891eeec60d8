"""LLMClient against the fake OpenAI-compatible server over real loopback HTTP."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from pydantic import SecretStr

from gateway.errors import LLMBadResponse, LLMError, LLMUnavailable
from gateway.llm.client import LLMClient
from gateway.llm.parse import parse_retry_after
from gateway.settings import LLMSettings
from tests.fakes import FakeLLM

pytestmark = pytest.mark.integration

SECRET = "sk-test-0123456789abcdef"
SYSTEM = {"role": "system", "content": "You are terse. Ünïcode stays as is: ✓"}
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "memory",
            "description": "Save a durable fact.",
            # Deliberately not in sorted key order: it must reach the server as written.
            "parameters": {
                "type": "object",
                "required": ["content"],
                "properties": {"content": {"type": "string"}, "action": {"type": "string"}},
            },
        },
    }
]


def user(text: str) -> list[dict[str, Any]]:
    return [SYSTEM, {"role": "user", "content": text}]


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def settings_for(base_url: str | None, **overrides: Any) -> LLMSettings:
    values: dict[str, Any] = {"model": "fake-model", "max_retries": 2, "timeout_s": 5.0}
    values.update(overrides)
    return LLMSettings(base_url=base_url, **values)


@pytest.fixture
async def client(fake: FakeLLM) -> AsyncIterator[LLMClient]:
    async with LLMClient(settings_for(fake.base_url), backoff_s=0.01) as llm:
        yield llm


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


async def test_text_reply(fake: FakeLLM, client: LLMClient) -> None:
    fake.reply("Hello there.")
    completion = await client.complete(user("hi"))
    assert completion.content == "Hello there."
    assert completion.tool_calls == []
    assert completion.finish_reason == "stop"
    assert completion.model == "fake-model"
    assert completion.usage.prompt_tokens > 0
    assert completion.usage.completion_tokens > 0
    (sent,) = fake.requests
    assert sent["model"] == "fake-model"
    assert sent["messages"] == user("hi")
    assert sent["stream"] is False
    assert "tools" not in sent
    assert "temperature" not in sent


async def test_tool_calls_are_parsed(fake: FakeLLM, client: LLMClient) -> None:
    fake.tool_calls(
        [("memory", {"action": "add", "content": "likes tea"}), ("session_search", {"q": "x"})],
        text="Saving that.",
    )
    completion = await client.complete(
        user("remember I like tea"), tools=TOOLS, tool_choice="auto", max_tokens=64
    )
    assert completion.content == "Saving that."
    assert completion.finish_reason == "tool_calls"
    assert [call.name for call in completion.tool_calls] == ["memory", "session_search"]
    assert json.loads(completion.tool_calls[0].arguments) == {
        "action": "add",
        "content": "likes tea",
    }
    assert len({call.id for call in completion.tool_calls}) == 2
    (sent,) = fake.requests
    assert (sent["tools"], sent["tool_choice"], sent["max_tokens"]) == (TOOLS, "auto", 64)


async def test_lenient_shapes_from_other_servers(fake: FakeLLM, client: LLMClient) -> None:
    fake.handler = lambda body: {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "reasoning_content": "Let me think about which tool…",
                    "tool_calls": [{"function": {"name": "memory", "arguments": {"n": 1}}}],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "prompt_tokens_details": None},
    }
    completion = await client.complete(user("hi"))
    assert completion.content is None
    (call,) = completion.tool_calls
    assert call.id.startswith("call_")
    assert json.loads(call.arguments) == {"n": 1}
    assert (completion.usage.prompt_tokens, completion.usage.cached_tokens) == (12, 0)


async def test_shared_prefix_reports_cached_tokens(fake: FakeLLM, client: LLMClient) -> None:
    first = await client.complete(user("first question"), tools=TOOLS)
    second = await client.complete(user("second question"), tools=TOOLS)
    assert first.usage.cached_tokens == 0
    assert 0 < second.usage.cached_tokens < second.usage.prompt_tokens


async def test_request_bytes_are_stable_and_keep_caller_order(
    fake: FakeLLM, client: LLMClient
) -> None:
    await client.complete(user("same"), tools=TOOLS)
    await client.complete(user("same"), tools=TOOLS)
    first, second = fake.raw_requests
    assert first == second
    text = first.decode("utf-8")
    assert compact(user("same")) in text
    assert compact(TOOLS) in text
    assert "✓" in text  # not \u-escaped


async def test_temperature_sent_when_configured(fake: FakeLLM) -> None:
    async with LLMClient(settings_for(fake.base_url, temperature=0.2)) as llm:
        await llm.complete(user("hi"))
    assert fake.requests[0]["temperature"] == 0.2


async def test_429_retry_after_is_honoured(fake: FakeLLM) -> None:
    fake.fail(429, retry_after=0.05)
    fake.reply("after the wait")
    # A backoff far longer than the test allows: only Retry-After can explain a quick retry.
    async with LLMClient(settings_for(fake.base_url), backoff_s=30) as llm:
        started = time.monotonic()
        completion = await llm.complete(user("hi"))
        elapsed = time.monotonic() - started
    assert completion.content == "after the wait"
    assert len(fake.requests) == 2
    assert 0.04 <= elapsed < 5


async def test_server_errors_are_retried(fake: FakeLLM, client: LLMClient) -> None:
    fake.fail(500, times=2)
    fake.reply("third time lucky")
    completion = await client.complete(user("hi"))
    assert completion.content == "third time lucky"
    assert len(fake.requests) == 3
    assert fake.raw_requests[0] == fake.raw_requests[2]


async def test_exhausted_retries_raise_unavailable(fake: FakeLLM, client: LLMClient) -> None:
    fake.fail(503, times=5)
    with pytest.raises(LLMUnavailable) as caught:
        await client.complete(user("hi"))
    assert caught.value.status == 503
    assert "3 attempt" in str(caught.value)
    assert len(fake.requests) == 3


async def test_client_error_is_not_retried(fake: FakeLLM, client: LLMClient) -> None:
    error = {"error": {"message": "max_tokens is too large: 999999", "type": "invalid"}}
    fake.fail(400, body=json.dumps(error))
    with pytest.raises(LLMError) as caught:
        await client.complete(user("hi"), max_tokens=999999)
    assert type(caught.value) is LLMError
    assert caught.value.status == 400
    assert "max_tokens is too large: 999999" in str(caught.value)
    assert len(fake.requests) == 1


async def test_connection_refused_fails_fast() -> None:
    async with LLMClient(settings_for(closed_port_url()), backoff_s=0.01) as llm:
        started = time.monotonic()
        with pytest.raises(LLMUnavailable) as caught:
            await llm.complete(user("hi"))
    assert time.monotonic() - started < 3
    assert caught.value.status is None
    assert "cannot connect" in str(caught.value)


async def test_read_timeout_raises_unavailable() -> None:
    with FakeLLM(latency_s=5) as slow:
        settings = settings_for(slow.base_url, timeout_s=0.2, max_retries=0)
        async with LLMClient(settings) as llm:
            started = time.monotonic()
            with pytest.raises(LLMUnavailable) as caught:
                await llm.complete(user("hi"))
        assert time.monotonic() - started < 3
        assert "0.2s" in str(caught.value)
        assert len(slow.requests) == 1


@pytest.mark.parametrize("script", ["garbage", "malformed"])
async def test_bad_bodies_raise_bad_response(fake: FakeLLM, client: LLMClient, script: str) -> None:
    getattr(fake, script)()
    with pytest.raises(LLMBadResponse) as caught:
        await client.complete(user("hi"))
    message = str(caught.value)
    assert ("not JSON" if script == "garbage" else "no choices") in message
    assert len(message) < 400
    assert len(fake.requests) == 1


async def test_long_bad_body_is_cut_short(fake: FakeLLM, client: LLMClient) -> None:
    fake.handler = lambda body: {"choices": [], "padding": "x" * 5000}
    with pytest.raises(LLMBadResponse) as caught:
        await client.complete(user("hi"))
    assert len(str(caught.value)) < 400


async def test_api_key_sent_only_when_configured(fake: FakeLLM) -> None:
    async with LLMClient(settings_for(fake.base_url)) as anonymous:
        await anonymous.complete(user("hi"))
    keyed = settings_for(fake.base_url, api_key=SecretStr(SECRET))
    async with LLMClient(keyed) as llm:
        await llm.complete(user("hi"))
    without, with_key = fake.request_headers
    assert "authorization" not in without
    assert with_key["authorization"] == f"Bearer {SECRET}"


async def test_api_key_never_in_errors_or_logs(
    fake: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    echoed = json.dumps({"error": {"message": f"Incorrect API key provided: {SECRET}"}})
    fake.fail(503, body=echoed)
    fake.fail(401, body=echoed)
    keyed = settings_for(fake.base_url, api_key=SecretStr(SECRET), max_retries=1)
    with caplog.at_level(logging.WARNING, logger="gateway.llm.client"):
        async with LLMClient(keyed, backoff_s=0.01) as llm:
            with pytest.raises(LLMError) as caught:
                await llm.complete(user("hi"))
    assert caught.value.status == 401
    assert "Incorrect API key provided: ***" in str(caught.value)
    assert SECRET not in str(caught.value)
    assert caplog.records, "the retry was logged"
    assert all(SECRET not in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize("settings", [LLMSettings(), LLMSettings(base_url="http://127.0.0.1:1/v1")])
async def test_not_configured_names_the_settings(settings: LLMSettings) -> None:
    async with LLMClient(settings) as llm:
        for call in (lambda: llm.complete(user("hi")), llm.ping):
            with pytest.raises(LLMUnavailable) as caught:
                await call()
            assert "MNEMOGATE_LLM__BASE_URL" in str(caught.value)
            assert "MNEMOGATE_LLM__MODEL" in str(caught.value)


async def test_ping(fake: FakeLLM, client: LLMClient) -> None:
    assert await client.ping() == "reachable, model fake-model listed"
    async with LLMClient(settings_for(fake.base_url, model="other")) as llm:
        assert "not among the 1 listed (fake-model)" in await llm.ping()
    async with LLMClient(settings_for(fake.base_url + "/nothing-here")) as llm:
        assert "not offered" in await llm.ping()
    async with LLMClient(settings_for(closed_port_url())) as llm:
        with pytest.raises(LLMUnavailable, match="cannot connect"):
            await llm.ping()
    assert fake.requests == []


def test_retry_after_header_forms() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    waited = parse_retry_after(later)
    assert waited is not None and 15 < waited <= 20
    past = format_datetime(datetime.now(UTC) - timedelta(seconds=20), usegmt=True)
    assert parse_retry_after(past) == 0.0
