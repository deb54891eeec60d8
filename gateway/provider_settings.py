"""Settings sections of the bundled memory providers (one ``[name]`` table each).

Each section lists, in ``EXTERNAL_ENV``, the environment variables the service itself
documents (``MEM0_API_KEY``, ``HINDSIGHT_API_URL``, …); :mod:`gateway.settings` maps them into
the section. Secrets (``api_key``) are accepted only from the environment, like every secret.
The provider packages read their section from :class:`gateway.settings.Settings`; nothing
here imports a provider or its SDK.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator


def _http_url(value: str | None) -> str | None:
    """An http(s) URL without its trailing slash; None stays None."""
    if value is None:
        return None
    if not value.startswith(("http://", "https://")):
        raise ValueError("must start with http:// or https://")
    return value.rstrip("/")


class ProviderSection(BaseModel):
    """A provider's ``[name]`` table; ``EXTERNAL_ENV`` maps service env names to keys."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    EXTERNAL_ENV: ClassVar[dict[str, str]] = {}


class HonchoSettings(ProviderSection):
    """The Honcho provider; see ``providers/honcho/__init__.py`` for what each knob does."""

    EXTERNAL_ENV: ClassVar[dict[str, str]] = {
        "HONCHO_BASE_URL": "base_url",
        "HONCHO_API_KEY": "api_key",
        "HONCHO_WORKSPACE": "workspace",
    }

    base_url: str | None = None
    api_key: SecretStr | None = None
    workspace: str = "mnemogate"
    ai_peer: str = "mnemogate"
    peer_prefix: str = ""
    # tenant id ("telegram:123") or namespace → Honcho peer id used instead of the default.
    peer_aliases: dict[str, str] = Field(default_factory=dict)
    recall_mode: Literal["hybrid", "context", "tools"] = "hybrid"
    observation: Literal["directional", "unified"] = "directional"
    user_observe_me: bool | None = None  # per-flag overrides of the observation preset
    user_observe_others: bool | None = None
    ai_observe_me: bool | None = None
    ai_observe_others: bool | None = None
    dialectic_depth: int = Field(default=1, ge=1, le=3)
    # honcho_reasoning's level when the model gives none (or may not choose: dialectic_dynamic)
    reasoning_level: Literal["minimal", "low", "medium", "high", "max"] = "low"
    # no automatic or model-chosen level goes above this one
    reasoning_level_cap: Literal["minimal", "low", "medium", "high", "max"] = "high"
    dialectic_dynamic: bool = True  # the model may choose honcho_reasoning's level
    dialectic_max_input_chars: int = Field(default=2000, ge=50, le=10_000)
    timeout_s: float = Field(default=8.0, gt=0)
    dialectic_timeout_s: float = Field(default=8.0, gt=0)  # all passes of one recall
    read_retries: int = Field(default=1, ge=0, le=5)  # writes are never retried by the SDK
    context_tokens: int = Field(default=2000, ge=100, le=100_000)
    max_section_chars: int = Field(default=1500, ge=100)
    max_recall_chars: int = Field(default=4000, ge=200)
    max_tool_result_chars: int = Field(default=4000, ge=200)
    message_chunk_chars: int = Field(default=20_000, ge=200, le=24_000)
    migrate_memory_files: bool = True
    config_refresh_s: float = Field(default=300.0, ge=0)


class HolographicSettings(ProviderSection):
    """Local fact store with holographic reduced representations (no service).

    Facts live in the state store, per tenant scope; see ``providers/holographic``.
    """

    dimension: int = Field(default=1024, ge=512, le=16_384)  # phases per HRR vector
    default_trust: float = Field(default=0.5, ge=0.0, le=1.0)  # trust of a new fact
    min_trust: float = Field(default=0.3, ge=0.0, le=1.0)  # recall shows no fact below it
    recall_limit: int = Field(default=8, ge=1, le=50)  # facts per recall
    max_recall_chars: int = Field(default=2000, ge=200)
    max_fact_chars: int = Field(default=1000, ge=50, le=10_000)
    max_facts: int = Field(default=5000, ge=10, le=100_000)  # per tenant scope
    max_tool_result_chars: int = Field(default=4000, ge=200)
    mirror_memory: bool = True  # curated memory adds/replaces/removes mirrored as facts


class Mem0Settings(ProviderSection):
    """Mem0: the ``mem0ai`` library in-process (``oss``) or the hosted API (``platform``).

    See ``providers/mem0/__init__.py`` for what each knob does.
    """

    EXTERNAL_ENV: ClassVar[dict[str, str]] = {"MEM0_API_KEY": "api_key"}
    mode: Literal["oss", "platform"] = "oss"
    # platform
    api_key: SecretStr | None = None
    base_url: str = "https://api.mem0.ai"
    # oss: the LLM is the auxiliary model (settings.aux) unless llm_model names another one
    llm_model: str | None = None
    embedding_model: str = "text-embedding-3-small"
    embedding_dims: int = Field(default=1536, ge=8, le=8192)
    embedding_base_url: str | None = None  # default: the auxiliary model's endpoint
    vector_store: str = "qdrant"
    # the mem0 vector-store config; empty = a local Qdrant under $MNEMOGATE_HOME/mem0/qdrant
    vector_store_config: dict[str, Any] = Field(default_factory=dict)
    collection: str = "mnemogate"
    # both
    timeout_s: float = Field(default=30.0, gt=0)
    recall_top_k: int = Field(default=5, ge=1, le=50)
    search_threshold: float = Field(default=0.1, ge=0, le=1)
    max_recall_chars: int = Field(default=2000, ge=200)
    max_tool_result_chars: int = Field(default=4000, ge=200)

    @field_validator("base_url", "embedding_base_url")
    @classmethod
    def _urls(cls, value: str | None) -> str | None:
        return _http_url(value)


class HindsightSettings(ProviderSection):
    """Hindsight memory banks over its HTTP API (``hindsight-client``)."""

    EXTERNAL_ENV: ClassVar[dict[str, str]] = {
        "HINDSIGHT_API_URL": "base_url",
        "HINDSIGHT_API_KEY": "api_key",
    }
    base_url: str | None = None
    api_key: SecretStr | None = None
    # hybrid: recall before replies and offer tools; context: recall only; tools: tools only
    recall_mode: Literal["hybrid", "context", "tools"] = "hybrid"
    recall_budget: Literal["low", "mid", "high"] = "low"
    reflect_budget: Literal["low", "mid", "high"] = "low"
    recall_max_tokens: int = Field(default=1024, ge=64, le=16_384)
    recall_timeout_s: float = Field(default=5.0, gt=0)  # recall, document check, version
    retain_timeout_s: float = Field(default=60.0, gt=0)  # retain (LLM extraction), deletion
    reflect_timeout_s: float = Field(default=30.0, gt=0)
    read_retries: int = Field(default=1, ge=0, le=5)  # reads only, on 429/503
    max_recall_chars: int = Field(default=4000, ge=200)
    max_tool_result_chars: int = Field(default=4000, ge=200)
    mirror_memory: bool = True  # curated USER.md/MEMORY.md additions are retained too


class SupermemorySettings(ProviderSection):
    """Supermemory containers over its HTTP API; see ``providers/supermemory/__init__.py``."""

    EXTERNAL_ENV: ClassVar[dict[str, str]] = {
        "SUPERMEMORY_API_KEY": "api_key",
        "SUPERMEMORY_BASE_URL": "base_url",
    }
    api_key: SecretStr | None = None
    base_url: str = "https://api.supermemory.ai"  # documents, search, profile, conversations
    timeout_s: float = Field(default=5.0, gt=0)
    search_mode: Literal["hybrid", "memories", "documents"] = "hybrid"
    profile_frequency: int = Field(default=50, ge=1, le=500)  # profile on turn 0 and every N
    max_recall_results: int = Field(default=10, ge=1, le=20)
    max_recall_chars: int = Field(default=3000, ge=200)
    max_tool_result_chars: int = Field(default=4000, ge=200)
    entity_context: str = Field(default="", max_length=1500)
    forget_window_s: float = Field(default=3600.0, gt=0)  # how long search ids may be forgotten

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str | None:
        return _http_url(value)


class OpenVikingSettings(ProviderSection):
    """OpenViking context database over its HTTP API (per-user spaces, trusted mode)."""

    EXTERNAL_ENV: ClassVar[dict[str, str]] = {
        "OPENVIKING_ENDPOINT": "base_url",
        "OPENVIKING_API_KEY": "api_key",
        "OPENVIKING_ACCOUNT": "account",
        "OPENVIKING_AGENT": "agent",
    }
    base_url: str | None = None
    api_key: SecretStr | None = None
    account: str = Field(default="default", pattern=r"^[A-Za-z0-9_-]+$")
    agent: str = Field(default="mnemogate", pattern=r"^[A-Za-z0-9_-]+$")
    timeout_s: float = Field(default=10.0, gt=0)
    recall_timeout_s: float = Field(default=5.0, gt=0)
    recall_limit: int = Field(default=6, ge=1, le=50)
    min_score: float = Field(default=0.15, ge=0, le=1)
    max_recall_chars: int = Field(default=4000, ge=200)
    max_tool_result_chars: int = Field(default=4000, ge=200)
    resources: bool = True  # offer viking_add_resource (public http(s) URLs only)


class RetainDBSettings(ProviderSection):
    """RetainDB memory over its HTTP API (``user_id`` = the scope's backend key)."""

    EXTERNAL_ENV: ClassVar[dict[str, str]] = {
        "RETAINDB_API_KEY": "api_key",
        "RETAINDB_BASE_URL": "base_url",
        "RETAINDB_PROJECT": "project",
    }
    api_key: SecretStr | None = None
    base_url: str = "https://api.retaindb.com"
    project: str = Field(default="mnemogate", min_length=1)
    timeout_s: float = Field(default=8.0, gt=0)
    recall_timeout_s: float = Field(default=5.0, gt=0)
    ingest_timeout_s: float = Field(default=15.0, gt=0)
    max_recall_chars: int = Field(default=4000, ge=200)
    max_tool_result_chars: int = Field(default=4000, ge=200)


class ByteRoverSettings(ProviderSection):
    """ByteRover through the ``brv`` command-line tool (npm ``byterover-cli``)."""

    EXTERNAL_ENV: ClassVar[dict[str, str]] = {"BRV_API_KEY": "api_key"}
    command: str = "brv"
    api_key: SecretStr | None = None  # optional: ByteRover cloud sync
    auto_curate: bool = False  # curate every finished turn (in the sync worker)
    query_timeout_s: float = Field(default=10.0, gt=0)
    curate_timeout_s: float = Field(default=120.0, gt=0)
    status_timeout_s: float = Field(default=15.0, gt=0)
    min_query_chars: int = Field(default=10, ge=1)
    max_recall_chars: int = Field(default=4000, ge=200)
    max_tool_result_chars: int = Field(default=4000, ge=200)


SECTIONS: dict[str, type[ProviderSection]] = {
    "honcho": HonchoSettings,
    "holographic": HolographicSettings,
    "mem0": Mem0Settings,
    "hindsight": HindsightSettings,
    "supermemory": SupermemorySettings,
    "openviking": OpenVikingSettings,
    "retaindb": RetainDBSettings,
    "byterover": ByteRoverSettings,
}


def external_env() -> dict[str, tuple[str, str]]:
    """Every provider's service env name → (section, key)."""
    return {
        env_name: (section, key)
        for section, cls in SECTIONS.items()
        for env_name, key in cls.EXTERNAL_ENV.items()
    }
