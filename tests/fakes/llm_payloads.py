"""OpenAI chat-completions wire shapes built by the fake LLM: completions, errors, model lists.

Usage figures follow a rough 4-bytes-per-token rule; ``cached`` is a byte count that the
caller computed as the prefix shared with the previous request (see
:func:`common_prefix_len`), imitating a provider's prompt cache.
"""

from __future__ import annotations

import hashlib
import http
import json
import math
import re
import time
import uuid
from typing import Any


def text_message(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def tool_message(calls: list[tuple[str, dict[str, Any]]], text: str | None) -> dict[str, Any]:
    """An assistant message calling each ``(name, arguments)`` function in order."""
    return {
        "role": "assistant",
        "content": text,
        "tool_calls": [
            {
                "id": f"call_{uuid.uuid4().hex[:24]}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
            }
            for name, args in calls
        ],
    }


def completion_body(model: str, message: dict[str, Any], request_bytes: int, cached: int) -> bytes:
    """A full ``chat.completion`` response wrapping ``message``."""
    produced = (message.get("content") or "") + "".join(
        call["function"]["arguments"] for call in message.get("tool_calls", [])
    )
    prompt_tokens = max(1, request_bytes // 4)
    completion_tokens = max(1, len(produced) // 4)
    response = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached // 4},
        },
    }
    return json.dumps(response, ensure_ascii=False).encode("utf-8")


def models_body(model: str) -> bytes:
    """The ``GET /v1/models`` list naming one model."""
    entry = {"id": model, "object": "model", "created": 0, "owned_by": "mnemogate-fake"}
    return json.dumps({"object": "list", "data": [entry]}).encode()


def error_body(status: int, message: str | None = None, code: str | None = None) -> bytes:
    """An OpenAI-style ``{"error": {...}}`` body; the message defaults to the status phrase."""
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    error = {
        "message": message or f"{phrase} (scripted by FakeLLM)",
        "type": "invalid_request_error" if 400 <= status < 500 else "server_error",
        "param": None,
        "code": code,
    }
    return json.dumps({"error": error}).encode()


def common_prefix_len(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of ``a`` and ``b``."""
    # Binary search over slice comparisons: memcmp speed even for large prompts.
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


EMBEDDING_DIMS = 64
_EMBED_WORD = re.compile(r"[a-z0-9]+")


def embedding_vector(text: str, dims: int = EMBEDDING_DIMS) -> list[float]:
    """A deterministic unit vector: hashed bag of words, so shared words mean high cosine."""
    vector = [0.0] * dims
    for word in _EMBED_WORD.findall(text.lower()):
        digest = hashlib.sha256(word.encode("utf-8")).digest()
        vector[int.from_bytes(digest[:4], "big") % dims] += 1.0 if digest[4] % 2 else -1.0
    norm = math.sqrt(sum(value * value for value in vector))
    if norm == 0:
        vector[0], norm = 1.0, 1.0
    return [value / norm for value in vector]


def embeddings_body(model: str, inputs: list[str], dims: int) -> bytes:
    """An OpenAI ``/v1/embeddings`` response for ``inputs``, in order."""
    data = [
        {"object": "embedding", "index": i, "embedding": embedding_vector(text, dims)}
        for i, text in enumerate(inputs)
    ]
    tokens = sum(max(1, len(text) // 4) for text in inputs)
    body = {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
    return json.dumps(body).encode()
