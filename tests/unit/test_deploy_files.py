"""The deploy files refer to what exists: paths, commands and settings names."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from gateway.cli import cli
from gateway.settings import EXTERNAL_ENV, Settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def test_dockerfile_copies_existing_paths() -> None:
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    for source in re.findall(r"^COPY (\S+)", text, flags=re.MULTILINE):
        assert (DEPLOY.parent / source).exists(), source
    assert 'ENTRYPOINT ["mnemogate"]' in text


def test_compose_and_units_use_real_commands_and_settings() -> None:
    texts = [
        (DEPLOY / n).read_text(encoding="utf-8")
        for n in ("compose.yaml", "mnemogate.service", "mnemogate-worker@.service")
    ]
    names = {f"MNEMOGATE_{k.upper()}" for k in Settings.model_fields} | set(EXTERNAL_ENV)
    sections = {
        k for k, f in Settings.model_fields.items() if hasattr(f.annotation, "model_fields")
    }
    for text in texts:
        for env in set(
            re.findall(
                r"\b(MNEMOGATE_[A-Z_]+|TELEGRAM_[A-Z_]+|DISCORD_[A-Z_]+|"
                r"HONCHO_[A-Z_]+)\b",
                text,
            )
        ):
            top, _, key = env.removeprefix("MNEMOGATE_").partition("__")
            assert env in names or (top.lower() in sections and key), env
    runner = CliRunner()
    for command in (["run", "--help"], ["worker", "--help"]):
        assert runner.invoke(cli, command).exit_code == 0
