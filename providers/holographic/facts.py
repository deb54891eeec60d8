"""Facts of the holographic provider: the record, the store protocol, entities and trust.

The provider never opens a database. The gateway implements :class:`FactStore` on its state
store (``gateway/holographic_facts.py``) and lends it through
:class:`providers.base.ProviderServices`. Every method names the tenant and the bank (the
scope's backend key) explicitly, and every read or write by id is filtered by both, so an id
from another tenant or scope is simply "not found".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from gateway.tenants import TenantId

CATEGORIES = ("general", "user_pref", "project", "tool")
HELPFUL_DELTA = 0.05
UNHELPFUL_DELTA = -0.10
DEFAULT_TRUST = 0.5
MAX_ENTITIES = 16

# Capitalised runs ("Dana Whitfield", "New York"), quoted terms, @handles and #tags.
_CAPITALISED = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of\s+|de\s+|van\s+)?[A-Z][\w'’-]*)*")
_QUOTED = re.compile(r"[\"“]([^\"”]{2,60})[\"”]|'([^']{2,60})'")
_HANDLE = re.compile(r"(?<!\w)[@#]([A-Za-z0-9_][\w.-]{0,40})")
# Sentence-initial words and pronouns that are capitalised without naming anything.
_NOT_NAMES = frozenset(
    [
        "a",
        "an",
        "and",
        "as",
        "at",
        "but",
        "by",
        "for",
        "from",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        "yes",
        "ok",
        "also",
    ]
)


@dataclass(frozen=True, slots=True)
class Bank:
    """One tenant's bank (the scope's backend key): what every store call names."""

    tenant: TenantId
    key: str


@dataclass(frozen=True, slots=True)
class NewFact:
    """A fact to store; ``vector`` holds ``dim`` phases as little-endian float32 bytes."""

    content: str
    category: str
    tags: tuple[str, ...]
    entities: tuple[str, ...]
    source: str
    trust: float
    dim: int
    vector: bytes


@dataclass(frozen=True, slots=True)
class Fact:
    """A stored fact of one tenant's bank."""

    id: int
    content: str
    category: str
    tags: tuple[str, ...]
    entities: tuple[str, ...]
    source: str
    trust: float
    helpful: int
    unhelpful: int
    dim: int
    vector: bytes
    created_at: float
    updated_at: float

    def summary(self) -> dict[str, object]:
        """What a tool answer shows of the fact."""
        return {
            "fact_id": self.id,
            "content": self.content,
            "category": self.category,
            "tags": list(self.tags),
            "entities": list(self.entities),
            "trust": round(self.trust, 3),
        }


@dataclass(frozen=True, slots=True)
class FactChange:
    """The fields of an update; None leaves a field as it is."""

    content: str | None = None
    category: str | None = None
    tags: tuple[str, ...] | None = None
    entities: tuple[str, ...] | None = None
    dim: int | None = None
    vector: bytes | None = None
    trust_delta: float = 0.0
    helpful: bool | None = None  # feedback: counts one helpful (True) / unhelpful (False)


class FactStore(Protocol):
    """Per-tenant, per-bank fact storage with a full-text index (see the module docstring)."""

    def add(self, tenant: TenantId, bank: str, fact: NewFact) -> tuple[Fact, bool]:
        """Store ``fact``; the same content again returns the stored one and False."""

    def get(self, tenant: TenantId, bank: str, fact_id: int) -> Fact | None: ...

    def find(self, tenant: TenantId, bank: str, content: str) -> Fact | None:
        """The fact whose content is exactly ``content``."""

    def update(self, tenant: TenantId, bank: str, fact_id: int, change: FactChange) -> Fact | None:
        """Apply ``change`` atomically (trust clamped to [0, 1]); None when not found."""

    def remove(self, tenant: TenantId, bank: str, fact_id: int) -> bool: ...

    def facts(
        self,
        tenant: TenantId,
        bank: str,
        *,
        category: str | None = None,
        min_trust: float = 0.0,
        limit: int | None = None,
    ) -> list[Fact]:
        """The bank's facts, most trusted then newest first."""

    def text_search(
        self, tenant: TenantId, bank: str, terms: Sequence[str], limit: int
    ) -> list[tuple[Fact, float]]:
        """Facts matching any of ``terms`` in the full-text index, best first, with a score."""

    def with_entity(self, tenant: TenantId, bank: str, entity: str) -> list[Fact]:
        """Facts whose entities include exactly ``entity`` (normalised; no patterns)."""

    def count(self, tenant: TenantId, bank: str) -> int: ...

    def erase(self, tenant: TenantId) -> int:
        """Delete every fact of ``tenant`` in every bank; how many there were."""

    def total(self) -> int:
        """How many facts the store holds in all (``doctor``; names no tenant)."""


def normalise_entity(name: str) -> str:
    """How entities compare: case-folded, inner whitespace collapsed (exact match after)."""
    return " ".join(name.split()).casefold()


def clamp_trust(value: float) -> float:
    return min(1.0, max(0.0, value))


def extract_entities(text: str) -> list[str]:
    """Names in ``text``: capitalised runs, quoted terms, @handles and #tags (in order)."""
    found: list[str] = []
    for match in _QUOTED.finditer(text):
        found.append(match.group(1) or match.group(2))
    for match in _HANDLE.finditer(text):
        found.append(match.group(1).rstrip(".-"))
    for match in _CAPITALISED.finditer(text):
        name = match.group(0).strip("'’-")
        parts = name.split()
        while parts and parts[0].casefold() in _NOT_NAMES:
            parts = parts[1:]
        if parts:
            found.append(" ".join(parts))
    unique: dict[str, str] = {}
    for name in found:
        key = normalise_entity(name)
        if key and key not in unique:
            unique[key] = " ".join(name.split())
    return list(unique.values())[:MAX_ENTITIES]


def parse_tags(value: object) -> tuple[str, ...]:
    """Tags from a comma-separated string or a list of strings (trimmed, unique, ≤ 16)."""
    if value is None or value == "":
        return ()
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple):
        raise ValueError("'tags' must be a comma-separated string or a list of strings")
    tags: dict[str, None] = {}
    for item in items:
        if not isinstance(item, str):
            raise ValueError("'tags' must be a comma-separated string or a list of strings")
        if item.strip():
            tags[item.strip()[:40]] = None
    return tuple(tags)[:16]
