"""HolographicProvider: per-scope facts with trust scores and HRR vectors, no service.

Facts are kept in the gateway's state store (lent as ``ProviderServices.facts``) under the
context's backend key, so a tenant's DM facts and each of their group scopes are separate
banks. numpy (the ``holographic`` extra) is imported on first use, never at import time, so
``mnemogate memory setup holographic`` can say it is missing.

Where facts come from: the ``fact_store`` tool and the mirror of curated memory (a USER.md
or MEMORY.md entry added, replaced or removed). Finished turns are not mined for facts: the
model decides what is worth keeping, as with curated memory.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from pydantic import ValidationError

from gateway.config_file import update_config
from gateway.errors import ConfigError
from gateway.settings import HolographicSettings, config_file_path
from gateway.tenants import TenantId
from providers.base import (
    ConfigField,
    MemoryProvider,
    MemoryWriteEvent,
    ProviderContext,
    ProviderServices,
    RecallQuery,
    tool_error,
)
from providers.holographic.facts import Bank, FactStore
from providers.holographic.tools import tool_schemas
from providers.scoping import ScopeRecord
from providers.toolresults import clean

if TYPE_CHECKING:
    from gateway.settings import Settings
    from providers.holographic.tools import FactTools
    from providers.holographic.writer import FactWriter

log = logging.getLogger(__name__)
SAVED_KEYS = ("dimension", "min_trust", "recall_limit")
PROMPT_BLOCK = (
    "You keep durable facts about this user with the fact_store tool (add, search, probe an "
    "entity, related, reason over several entities, contradict, update, remove, list); "
    "fact_feedback marks a recalled fact helpful or unhelpful, which moves its trust. The "
    "most relevant trusted facts may be appended to the user's message as background."
)


class HolographicProvider(MemoryProvider):
    """Local facts per memory scope; see the package docstring."""

    name = "holographic"
    extra = "holographic"
    requires_modules = ("numpy",)

    def __init__(self, settings: HolographicSettings) -> None:
        self.settings = settings
        self._store: FactStore | None = None
        self._lock = threading.Lock()
        self._parts: tuple[FactWriter, FactTools] | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls(settings.holographic)

    def attach(self, services: ProviderServices) -> None:
        self._store = services.facts

    # -- the interface -----------------------------------------------------------------------

    def is_available(self) -> bool:
        return importlib.util.find_spec("numpy") is not None

    def initialize(self, ctx: ProviderContext) -> None:
        return None  # a bank is just a key: nothing to create

    def tool_schemas(self) -> list[dict[str, Any]]:
        return tool_schemas()

    def system_prompt_block(self) -> str:
        return PROMPT_BLOCK

    def recall(self, ctx: ProviderContext, query: RecallQuery) -> str:
        """The facts most relevant to the message, topped up with the most trusted ones."""
        writer, _ = self._build()
        bank = _bank(ctx)
        limit, floor = self.settings.recall_limit, self.settings.min_trust
        chosen = [fact for fact, _ in writer.retriever.search(bank, query.text, limit, floor)]
        if len(chosen) < limit:
            seen = {fact.id for fact in chosen}
            for fact in writer.store.facts(bank.tenant, bank.key, min_trust=floor, limit=limit):
                if fact.id not in seen and len(chosen) < limit:
                    chosen.append(fact)
        if not chosen:
            return ""
        lines = ["## Facts kept about this user (holographic memory)"]
        used = len(lines[0])
        for fact in chosen:
            text = clean(fact.content, self.settings.max_fact_chars)
            line = f"- {text} [{fact.category}, trust {fact.trust:.2f}, fact {fact.id}]"
            if used + len(line) + 1 > self.settings.max_recall_chars:
                break
            lines.append(line)
            used += len(line) + 1
        return "\n".join(lines) if len(lines) > 1 else ""

    def handle_tool_call(self, ctx: ProviderContext, name: str, args: dict[str, Any]) -> str:
        if name not in ("fact_store", "fact_feedback"):
            return tool_error(f"unknown tool {name!r}; try fact_store or fact_feedback")
        _, tools = self._build()
        return tools.call(_bank(ctx), name, args)

    def on_memory_write(self, ctx: ProviderContext, event: MemoryWriteEvent) -> None:
        if not self.settings.mirror_memory or event.metadata.scope_key != ctx.memory_scope_key:
            return
        writer, _ = self._build()
        try:
            writer.mirror(_bank(ctx), event)
        except ValueError as exc:  # e.g. an entry longer than a fact may be: keep the turn
            log.warning("holographic: curated %s entry not mirrored: %s", event.action, exc)

    def erase(self, tenant: TenantId, scopes: Sequence[ScopeRecord] = ()) -> tuple[int, list[str]]:
        """Every fact of ``tenant`` in every bank (the store deletes by tenant, not by key)."""
        return self._require_store().erase(tenant), []

    def health(self) -> str:
        from providers.holographic.retrieval import threshold

        store = self._require_store()
        numpy_version = importlib.metadata.version("numpy")
        return (
            f"numpy {numpy_version}, dimension {self.settings.dimension} (match threshold "
            f"{threshold(self.settings.dimension):.3f}), {store.total()} facts in the state store"
        )

    def config_schema(self) -> list[ConfigField]:
        return [
            ConfigField("dimension", "HRR vector dimension (512–16384)", default="1024"),
            ConfigField("min_trust", "least trust a recalled fact needs (0–1)", default="0.3"),
            ConfigField("recall_limit", "facts recalled per turn", default="8"),
        ]

    def save_config(self, values: Mapping[str, str], home: Path) -> None:
        chosen = {key: values[key].strip() for key in SAVED_KEYS if values.get(key, "").strip()}
        if not chosen:
            return
        try:
            checked = HolographicSettings.model_validate(chosen)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = "holographic." + ".".join(str(part) for part in first["loc"])
            raise ConfigError(f"{where}: {first['msg']}") from exc
        typed = {key: getattr(checked, key) for key in chosen}
        update_config(config_file_path() or home / "config.toml", "holographic", typed)

    # -- parts --------------------------------------------------------------------------------

    def _require_store(self) -> FactStore:
        if self._store is None:
            raise RuntimeError(
                "the holographic provider needs the gateway's state store (ProviderServices.facts)"
            )
        return self._store

    def _build(self) -> tuple[FactWriter, FactTools]:
        """The numpy-backed parts, built on first use (imports numpy)."""
        with self._lock:
            if self._parts is None:
                from providers.holographic.retrieval import Retriever
                from providers.holographic.tools import FactTools
                from providers.holographic.writer import FactWriter

                retriever = Retriever(
                    self._require_store(), self.settings.dimension, self.settings.max_facts
                )
                writer = FactWriter(self.settings, retriever)
                self._parts = (writer, FactTools(self.settings, retriever, writer))
            return self._parts


def _bank(ctx: ProviderContext) -> Bank:
    return Bank(ctx.tenant, ctx.backend_key)
