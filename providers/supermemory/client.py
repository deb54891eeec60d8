"""A small httpx client for the Supermemory routes the reference plugin calls (v3/v4 API).

Every route in one place; each call names its container tag explicitly (the caller passes
the tenant's backend key) and none is retried: a write that timed out may have landed.

=======  ======================  ===================================================
POST     ``/v3/documents``       add a document (``containerTags``, ``metadata``)
POST     ``/v4/search``          search memories (``q``, ``containerTag``, ``limit``)
POST     ``/v4/profile``         static/dynamic profile (+ search results with ``q``)
DELETE   ``/v4/memories``        forget one memory (``containerTag``, ``id``)
POST     ``/v4/conversations``   ingest a conversation (``conversationId``, messages)
DELETE   ``/v3/documents/bulk``  delete every document of ``containerTags`` (erasure)
=======  ======================  ===================================================
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import httpx

SOURCE_HEADER = {"x-sm-source": "mnemogate"}


class SupermemoryError(Exception):
    """A failed call: ``status`` is the HTTP status, None when the service was unreachable."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Hit:
    id: str
    text: str
    similarity: float | None = None
    updated_at: str = ""


@dataclass(frozen=True, slots=True)
class Profile:
    static: list[str] = field(default_factory=list)
    dynamic: list[str] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)


class SupermemoryClient:
    """One pooled httpx client; thread-safe (httpx.Client is)."""

    def __init__(self, base_url: str, api_key: str, timeout_s: float) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._http: httpx.Client | None = None
        self._lock = threading.Lock()

    def _client(self) -> httpx.Client:
        with self._lock:
            if self._http is None:
                self._http = httpx.Client(
                    base_url=self.base_url,
                    timeout=self._timeout_s,
                    headers={"Authorization": f"Bearer {self._api_key}", **SOURCE_HEADER},
                )
            return self._http

    def _call(self, method: str, path: str, body: dict[str, Any]) -> Any:
        try:
            response = self._client().request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise SupermemoryError(f"{method} {path}: {type(exc).__name__}") from exc
        if response.status_code >= 400:
            detail = response.text[:200]
            raise SupermemoryError(
                f"{method} {path}: HTTP {response.status_code} {detail}", response.status_code
            )
        try:
            return response.json() if response.content else {}
        except ValueError as exc:
            raise SupermemoryError(f"{method} {path}: the answer is not JSON") from exc

    def add_document(
        self, tag: str, content: str, metadata: dict[str, Any], entity_context: str = ""
    ) -> str:
        body: dict[str, Any] = {"content": content, "containerTags": [tag], "metadata": metadata}
        if entity_context:
            body["entityContext"] = entity_context
        answer = self._call("POST", "/v3/documents", body)
        return str(answer.get("id", "")) if isinstance(answer, dict) else ""

    def search(self, tag: str, query: str, limit: int, mode: str) -> list[Hit]:
        body = {"q": query, "containerTag": tag, "limit": limit, "searchMode": mode}
        return _hits(self._call("POST", "/v4/search", body))

    def profile(self, tag: str, query: str = "") -> Profile:
        body: dict[str, Any] = {"containerTag": tag}
        if query:
            body["q"] = query
        answer = self._call("POST", "/v4/profile", body)
        answer = answer if isinstance(answer, dict) else {}
        profile = answer.get("profile") or {}
        return Profile(
            static=_strings(profile.get("static")),
            dynamic=_strings(profile.get("dynamic")),
            hits=_hits(answer.get("searchResults")),
        )

    def forget(self, tag: str, memory_id: str) -> None:
        self._call("DELETE", "/v4/memories", {"containerTag": tag, "id": memory_id})

    def ingest_conversation(
        self,
        tag: str,
        conversation_id: str,
        messages: list[dict[str, str]],
        metadata: dict[str, Any],
    ) -> None:
        body = {
            "conversationId": conversation_id,
            "messages": messages,
            "containerTags": [tag],
            "metadata": metadata,
        }
        self._call("POST", "/v4/conversations", body)

    def delete_container(self, tag: str) -> int:
        answer = self._call("DELETE", "/v3/documents/bulk", {"containerTags": [tag]})
        count = answer.get("deletedCount", 0) if isinstance(answer, dict) else 0
        return int(count) if isinstance(count, int | float) else 0

    def close(self) -> None:
        with self._lock:
            if self._http is not None:
                self._http.close()
                self._http = None


def _hits(answer: Any) -> list[Hit]:
    items = answer.get("results") if isinstance(answer, dict) else answer
    hits = []
    for item in items or []:
        if not isinstance(item, dict):
            continue
        text = item.get("memory") or item.get("chunk") or ""
        similarity = item.get("similarity")
        hits.append(
            Hit(
                id=str(item.get("id", "")),
                text=str(text),
                similarity=float(similarity) if isinstance(similarity, int | float) else None,
                updated_at=str(item.get("updatedAt") or ""),
            )
        )
    return hits


def _strings(items: Any) -> list[str]:
    return [str(item) for item in items or [] if isinstance(item, str | int | float) and item]
