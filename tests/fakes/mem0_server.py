"""A fake Mem0 platform API: the routes ``mem0ai``'s ``MemoryClient`` (2.2.1) calls, stateful.

Memories live in one dict for all users, as on the real service: ``GET /v1/memories/{id}/``
returns any user's memory (the reason the provider checks ownership). ``add`` with
``infer`` stores each user message as one memory (the platform extracts facts; the fake
keeps the text so recall is traceable) and skips texts the user already has. Search scores
by shared words; search and list need v2 filters naming a ``user_id`` under ``AND``. Auth is
``Authorization: Token <key>``.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from tests.fakes.http_fake import Answer, FakeHTTPServer, Request

_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


class FakeMem0(FakeHTTPServer):
    name = "fake-mem0"
    invalid_status = 400

    def __init__(self, port: int = 0, api_key: str = "m0-test") -> None:
        super().__init__(port)
        self.api_key = api_key
        self.memories: dict[str, dict[str, Any]] = {}

    def route(self, request: Request) -> Answer:
        if request.header("authorization") != f"Token {self.api_key}":
            return 401, {"detail": "Invalid API key"}
        return self.route_table(request)

    def user_memories(self, user_id: str) -> list[dict[str, Any]]:
        with self.lock:
            return [m for m in self.memories.values() if m["user_id"] == user_id]

    def ping(self, match: re.Match[str], r: Request) -> Answer:
        return 200, {"status": "ok", "org_id": "org", "project_id": "proj", "user_email": None}

    def add(self, match: re.Match[str], r: Request) -> Answer:
        user_id = r.body.get("user_id")
        if not user_id:
            return 400, {"detail": "user_id, agent_id or run_id is required"}
        texts = [m["content"] for m in r.body["messages"] if m.get("role") == "user"]
        have = {m["memory"] for m in self.user_memories(user_id)}
        added = []
        for text in texts:
            if text in have:
                continue
            item = {
                "id": str(uuid.uuid4()),
                "memory": text,
                "user_id": user_id,
                "metadata": r.body.get("metadata") or {},
                "created_at": "2026-12-01T00:00:00Z",
                "updated_at": "2026-12-01T00:00:00Z",
            }
            self.memories[item["id"]] = item
            have.add(text)
            added.append({"id": item["id"], "memory": text, "event": "ADD"})
        return 200, {"results": added}

    def search(self, match: re.Match[str], r: Request) -> Answer:
        user_id = _user_filter(r.body.get("filters"))
        if user_id is None:
            return 400, {"detail": "filters must name a user_id"}
        wanted = _words(r.body["query"])
        hits = []
        for item in self.user_memories(user_id):
            score = len(wanted & _words(item["memory"])) / max(len(wanted), 1)
            if score > float(r.body.get("threshold") or 0):
                hits.append({**item, "score": score})
        hits.sort(key=lambda h: -h["score"])
        return 200, {"results": hits[: int(r.body.get("top_k") or 10)]}

    def list(self, match: re.Match[str], r: Request) -> Answer:
        filters = r.body.get("filters")
        user_id = _user_filter(filters)
        if user_id is None:
            return 400, {"detail": "filters must name a user_id"}
        meta = _metadata_filter(filters)
        found = [
            m
            for m in self.user_memories(user_id)
            if all(m["metadata"].get(k) == v for k, v in meta.items())
        ]
        page = int(r.arg("page", "1") or 1)
        size = int(r.arg("page_size", "100") or 100)
        chunk = found[(page - 1) * size : page * size]
        more = page * size < len(found)
        return 200, {"count": len(found), "next": "more" if more else None, "results": chunk}

    def get(self, match: re.Match[str], r: Request) -> Answer:
        item = self.memories.get(match["id"])
        return (200, item) if item else (404, {"detail": "Memory not found"})

    def update(self, match: re.Match[str], r: Request) -> Answer:
        item = self.memories.get(match["id"])
        if item is None:
            return 404, {"detail": "Memory not found"}
        item["memory"] = r.body["text"]
        return 200, {"id": item["id"], "memory": item["memory"]}

    def delete(self, match: re.Match[str], r: Request) -> Answer:
        if self.memories.pop(match["id"], None) is None:
            return 404, {"detail": "Memory not found"}
        return 200, {"message": "Memory deleted successfully!"}

    def delete_all(self, match: re.Match[str], r: Request) -> Answer:
        user_id = r.arg("user_id")
        if not user_id:
            return 400, {"detail": "a filter is required"}
        for item in self.user_memories(user_id):
            del self.memories[item["id"]]
        return 200, {"message": "Memories deleted successfully!"}

    routes = [  # noqa: RUF012 - the class's route table
        ("GET", re.compile(r"^/v1/ping/$"), ping),
        ("POST", re.compile(r"^/v3/memories/add/$"), add),
        ("POST", re.compile(r"^/v3/memories/search/$"), search),
        ("POST", re.compile(r"^/v3/memories/$"), list),
        ("GET", re.compile(r"^/v1/memories/(?P<id>[^/]+)/$"), get),
        ("PUT", re.compile(r"^/v1/memories/(?P<id>[^/]+)/$"), update),
        ("DELETE", re.compile(r"^/v1/memories/(?P<id>[^/]+)/$"), delete),
        ("DELETE", re.compile(r"^/v1/memories/$"), delete_all),
    ]


def _user_filter(filters: Any) -> str | None:
    """The user of v2 filters, which put a logical operator at the root (``{"AND": [...]}``)."""
    if not isinstance(filters, dict):
        return None
    for part in filters.get("AND", []):
        if isinstance(part, dict) and "user_id" in part:
            return str(part["user_id"])
    return None


def _metadata_filter(filters: dict[str, Any]) -> dict[str, Any]:
    for part in filters.get("AND", []):
        if isinstance(part, dict) and isinstance(part.get("metadata"), dict):
            return dict(part["metadata"])
    return {}
