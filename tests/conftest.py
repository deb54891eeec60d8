"""Shared fixtures: an isolated MNEMOGATE_HOME, the fake LLM over HTTP, settings, the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.settings import Settings, load_settings
from tests.fakes.llm_server import FakeLLM

REPO = Path(__file__).resolve().parents[1]
PASSTHROUGH_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's MNEMOGATE_*/platform settings."""
    for name in list(os.environ):
        if name.startswith(("MNEMOGATE_", "HONCHO_")) or name in {
            "TELEGRAM_BOT_TOKEN",
            "DISCORD_BOT_TOKEN",
        }:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MNEMOGATE_HOME", str(tmp_path / "home"))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
def make_settings(home: Path, fake_llm: FakeLLM) -> Any:
    def build(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "home": home,
            "llm": {
                "base_url": fake_llm.base_url,
                "model": "fake-model",
                "max_retries": 1,
                "timeout_s": 10,
            },
            "jobs": {"mode": "inline"},
        }
        values.update(overrides)
        return load_settings(**values)

    return build


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: os.environ[k] for k in PASSTHROUGH_ENV if k in os.environ}
    env["MNEMOGATE_HOME"] = str(home)
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


def run_cli(
    args: list[str],
    *,
    home: Path,
    input_text: str | None = None,
    timeout: float = 60,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """Run the real ``mnemogate`` entry point in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", *args],
        input=input_text,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=cli_env(home, **env),
        cwd=REPO,
        check=False,
    )
