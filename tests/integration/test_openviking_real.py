"""Contract checks against a REAL OpenViking server, for URIs and access control (optional).

Skipped unless ``MNEMOGATE_TEST_OPENVIKING_URL`` points at a server in trusted mode (with
``MNEMOGATE_TEST_OPENVIKING_KEY`` when it wants an API key). The server (``pip install
openviking``, AGPL-3.0) runs offline when its embedding/VLM endpoints point at a local fake
OpenAI server, e.g. ``python -m tests.fakes.llm_server --port 8011``. What the fake server in
``tests/fakes/openviking_server.py`` assumes is checked here against the real one: user
spaces by header, 400 INVALID_URI for the ``viking://user/peers/…`` form, other users'
spaces refused, sessions created before messages and committed.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.provider_settings import OpenVikingSettings
from gateway.tenants import TenantId
from providers.base import MemoryProvider, ProviderContext
from providers.contract import ProviderContract, make_context
from providers.openviking import spaces
from providers.openviking.client import VikingClient
from providers.openviking.provider import OpenVikingProvider
from providers.scoping import ScopeRecord
from providers.service import ServiceError

# Read at import: the autouse fixture of tests/conftest.py clears the environment per test.
URL = os.environ.get("MNEMOGATE_TEST_OPENVIKING_URL", "")
KEY = os.environ.get("MNEMOGATE_TEST_OPENVIKING_KEY") or None
ACCOUNT = os.environ.get("MNEMOGATE_TEST_OPENVIKING_ACCOUNT", "default")
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not URL, reason="set MNEMOGATE_TEST_OPENVIKING_URL to a real OpenViking"),
]


@pytest.fixture
def client() -> Iterator[VikingClient]:
    made = VikingClient(
        URL,
        api_key=KEY,
        account=ACCOUNT,
        agent="mnemogate",
        timeout_s=30,
    )
    yield made
    made.close()


def test_user_spaces_and_uris(client: VikingClient) -> None:
    alice, bob = f"mg-alice-{uuid.uuid4().hex[:8]}", f"mg-bob-{uuid.uuid4().hex[:8]}"
    uri = spaces.memories_root(alice) + "preferences/mem_contract.md"
    client.write(alice, uri, "Alice keeps bees")
    assert "bees" in str(client.read(alice, uri, "full"))
    with pytest.raises(ServiceError) as foreign:
        client.read(bob, uri, "full")
    assert foreign.value.status in (403, 404)
    with pytest.raises(ServiceError) as peers:
        client.write(alice, "viking://user/peers/mnemogate/memories/x.md", "x")
    assert peers.value.status == 400
    with pytest.raises(ServiceError) as other:
        client.browse(alice, "list", spaces.user_root(bob))
    assert other.value.status == 403


def test_erase_leaves_nothing_in_the_users_space(client: VikingClient) -> None:
    user = f"mg-dave-{uuid.uuid4().hex[:8]}"
    client.write(user, spaces.memories_root(user) + "events/mem_x.md", "Dave keeps bees")
    client.create_session(user, "mg-erase-1")
    client.add_message(user, "mg-erase-1", "user", "hello", "2026-01-01T00:00:00+00:00")
    settings = OpenVikingSettings.model_validate(
        {"base_url": URL, "api_key": KEY, "account": ACCOUNT}
    )
    provider = OpenVikingProvider(settings)
    tenant = TenantId.parse("console:dave")
    try:
        removed, leftovers = provider.erase(tenant, [ScopeRecord(tenant, "openviking", "s", user)])
    finally:
        provider.shutdown()
    assert leftovers == [] and removed >= 2
    try:
        assert client.browse(user, "list", spaces.user_root(user)) == []
    except ServiceError as exc:  # the admin delete removes the identity in the background
        assert exc.status == 412 and "deletion is in progress" in str(exc)


def test_sessions_are_created_then_filled_then_committed(client: VikingClient) -> None:
    user, session = f"mg-carol-{uuid.uuid4().hex[:8]}", f"mg-{uuid.uuid4().hex[:12]}"
    client.create_session(user, session)
    client.add_message(user, session, "user", "I keep bees in Lyon", "2026-01-01T00:00:00+00:00")
    assert client.pending_tokens(user, session) > 0
    client.commit(user, session)
    assert session in client.sessions(user)
    client.delete_session(user, session)


class TestRealOpenVikingContract(ProviderContract):
    """The provider contract (isolation included) with the real server behind it.

    The server keeps its data between runs, so each run uses tenants of its own.
    """

    @pytest.fixture
    def alice(self, home: Path) -> ProviderContext:
        return make_context(home, f"alice{uuid.uuid4().hex[:8]}")

    @pytest.fixture
    def bob(self, home: Path) -> ProviderContext:
        return make_context(home, f"bob{uuid.uuid4().hex[:8]}")

    def make_provider(self, home: Path) -> MemoryProvider:
        settings = OpenVikingSettings.model_validate(
            {"base_url": URL, "api_key": KEY, "account": ACCOUNT}
        )
        return OpenVikingProvider(settings)
