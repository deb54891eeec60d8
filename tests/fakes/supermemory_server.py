"""A stateful fake Supermemory API (the v3/v4 routes of ``providers.supermemory.client``).

State is per container tag, as on the service: documents, and the memories "derived" from
them — one memory per document (its content) and one per user message of an ingested
conversation. A conversation posted again under the same ``conversationId`` replaces the
earlier one. Search scores by shared words; the profile lists the tag's memories (static:
all, dynamic: the last three). ``DELETE /v4/memories`` only finds a memory in the tag it
names; ``DELETE /v3/documents/bulk`` removes the tags' documents and their memories. Auth:
``Authorization: Bearer <key>``.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.http_fake import Answer, FakeHTTPServer, Request

_WORD = re.compile(r"[a-z0-9]+")


@dataclass
class Container:
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    memories: dict[str, dict[str, Any]] = field(default_factory=dict)  # id → memory, doc id


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


class FakeSupermemory(FakeHTTPServer):
    name = "fake-supermemory"
    invalid_status = 400

    def __init__(self, port: int = 0, api_key: str = "sm-test") -> None:
        super().__init__(port)
        self.api_key = api_key
        self.containers: dict[str, Container] = {}

    def route(self, request: Request) -> Answer:
        if request.header("authorization") != f"Bearer {self.api_key}":
            return 401, {"error": "Unauthorized"}
        return self.route_table(request)

    def container(self, tag: str) -> Container:
        return self.containers.setdefault(tag, Container())

    def memory_texts(self, tag: str) -> list[str]:
        with self.lock:
            return [m["memory"] for m in self.container(tag).memories.values()]

    def _derive(self, tag: str, doc_id: str, texts: list[str]) -> None:
        box = self.container(tag)
        for text in texts:
            box.memories[f"mem_{uuid.uuid4().hex[:12]}"] = {"memory": text, "doc": doc_id}

    def add(self, match: re.Match[str], r: Request) -> Answer:
        tags = r.body["containerTags"]
        doc_id = f"doc_{uuid.uuid4().hex[:12]}"
        for tag in tags:
            self.container(tag).documents[doc_id] = {
                "content": r.body["content"],
                "metadata": r.body.get("metadata") or {},
            }
            self._derive(tag, doc_id, [r.body["content"]])
        return 200, {"id": doc_id, "status": "queued"}

    def conversation(self, match: re.Match[str], r: Request) -> Answer:
        doc_id = f"conv_{r.body['conversationId']}"
        texts = [m["content"] for m in r.body["messages"] if m["role"] == "user"]
        for tag in r.body["containerTags"]:
            box = self.container(tag)
            box.memories = {k: v for k, v in box.memories.items() if v["doc"] != doc_id}
            box.documents[doc_id] = {"messages": r.body["messages"], "metadata": r.body["metadata"]}
            self._derive(tag, doc_id, texts)
        return 200, {"id": doc_id, "status": "queued"}

    def _search(self, tag: str, q: str, limit: int) -> list[dict[str, Any]]:
        wanted = _words(q)
        hits = []
        for memory_id, item in self.container(tag).memories.items():
            score = len(wanted & _words(item["memory"])) / max(len(wanted), 1)
            if score > 0:
                hits.append(
                    {
                        "id": memory_id,
                        "memory": item["memory"],
                        "similarity": score,
                        "updatedAt": "2026-12-01T00:00:00Z",
                        "metadata": None,
                    }
                )
        hits.sort(key=lambda hit: -hit["similarity"])
        return hits[:limit]

    def search(self, match: re.Match[str], r: Request) -> Answer:
        hits = self._search(r.body["containerTag"], r.body["q"], int(r.body.get("limit") or 10))
        return 200, {"results": hits, "timing": 1.0, "total": len(hits)}

    def profile(self, match: re.Match[str], r: Request) -> Answer:
        texts = self.memory_texts(r.body["containerTag"])
        answer: dict[str, Any] = {"profile": {"static": texts, "dynamic": texts[-3:]}}
        if r.body.get("q"):
            hits = self._search(r.body["containerTag"], r.body["q"], 10)
            answer["searchResults"] = {"results": hits, "timing": 1.0, "total": len(hits)}
        return 200, answer

    def forget(self, match: re.Match[str], r: Request) -> Answer:
        box = self.containers.get(r.body["containerTag"])
        if box is None or box.memories.pop(r.body["id"], None) is None:
            return 404, {"error": "Memory not found"}
        return 200, {"id": r.body["id"], "forgotten": True}

    def bulk_delete(self, match: re.Match[str], r: Request) -> Answer:
        count, tags = 0, r.body["containerTags"]
        for tag in tags:
            box = self.containers.pop(tag, None)
            count += len(box.documents) if box else 0
        return 200, {"deletedCount": count, "success": True, "containerTags": tags}

    routes = [  # noqa: RUF012 - the class's route table
        ("POST", re.compile(r"^/v3/documents$"), add),
        ("POST", re.compile(r"^/v4/conversations$"), conversation),
        ("POST", re.compile(r"^/v4/search$"), search),
        ("POST", re.compile(r"^/v4/profile$"), profile),
        ("DELETE", re.compile(r"^/v4/memories$"), forget),
        ("DELETE", re.compile(r"^/v3/documents/bulk$"), bulk_delete),
    ]
