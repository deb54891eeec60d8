"""Settings: TOML + env precedence, documented env names, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.errors import ConfigError
from gateway.settings import load_settings


def test_defaults(home: Path) -> None:
    s = load_settings()
    assert s.home == home.resolve()
    assert s.redis_url == "redis://127.0.0.1:6379/0"
    assert (s.memory.memory_char_limit, s.memory.user_char_limit) == (2200, 1375)
    assert (s.memory.nudge_interval, s.memory.flush_min_turns) == (10, 6)
    assert s.memory.notifications == "on" and s.memory.write_approval is False
    assert s.access.allowed_users == [] and s.access.allow_all is False
    assert s.groups.memory == "isolated" and s.groups.require_mention is True
    assert s.llm.configured is False
    assert s.aux is s.llm
    assert s.sessions.idle_minutes == 1440  # a day without a message ends a session


def test_env_names(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {
        "MNEMOGATE_REDIS_URL": "redis://example:6380/2",
        "MNEMOGATE_LLM__BASE_URL": "http://127.0.0.1:11434/v1/",
        "MNEMOGATE_LLM__MODEL": "qwen",
        "MNEMOGATE_LLM__API_KEY": "sk-secret",
        "MNEMOGATE_AUX_LLM__MODEL": "small",
        "MNEMOGATE_ACCESS__ALLOWED_USERS": "telegram:1, discord:2",
        "MNEMOGATE_ACCESS__ADMINS": "telegram:1",
        "MNEMOGATE_ACCESS__ALLOW_ALL": "true",
        "MNEMOGATE_MEMORY__PROVIDER": "honcho",
        "MNEMOGATE_MEMORY__NOTIFICATIONS": "verbose",
        "MNEMOGATE_TELEGRAM__BASE_URL": "http://127.0.0.1:8081/bot",
        "MNEMOGATE_DISCORD__API_BASE_URL": "http://127.0.0.1:9000/api",
        "MNEMOGATE_DISCORD__GATEWAY_URL": "ws://127.0.0.1:9000/gw",
        "TELEGRAM_BOT_TOKEN": "123:abc",
        "DISCORD_BOT_TOKEN": "dtoken",
        "HONCHO_BASE_URL": "http://127.0.0.1:8000",
        "HONCHO_API_KEY": "hk",
        "HONCHO_WORKSPACE": "ws1",
        "MNEMOGATE_SESSIONS__IDLE_MINUTES": "0",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    s = load_settings()
    assert s.redis_url == "redis://example:6380/2"
    assert s.llm.base_url == "http://127.0.0.1:11434/v1"
    assert s.llm.api_key is not None and s.llm.api_key.get_secret_value() == "sk-secret"
    assert "sk-secret" not in repr(s)
    assert s.aux.model == "small" and s.aux.base_url == s.llm.base_url
    assert s.access.allowed_users == ["telegram:1", "discord:2"]
    assert s.access.admins == ["telegram:1"] and s.access.allow_all is True
    assert s.memory.provider == "honcho" and s.memory.notifications == "verbose"
    assert s.telegram.base_url == "http://127.0.0.1:8081/bot"
    assert s.telegram.bot_token is not None
    assert s.telegram.bot_token.get_secret_value() == "123:abc"
    assert s.discord.gateway_url == "ws://127.0.0.1:9000/gw"
    assert s.honcho.workspace == "ws1" and s.honcho.base_url == "http://127.0.0.1:8000"
    assert s.sessions.idle_minutes == 0


def test_toml_then_env_wins(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text(
        '[memory]\nnudge_interval = 4\nuser_char_limit = 900\n[llm]\nmodel = "from-toml"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("MNEMOGATE_MEMORY__NUDGE_INTERVAL", "7")
    s = load_settings()
    assert s.memory.nudge_interval == 7
    assert s.memory.user_char_limit == 900
    assert s.llm.model == "from-toml"


def test_explicit_config_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cfg = tmp_path / "other.toml"
    cfg.write_text('[groups]\nmemory = "private"\n', encoding="utf-8")
    monkeypatch.setenv("MNEMOGATE_CONFIG", str(cfg))
    assert load_settings().groups.memory == "private"
    monkeypatch.setenv("MNEMOGATE_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigError, match="not a file"):
        load_settings()


@pytest.mark.parametrize(
    ("name", "value", "fragment"),
    [
        ("MNEMOGATE_MEMORY__NOTIFICATIONS", "loud", "memory.notifications"),
        ("MNEMOGATE_MEMORY__MEMORY_CHAR_LIMIT", "-5", "MNEMOGATE_MEMORY__MEMORY_CHAR_LIMIT"),
        ("MNEMOGATE_REDIS_URL", "http://nope", "redis_url"),
        ("MNEMOGATE_LLM__BASE_URL", "localhost:11434", "llm.base_url"),
        ("MNEMOGATE_GROUPS__MEMORY", "shared", "groups.memory"),
        ("MNEMOGATE_MEMORY__BOGUS", "1", "memory.bogus"),
    ],
)
def test_bad_values_are_named(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, fragment: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert fragment in str(info.value)


def test_broken_toml_and_secret_in_toml(home: Path) -> None:
    home.mkdir(parents=True)
    cfg = home / "config.toml"
    cfg.write_text("[memory\nnudge = ", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_settings()
    cfg.write_text('[llm]\napi_key = "sk-123"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="MNEMOGATE_LLM__API_KEY") as info:
        load_settings()
    assert "sk-123" not in str(info.value)
