"""Every RetainDB route mnemogate calls, as the reference plugin calls them.

The request bodies and the fields read from the answers are those of the reference client
(no public API document exists); each call names its ``user_id`` explicitly. Memory and
context routes also accept ``X-API-Key``, so both auth headers are sent, as the reference does.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from providers.service import JsonHttp


def _q(value: str) -> str:
    return quote(value, safe="")


class RetainDBClient:
    """One RetainDB project; ``user_id`` is an argument of every call, never client state."""

    def __init__(self, base_url: str, *, api_key: str, project: str, timeout_s: float) -> None:
        token = api_key.removeprefix("Bearer ").strip()
        headers = {
            "Authorization": f"Bearer {token}",
            "X-API-Key": token,
            "x-sdk-runtime": "mnemogate",
        }
        self.project = project
        self.http = JsonHttp(base_url, headers=headers, timeout_s=timeout_s, label="RetainDB")

    def _scoped(self, user_id: str, session_id: str, **extra: Any) -> dict[str, Any]:
        return {"project": self.project, "user_id": user_id, "session_id": session_id, **extra}

    def profile(self, user_id: str, timeout_s: float | None = None) -> dict[str, Any]:
        params = {"project": self.project, "include_pending": "true"}
        path = f"/v1/memory/profile/{_q(user_id)}"
        return _dict(self.http.call("GET", path, params=params, timeout_s=timeout_s))

    def list_memories(self, user_id: str, limit: int = 200) -> list[dict[str, Any]]:
        """The user's memories from the listing route (the reference's profile fallback)."""
        params = {"project": self.project, "user_id": user_id, "limit": str(limit)}
        return _items(_dict(self.http.call("GET", "/v1/memories", params=params)), "memories")

    def query_context(
        self, user_id: str, session_id: str, query: str, timeout_s: float | None = None
    ) -> dict[str, Any]:
        body = self._scoped(
            user_id, session_id, query=query, include_memories=True, max_tokens=1200
        )
        return _dict(self.http.call("POST", "/v1/context/query", body=body, timeout_s=timeout_s))

    def search(self, user_id: str, session_id: str, query: str, top_k: int) -> dict[str, Any]:
        body = self._scoped(user_id, session_id, query=query, top_k=top_k, include_pending=True)
        return _dict(self.http.call("POST", "/v1/memory/search", body=body))

    def add_memory(
        self, user_id: str, session_id: str, content: str, memory_type: str, importance: float
    ) -> dict[str, Any]:
        body = self._scoped(
            user_id,
            session_id,
            content=content,
            memory_type=memory_type,
            importance=importance,
            write_mode="sync",
        )
        return _dict(self.http.call("POST", "/v1/memory", body=body))

    def delete_memory(self, memory_id: str) -> dict[str, Any]:
        return _dict(self.http.call("DELETE", f"/v1/memory/{_q(memory_id)}"))

    def ingest_session(
        self,
        user_id: str,
        session_id: str,
        messages: list[dict[str, Any]],
        *,
        idempotency_key: str,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        body = self._scoped(user_id, session_id, messages=messages, write_mode="sync")
        return _dict(
            self.http.call(
                "POST",
                "/v1/memory/ingest/session",
                body=body,
                # Harmless where ignored; the turn ledger is what makes delivery once-only.
                headers={"Idempotency-Key": idempotency_key},
                timeout_s=timeout_s,
            )
        )

    def close(self) -> None:
        self.http.close()


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _items(payload: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return [item for item in payload.get(key) or [] if isinstance(item, dict)]


def memory_ids(payload: dict[str, Any], key: str = "memories") -> set[str]:
    return {str(item["id"]) for item in _items(payload, key) if item.get("id") is not None}


def contents(payload: dict[str, Any], key: str) -> list[str]:
    return [str(item.get("content") or "") for item in _items(payload, key)]
