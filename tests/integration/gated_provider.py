"""A test provider whose ``sync_turn`` waits at a gate the test controls through Redis.

It is the reference provider (so exactly-once is checked the same way) plus a gate: each
delivery first announces itself (``<prefix>:test-gate:entered`` gets ``"<pid> <turn id>"``),
then proceeds when the gate mode is ``open``, raises when it is ``fail``, and otherwise
blocks until the test pushes a pass (``<prefix>:test-gate:pass``). Worker processes load it
through a real ``mnemogate.providers`` entry point (see :func:`write_entry_point`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Self

import redis

from providers.base import ProviderContext, SyncedTurn
from providers.reference import ReferenceProvider
from tests.plugins import write_entry_point as declare

if TYPE_CHECKING:
    from gateway.settings import Settings

GATE_WAIT_S = 30


def gate_key(prefix: str, name: str) -> str:
    return f"{prefix}:test-gate:{name}"


class GatedProvider(ReferenceProvider):
    name = "gated"

    def __init__(self, home: Path, redis_url: str, prefix: str) -> None:
        super().__init__(home)
        self._redis = redis.Redis.from_url(redis_url)
        self._prefix = prefix

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls(settings.home, settings.redis_url, settings.redis_prefix)

    def sync_turn(self, ctx: ProviderContext, turn: SyncedTurn) -> None:
        self._redis.rpush(gate_key(self._prefix, "entered"), f"{os.getpid()} {turn.turn_id}")
        mode = self._redis.get(gate_key(self._prefix, "mode"))
        if mode == b"fail":
            raise RuntimeError("the gated provider refuses this turn")
        if mode != b"open":
            passed = self._redis.blpop([gate_key(self._prefix, "pass")], timeout=GATE_WAIT_S)
            if passed is None:
                raise RuntimeError("the test never opened the gate")
        super().sync_turn(ctx, turn)

    def shutdown(self) -> None:
        super().shutdown()
        self._redis.close()


def write_entry_point(directory: Path) -> Path:
    """Declare this provider as ``gated`` through a real entry point under ``directory``."""
    return declare(directory, "gated", "tests.integration.gated_provider:GatedProvider")
