"""Errors raised while finding, loading and registering a memory provider.

    MnemogateError                  (gateway.errors)
    └── ProviderError               name of the provider concerned
        ├── UnknownProvider         no bundled provider or entry point has that name
        ├── ProviderLoadError       its module or attribute could not be imported
        ├── InvalidProvider         what was loaded breaks the MemoryProvider contract
        └── ProviderRejected        the memory manager refused to register it
            ├── ProviderAlreadyActive   another provider is already registered
            ├── ToolNameClash           its tool names clash with core tools or each other
            └── ProviderUnavailable     is_available() said no (configuration missing)

Calls into a registered provider never raise these: the manager isolates them.
"""

from __future__ import annotations

from collections.abc import Iterable

from gateway.errors import MnemogateError


class ProviderError(MnemogateError):
    """A memory provider could not be found, loaded or registered."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


class UnknownProvider(ProviderError, LookupError):
    """No bundled provider and no ``mnemogate.providers`` entry point has this name."""

    def __init__(self, name: str, known: Iterable[str]) -> None:
        self.known = tuple(sorted(known))
        listed = ", ".join(self.known) or "none"
        super().__init__(name, f"unknown memory provider {name!r}; available: {listed}")


class ProviderLoadError(ProviderError):
    """Importing the provider's ``module:attribute`` target failed."""

    def __init__(self, name: str, target: str, reason: str) -> None:
        super().__init__(name, f"memory provider {name!r} ({target}) failed to import: {reason}")
        self.target = target
        self.reason = reason


class InvalidProvider(ProviderError):
    """The loaded object does not honour the MemoryProvider contract; ``problems`` says how."""

    def __init__(self, name: str, problems: Iterable[str]) -> None:
        self.problems = tuple(problems)
        super().__init__(name, f"memory provider {name!r} is invalid: " + "; ".join(self.problems))


class ProviderRejected(ProviderError):
    """The memory manager refused to register a provider."""


class ProviderAlreadyActive(ProviderRejected):
    """At most one external provider may be active; ``active`` is the one that stays."""

    def __init__(self, name: str, active: str) -> None:
        super().__init__(
            name,
            f"memory provider {name!r} rejected: {active!r} is already active and only one "
            "external provider may be active at a time (set memory.provider to choose one)",
        )
        self.active = active


class ToolNameClash(ProviderRejected):
    """Some of the provider's tool names are core tool names or repeated."""

    def __init__(self, name: str, clashes: Iterable[str]) -> None:
        self.clashes = tuple(sorted(set(clashes)))
        super().__init__(
            name,
            f"memory provider {name!r} rejected: tool names {', '.join(self.clashes)} clash "
            "with core tools (memory, session_search) or are declared more than once",
        )


class ProviderUnavailable(ProviderRejected):
    """``is_available()`` returned False or failed: its configuration is missing or broken."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(name, f"memory provider {name!r} is not available: {reason}")
        self.reason = reason
