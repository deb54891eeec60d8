"""The deploy files refer to what exists: paths, commands and settings names."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from click.testing import CliRunner

from gateway.cli import cli
from gateway.settings import EXTERNAL_ENV, Settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
ENV_PATTERN = r"\b(MNEMOGATE_[A-Z_]+|TELEGRAM_[A-Z_]+|DISCORD_[A-Z_]+|HONCHO_[A-Z_]+)\b"


def known_env(name: str) -> bool:
    """Whether mnemogate reads the environment variable ``name`` (a field of Settings)."""
    if name in EXTERNAL_ENV or name == "MNEMOGATE_CONFIG":
        return True
    if not name.startswith("MNEMOGATE_"):
        return False
    top, nested, key = name.removeprefix("MNEMOGATE_").lower().partition("__")
    field = Settings.model_fields.get(top)
    if field is None:
        return False
    section = getattr(field.annotation, "model_fields", None)
    return key in section if nested and section is not None else not nested and section is None


def test_known_env_is_strict() -> None:
    assert known_env("MNEMOGATE_METRICS__LISTEN") and known_env("MNEMOGATE_LOG__FORMAT")
    assert known_env("MNEMOGATE_LOG_LEVEL") and known_env("TELEGRAM_BOT_TOKEN")
    assert not known_env("MNEMOGATE_METRICS__PORT") and not known_env("MNEMOGATE_METRICS")
    assert not known_env("MNEMOGATE_HOME__X") and not known_env("REDIS_PASSWORD")


def test_dockerfile_copies_existing_paths_and_runs_safely() -> None:
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    for source in re.findall(r"^COPY (?!--)(\S+)", text, flags=re.MULTILINE):
        assert (DEPLOY.parent / source).exists(), source
    assert re.search(r"^ARG BASE=\S+", text, flags=re.MULTILINE)
    assert re.findall(r"^FROM (\S+)", text, flags=re.MULTILINE) == ["${BASE}", "${BASE}"]
    assert "VOLUME" not in re.sub(r"#.*", "", text)  # no anonymous volumes
    assert "HEALTHCHECK" in text and "gateway.observability.healthcheck" in text
    assert 'ENTRYPOINT ["/usr/bin/tini", "--", "mnemogate"]' in text
    assert "USER 10001:10001" in text
    ignored = (DEPLOY.parent / ".dockerignore").read_text(encoding="utf-8").split()
    assert {".git", ".venv", "tests"} <= set(ignored)


def test_compose_and_units_use_real_commands_and_settings() -> None:
    texts = [
        (DEPLOY / n).read_text(encoding="utf-8")
        for n in ("compose.yaml", "mnemogate.service", "mnemogate-worker@.service")
    ]
    for text in texts:
        for env in set(re.findall(ENV_PATTERN, text)):
            assert known_env(env), env
    runner = CliRunner()
    for command in (["run", "--help"], ["worker", "--help"], ["status", "--help"]):
        assert runner.invoke(cli, command).exit_code == 0


def test_compose_keeps_bot_tokens_from_workers_and_protects_redis() -> None:
    text = (DEPLOY / "compose.yaml").read_text(encoding="utf-8")
    assert ":-}" not in re.sub(
        r"#.*", "", text
    )  # podman-compose 1.0 would pass "${NAME:-}" through literally
    compose = yaml.safe_load(text)
    services = compose["services"]
    assert "TELEGRAM_BOT_TOKEN" in services["gateway"]["environment"]
    assert not {"TELEGRAM_BOT_TOKEN", "DISCORD_BOT_TOKEN"} & set(services["worker"]["environment"])
    redis_cmd = " ".join(services["redis"]["command"])
    assert "--requirepass" in redis_cmd and "--maxmemory " in redis_cmd
    assert "noeviction" in redis_cmd  # RQ's jobs must never be evicted
    for name, service in services.items():
        assert re.search(r":\d+\.\d+", service["image"]), f"{name}: image not pinned"
        assert service["read_only"] and service["cap_drop"] == ["ALL"], name
        assert service["mem_limit"] and service["pids_limit"], name


def test_systemd_worker_template_owns_its_state() -> None:
    text = (DEPLOY / "mnemogate-worker@.service").read_text(encoding="utf-8")
    assert "StateDirectory=mnemogate" in text
    assert re.search(r"^Wants=.*redis-server\.service", text, flags=re.MULTILINE)
