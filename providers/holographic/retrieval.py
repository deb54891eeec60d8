"""Finding facts: text search, probe, related, reason and contradiction candidates.

Works on one (tenant, bank) of a :class:`~providers.holographic.facts.FactStore` at a time;
the vectors come from :mod:`providers.holographic.hrr`. Scoring, in one place:

* ``search`` — FTS5 candidates (BM25, stemmed) re-ranked with the HRR similarity of the
  query's words in the content role, then weighted by trust.
* ``probe(X)`` — similarity of each fact vector with ``bind(atom(X), ROLE_ENTITY)``, plus the
  facts whose entity rows equal X exactly.
* ``related(X)`` — X in any role: the entity role as in probe, or X's words in the content
  role (a lower-case mention the entity extractor did not catch), plus exact phrase hits.
* ``reason([X, Y, …])`` — the *weakest* of the per-entity probe scores, so a fact must be
  about all of them.

A stored vector whose dimension is not the configured one (the operator changed
``holographic.dimension``) is re-encoded from the fact's content and entities, written back,
and counted in :attr:`Retriever.reencoded`; nothing crashes on it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import numpy as np

from providers.holographic import hrr
from providers.holographic.facts import Bank, Fact, FactChange, FactStore, normalise_entity

log = logging.getLogger(__name__)
Scored = list[tuple[Fact, float]]
Shape = tuple[set[str], set[str]]  # (entities, words) of a statement
CONTRADICTION_SCAN = 500


def threshold(dim: int) -> float:
    """The least similarity that means "bound in this fact": five noise deviations."""
    return max(0.1, 5.0 / math.sqrt(2 * dim))


class Retriever:
    """The scoring rules of the module docstring over one store and dimension."""

    def __init__(self, store: FactStore, dim: int, max_facts: int) -> None:
        self.store = store
        self.dim = dim
        self.max_facts = max_facts
        self.reencoded: dict[str, int] = {}  # bank → facts re-encoded since last asked

    def encode(self, content: str, entities: Sequence[str]) -> bytes:
        return hrr.to_bytes(hrr.encode_fact(content, entities, self.dim))

    # -- queries ------------------------------------------------------------------------------

    def search(self, bank: Bank, query: str, limit: int, min_trust: float = 0.0) -> Scored:
        terms = hrr.words(query)  # stop words would match nearly every fact
        hits = self.store.text_search(bank.tenant, bank.key, terms, max(limit * 4, 20))
        hits = [(f, rank) for f, rank in hits if f.trust >= min_trust]
        if not hits:
            return []
        best = max(rank for _, rank in hits) or 1.0
        key = hrr.content_key(query, self.dim)
        vectors = self._vectors(bank, [f for f, _ in hits])
        scored = []
        for (fact, rank), vector in zip(hits, vectors, strict=True):
            semantic = max(0.0, hrr.similarity(vector, key)) if key is not None else 0.0
            relevance = 0.6 * (rank / best) + 0.4 * semantic
            scored.append((fact, relevance * (0.5 + 0.5 * fact.trust)))
        return _top(scored, limit)

    def probe(self, bank: Bank, entity: str, limit: int) -> Scored:
        facts = self._all(bank)
        scores = self._scores(bank, facts, hrr.entity_key(entity, self.dim))
        exact = {f.id for f in self.store.with_entity(bank.tenant, bank.key, entity)}
        cut = threshold(self.dim)
        found = [
            (f, float(s)) for f, s in zip(facts, scores, strict=True) if s >= cut or f.id in exact
        ]
        return _top(found, limit)

    def related(self, bank: Bank, entity: str, limit: int) -> Scored:
        facts = self._all(bank)
        as_entity = self._scores(bank, facts, hrr.entity_key(entity, self.dim))
        words = hrr.words(entity)
        as_content = np.zeros(len(facts))
        if words:
            key = hrr.content_key(entity, self.dim)
            assert key is not None
            as_content = self._scores(bank, facts, key)
        phrase = " ".join(words)
        cut = threshold(self.dim)
        found = []
        for fact, e_score, c_score in zip(facts, as_entity, as_content, strict=True):
            score = max(float(e_score), float(c_score))
            mentioned = bool(phrase) and f" {phrase} " in f" {' '.join(hrr.words(fact.content))} "
            if score >= cut or mentioned:
                found.append((fact, max(score, cut)))
        return _top(found, limit)

    def reason(self, bank: Bank, entities: Sequence[str], limit: int) -> Scored:
        facts = self._all(bank)
        weakest = np.full(len(facts), np.inf)
        for entity in dict.fromkeys(normalise_entity(e) for e in entities):
            key = hrr.entity_key(entity, self.dim)
            weakest = np.minimum(weakest, self._scores(bank, facts, key))
        cut = threshold(self.dim)
        return _top([(f, float(s)) for f, s in zip(facts, weakest, strict=True) if s >= cut], limit)

    def contradictions(
        self, bank: Bank, limit: int, claim: str | None = None, claim_entities: Sequence[str] = ()
    ) -> list[tuple[Fact | None, Fact, float]]:
        """Pairs about the same entities that say similar but different things, best first.

        With ``claim``, the pairs are (None, stored fact) for a new statement not yet stored.
        Only the ``CONTRADICTION_SCAN`` most trusted, newest facts are compared, so the cost
        (pairs within each entity's facts) stays bounded on a full bank.
        """
        facts = self._all(bank)[:CONTRADICTION_SCAN]
        shapes = {f.id: (_entity_set(f.entities), _word_set(f.content)) for f in facts}
        pairs: list[tuple[Fact | None, Fact, float]] = []
        if claim is not None:
            mine = (_entity_set(claim_entities), _word_set(claim))
            for fact in facts:
                score = _conflict(mine, shapes[fact.id])
                if score > 0:
                    pairs.append((None, fact, score))
        else:
            by_entity: dict[str, list[Fact]] = {}
            for fact in facts:
                for name in shapes[fact.id][0]:
                    by_entity.setdefault(name, []).append(fact)
            seen: set[tuple[int, int]] = set()
            for group in by_entity.values():
                for i, first in enumerate(group):
                    for second in group[i + 1 :]:
                        ids = (min(first.id, second.id), max(first.id, second.id))
                        if ids in seen:
                            continue
                        seen.add(ids)
                        score = _conflict(shapes[first.id], shapes[second.id])
                        if score > 0:
                            pairs.append((first, second, score))
        pairs.sort(key=lambda p: (-p[2], p[1].id))
        return pairs[:limit]

    # -- vectors ------------------------------------------------------------------------------

    def _all(self, bank: Bank) -> list[Fact]:
        return self.store.facts(bank.tenant, bank.key, limit=self.max_facts)

    def _scores(self, bank: Bank, facts: list[Fact], key: hrr.Vector) -> np.ndarray:
        if not facts:
            return np.zeros(0)
        return hrr.similarities(np.stack(self._vectors(bank, facts)), key)

    def _vectors(self, bank: Bank, facts: Sequence[Fact]) -> list[hrr.Vector]:
        vectors = []
        for fact in facts:
            vector = hrr.from_bytes(fact.vector, self.dim) if fact.dim == self.dim else None
            if vector is None:
                vector = self._reencode(bank, fact)
            vectors.append(vector)
        return vectors

    def _reencode(self, bank: Bank, fact: Fact) -> hrr.Vector:
        vector = hrr.encode_fact(fact.content, fact.entities, self.dim)
        change = FactChange(dim=self.dim, vector=hrr.to_bytes(vector))
        self.store.update(bank.tenant, bank.key, fact.id, change)
        self.reencoded[bank.key] = self.reencoded.get(bank.key, 0) + 1
        log.info(
            "holographic: fact %d of %s stored at dimension %d, re-encoded at %d",
            fact.id,
            bank.key,
            fact.dim,
            self.dim,
        )
        return vector


def _top(scored: Scored, limit: int) -> Scored:
    return sorted(scored, key=lambda item: (-item[1], -item[0].id))[:limit]


def _entity_set(entities: Sequence[str]) -> set[str]:
    return {normalise_entity(e) for e in entities}


def _word_set(text: str) -> set[str]:
    return set(hrr.words(text))


def _conflict(mine: Shape, theirs: Shape) -> float:
    """How much two statements look like rivals about the same entities (0 = not at all).

    Same entities and mostly the same words: "Dana prefers tea" against "Dana prefers
    coffee", or the same words in another order ("tea over coffee" / "coffee over tea").
    Word sets cannot tell a reworded duplicate from a rival claim, so both are offered as
    candidates for the model to judge.
    """
    (entities, words), (other_entities, other_words) = mine, theirs
    shared = entities & other_entities
    if not shared:
        return 0.0
    overlap = len(shared) / len(entities | other_entities)
    union = words | other_words
    similar = len(words & other_words) / len(union) if union else 0.0
    if similar < 0.3:
        return 0.0
    return overlap * similar
