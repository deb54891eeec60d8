"""External memory providers: the interface, the manager that isolates them, their registry.

``providers.base`` defines :class:`MemoryProvider`; ``providers.manager`` calls the one
active provider safely; ``providers.registry`` finds bundled providers and
``mnemogate.providers`` entry points, importing only the selected one. Bundled providers
live in their own modules (``providers.reference``) and are not imported from here.
"""

from providers.base import (
    ConfigField,
    Delegation,
    MemoryProvider,
    MemoryWriteEvent,
    ProviderContext,
    RecallQuery,
    SessionEnd,
    SessionSwitch,
    SyncedTurn,
    TurnStart,
    WriteMetadata,
)
from providers.errors import ProviderError
from providers.manager import AsyncMemoryManager, MemoryManager, ProviderStats
from providers.registry import available_providers, build_manager, load_provider

__all__ = [
    "AsyncMemoryManager",
    "ConfigField",
    "Delegation",
    "MemoryManager",
    "MemoryProvider",
    "MemoryWriteEvent",
    "ProviderContext",
    "ProviderError",
    "ProviderStats",
    "RecallQuery",
    "SessionEnd",
    "SessionSwitch",
    "SyncedTurn",
    "TurnStart",
    "WriteMetadata",
    "available_providers",
    "build_manager",
    "load_provider",
]
