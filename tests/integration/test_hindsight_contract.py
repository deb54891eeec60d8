"""What HindsightProvider relies on, checked on the fake and — optionally — a real server.

The same checks run against the fake Hindsight always, and against a real Hindsight API when
``HINDSIGHT_CONTRACT_URL`` points at one (``HINDSIGHT_CONTRACT_API_KEY`` if it needs a key),
for example ``hindsight-api-slim`` with its offline mock LLM (its embedded PostgreSQL refuses
to run as root: start it as another user). Without the variable the real-server case is
skipped: it is the one documented optional test. Each run uses fresh bank names and deletes
them at the end. What a real server extracts depends on its LLM, so the checks are about
behaviour the provider depends on, not about the text of memories.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import SecretStr

from gateway.settings import HindsightSettings
from providers.base import SyncedTurn
from providers.contract import make_context
from providers.hindsight.client import HindsightClient
from providers.hindsight.provider import HindsightProvider, turn_marker
from tests.fakes.hindsight_server import FakeHindsight

pytestmark = pytest.mark.integration
REAL_URL = os.environ.get("HINDSIGHT_CONTRACT_URL", "")
REAL_KEY = os.environ.get("HINDSIGHT_CONTRACT_API_KEY")


@pytest.fixture(params=["fake", "real"])
def settings(request: pytest.FixtureRequest) -> Iterator[HindsightSettings]:
    if request.param == "real":
        if not REAL_URL:
            pytest.skip("set HINDSIGHT_CONTRACT_URL to run the contract against a real server")
        key = SecretStr(REAL_KEY) if REAL_KEY else None
        yield HindsightSettings(base_url=REAL_URL, api_key=key, recall_timeout_s=30)
        return
    with FakeHindsight() as fake:
        yield HindsightSettings(base_url=fake.base_url)


@pytest.fixture
def client(settings: HindsightSettings) -> Iterator[HindsightClient]:
    client = HindsightClient(settings)
    yield client
    client.close()


def fresh_bank() -> str:
    return f"mg-contract-{uuid.uuid4().hex[:12]}"


def test_an_unknown_bank_is_nothing_yet(client: HindsightClient) -> None:
    bank = fresh_bank()
    assert client.recall(bank, "anything at all", "low", 256) == []
    assert client.document_text(bank, "no-such-session") is None
    answer = client.reflect(bank, "what do you know?", "low")
    assert answer is None or isinstance(answer, str)  # 404, or an answer from nothing
    assert client.delete_bank(bank) is None


def test_a_turn_is_appended_once_then_the_bank_is_deleted(
    settings: HindsightSettings, tmp_path: Path
) -> None:
    provider = HindsightProvider(settings)
    ctx = make_context(tmp_path, f"c{uuid.uuid4().hex[:8]}")
    now = datetime.now(UTC)
    first = SyncedTurn("I keep bees in Lyon", "Lovely.", "contract-s1", "t1", now)
    second = SyncedTurn("They make lavender honey", "Nice.", "contract-s1", "t2", now)
    client = provider.client()
    try:
        provider.sync_turn(ctx, first)
        provider.sync_turn(ctx, second)
        provider.sync_turn(ctx, first)  # a retried job: must not be written again
        text = client.document_text(ctx.backend_key, "contract-s1")
        assert text is not None
        if text:  # servers that keep document text (store_document_text)
            assert text.count(turn_marker(first)) == 1
            assert text.count(turn_marker(second)) == 1
        memories = client.recall(ctx.backend_key, "bees honey Lyon", "low", 1024)
        assert all(m.text and m.type in ("observation", "world") for m in memories)
        assert isinstance(client.reflect(ctx.backend_key, "Where are the bees?", "low"), str)
        assert isinstance(client.version(), str)
    finally:
        deleted = client.delete_bank(ctx.backend_key)
        provider.shutdown()
    assert deleted is not None
