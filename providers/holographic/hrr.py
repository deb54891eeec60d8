"""Holographic reduced representations over phase vectors: atoms, bind, unbind, bundle.

A vector is ``dim`` phases in [0, 2π) (the angles of unit complex numbers). Operations:

* :func:`atom` — the vector of a symbol, deterministic from (seed, symbol, dim): SHAKE-256
  output read as 16-bit fractions of a turn. No random generator is involved, so the same
  symbol has the same vector on every machine and numpy version (the golden tests pin it).
* :func:`bind` / :func:`unbind` — add / subtract phases (mod 2π): a bound pair is dissimilar
  to both parts, and ``unbind(bind(a, b), b) == a``.
* :func:`bundle` — the circular mean (angle of the summed unit phasors): similar to each of
  its parts, roughly ``sqrt(π / 4k)`` for ``k`` random parts.
* :func:`similarity` — the mean cosine of the phase differences: 1 for equal vectors, about
  0 (± 1/√(2·dim)) for unrelated ones.

A fact is ``bundle(bind(content, ROLE_CONTENT), bind(entity₁, ROLE_ENTITY), …)`` where
``content`` bundles the atoms of the fact's words. "Which facts are about X" is then
``similarity(fact, bind(atom(X), ROLE_ENTITY))`` — the fact's vector against the entity
bound to its role — which is high exactly for the facts that bound X.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from providers.holographic.facts import normalise_entity

Vector = npt.NDArray[np.float32]
TWO_PI = np.float32(2 * np.pi)
SEED = "mnemogate-hrr-1"
ROLE_CONTENT = "__role:content__"
ROLE_ENTITY = "__role:entity__"
_WORD = re.compile(r"[^\W_]+")
# Words too common to say anything about a fact; they would only add noise to its vector.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "he",
        "her",
        "his",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "them",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "will",
        "with",
        "you",
        "your",
    ]
)


def words(text: str) -> list[str]:
    """The lower-case content words of ``text`` (stop words dropped, order kept)."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def atom(symbol: str, dim: int, seed: str = SEED) -> Vector:
    """The phase vector of ``symbol`` (see the module docstring)."""
    raw = hashlib.shake_256(f"{seed}\x00{dim}\x00{symbol}".encode()).digest(2 * dim)
    turns = np.frombuffer(raw, dtype="<u2").astype(np.float32) / np.float32(65536.0)
    return (turns * TWO_PI).astype(np.float32)


def bind(a: Vector, b: Vector) -> Vector:
    return np.mod(a + b, TWO_PI).astype(np.float32)


def unbind(bound: Vector, key: Vector) -> Vector:
    return np.mod(bound - key, TWO_PI).astype(np.float32)


def bundle(vectors: Sequence[Vector]) -> Vector:
    """The circular mean of ``vectors``; one vector bundles to itself."""
    if not vectors:
        raise ValueError("cannot bundle no vectors")
    if len(vectors) == 1:
        return vectors[0]
    stacked = np.stack(vectors)
    angle = np.arctan2(np.sin(stacked).sum(axis=0), np.cos(stacked).sum(axis=0))
    return np.mod(angle, TWO_PI).astype(np.float32)


def similarity(a: Vector, b: Vector) -> float:
    return float(np.cos(a - b).mean())


def similarities(matrix: npt.NDArray[np.float32], key: Vector) -> npt.NDArray[np.float64]:
    """:func:`similarity` of each row of ``matrix`` with ``key`` at once."""
    return np.cos(matrix - key[None, :]).mean(axis=1, dtype=np.float64)


def text_vector(text: str, dim: int) -> Vector | None:
    """The bundle of the atoms of ``text``'s words; None when it has none."""
    found = words(text)
    if not found:
        return None
    return bundle([atom(w, dim) for w in dict.fromkeys(found)])


def entity_key(entity: str, dim: int) -> Vector:
    """An entity bound to its role: what a fact about ``entity`` contains."""
    return bind(atom(normalise_entity(entity), dim), atom(ROLE_ENTITY, dim))


def content_key(text: str, dim: int) -> Vector | None:
    """``text``'s words bound to the content role: what a fact saying them contains."""
    vector = text_vector(text, dim)
    return None if vector is None else bind(vector, atom(ROLE_CONTENT, dim))


def encode_fact(content: str, entities: Iterable[str], dim: int) -> Vector:
    """The vector of a fact with ``content`` about ``entities``."""
    parts = [entity_key(e, dim) for e in dict.fromkeys(entities)]
    content_part = content_key(content, dim)
    if content_part is not None:
        parts.insert(0, content_part)
    if not parts:  # punctuation only: still a valid, unrelated vector
        return atom("__empty__", dim)
    return bundle(parts)


def to_bytes(vector: Vector) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def from_bytes(raw: bytes, dim: int) -> Vector | None:
    """The stored vector, or None when its size does not say ``dim`` phases."""
    if len(raw) != 4 * dim:
        return None
    return np.frombuffer(raw, dtype="<f4").astype(np.float32)
