"""Upgrading from the shared assistant peer: each user's own assistant adopts what it knew.

Before per-user assistants, one peer (``mnemogate``) was in every tenant's sessions and
held the conclusions and cards about all of them. On the first join after the upgrade,
a user's own assistant takes over what the shared one knew about *that* user, once.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.settings import HonchoSettings
from providers.base import RecallQuery
from providers.contract import make_context
from providers.honcho.provider import HonchoProvider
from tests.fakes.honcho_server import FakeHoncho
from tests.integration.honcho_harness import AI

pytestmark = pytest.mark.integration

WORKSPACE = "upgrade"


@pytest.fixture
def fake() -> Iterator[FakeHoncho]:
    with FakeHoncho() as server:
        yield server


def provider_for(fake: FakeHoncho) -> HonchoProvider:
    settings = HonchoSettings(base_url=fake.base_url, workspace=WORKSPACE, read_retries=0)
    return HonchoProvider(settings)


def test_each_users_assistant_adopts_only_that_users_facts_once(
    fake: FakeHoncho, tmp_path: Path
) -> None:
    alice, bob = make_context(tmp_path, "alice"), make_context(tmp_path, "bob")
    old = provider_for(fake)
    client = old.client()
    client.create_conclusions(AI, "console-alice", ["Alice keeps bees in Lyon"], None)
    client.create_conclusions(AI, "console-bob", ["Bob's PIN is 4417"], None)
    client.set_card(AI, ["Beekeeper"], "console-alice")
    old.shutdown()

    provider, another = provider_for(fake), provider_for(fake)
    try:
        provider.initialize(alice)
        text = provider.recall(alice, RecallQuery("Tell me about my bees", 1))
        assert "Alice keeps bees in Lyon" in text and "- Beekeeper" in text
        assert "4417" not in text
        another.initialize(alice)  # as in another process: adopted already, no copy
    finally:
        provider.shutdown()
        another.shutdown()
    ws = fake.world.workspaces[WORKSPACE]
    mine = [c for c in ws.conclusions if c.observer_id == f"{AI}__console-alice"]
    assert [c.content for c in mine] == ["Alice keeps bees in Lyon"]
    assert not [c for c in ws.conclusions if "4417" in c.content and "alice" in c.observer_id]
    assert ws.peers["console-alice"].metadata["mnemogate_assistant"] == f"{AI}__console-alice"
    assert bob.namespace not in {c.observed_id for c in mine}
