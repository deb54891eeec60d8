"""Holographic retrieval on a 50-fact bank: every query finds all of its 10 facts, no others.

The fixture mirrors the reference plugin's failure: its probe compared the wrong vectors and
found 0 of 10 matching facts; scoring a fact's vector against the entity bound to its role
finds them all. Each group below is what one query should return.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.history.db import Database
from gateway.provider_scopes import provider_services
from gateway.settings import HolographicSettings
from providers.base import ProviderContext
from providers.contract import make_context
from providers.holographic.provider import HolographicProvider

ORION = [
    "Orion launches its beta in March",
    "The Orion budget was cut by ten percent",
    "Orion stores everything in Postgres",
    "Marta leads the Orion design reviews",
    "Orion standups happen at nine sharp",
    "The Orion backlog has forty open tickets",
    "Orion needs a new logo before launch",
    "A security audit of Orion is planned for June",
    "Orion dashboards are slow on mobile phones",
    "Ravi wrote the Orion onboarding guide",
]
LISBON_NAMED = [
    "Moved to Lisbon in 2021",
    "Favourite cafe is in Lisbon near the river",
    "Trams are the best way around Lisbon",
    "Plans to run the Lisbon marathon in October",
    "Has a dentist in Lisbon",
]
LISBON_LOWER = [  # typed in lower case: the entity extractor misses these
    "rents a small flat in lisbon",
    "finds lisbon summers too hot",
    "learning portuguese for life in lisbon",
    "usually flies home from lisbon airport",
    "keeps a bike at the lisbon office",
]
KESTREL_AND_DANA = [
    "Dana approved the Kestrel roadmap",
    "Kestrel release notes are written by Dana",
    "Dana and the Kestrel team meet on Fridays",
    "Dana thinks Kestrel should drop the legacy API",
    "Kestrel invoices go to Dana for sign-off",
    "Dana presented Kestrel at the board meeting",
    "Kestrel on-call rotation is planned by Dana",
    "Dana found the Kestrel memory leak",
    "Kestrel hiring is blocked until Dana returns",
    "Dana wants Kestrel metrics in one dashboard",
]
KESTREL_ONLY = [
    "Kestrel runs on three servers",
    "Kestrel was renamed last spring",
    "The Kestrel API uses gRPC",
    "Kestrel tests take twenty minutes",
    "Kestrel has a staging cluster",
]
DANA_ONLY = [
    "Dana prefers tea over coffee",
    "Dana lives near the harbour",
    "Dana plays chess on Sundays",
    "Dana has two cats",
    "Dana is allergic to peanuts",
]
NOISE = [
    "likes hiking in the mountains",
    "drinks oat milk",
    "reads science fiction at night",
    "owns a red bicycle",
    "is learning the piano",
    "wakes up at six",
    "prefers window seats on planes",
    "collects old maps",
    "bakes sourdough bread on weekends",
    "does not eat meat",
]
ALL_FACTS = (
    ORION + LISBON_NAMED + LISBON_LOWER + KESTREL_AND_DANA + KESTREL_ONLY + DANA_ONLY + NOISE
)


@pytest.fixture
def provider(tmp_path: Path) -> Iterator[HolographicProvider]:
    db = Database(tmp_path / "state.db")
    provider = HolographicProvider(HolographicSettings())
    provider.attach(provider_services(db))
    yield provider
    provider.shutdown()
    db.close()


@pytest.fixture
def alice(tmp_path: Path) -> ProviderContext:
    return make_context(tmp_path, "alice")


@pytest.fixture
def filled(provider: HolographicProvider, alice: ProviderContext) -> dict[str, int]:
    ids = {}
    for content in ALL_FACTS:
        answer = call(provider, alice, "fact_store", action="add", content=content)
        ids[content] = answer["fact_id"]
    assert len(set(ids.values())) == 50
    return ids


def call(provider: HolographicProvider, ctx: ProviderContext, name: str, **args: object) -> dict:  # type: ignore[type-arg]
    answer = json.loads(provider.handle_tool_call(ctx, name, dict(args)))
    assert answer["success"] is True, answer
    return answer  # type: ignore[no-any-return]


def found(answer: dict, ids: dict[str, int]) -> set[str]:  # type: ignore[type-arg]
    by_id = {v: k for k, v in ids.items()}
    return {by_id[f["fact_id"]] for f in answer["facts"]}


def hit_rate(got: set[str], want: list[str]) -> str:
    return f"{len(got & set(want))}/{len(want)} found, {len(got - set(want))} wrong"


def test_probe_finds_every_fact_about_an_entity_and_nothing_else(
    provider: HolographicProvider, alice: ProviderContext, filled: dict[str, int]
) -> None:
    got = found(
        call(provider, alice, "fact_store", action="probe", entity="Orion", limit=50), filled
    )
    print(f"\nprobe Orion: {hit_rate(got, ORION)}")
    assert got == set(ORION)
    got = found(
        call(provider, alice, "fact_store", action="probe", entity="lisbon", limit=50), filled
    )
    assert got == set(LISBON_NAMED)  # probe: bound as an entity only


def test_related_finds_an_entity_in_any_role(
    provider: HolographicProvider, alice: ProviderContext, filled: dict[str, int]
) -> None:
    answer = call(provider, alice, "fact_store", action="related", entity="Lisbon", limit=50)
    got = found(answer, filled)
    print(f"\nrelated Lisbon: {hit_rate(got, LISBON_NAMED + LISBON_LOWER)}")
    assert got == set(LISBON_NAMED + LISBON_LOWER)


def test_reason_finds_the_facts_about_all_entities(
    provider: HolographicProvider, alice: ProviderContext, filled: dict[str, int]
) -> None:
    answer = call(
        provider, alice, "fact_store", action="reason", entities=["Kestrel", "Dana"], limit=50
    )
    got = found(answer, filled)
    print(f"\nreason Kestrel+Dana: {hit_rate(got, KESTREL_AND_DANA)}")
    assert got == set(KESTREL_AND_DANA)


def test_search_ranks_the_matching_facts_first(
    provider: HolographicProvider, alice: ProviderContext, filled: dict[str, int]
) -> None:
    got = found(
        call(provider, alice, "fact_store", action="search", query="orion", limit=10), filled
    )
    print(f"\nsearch orion: {hit_rate(got, ORION)}")
    assert got == set(ORION)
    answer = call(provider, alice, "fact_store", action="search", query="Lisbon trips", limit=10)
    assert found(answer, filled) == set(LISBON_NAMED + LISBON_LOWER)
    assert call(provider, alice, "fact_store", action="search", query="zeppelin")["facts"] == []


def test_entity_matching_is_exact_not_a_pattern(
    provider: HolographicProvider, alice: ProviderContext, filled: dict[str, int]
) -> None:
    call(provider, alice, "fact_store", action="add", content='Growth target is "50%" this year')
    for pattern in ("%", "_", "Ori%", "Or_on", "Ori", "rion"):
        answer = call(provider, alice, "fact_store", action="probe", entity=pattern, limit=50)
        assert answer["facts"] == [], pattern
    answer = call(provider, alice, "fact_store", action="probe", entity="50%")
    assert [f["content"] for f in answer["facts"]] == ['Growth target is "50%" this year']


def test_contradiction_candidates_pair_rival_statements(
    provider: HolographicProvider, alice: ProviderContext, filled: dict[str, int]
) -> None:
    call(provider, alice, "fact_store", action="add", content="Dana prefers coffee over tea")
    answer = call(provider, alice, "fact_store", action="contradict", limit=5)
    pairs = [{p["first"]["content"], p["second"]["content"]} for p in answer["facts"]]
    assert {"Dana prefers tea over coffee", "Dana prefers coffee over tea"} in pairs
    claim = call(
        provider, alice, "fact_store", action="contradict", content="Dana plays chess on Mondays"
    )
    assert claim["facts"][0]["second"]["content"] == "Dana plays chess on Sundays"
    assert claim["facts"][0]["first"] is None
