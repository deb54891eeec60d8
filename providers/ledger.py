"""The turn ledger: which synced turns a provider has already delivered to its service.

Services such as OpenViking (session messages), RetainDB (session ingest) and ByteRover
(``brv curate``) have no idempotency key a client can rely on, yet a sync job may deliver the
same turn twice (a retried job, a timed-out call that completed later). The ledger makes
delivery once-only on mnemogate's side: a turn is *claimed* before it is sent, *finished*
after the service accepted it, and *released* when sending failed so the job's retry sends it
again. A claim that is still in flight answers ``busy`` (the job fails and retries later); a
claim older than ``stale_after_s`` (a worker died mid-send) may be taken over.

The gateway implements the ledger on state.db (``gateway/provider_turns.py``); the in-memory
one here serves tests and processes without a store.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from gateway.tenants import TenantId

Claim = Literal["claimed", "done", "busy"]
STALE_AFTER_S = 600.0


@dataclass(frozen=True, slots=True)
class TurnKey:
    """One turn of one session as one provider stores it under one backend key."""

    tenant: TenantId
    provider: str
    backend_key: str
    session_id: str
    turn_id: str


class TurnInFlight(RuntimeError):
    """Another delivery of this turn is still running; the sync job should retry later."""


class TurnLedger(Protocol):
    def claim(self, key: TurnKey, stale_after_s: float = STALE_AFTER_S) -> Claim:
        """``claimed`` (send it now), ``done`` (already delivered) or ``busy`` (in flight)."""

    def finish(self, key: TurnKey) -> None:
        """The service accepted the turn."""

    def release(self, key: TurnKey) -> None:
        """Sending failed: the next delivery may claim the turn again."""


class MemoryTurnLedger:
    """A :class:`TurnLedger` held in memory (tests, processes without a state store)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[TurnKey, tuple[str, float]] = {}

    def claim(self, key: TurnKey, stale_after_s: float = STALE_AFTER_S) -> Claim:
        now = time.monotonic()
        with self._lock:
            row = self._rows.get(key)
            if row is not None and row[0] == "done":
                return "done"
            if row is not None and now - row[1] < stale_after_s:
                return "busy"
            self._rows[key] = ("sending", now)
            return "claimed"

    def finish(self, key: TurnKey) -> None:
        with self._lock:
            self._rows[key] = ("done", time.monotonic())

    def release(self, key: TurnKey) -> None:
        with self._lock:
            if self._rows.get(key, ("", 0.0))[0] == "sending":
                del self._rows[key]


def deliver_once(ledger: TurnLedger, key: TurnKey, send: Callable[[], None]) -> bool:
    """Run ``send`` unless the turn was delivered already; whether it ran.

    Raises :class:`TurnInFlight` while another delivery holds the claim, and re-raises what
    ``send`` raised after releasing the claim (an error the service answered means the turn
    was not stored; a lost answer may mean it was, the price of at-least-once on timeouts).
    """
    state = ledger.claim(key)
    if state == "done":
        return False
    if state == "busy":
        raise TurnInFlight(f"turn {key.turn_id} of session {key.session_id} is being sent")
    try:
        send()
    except BaseException:
        ledger.release(key)
        raise
    ledger.finish(key)
    return True
