"""The two Mem0 backends behind one small interface: ``mem0ai``'s ``Memory`` in-process (oss).

:class:`Mem0Backend` is what the provider calls; every method that reads or writes memories
takes the ``user_id`` explicitly (the tenant's backend key), except the by-id calls, whose
ownership the provider checks first (``get`` returns other users' memories). The platform
backend lives in :mod:`providers.mem0.platform`.

``mem0ai`` is imported lazily, through :func:`import_mem0`, which turns Mem0's telemetry off
and points its config directory under ``$MNEMOGATE_HOME`` first: both are read by ``mem0``
at import time from the process environment, so setting them there is the only switch (the
one place this package writes the environment, and only for ``MEM0_*`` names).

**Local vector store across processes.** A local Qdrant directory can be opened by one
client at a time (Qdrant takes an exclusive lock), while mnemogate calls Mem0 from the
gateway (tools) and from RQ workers (recall, sync). With the default local store each call
therefore opens ``Memory`` under a cross-process file lock and closes it after (~0.1 s). A
vector store the operator points at a server (``url``/``host`` in ``vector_store_config``)
keeps one ``Memory`` per process instead. Mem0's history database is in memory
(``:memory:``): it would otherwise keep raw turns and old memory texts that erasure could not
reach.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from filelock import FileLock, Timeout

TURN_KEY = "mnemogate_turn"  # metadata key of the turn a memory was extracted from
MEMORY_ID = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
_ERASE_BATCH = 100
_import_lock = threading.Lock()


class Mem0Unavailable(Exception):
    """Mem0 could not be reached or answered with an error; the message says which."""


@dataclass(frozen=True, slots=True)
class Record:
    """One memory as Mem0 returns it."""

    id: str
    memory: str
    user_id: str | None
    score: float | None = None


@dataclass(frozen=True, slots=True)
class OssConfig:
    """What the in-process backend needs, resolved from settings by the provider."""

    home: Path
    llm_base_url: str
    llm_model: str
    llm_api_key: str
    embedding_base_url: str
    embedding_model: str
    embedding_dims: int
    vector_store: str
    vector_store_config: Mapping[str, Any]
    collection: str
    timeout_s: float


class Mem0Backend(Protocol):
    def add(
        self, user_id: str, messages: list[dict[str, str]], metadata: dict[str, Any], infer: bool
    ) -> list[Record]: ...

    def search(self, user_id: str, query: str, top_k: int, threshold: float) -> list[Record]: ...

    def has_turn(self, user_id: str, turn_key: str) -> bool: ...

    def get(self, memory_id: str) -> Record | None: ...

    def update(self, memory_id: str, text: str) -> None: ...

    def delete(self, memory_id: str) -> None: ...

    def delete_all(self, user_id: str) -> int: ...

    def ping(self) -> str: ...

    def close(self) -> None: ...


def import_mem0(home: Path, module: str = "mem0") -> Any:
    """Import a ``mem0`` module with telemetry off and its config dir under ``home``."""
    with _import_lock:
        # Written, never read: settings are the only reader of the environment. mem0 reads
        # both once, at its first import in the process.
        target = home / "mem0" / "config"
        target.mkdir(parents=True, exist_ok=True)
        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ["MEM0_DIR"] = str(target)
        return importlib.import_module(module)


def record(item: Mapping[str, Any]) -> Record:
    """A :class:`Record` from Mem0's dict (oss and platform share the shape)."""
    score = item.get("score")
    user = item.get("user_id")
    return Record(
        id=str(item.get("id", "")),
        memory=str(item.get("memory") or ""),
        user_id=str(user) if user is not None else None,
        score=float(score) if isinstance(score, int | float) else None,
    )


def results(answer: Any) -> list[Mapping[str, Any]]:
    """The list of memory dicts in a Mem0 answer (``{"results": [...]}`` or a bare list)."""
    items = answer.get("results") if isinstance(answer, Mapping) else answer
    return [item for item in items or [] if isinstance(item, Mapping)]


class OssBackend:
    """``mem0.Memory`` in this process (see the module docstring for the locking)."""

    def __init__(self, config: OssConfig) -> None:
        self.config = config
        store = dict(config.vector_store_config)
        self.local = config.vector_store == "qdrant" and not (
            store.get("url") or store.get("host") or store.get("client")
        )
        self._lock_path = config.home / "mem0" / "qdrant.lock"
        self._shared: Any = None
        self._shared_lock = threading.Lock()

    def _mem0_config(self) -> dict[str, Any]:
        cfg = self.config
        store = dict(cfg.vector_store_config)
        store.setdefault("collection_name", cfg.collection)
        store.setdefault("embedding_model_dims", cfg.embedding_dims)
        if self.local:
            store.setdefault("path", str(cfg.home / "mem0" / "qdrant"))
            store.setdefault("on_disk", True)
        common = {"api_key": cfg.llm_api_key}
        return {
            "llm": {
                "provider": "openai",
                "config": {**common, "model": cfg.llm_model, "openai_base_url": cfg.llm_base_url},
            },
            "embedder": {
                "provider": "openai",
                "config": {
                    **common,
                    "model": cfg.embedding_model,
                    "openai_base_url": cfg.embedding_base_url,
                    "embedding_dims": cfg.embedding_dims,
                },
            },
            "vector_store": {"provider": cfg.vector_store, "config": store},
            "history_db_path": ":memory:",
        }

    def _open(self) -> Any:
        mem0 = import_mem0(self.config.home)
        try:
            memory = mem0.Memory.from_config(self._mem0_config())
        except Exception as exc:
            raise Mem0Unavailable(f"cannot open Mem0: {exc}") from exc
        # One attempt per call, bounded: a write that timed out may have landed, so the
        # OpenAI SDK's own retries (2 by default, 10 min timeout) must not repeat it.
        for part in (memory.llm, memory.embedding_model):
            part.client = part.client.with_options(max_retries=0, timeout=self.config.timeout_s)
        return memory

    @contextlib.contextmanager
    def _memory(self) -> Iterator[Any]:
        if not self.local:
            with self._shared_lock:
                if self._shared is None:
                    self._shared = self._open()
            yield self._shared
            return
        self._lock_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with FileLock(str(self._lock_path), timeout=self.config.timeout_s):
                memory = self._open()
                try:
                    yield memory
                finally:
                    _close(memory)
        except Timeout as exc:
            raise Mem0Unavailable("the local Mem0 store stayed busy; try again") from exc

    def add(
        self, user_id: str, messages: list[dict[str, str]], metadata: dict[str, Any], infer: bool
    ) -> list[Record]:
        with self._memory() as memory:
            answer = memory.add(messages, user_id=user_id, metadata=metadata, infer=infer)
        return [record({**item, "user_id": user_id}) for item in results(answer)]

    def search(self, user_id: str, query: str, top_k: int, threshold: float) -> list[Record]:
        with self._memory() as memory:
            answer = memory.search(
                query, top_k=top_k, filters={"user_id": user_id}, threshold=threshold
            )
        return [record(item) for item in results(answer)]

    def has_turn(self, user_id: str, turn_key: str) -> bool:
        with self._memory() as memory:
            answer = memory.get_all(filters={"user_id": user_id, TURN_KEY: turn_key}, top_k=1)
        return bool(results(answer))

    def get(self, memory_id: str) -> Record | None:
        if not MEMORY_ID.match(memory_id):
            return None
        with self._memory() as memory:
            try:
                item = memory.get(memory_id)
            except ValueError:  # not a valid point id for the store
                return None
        return record(item) if item else None

    def update(self, memory_id: str, text: str) -> None:
        with self._memory() as memory:
            memory.update(memory_id, text=text)

    def delete(self, memory_id: str) -> None:
        with self._memory() as memory:
            memory.delete(memory_id)

    def delete_all(self, user_id: str) -> int:
        """Every memory of ``user_id`` and its entity records; how many memories went."""
        removed = 0
        with self._memory() as memory:
            while True:
                batch = results(
                    memory.get_all(
                        filters={"user_id": user_id}, top_k=_ERASE_BATCH, show_expired=True
                    )
                )
                if not batch:
                    break
                for item in batch:
                    memory.delete(str(item["id"]))
                removed += len(batch)
            entities = memory.entity_store.list(filters={"user_id": user_id}, top_k=10_000)
            for point in entities[0] if isinstance(entities, tuple) else entities or []:
                memory.entity_store.delete(vector_id=point.id)
        return removed

    def ping(self) -> str:
        with self._memory() as memory:
            memory.vector_store.list_cols()
        where = "local store" if self.local else f"{self.config.vector_store} store"
        return f"oss mode, {where} open, model {self.config.llm_model}"

    def close(self) -> None:
        with self._shared_lock:
            if self._shared is not None:
                _close(self._shared)
                self._shared = None


def _close(memory: Any) -> None:
    """Close the history DB and the vector-store client (releasing Qdrant's folder lock)."""
    with contextlib.suppress(Exception):
        memory.close()
    client = getattr(memory.vector_store, "client", None)
    if client is not None and hasattr(client, "close"):
        with contextlib.suppress(Exception):
            client.close()
