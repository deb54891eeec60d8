"""Curated-memory writes → provider ``on_memory_write`` events (with origin and scope)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from gateway.memory.store import Origin
from gateway.memory.tool import MemoryChange
from gateway.tenants import MemoryScope
from providers.base import MemoryWriteEvent, WriteMetadata


def write_events(
    changes: Sequence[MemoryChange], *, origin: Origin, scope: MemoryScope
) -> list[MemoryWriteEvent]:
    """One event per applied operation, in the order they were applied."""
    meta = WriteMetadata(origin=origin, time=datetime.now(UTC), scope_key=scope.key)
    events: list[MemoryWriteEvent] = []
    for change in changes:
        for op in change.result.applied:
            if op.action == "add":
                events.append(MemoryWriteEvent("add", change.target, op.content or "", meta))
            elif op.action == "replace":
                events.append(
                    MemoryWriteEvent(
                        "replace", change.target, op.content or "", meta, previous=op.old_text
                    )
                )
            else:
                events.append(
                    MemoryWriteEvent("remove", change.target, "", meta, previous=op.old_text)
                )
    return events
