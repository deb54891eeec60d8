"""The one exception hierarchy of mnemogate.

    MnemogateError
    ├── ConfigError            settings missing or invalid (start-up refuses to run)
    ├── TenantError            malformed tenant id or scope
    ├── MemoryStoreError       curated memory could not be read or written
    │   └── MemoryFileCorrupt  a hand-edited file does not parse back (it was backed up)
    ├── StorageError           state.db could not be opened, migrated or written
    │   └── NotFound           a session/message the tenant asked for does not exist
    ├── LLMError               the model endpoint failed
    │   ├── LLMUnavailable     connection refused / timed out after retries
    │   └── LLMBadResponse     the endpoint answered something that is not a completion
    ├── UserInputError         a message or command argument we refuse (too long, empty…)
    │   ├── StagingRefused     a staged memory write failed the threat scan (memory.approval)
    │   ├── PairingLocked      too many wrong pairing codes; carries retry_after (pairing)
    │   └── NotRevocable       access granted by settings cannot be revoked at runtime (access)
    ├── JobFailed              a background job must be retried (workers.jobs)
    ├── InvalidJobId           a job id outside [A-Za-z0-9_-] (workers.queues)
    ├── DiscordStartError      the Discord gateway never became ready (platforms.discord)
    └── ProviderError          memory providers (providers.errors): unknown, failed to load,
                               invalid, rejected (second provider, tool-name clash), and
                               backend call failures of a provider (e.g. Honcho)

Errors carry the data a caller needs to explain them (paths, status codes, limits).
"""

from __future__ import annotations

from pathlib import Path


class MnemogateError(Exception):
    """Root of every error raised on purpose by mnemogate."""


class ConfigError(MnemogateError):
    """Configuration is missing or invalid; the message says which setting and how to fix it."""


class TenantError(MnemogateError, ValueError):
    """A tenant id or scope is malformed."""


class MemoryStoreError(MnemogateError):
    """Curated memory could not be read or written."""


class MemoryFileCorrupt(MemoryStoreError):
    """A memory file does not parse back into the entries it should hold."""

    def __init__(self, path: Path, backup: Path, reason: str) -> None:
        super().__init__(f"{path} does not parse back ({reason}); a copy was kept at {backup}")
        self.path = path
        self.backup = backup
        self.reason = reason


class StorageError(MnemogateError):
    """state.db could not be opened, migrated or written."""


class NotFound(StorageError, LookupError):
    """The tenant has no such session, message or record."""


class LLMError(MnemogateError):
    """The model endpoint failed."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class LLMUnavailable(LLMError):
    """The endpoint could not be reached or kept failing after retries."""


class LLMBadResponse(LLMError):
    """The endpoint answered with something that is not a chat completion."""


class UserInputError(MnemogateError, ValueError):
    """Input from a user or operator that we refuse, with the reason in the message."""
