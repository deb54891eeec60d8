"""``mnemogate memory setup|status`` through the real CLI."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.integration


def test_setup_writes_provider_and_status_reports_it(home: Path, redis_url: str) -> None:
    proc = run_cli(["memory", "setup"], home=home, input_text="reference\n")
    assert proc.returncode == 0, proc.stderr
    config = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    assert config["memory"]["provider"] == "reference"
    assert (home / "config.toml").stat().st_mode & 0o777 == 0o600

    status = run_cli(["memory", "status"], home=home, MNEMOGATE_REDIS_URL=redis_url)
    assert status.returncode == 0, status.stderr
    assert "provider: reference (available: yes)" in status.stdout
    assert "tools: reference_recall" in status.stdout
    assert "outbox backlog: empty" in status.stdout
    assert "0 queued / 0 failed" in status.stdout


def test_setup_keeps_other_settings_and_refuses_unknown(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text("[memory]\nnudge_interval = 4\n", encoding="utf-8")
    proc = run_cli(["memory", "setup", "reference"], home=home)
    assert proc.returncode == 0, proc.stderr
    config = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    assert config["memory"] == {"nudge_interval": 4, "provider": "reference"}
    bad = run_cli(["memory", "setup", "nosuch"], home=home)
    assert bad.returncode != 0 and "nosuch" in bad.stderr


def test_status_without_redis(home: Path) -> None:
    proc = run_cli(["memory", "status"], home=home, MNEMOGATE_REDIS_URL="redis://127.0.0.1:1/0")
    assert proc.returncode == 0, proc.stderr
    assert "provider: none" in proc.stdout and "unreachable" in proc.stdout
