"""Curated per-scope memory: MEMORY.md and USER.md, the ``memory`` tool and its guidance.

``entries`` is the file format, ``operations`` the pure edit rules, ``metadata`` the
sidecar of origins and times, ``store`` the locked file I/O and the system-prompt snapshot,
``tool`` the model-facing tool.
"""

from __future__ import annotations

from gateway.memory.operations import Operation, WriteResult
from gateway.memory.store import TARGETS, Entry, MemoryStore, Origin, Target
from gateway.memory.tool import MEMORY_GUIDANCE, MEMORY_TOOL_SCHEMA, MemoryTool

__all__ = [
    "MEMORY_GUIDANCE",
    "MEMORY_TOOL_SCHEMA",
    "TARGETS",
    "Entry",
    "MemoryStore",
    "MemoryTool",
    "Operation",
    "Origin",
    "Target",
    "WriteResult",
]
