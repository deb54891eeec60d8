"""``mnemogate honcho …``, ``doctor`` and the setup wizard, as real CLI processes, against the
fake Honcho on loopback."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gateway.settings import HonchoSettings
from providers.base import SyncedTurn
from providers.contract import make_context
from providers.honcho.identity import session_id_for
from providers.honcho.provider import HonchoProvider
from tests.conftest import REPO, cli_env, run_cli
from tests.fakes.honcho_server import FakeHoncho
from tests.fakes.llm_server import FakeLLM

pytestmark = pytest.mark.integration

WORKSPACE = "cli"


@pytest.fixture
def fake() -> Iterator[FakeHoncho]:
    with FakeHoncho() as server:
        yield server


def honcho_env(fake: FakeHoncho) -> dict[str, str]:
    return {"HONCHO_BASE_URL": fake.base_url, "HONCHO_WORKSPACE": WORKSPACE}


def mnemogate(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_cli(list(args), home=home, input_text=None, timeout=60, **env)


def cli(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return mnemogate(home, "honcho", *args, **env)


def seed(fake: FakeHoncho, home: Path) -> None:
    """Alice and Bob each with one synced turn; Alice with a card written by the assistant."""
    provider = HonchoProvider(HonchoSettings(base_url=fake.base_url, workspace=WORKSPACE))
    try:
        for user, text in (("alice", "I keep bees"), ("bob", "I collect stamps")):
            ctx = make_context(home, user)
            provider.initialize(ctx)
            provider.sync_turn(ctx, SyncedTurn(text, "Nice", "s1", "t1", datetime.now(UTC)))
        alice = make_context(home, "alice")
        card = {"action": "replace", "card": ["Beekeeper in Lyon"]}
        assert '"success": true' in provider.handle_tool_call(alice, "honcho_profile", card)
    finally:
        provider.shutdown()


def test_status_peers_and_sessions(fake: FakeHoncho, home: Path) -> None:
    seed(fake, home)
    env = honcho_env(fake)
    status = cli(home, "status", **env)
    assert status.returncode == 0, status.stderr
    assert f"server: {fake.base_url} (reachable)" in status.stdout
    assert "workspace: cli, peers: 4, sessions: 2" in status.stdout
    assert "recall mode: hybrid" in status.stdout

    peers = cli(home, "peers", **env)
    assert peers.returncode == 0, peers.stderr
    lines = peers.stdout.splitlines()
    assert lines[0] == "4 peer(s) in workspace cli:"
    assert sorted(lines[1:]) == [
        "  console-alice",
        "  console-bob",
        "  mnemogate__console-alice  (the assistant of console-alice)",
        "  mnemogate__console-bob  (the assistant of console-bob)",
    ]

    alice_session = session_id_for("", "console-alice", make_context(home, "alice").session_key)
    every = cli(home, "sessions", **env)
    assert every.returncode == 0, every.stderr
    assert every.stdout.startswith("2 session(s) in workspace cli:")
    assert alice_session in every.stdout
    only = cli(home, "sessions", "--tenant", "console:alice", **env)
    assert only.returncode == 0, only.stderr
    assert only.stdout.splitlines() == [
        "1 session(s) in workspace cli for console:alice:",
        f"  {alice_session}",
    ]
    nobody = cli(home, "sessions", "--tenant", "telegram:999", **env)
    assert nobody.stdout.strip() == "no sessions in workspace cli for telegram:999"
    bad = cli(home, "sessions", "--tenant", "alice", **env)
    assert bad.returncode == 2 and "--tenant" in bad.stderr


def test_peer_shows_card_representation_and_conclusions(fake: FakeHoncho, home: Path) -> None:
    seed(fake, home)
    env = honcho_env(fake)
    shown = cli(home, "peer", "console:alice", **env)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert out.startswith("peer: console-alice (console:alice, workspace cli)\nsessions: 1\n")
    assert "card (own): none" in out
    assert "card (seen by mnemogate__console-alice):\n  - Beekeeper in Lyon" in out
    representation = out.split("representation (seen by mnemogate__console-alice):", 1)[1]
    assert "console-alice said: I keep bees" in representation.split("recent conclusions:")[0]
    conclusions = out.split("recent conclusions:", 1)[1]
    assert "console-alice said: I keep bees  (by mnemogate__console-alice)" in conclusions
    assert "console-alice said: I keep bees  (by console-alice)" in conclusions
    assert "stamps" not in out and "console-bob" not in out

    missing = cli(home, "peer", "telegram:999", **env)
    assert missing.returncode == 1
    assert missing.stderr.strip().count("\n") == 0
    assert "no Honcho peer 'telegram-999' for telegram:999" in missing.stderr
    assert cli(home, "peer", **env).returncode == 2  # the tenant is required


def test_mode_writes_the_config_file_and_asks_for_a_restart(
    fake: FakeHoncho, home: Path, tmp_path: Path
) -> None:
    env = honcho_env(fake)
    switched = cli(home, "mode", "tools", **env)
    assert switched.returncode == 0, switched.stderr
    assert "Restart the gateway" in switched.stdout and "workers" in switched.stdout
    saved = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    assert saved["honcho"] == {"recall_mode": "tools"}
    assert "recall mode: tools" in cli(home, "status", **env).stdout

    explicit = tmp_path / "elsewhere.toml"
    explicit.write_text('[honcho]\nworkspace = "cli"\n', encoding="utf-8")
    moved = cli(home, "mode", "context", MNEMOGATE_CONFIG=str(explicit), **env)
    assert moved.returncode == 0, moved.stderr
    assert tomllib.loads(explicit.read_text(encoding="utf-8"))["honcho"] == {
        "workspace": "cli",
        "recall_mode": "context",
    }
    assert saved == tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))

    overridden = cli(home, "mode", "hybrid", MNEMOGATE_HONCHO__RECALL_MODE="tools", **env)
    assert overridden.returncode == 1
    assert "MNEMOGATE_HONCHO__RECALL_MODE" in overridden.stderr
    wrong = cli(home, "mode", "sometimes", **env)
    assert wrong.returncode == 2 and "hybrid" in wrong.stderr


def test_forget_erases_what_honcho_allows(fake: FakeHoncho, home: Path) -> None:
    seed(fake, home)
    forget = cli(home, "forget", "--tenant", "console:alice", "--yes", **honcho_env(fake))
    assert forget.returncode == 3, forget.stderr
    assert "Erased in Honcho for console:alice" in forget.stdout
    assert "cannot delete peers" in forget.stderr
    sessions = fake.world.workspaces[WORKSPACE].sessions
    assert [s.metadata["tenant"] for s in sessions.values()] == ["console:bob"]


def test_unconfigured_or_unreachable_exits_non_zero(home: Path) -> None:
    unset = cli(home, "status")
    assert unset.returncode == 1 and "HONCHO_BASE_URL" in unset.stderr
    with FakeHoncho() as gone:
        url = gone.base_url
    for command in ("status", "peers", "sessions"):
        down = cli(home, command, HONCHO_BASE_URL=url, MNEMOGATE_HONCHO__READ_RETRIES="0")
        assert down.returncode == 1, command
        assert "Connect" in down.stderr and down.stderr.strip().count("\n") == 0


def test_doctor_checks_the_honcho_server(fake: FakeHoncho, home: Path) -> None:
    with FakeLLM() as llm:
        env = {
            "MNEMOGATE_MEMORY__PROVIDER": "honcho",
            "MNEMOGATE_LLM__BASE_URL": llm.base_url,
            "MNEMOGATE_LLM__MODEL": "fake-model",
            "HONCHO_WORKSPACE": WORKSPACE,
        }
        healthy = mnemogate(home, "doctor", HONCHO_BASE_URL=fake.base_url, **env)
        assert healthy.returncode == 0, healthy.stdout + healthy.stderr
        assert f"✓ provider: honcho: server {fake.base_url} workspace cli reachable" in (
            healthy.stdout
        )
        url = fake.base_url
        fake.stop()
        down = mnemogate(home, "doctor", HONCHO_BASE_URL=url, **env)
    assert down.returncode == 1
    assert "✗ provider: honcho: HonchoCallError" in down.stdout
    assert "check(s) failed: provider" in down.stderr


def test_wizard_writes_to_the_config_file_in_use(home: Path, tmp_path: Path) -> None:
    config = tmp_path / "mnemogate.toml"
    config.write_text("", encoding="utf-8")
    answers = "http://127.0.0.1:9\nteam\n\n\n"
    proc = run_cli(
        ["memory", "setup", "honcho"], home=home, input_text=answers, MNEMOGATE_CONFIG=str(config)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    saved = tomllib.loads(config.read_text(encoding="utf-8"))
    assert saved["memory"] == {"provider": "honcho"}
    assert saved["honcho"]["workspace"] == "team"
    assert saved["honcho"]["base_url"] == "http://127.0.0.1:9"
    assert not (home / "config.toml").exists()


def test_the_cli_imports_the_honcho_sdk_only_for_honcho_commands(home: Path) -> None:
    probe = "import sys, gateway.cli; print(sorted(m for m in sys.modules if m == 'honcho'))"
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        env=cli_env(home),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert proc.stdout.strip() == "[]"
