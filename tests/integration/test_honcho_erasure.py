"""Erasing a tenant in Honcho: everything the API allows, and an exact report of the rest.

The fake keeps what the real server keeps and its API never deletes: a collection row per
(observer, observed) pair that held conclusions, and peer cards as keys of the observer's
internal metadata. Alice also has data from before per-user assistants: conclusions and a
card held by the assistant peer every tenant used to share (``mnemogate``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.settings import HonchoSettings
from providers.contract import make_context
from providers.honcho.client import Observe
from providers.honcho.identity import session_id_for
from providers.honcho.provider import HonchoProvider
from tests.fakes.honcho_payloads import WorkspaceRec
from tests.fakes.honcho_server import FakeHoncho
from tests.integration.honcho_harness import AI, group_context, turn, write_event

pytestmark = pytest.mark.integration

WORKSPACE = "erase"


@pytest.fixture
def fake() -> Iterator[FakeHoncho]:
    with FakeHoncho() as server:
        yield server


@pytest.fixture
def provider(fake: FakeHoncho) -> Iterator[HonchoProvider]:
    built = HonchoProvider(
        HonchoSettings(base_url=fake.base_url, workspace=WORKSPACE, read_retries=0)
    )
    yield built
    built.shutdown()


def alices(name: str) -> bool:
    return "console-alice" in name


def test_erase_removes_what_it_can_and_names_every_leftover(
    provider: HonchoProvider, fake: FakeHoncho, tmp_path: Path
) -> None:
    alice, bob = make_context(tmp_path, "alice"), make_context(tmp_path, "bob")
    group = group_context(tmp_path, "alice")
    for ctx, text in ((alice, "I live in Lisbon"), (bob, "I live in Porto"), (group, "Hi all")):
        provider.initialize(ctx)
        provider.sync_turn(ctx, turn(text))
    provider.on_memory_write(alice, write_event(alice, "Name is Alice"))
    provider.handle_tool_call(alice, "honcho_profile", {"action": "replace", "card": ["Alice"]})
    client = provider.client()
    for ctx, fact in ((alice, "Likes jazz"), (bob, "Likes tea")):  # the shared peer's days
        session = session_id_for("", ctx.namespace, ctx.session_key)
        client.add_session_peers(session, {AI: Observe(me=True, others=True)})
        client.create_conclusions(AI, ctx.namespace, [fact], session)
        client.set_card(AI, [fact], ctx.namespace)
    ws: WorkspaceRec = fake.world.workspaces[WORKSPACE]
    collections = sorted(pair for pair in ws.collections if any(map(alices, pair)))

    removed, leftovers = provider.erase(alice.tenant)

    report = "\n".join(leftovers)
    assert removed >= 8
    assert not [s for s in ws.sessions.values() if s.metadata["tenant"] == "console:alice"]
    assert not [m for m in ws.messages if alices(m.peer_id)]
    assert not [c for c in ws.conclusions if alices(c.observer_id) or alices(c.observed_id)]
    for observer, observed in collections:  # what Honcho keeps, each named in the report
        assert f"{observer} → {observed}" in report
    [rows] = [line for line in leftovers if "collection rows" in line]
    assert rows.count(" → ") - 1 == len(collections) >= 4  # and nothing else
    keys = [
        (peer.id, key, value)
        for peer in ws.peers.values()
        for key, value in peer.internal_metadata.items()
        if alices(peer.id) or alices(key)
    ]
    assert ("mnemogate", "console-alice_peer_card", []) in keys  # the shared peer's card
    for peer, key, value in keys:
        assert value == [] and f"{key!r} in the internal metadata of Honcho peer {peer!r}" in (
            report
        )
    assert report.count("peer card key") == len(keys)
    stayed = sorted(peer for peer in ws.peers if alices(peer))
    assert leftovers[0].startswith("Honcho peers") and all(repr(p) in leftovers[0] for p in stayed)
    assert all(ws.peers[peer].metadata == {} for peer in stayed)

    # Bob's data, also where it sits in the shared peer, is untouched.
    assert ws.peers[AI].internal_metadata["console-bob_peer_card"] == ["Likes tea"]
    assert [c.content for c in ws.conclusions if c.observed_id == "console-bob"]
    assert [m.content for m in ws.messages if m.peer_id == "console-bob"] == ["I live in Porto"]

    again, still = provider.erase(alice.tenant)
    assert again == 0 and "peer card key" in "\n".join(still)  # harmless, keys still named
    provider.sync_turn(alice, turn("Back again", turn_id="t9"))  # a fresh start works
    assert [m.content for m in ws.messages if m.peer_id == "console-alice"] == ["Back again"]
