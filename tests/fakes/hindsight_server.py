"""A fake Hindsight API server over real HTTP on loopback: stateful per bank, recording.

Serves the routes ``hindsight-client`` 1.1 calls for retain, recall, reflect, documents,
bank deletion and version, with the request and response field sets of its generated
models (``RetainResponse``, ``RecallResponse``/``RecallResult``, ``ReflectResponse``,
``DocumentResponse``, ``DeleteResponse``, ``VersionResponse``). What it "extracts" from a
retained item is traceable: each ``User:`` line becomes a world fact and an observation
with the same text (so a client must deduplicate them), each ``Assistant:`` line an
experience, any other line a world fact. Recall matches memories sharing a word (≥ 3
letters) with the query; an unknown bank answers 404 to recall, reflect, documents and
deletion, as the real server does; retain creates the bank.

Append, as read in the hindsight-api-slim 1.1.0 source (not run here): ``update_mode:
"append"`` joins the stored ``original_text`` and the item's text with a newline and
reprocesses the document; ``"replace"`` replaces the document and its memories. (The real
server refuses ``append`` when it does not store document text.)

Standalone: ``python -m tests.fakes.hindsight_server --port 8888``.
"""

from __future__ import annotations

import argparse
import itertools
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tests.fakes.http_fake import FakeHTTPServer, Request

_BANK = re.compile(r"^/v1/default/banks/(?P<bank>[^/]+)(?P<rest>/.*)?$")
_WORD = re.compile(r"[^\W_]{3,}")
API_VERSION = "0.4.0-fake"
FEATURES = {
    "observations": True,
    "mcp": False,
    "worker": True,
    "bank_config_api": False,
    "bank_llm_health": False,
    "file_upload_api": False,
    "document_export_api": False,
    "document_import_api": False,
    "audit_log": False,
    "llm_trace": False,
    "store_document_text": True,
}


@dataclass
class MemoryRec:
    id: str
    text: str
    type: str  # world | experience | observation
    document_id: str | None
    context: str | None
    metadata: dict[str, str] | None
    tags: list[str] | None


@dataclass
class DocumentRec:
    id: str
    text: str
    created_at: str
    updated_at: str
    metadata: dict[str, str] | None = None


@dataclass
class BankRec:
    memories: list[MemoryRec] = field(default_factory=list)
    documents: dict[str, DocumentRec] = field(default_factory=dict)


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


class FakeHindsight(FakeHTTPServer):
    """The fake server; ``banks`` is its state; the gates hold recall / retain calls."""

    name = "fake-hindsight"

    def __init__(self, port: int = 0) -> None:
        super().__init__(port)
        self.banks: dict[str, BankRec] = {}
        self.recall_gate: threading.Event | None = None  # recall waits until set
        self.retain_gate: threading.Event | None = None  # retain waits until set…
        self.retain_waiting = threading.Event()  # …and says so here
        self._ids = itertools.count(1)

    def before(self, method: str, path: str) -> None:
        if path.endswith("/memories/recall") and self.recall_gate is not None:
            self.recall_gate.wait(timeout=30.0)
        if method == "POST" and path.endswith("/memories") and self.retain_gate is not None:
            self.retain_waiting.set()
            self.retain_gate.wait(timeout=30.0)

    def release(self) -> None:
        for gate in (self.recall_gate, self.retain_gate):
            if gate is not None:
                gate.set()

    def texts(self, bank: str, kind: str | None = None) -> list[str]:
        """The memory texts of ``bank`` (of one type), in the order they were made."""
        with self.lock:
            rec = self.banks.get(bank)
            return [m.text for m in rec.memories if kind in (None, m.type)] if rec else []

    # -- routes ---------------------------------------------------------------------------

    def route(self, request: Request) -> tuple[int, Any]:
        method, path, body = request.method, request.path, request.body
        if method == "GET" and path == "/version":
            return 200, {"api_version": API_VERSION, "features": FEATURES}
        if method == "GET" and path in ("/health", "/health/live"):
            return 200, {"status": "healthy"}
        match = _BANK.match(path)
        if match is None:
            return 404, {"detail": "Not Found"}
        bank, rest = match.group("bank"), match.group("rest") or ""
        try:
            if method == "POST" and rest == "/memories":
                return self._retain(bank, body)
            if rest == "" and method == "DELETE":
                return self._delete_bank(bank)
            rec = self.banks.get(bank)
            if rec is None:
                return 404, {"detail": f"Bank '{bank}' not found"}
            if method == "POST" and rest == "/memories/recall":
                return self._recall(bank, rec, body)
            if method == "POST" and rest == "/reflect":
                return self._reflect(rec, body)
            if method == "GET" and rest.startswith("/documents/"):
                return self._document(bank, rec, rest.removeprefix("/documents/"))
        except (KeyError, TypeError, ValueError) as exc:
            return 422, {"detail": [{"loc": ["body"], "msg": repr(exc), "type": "value_error"}]}
        return 404, {"detail": "Not Found"}

    def _retain(self, bank: str, body: Any) -> tuple[int, Any]:
        items = body["items"]
        if not isinstance(items, list) or not items:
            raise ValueError("items must be a non-empty list")
        rec = self.banks.setdefault(bank, BankRec())
        for item in items:
            content = item["content"]
            if not isinstance(content, str) or not content.strip():
                raise ValueError("content must be a non-empty string")
            self._store_item(rec, item, content, body.get("document_tags"))
        return 200, {
            "success": True,
            "bank_id": bank,
            "items_count": len(items),
            "async": bool(body.get("async")),
            "operation_id": None,
            "operation_ids": None,
            "usage": None,
        }

    def _store_item(
        self, rec: BankRec, item: dict[str, Any], content: str, document_tags: Any
    ) -> None:
        doc_id = item.get("document_id")
        if doc_id:
            now = _now()
            doc = rec.documents.get(doc_id)
            if doc is not None and item.get("update_mode") == "append":
                doc.text = f"{doc.text}\n{content}"
                doc.updated_at = now
            else:
                if doc is not None:  # replace: the document's memories go too
                    rec.memories = [m for m in rec.memories if m.document_id != doc_id]
                rec.documents[doc_id] = DocumentRec(doc_id, content, now, now)
            rec.documents[doc_id].metadata = item.get("metadata")
        tags = list(item.get("tags") or []) + list(document_tags or [])
        for line in (raw.strip() for raw in content.splitlines()):
            if not line or line.startswith("[turn "):
                continue
            kinds: list[tuple[str, str]]
            if line.startswith("User:"):
                said = line.removeprefix("User:").strip()
                kinds = [(said, "world"), (said, "observation")]
            elif line.startswith("Assistant:"):
                kinds = [(line.removeprefix("Assistant:").strip(), "experience")]
            else:
                kinds = [(line, "world")]
            for text, kind in kinds:
                rec.memories.append(
                    MemoryRec(
                        str(next(self._ids)),
                        text,
                        kind,
                        doc_id,
                        item.get("context"),
                        item.get("metadata"),
                        tags or None,
                    )
                )

    def _matching(self, rec: BankRec, query: str, types: list[str] | None) -> list[MemoryRec]:
        wanted = _words(query)
        return [
            m
            for m in rec.memories
            if (types is None or m.type in types) and wanted & _words(m.text)
        ]

    def _recall(self, bank: str, rec: BankRec, body: Any) -> tuple[int, Any]:
        query = body["query"]
        if not isinstance(query, str):
            raise TypeError("query must be a string")
        results = [
            {
                "id": m.id,
                "text": m.text,
                "type": m.type,
                "entities": None,
                "context": m.context,
                "occurred_start": None,
                "occurred_end": None,
                "mentioned_at": None,
                "document_id": m.document_id,
                "metadata": m.metadata,
                "chunk_id": None,
                "tags": m.tags,
                "source_fact_ids": None,
            }
            for m in self._matching(rec, query, body.get("types"))
        ]
        return 200, {"results": results, "trace": None, "entities": None, "chunks": None}

    def _reflect(self, rec: BankRec, body: Any) -> tuple[int, Any]:
        found = self._matching(rec, body["query"], None)
        if found:
            text = "From memory: " + "; ".join(dict.fromkeys(m.text for m in found))
        else:
            text = "I do not remember anything about that."
        return 200, {"text": text, "based_on": None, "structured_output": None, "usage": None}

    def _document(self, bank: str, rec: BankRec, doc_id: str) -> tuple[int, Any]:
        doc = rec.documents.get(doc_id)
        if doc is None:
            return 404, {"detail": f"Document '{doc_id}' not found"}
        units = sum(1 for m in rec.memories if m.document_id == doc_id)
        return 200, {
            "id": doc.id,
            "bank_id": bank,
            "original_text": doc.text,
            "content_hash": None,
            "created_at": doc.created_at,
            "updated_at": doc.updated_at,
            "memory_unit_count": units,
            "tags": None,
            "document_metadata": doc.metadata,
            "retain_params": None,
        }

    def _delete_bank(self, bank: str) -> tuple[int, Any]:
        rec = self.banks.pop(bank, None)
        if rec is None:
            return 404, {"detail": f"Bank '{bank}' not found"}
        count = len(rec.memories)
        return 200, {"success": True, "message": f"Bank '{bank}' deleted", "deleted_count": count}


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve a fake Hindsight API on loopback.")
    parser.add_argument("--port", type=int, default=8888)
    port = parser.parse_args().port
    with FakeHindsight(port=port) as fake:
        print(f"fake Hindsight at {fake.base_url}", flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
