"""An in-process OpenAI-compatible model for benchmarks: an httpx transport, fixed latency.

It answers every chat completion with a short text after ``latency_s`` (0 = at once), so a
benchmark measures the gateway rather than a model or a loopback HTTP server.
"""

from __future__ import annotations

import asyncio
import json

import httpx


def stub_transport(latency_s: float = 0.0) -> httpx.MockTransport:
    async def handle(request: httpx.Request) -> httpx.Response:
        if latency_s:
            await asyncio.sleep(latency_s)
        body = json.loads(request.content)
        size = len(request.content) // 4
        return httpx.Response(
            200,
            json={
                "id": "bench",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": "Sure, noted."},
                    }
                ],
                "usage": {
                    "prompt_tokens": size,
                    "completion_tokens": 4,
                    "prompt_tokens_details": {"cached_tokens": size - 50},
                },
            },
        )

    return httpx.MockTransport(handle)
