"""The Mem0 platform backend: the hosted API through ``mem0ai``'s ``MemoryClient``.

The client is built on first use (its constructor pings ``/v1/ping/``), with our own
``httpx.Client``: an explicit timeout and no retries, so a write is never repeated blindly.
Routes it calls: ``POST /v3/memories/add/``, ``POST /v3/memories/search/``,
``POST /v3/memories/`` (list, v2 filters), ``GET|PUT|DELETE /v1/memories/{id}/`` and
``DELETE /v1/memories/?user_id=`` (delete all of a user).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx

from providers.mem0.backends import (
    MEMORY_ID,
    TURN_KEY,
    Mem0Unavailable,
    Record,
    import_mem0,
    record,
    results,
)


class PlatformBackend:
    """Mem0's hosted API (or anything serving its routes at ``base_url``)."""

    def __init__(self, home: Path, base_url: str, api_key: str, timeout_s: float) -> None:
        self.home = home
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.timeout_s = timeout_s
        self._client: Any = None
        self._lock = threading.Lock()

    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                sdk = import_mem0(self.home, "mem0.client.main")
                http = httpx.Client(timeout=self.timeout_s)
                try:
                    self._client = sdk.MemoryClient(
                        api_key=self._api_key, host=self.base_url, client=http
                    )
                except Exception as exc:
                    http.close()
                    raise Mem0Unavailable(f"Mem0 platform at {self.base_url}: {exc}") from exc
            return self._client

    def add(
        self, user_id: str, messages: list[dict[str, str]], metadata: dict[str, Any], infer: bool
    ) -> list[Record]:
        answer = self.client().add(messages, user_id=user_id, metadata=metadata, infer=infer)
        return [record({**item, "user_id": user_id}) for item in results(answer)]

    def search(self, user_id: str, query: str, top_k: int, threshold: float) -> list[Record]:
        answer = self.client().search(
            query, filters=_user(user_id), top_k=top_k, threshold=threshold
        )
        return [record(item) for item in results(answer)]

    def has_turn(self, user_id: str, turn_key: str) -> bool:
        filters = {"AND": [{"user_id": user_id}, {"metadata": {TURN_KEY: turn_key}}]}
        answer = self.client().get_all(filters=filters, page=1, page_size=1)
        return bool(results(answer))

    def get(self, memory_id: str) -> Record | None:
        if not MEMORY_ID.match(memory_id):
            return None
        try:
            item = self.client().get(memory_id)
        except Exception as exc:
            if _status(exc) == 404:
                return None
            raise
        return record(item) if isinstance(item, dict) and item.get("id") else None

    def update(self, memory_id: str, text: str) -> None:
        self.client().update(memory_id, text=text)

    def delete(self, memory_id: str) -> None:
        self.client().delete(memory_id)

    def delete_all(self, user_id: str) -> int:
        """Delete every memory of ``user_id``; the count is read first (the API gives none)."""
        client = self.client()
        count = 0
        page = 1
        while True:
            answer = client.get_all(filters=_user(user_id), page=page, page_size=100)
            count += len(results(answer))
            if not (isinstance(answer, dict) and answer.get("next")):
                break
            page += 1
        client.delete_all(user_id=user_id)
        return count

    def ping(self) -> str:
        self.client()._validate_api_key()  # the SDK's own authenticated ping
        return f"platform mode, {self.base_url} reachable"

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.client.close()
                self._client = None


def _user(user_id: str) -> dict[str, Any]:
    """The v2 filter for one user (logical operator at the root, as the platform documents)."""
    return {"AND": [{"user_id": user_id}]}


def _status(exc: BaseException) -> int | None:
    """The HTTP status behind a ``mem0`` client error, when there is one."""
    for candidate in (exc, exc.__cause__, exc.__context__):
        response = getattr(candidate, "response", None)
        status = getattr(response, "status_code", None) or getattr(candidate, "status_code", None)
        if isinstance(status, int):
            return status
    return None
