"""Configuration: read once at start-up, validated, immutable.

Sources, later wins: defaults → TOML file (``$MNEMOGATE_CONFIG``, else
``$MNEMOGATE_HOME/config.toml`` when present) → environment. Environment names are
``MNEMOGATE_<FIELD>`` and ``MNEMOGATE_<SECTION>__<KEY>``, plus the platform/provider names
``TELEGRAM_BOT_TOKEN``, ``DISCORD_BOT_TOKEN``, ``HONCHO_*`` and the other providers' service
variables (:mod:`gateway.provider_settings`). This is the only module that reads the process
environment; everything else receives a :class:`Settings`.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from gateway.errors import ConfigError
from gateway.provider_settings import (
    ByteRoverSettings,
    HindsightSettings,
    HolographicSettings,
    HonchoSettings,
    Mem0Settings,
    OpenVikingSettings,
    RetainDBSettings,
    SupermemorySettings,
    external_env,
)

ENV_PREFIX = "MNEMOGATE_"
SECRET_KEYS = frozenset({"api_key", "bot_token", "token", "webhook_secret"})

# Environment names outside the MNEMOGATE_ prefix that the product documents.
EXTERNAL_ENV: dict[str, tuple[str, str]] = {
    "TELEGRAM_BOT_TOKEN": ("telegram", "bot_token"),
    "DISCORD_BOT_TOKEN": ("discord", "bot_token"),
    **external_env(),
}


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _split_csv(value: Any) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class LLMSettings(_Section):
    """An OpenAI-compatible chat-completions endpoint."""

    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    timeout_s: float = Field(default=120.0, gt=0)
    connect_timeout_s: float = Field(default=10.0, gt=0)
    max_retries: int = Field(default=3, ge=0, le=10)
    context_window: int = Field(default=32_768, ge=1024)
    max_connections: int = Field(default=2000, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)


class AgentSettings(_Section):
    """The agent's identity and the limits of one turn."""

    name: str = "mnemogate"
    persona: str = (
        "You are a helpful, candid assistant. You remember each person you talk to "
        "through your memory tools, and you never reveal one person's memories to another."
    )
    max_tool_iterations: int = Field(default=8, ge=1, le=50)
    max_message_chars: int = Field(default=16_000, ge=100)
    # What one turn sends back; the rest goes out as an attached file (see agent/replies.py).
    max_reply_chars: int = Field(default=12_000, ge=500)


class MemorySettings(_Section):
    """Curated memory (MEMORY.md / USER.md) and background review."""

    memory_char_limit: int = Field(default=2200, ge=100)
    user_char_limit: int = Field(default=1375, ge=100)
    nudge_interval: int = Field(default=10, ge=0)
    flush_min_turns: int = Field(default=6, ge=0)
    write_approval: bool = False
    notifications: Literal["off", "on", "verbose"] = "on"
    provider: str | None = None

    @field_validator("provider")
    @classmethod
    def _provider(cls, value: str | None) -> str | None:
        # compose passes an unset variable through as "": that means "no provider".
        if value is None or not value.strip():
            return None
        return value.strip()


class SessionsSettings(_Section):
    """Session history, compression and retention."""

    write_transcripts: bool = False
    retention_days: int | None = Field(default=None, ge=1)
    summarize: bool = False
    compression_threshold: float = Field(default=0.75, gt=0.1, le=1.0)
    protect_first: int = Field(default=3, ge=0)
    protect_last: int = Field(default=20, ge=1)
    #: Characters of one session_search answer (the JSON the model reads), spent on the
    #: best matching windows; see gateway/history/recall.py.
    search_budget_chars: int = Field(default=3600, ge=800, le=100_000)
    # A live session that saw no message for this long ends (reason "idle") and the next
    # message starts a new one, so providers that learn at a session's end (Supermemory,
    # OpenViking) hear of sessions nobody closes with /new. 0 turns it off.
    idle_minutes: int = Field(default=1440, ge=0)


class RecallSettings(_Section):
    """Provider recall computed by workers and cached in Redis between turns."""

    first_turn_budget_s: float = Field(default=2.0, ge=0)
    cache_ttl_s: int = Field(default=3600, ge=1)
    provider_timeout_s: float = Field(default=10.0, gt=0)
    context_cadence: int = Field(default=1, ge=1)
    dialectic_cadence: int = Field(default=1, ge=1)
    injection_frequency: Literal["every-turn", "first-turn"] = "every-turn"
    # A recall computed while the provider was still processing the session is computed
    # again once it has caught up: checked every refresh_delay_s, at most refresh_attempts.
    refresh_delay_s: float = Field(default=10.0, ge=0)
    refresh_attempts: int = Field(default=3, ge=0, le=10)


class JobsSettings(_Section):
    """The background plane: RQ queues, retries and the outbox relay.

    ``mode``: ``queue`` sends follow-up work to RQ workers (``mnemogate worker``);
    ``inline`` runs the same job bodies inside this process (a single-process setup).
    """

    mode: Literal["queue", "inline"] = "queue"
    retries: int = Field(default=3, ge=0, le=20)
    retry_intervals_s: Annotated[list[int], NoDecode] = Field(default_factory=lambda: [5, 30, 120])
    job_timeout_s: int = Field(default=300, ge=1)
    relay_interval_s: float = Field(default=5.0, gt=0)
    sync_lock_timeout_s: float = Field(default=30.0, gt=0)

    _csv = field_validator("retry_intervals_s", mode="before")(
        classmethod(lambda cls, v: _split_csv(v))
    )


class TelegramSettings(_Section):
    """The Telegram bot: long polling by default, a webhook when ``webhook_url`` is set."""

    bot_token: SecretStr | None = None
    base_url: str | None = None  # like PTB's base_url, e.g. http://127.0.0.1:8081/bot
    webhook_url: str | None = None  # the public URL given to Telegram
    webhook_secret: SecretStr | None = None
    webhook_listen: str = "127.0.0.1"  # where the webhook server binds (behind a proxy)
    webhook_port: int = Field(default=8443, ge=0, le=65535)
    poll_timeout_s: int = Field(default=30, ge=0, le=50)
    concurrency: int = Field(default=64, ge=1, le=1024)  # updates handled at once
    shutdown_grace_s: float = Field(default=10.0, ge=0)  # for handlers still running at stop

    @field_validator("webhook_secret")
    @classmethod
    def _secret_charset(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None:
            return None
        secret = value.get_secret_value()  # Telegram allows 1-256 of A-Z a-z 0-9 _ -
        if not 1 <= len(secret) <= 256 or not all(
            char.isascii() and (char.isalnum() or char in "_-") for char in secret
        ):
            raise ValueError("must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
        return value


class DiscordSettings(_Section):
    """The Discord bot (discord.py); the URL overrides serve tests and proxies."""

    bot_token: SecretStr | None = None
    api_base_url: str | None = None  # REST base incl. version, e.g. http://127.0.0.1:8080/api/v10
    gateway_url: str | None = None  # websocket URL; default: the API base's GET /gateway/bot
    channels: Annotated[list[str], NoDecode] = Field(default_factory=list)
    ready_timeout_s: float = Field(default=30.0, gt=0)  # start() waits this long for READY
    guild_ready_timeout_s: float = Field(default=2.0, ge=0)  # discord.py's wait for GUILD_CREATE
    concurrency: int = Field(default=64, ge=1, le=1024)  # chats at once (in order within one)
    shutdown_grace_s: float = Field(default=10.0, ge=0)  # for handlers still running at stop

    _csv = field_validator("channels", mode="before")(classmethod(lambda cls, v: _split_csv(v)))

    @field_validator("api_base_url")
    @classmethod
    def _api_base_url(cls, value: str | None) -> str | None:
        if not value:
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")

    @field_validator("gateway_url")
    @classmethod
    def _gateway_url(cls, value: str | None) -> str | None:
        if not value:
            return None
        if not value.startswith(("ws://", "wss://")):
            raise ValueError("must start with ws:// or wss://")
        return value


class AccessSettings(_Section):
    allowed_users: Annotated[list[str], NoDecode] = Field(default_factory=list)
    admins: Annotated[list[str], NoDecode] = Field(default_factory=list)
    allow_all: bool = False
    messages_per_minute: int = Field(default=20, ge=1)
    daily_token_budget: int | None = Field(default=None, ge=1)

    _csv = field_validator("allowed_users", "admins", mode="before")(
        classmethod(lambda cls, v: _split_csv(v))
    )


class GroupsSettings(_Section):
    memory: Literal["isolated", "private", "off"] = "isolated"
    require_mention: bool = True


class MetricsSettings(_Section):
    """``/metrics``, ``/healthz`` and ``/readyz`` over HTTP for ``run`` and ``worker``."""

    listen: str | None = None  # host:port; unset = off

    @field_validator("listen")
    @classmethod
    def _listen(cls, value: str | None) -> str | None:
        if not value:
            return None
        _host, sep, port = value.rpartition(":")
        if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ValueError("must be host:port, e.g. 0.0.0.0:9464")
        return value


class LogSettings(_Section):
    format: Literal["text", "json"] = "text"


class Settings(BaseSettings):
    """Every setting of mnemogate; see README's configuration table."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        frozen=True,
        case_sensitive=False,
    )

    home: Path = Field(default_factory=lambda: Path.home() / ".mnemogate")
    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_prefix: str = Field(default="mnemogate", pattern=r"^[A-Za-z0-9_-]{1,32}$")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    llm: LLMSettings = Field(default_factory=LLMSettings)
    aux_llm: LLMSettings = Field(default_factory=LLMSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    sessions: SessionsSettings = Field(default_factory=SessionsSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    jobs: JobsSettings = Field(default_factory=JobsSettings)
    telegram: TelegramSettings = Field(default_factory=TelegramSettings)
    discord: DiscordSettings = Field(default_factory=DiscordSettings)
    access: AccessSettings = Field(default_factory=AccessSettings)
    groups: GroupsSettings = Field(default_factory=GroupsSettings)
    honcho: HonchoSettings = Field(default_factory=HonchoSettings)
    holographic: HolographicSettings = Field(default_factory=HolographicSettings)
    mem0: Mem0Settings = Field(default_factory=Mem0Settings)
    hindsight: HindsightSettings = Field(default_factory=HindsightSettings)
    supermemory: SupermemorySettings = Field(default_factory=SupermemorySettings)
    openviking: OpenVikingSettings = Field(default_factory=OpenVikingSettings)
    retaindb: RetainDBSettings = Field(default_factory=RetainDBSettings)
    byterover: ByteRoverSettings = Field(default_factory=ByteRoverSettings)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    log: LogSettings = Field(default_factory=LogSettings)

    @field_validator("home", mode="after")
    @classmethod
    def _expand_home(cls, value: Path) -> Path:
        return value.expanduser().resolve()

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str) -> str:
        if not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("must be a redis://, rediss:// or unix:// URL")
        return value

    @property
    def aux(self) -> LLMSettings:
        """The auxiliary model: its own endpoint where configured, else the main one."""
        if not (self.aux_llm.base_url or self.aux_llm.model):
            return self.llm
        return self.llm.model_copy(update=self.aux_llm.model_dump(exclude_unset=True))

    @property
    def state_db(self) -> Path:
        return self.home / "state.db"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # First wins: explicit arguments, MNEMOGATE_* env, the other documented env names,
        # then the TOML file. No .env file is read: secrets come from the real environment.
        return (
            init_settings,
            env_settings,
            _ExternalEnvSource(settings_cls),
            _TomlSource(settings_cls),
        )


class _ExternalEnvSource(PydanticBaseSettingsSource):
    """TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN and HONCHO_* mapped into their sections."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        found: dict[str, dict[str, str]] = {}
        for env_name, (section, key) in EXTERNAL_ENV.items():
            value = os.environ.get(env_name)
            if value:
                found.setdefault(section, {})[key] = value
        return found


def config_file_path(environ: Mapping[str, str] | None = None) -> Path | None:
    """The TOML file to read: $MNEMOGATE_CONFIG, else $MNEMOGATE_HOME/config.toml if present."""
    env = os.environ if environ is None else environ
    explicit = env.get(ENV_PREFIX + "CONFIG")
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(f"MNEMOGATE_CONFIG points to {path}, which is not a file")
        return path
    home = Path(env.get(ENV_PREFIX + "HOME") or Path.home() / ".mnemogate").expanduser()
    candidate = home / "config.toml"
    return candidate if candidate.is_file() else None


class _TomlSource(PydanticBaseSettingsSource):
    """The TOML config file; refuses secrets, which belong in the environment."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        path = config_file_path()
        if path is None:
            return {}
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read config file {path}: {exc}") from exc
        for section, table in data.items():
            if isinstance(table, dict):
                leaked = SECRET_KEYS.intersection(table)
                if leaked:
                    key = sorted(leaked)[0]
                    raise ConfigError(
                        f"{path}: [{section}] {key} is a secret and must come from the "
                        f"environment ({_env_name(section, key)}), not the config file"
                    )
        return data


def _env_name(section: str, key: str) -> str:
    for env_name, target in EXTERNAL_ENV.items():
        if target == (section, key):
            return env_name
    return f"{ENV_PREFIX}{section.upper()}__{key.upper()}"


def load_settings(**overrides: Any) -> Settings:
    """Read and validate the configuration, or raise ConfigError naming what is wrong."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = [str(part) for part in err["loc"]]
            where = ".".join(loc) or "settings"
            env = _env_name(loc[0], loc[1]) if len(loc) >= 2 else f"{ENV_PREFIX}{where.upper()}"
            problems.append(f"{where} ({env}): {err['msg']}")
        raise ConfigError("invalid configuration: " + "; ".join(problems)) from None
