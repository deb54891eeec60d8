"""``mnemogate honcho status|show|forget`` against the fake Honcho on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from gateway.cli.honcho_cmd import honcho
from gateway.settings import HonchoSettings
from providers.base import SyncedTurn
from providers.contract import make_context
from providers.honcho.provider import HonchoProvider
from tests.fakes.honcho_server import FakeHoncho

pytestmark = pytest.mark.integration


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHoncho]:
    with FakeHoncho() as server:
        monkeypatch.setenv("HONCHO_BASE_URL", server.base_url)
        monkeypatch.setenv("HONCHO_WORKSPACE", "cli")
        yield server


def test_status_show_and_forget(fake: FakeHoncho, tmp_path: Path) -> None:
    provider = HonchoProvider(HonchoSettings(base_url=fake.base_url, workspace="cli"))
    alice = make_context(tmp_path, "alice")
    provider.initialize(alice)
    provider.sync_turn(alice, SyncedTurn("I keep bees", "Nice", "s1", "t1", datetime.now(UTC)))
    provider.shutdown()
    runner = CliRunner()
    status = runner.invoke(honcho, ["status"])
    assert status.exit_code == 0, status.output
    assert "(reachable)" in status.output and "peers: 2" in status.output
    show = runner.invoke(honcho, ["show", "--tenant", "console:alice"])
    assert show.exit_code == 0, show.output
    assert "sessions: 1" in show.output and "console-alice said: I keep bees" in show.output
    forget = runner.invoke(honcho, ["forget", "--tenant", "console:alice", "--yes"])
    assert forget.exit_code == 3
    assert "cannot delete peers" in forget.output
    assert not fake.world.workspaces["cli"].sessions


def test_unconfigured_or_unreachable_exits_non_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    result = runner.invoke(honcho, ["status"])
    assert result.exit_code == 1 and "HONCHO_BASE_URL" in result.output
    with FakeHoncho() as gone:
        url = gone.base_url
    monkeypatch.setenv("HONCHO_BASE_URL", url)
    monkeypatch.setenv("MNEMOGATE_HONCHO__READ_RETRIES", "0")
    result = runner.invoke(honcho, ["status"])
    assert result.exit_code == 1 and "Connection" in result.output
