"""Writing facts: validation, entity extraction, encoding, and the curated-memory mirror.

Every write that changes a fact's text re-extracts its entities and re-encodes its vector,
so a fact's vector always matches what it says. A bank holds at most ``max_facts`` facts;
an add beyond that is refused with a message saying what to do, never silently dropped.
"""

from __future__ import annotations

from gateway.security.fence import sanitize_recalled
from gateway.settings import HolographicSettings
from providers.base import MemoryWriteEvent
from providers.holographic.facts import (
    CATEGORIES,
    Bank,
    Fact,
    FactChange,
    NewFact,
    extract_entities,
)
from providers.holographic.retrieval import Retriever

MIRROR_SOURCE = "memory"  # facts mirrored from curated memory (USER.md / MEMORY.md)
MIRROR_CATEGORY = {"user": "user_pref", "memory": "general"}


class FactWriter:
    """Adds and changes facts of one bank at a time (see the module docstring)."""

    def __init__(self, settings: HolographicSettings, retriever: Retriever) -> None:
        self.settings = settings
        self.retriever = retriever
        self.store = retriever.store

    def add(
        self, bank: Bank, content: str, category: str, tags: tuple[str, ...], source: str
    ) -> tuple[Fact, bool]:
        """Store a fact (ValueError says what is wrong); the same text again is not a copy."""
        content = self._checked(content)
        if category not in CATEGORIES:
            raise ValueError(f"category must be one of {', '.join(CATEGORIES)}")
        existing = self.store.find(bank.tenant, bank.key, content)
        if existing is not None:
            return existing, False
        if self.store.count(bank.tenant, bank.key) >= self.settings.max_facts:
            raise ValueError(
                f"this memory holds {self.settings.max_facts} facts, the limit: remove "
                "outdated or low-trust facts first"
            )
        entities = tuple(extract_entities(content))
        fact = NewFact(
            content=content,
            category=category,
            tags=tags,
            entities=entities,
            source=source,
            trust=self.settings.default_trust,
            dim=self.retriever.dim,
            vector=self.retriever.encode(content, entities),
        )
        return self.store.add(bank.tenant, bank.key, fact)

    def update(
        self,
        bank: Bank,
        fact_id: int,
        content: str | None,
        category: str | None,
        tags: tuple[str, ...] | None,
        trust_delta: float,
        helpful: bool | None,
    ) -> Fact | None:
        change = FactChange(category=category, tags=tags, trust_delta=trust_delta, helpful=helpful)
        if content is not None:
            content = self._checked(content)
            entities = tuple(extract_entities(content))
            change = FactChange(
                content=content,
                category=category,
                tags=tags,
                entities=entities,
                dim=self.retriever.dim,
                vector=self.retriever.encode(content, entities),
                trust_delta=trust_delta,
                helpful=helpful,
            )
        return self.store.update(bank.tenant, bank.key, fact_id, change)

    def mirror(self, bank: Bank, event: MemoryWriteEvent) -> None:
        """Follow a curated-memory write: add a fact, rewrite it, or remove it."""
        category = MIRROR_CATEGORY.get(event.target, "general")
        previous = _entry(event.previous) if event.previous else ""
        old = self.store.find(bank.tenant, bank.key, previous) if previous else None
        if event.action == "remove":
            if old is not None and old.source == MIRROR_SOURCE:
                self.store.remove(bank.tenant, bank.key, old.id)
            return
        content = _entry(event.content)
        if not content:
            return
        if event.action == "replace" and old is not None and old.source == MIRROR_SOURCE:
            if self.store.find(bank.tenant, bank.key, content) is None:
                self.update(bank, old.id, content, None, None, 0.0, None)
                return
            self.store.remove(bank.tenant, bank.key, old.id)  # the new text is already a fact
            return
        self.add(bank, content, category, (), MIRROR_SOURCE)

    def _checked(self, content: str) -> str:
        content = " ".join(content.split())
        if not content:
            raise ValueError("a fact must not be empty")
        if len(content) > self.settings.max_fact_chars:
            raise ValueError(
                f"a fact is at most {self.settings.max_fact_chars} characters; split it"
            )
        return content


def _entry(text: str) -> str:
    """A curated entry as a fact: fence tags removed, whitespace collapsed."""
    return " ".join(sanitize_recalled(text).split())
