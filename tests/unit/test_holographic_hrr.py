"""HRR algebra of the holographic provider: golden atoms, bind/unbind/bundle, entity keys."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from providers.holographic import hrr
from providers.holographic.facts import extract_entities, normalise_entity, parse_tags
from providers.holographic.retrieval import threshold


def test_atoms_are_golden_across_machines_and_numpy_versions() -> None:
    alice = hrr.atom("alice", 1024)
    assert alice.dtype == np.float32 and alice.shape == (1024,)
    assert [round(float(x), 6) for x in alice[:4]] == [5.256281, 5.618205, 1.906163, 1.536474]
    assert hashlib.sha256(hrr.to_bytes(alice)).hexdigest() == (
        "3508d79fd61a12677cec2dfb31adb1b66aaaeb1c260a769b592f45369dc3da55"
    )
    role = hrr.atom(hrr.ROLE_ENTITY, 512)
    assert [round(float(x), 6) for x in role[:3]] == [3.408122, 1.51471, 4.715553]
    assert np.array_equal(hrr.atom("alice", 1024), alice)  # deterministic
    assert not np.array_equal(hrr.atom("alice", 1024, seed="other"), alice)
    assert float(alice.min()) >= 0.0 and float(alice.max()) < 2 * np.pi


def test_bind_unbind_and_bundle_behave_as_an_hrr_algebra() -> None:
    a, b, c = (hrr.atom(s, 1024) for s in ("a", "b", "c"))
    bound = hrr.bind(a, b)
    assert hrr.similarity(hrr.unbind(bound, b), a) == pytest.approx(1.0, abs=1e-5)
    assert abs(hrr.similarity(bound, a)) < 0.1 and abs(hrr.similarity(bound, b)) < 0.1
    assert abs(hrr.similarity(a, b)) < 5 / np.sqrt(2 * 1024)  # unrelated: noise
    both = hrr.bundle([a, b])
    assert hrr.similarity(both, a) > 0.5 and hrr.similarity(both, b) > 0.5
    assert abs(hrr.similarity(both, c)) < 0.1
    assert np.array_equal(hrr.bundle([a]), a)
    with pytest.raises(ValueError):
        hrr.bundle([])


def test_a_fact_is_similar_to_its_entities_bound_to_their_role_only() -> None:
    dim = 1024
    fact = hrr.encode_fact("Dana reviewed the Kestrel budget", ["Dana", "Kestrel"], dim)
    cut = threshold(dim)
    assert hrr.similarity(fact, hrr.entity_key("dana", dim)) > 2 * cut  # case-insensitive
    assert hrr.similarity(fact, hrr.entity_key("Kestrel", dim)) > 2 * cut
    assert hrr.similarity(fact, hrr.entity_key("Orion", dim)) < cut
    # The unbound atom is not what a fact contains: the role matters.
    assert hrr.similarity(fact, hrr.atom("dana", dim)) < cut
    budget = hrr.content_key("budget", dim)
    assert budget is not None and hrr.similarity(fact, budget) > cut


def test_stored_vectors_round_trip_and_a_wrong_size_is_refused() -> None:
    vector = hrr.encode_fact("x y", ["Z"], 512)
    raw = hrr.to_bytes(vector)
    back = hrr.from_bytes(raw, 512)
    assert back is not None and np.array_equal(back, vector)
    assert hrr.from_bytes(raw, 1024) is None
    assert hrr.from_bytes(raw[:-1], 512) is None


def test_entities_are_extracted_and_compared_exactly() -> None:
    text = (
        'I told Dana Whitfield about the Orion project in New York. She said "blue sky" and '
        "@bob_99 agreed. The plan is #launch2025."
    )
    assert extract_entities(text) == [
        "blue sky",
        "bob_99",
        "launch2025",
        "Dana Whitfield",
        "Orion",
        "New York",
    ]
    assert extract_entities("it is what it is") == []
    assert normalise_entity("  Dana   WHITFIELD ") == "dana whitfield"
    assert parse_tags("work, urgent ,work,") == ("work", "urgent")
    assert parse_tags(["a", " b "]) == ("a", "b")
    with pytest.raises(ValueError):
        parse_tags(5)
