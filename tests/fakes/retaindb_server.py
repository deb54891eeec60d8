"""A fake RetainDB API over HTTP: the routes the reference plugin calls, stateful.

No public API document exists; the routes, bodies and answer fields are those the
reference client sends and reads. Requests need ``Authorization: Bearer <api_key>``. Every
record belongs to a (project, user_id). Ingesting a session "extracts" one memory per user
message, ``<user_id> said: <text>``, as the real service derives memories from sessions.
``DELETE /v1/memory/{id}`` deletes any id, whoever owns it — as a client must assume of a
delete-by-id route — so the provider's ownership check is what protects other users.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from tests.fakes.http_fake import Answer, FakeHTTPServer, Request

_WORD = re.compile(r"\w{3,}")


@dataclass
class Ingest:
    project: str
    user_id: str
    session_id: str
    messages: list[dict[str, Any]]
    idempotency_key: str


class FakeRetainDB(FakeHTTPServer):
    error_field = "error"
    name = "fake-retaindb"

    def __init__(self, port: int = 0, *, api_key: str = "rdb-key") -> None:
        super().__init__(port)
        self.api_key = api_key
        self.memories: dict[str, dict[str, Any]] = {}
        self.ingests: list[Ingest] = []
        self._ids = itertools.count(1)

    def user_memories(self, user_id: str, project: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            return [
                m
                for m in self.memories.values()
                if m["user_id"] == user_id and (project is None or m["project"] == project)
            ]

    def route(self, r: Request) -> Answer:
        if r.header("authorization") != f"Bearer {self.api_key}":
            return 401, {"error": "unauthorized", "message": "invalid API key"}
        profile = re.fullmatch(r"/v1/memory/profile/([^/]+)", r.path)
        if r.method == "GET" and profile:
            user = unquote(profile.group(1))
            return 200, {"memories": self.user_memories(user, r.query["project"][-1])}
        if r.method == "GET" and r.path == "/v1/memories":
            found = self.user_memories(r.query["user_id"][-1], r.query["project"][-1])
            return 200, {"memories": found[: int(r.arg("limit") or 200)]}
        if r.method == "POST" and r.path in ("/v1/context/query", "/v1/memory/search"):
            hits = self._search(r.body)
            if r.path == "/v1/context/query":
                return 200, {"results": hits, "context": "\n".join(h["content"] for h in hits)}
            return 200, {"results": hits[: int(r.body.get("top_k", 8))]}
        if r.method == "POST" and r.path == "/v1/memory":
            memory = self._add(r.body, str(r.body["content"]))
            return 200, {"id": memory["id"], "memory": memory}
        one = re.fullmatch(r"/v1/memory/([^/]+)", r.path)
        if r.method == "DELETE" and one:
            memory_id = unquote(one.group(1))
            if self.memories.pop(memory_id, None) is None:
                return 404, {"error": "not_found", "message": f"memory {memory_id} not found"}
            return 200, {"deleted": True, "id": memory_id}
        if r.method == "POST" and r.path == "/v1/memory/ingest/session":
            body = r.body
            ingest = Ingest(
                body["project"],
                body["user_id"],
                body["session_id"],
                list(body["messages"]),
                r.header("idempotency-key"),
            )
            self.ingests.append(ingest)
            made = [
                self._add(body, f"{body['user_id']} said: {m['content']}")
                for m in ingest.messages
                if m.get("role") == "user"
            ]
            return 200, {"ingested": len(ingest.messages), "memories_created": len(made)}
        return 404, {"error": "not_found", "message": f"no route {r.method} {r.path}"}

    def _add(self, body: dict[str, Any], content: str) -> dict[str, Any]:
        memory = {
            "id": f"mem_{next(self._ids)}",
            "project": body["project"],
            "user_id": body["user_id"],
            "session_id": body.get("session_id", ""),
            "content": content,
            "memory_type": body.get("memory_type", "factual"),
            "importance": body.get("importance", 0.5),
        }
        self.memories[memory["id"]] = memory
        return memory

    def _search(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        words = set(_WORD.findall(str(body["query"]).lower()))
        hits = []
        for memory in self.user_memories(body["user_id"], body["project"]):
            overlap = words & set(_WORD.findall(memory["content"].lower()))
            if overlap:
                hits.append({**memory, "score": round(len(overlap) / max(1, len(words)), 3)})
        return sorted(hits, key=lambda h: -h["score"])
