"""The turn ledger on state.db and in memory: claim, busy, done, release, stale takeover."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.history import schema  # noqa: F401 - registers every migration
from gateway.history.db import Database
from gateway.privacy.erasure import _erase_sqlite
from gateway.provider_turns import SqliteTurnLedger
from gateway.tenants import TenantId
from providers.ledger import MemoryTurnLedger, TurnInFlight, TurnKey, TurnLedger, deliver_once

ALICE = TenantId.parse("console:alice")
BOB = TenantId.parse("console:bob")


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(tmp_path / "state.db")
    yield database
    database.close()


@pytest.fixture(params=["sqlite", "memory"])
def ledger(request: pytest.FixtureRequest, db: Database) -> TurnLedger:
    return SqliteTurnLedger(db) if request.param == "sqlite" else MemoryTurnLedger()


def key(tenant: TenantId = ALICE, turn: str = "t1") -> TurnKey:
    return TurnKey(tenant, "retaindb", "mg-console-alice-0123456789", "s1", turn)


def test_a_turn_is_claimed_once_then_busy_then_done(ledger: TurnLedger) -> None:
    assert ledger.claim(key()) == "claimed"
    assert ledger.claim(key()) == "busy"
    assert ledger.claim(key(turn="t2")) == "claimed"
    ledger.finish(key())
    assert ledger.claim(key()) == "done"
    ledger.release(key())  # a late release cannot undo a delivery
    assert ledger.claim(key()) == "done"


def test_a_released_or_stale_claim_can_be_taken_again(ledger: TurnLedger) -> None:
    assert ledger.claim(key()) == "claimed"
    ledger.release(key())
    assert ledger.claim(key()) == "claimed"
    assert ledger.claim(key(), stale_after_s=0.0) == "claimed"  # its worker died mid-send


def test_deliver_once_sends_once_and_releases_on_failure(ledger: TurnLedger) -> None:
    sent: list[str] = []

    def fail() -> None:
        raise ConnectionError("down")

    with pytest.raises(ConnectionError):
        deliver_once(ledger, key(), fail)
    assert deliver_once(ledger, key(), lambda: sent.append("t1")) is True
    assert deliver_once(ledger, key(), lambda: sent.append("again")) is False
    assert sent == ["t1"]
    ledger.claim(key(turn="t2"))
    with pytest.raises(TurnInFlight):
        deliver_once(ledger, key(turn="t2"), lambda: sent.append("t2"))


def test_erasure_sweeps_the_tenants_ledger_rows(db: Database) -> None:
    ledger = SqliteTurnLedger(db)
    ledger.claim(key())
    ledger.claim(key(BOB, "t9"))
    counts = db.write(lambda conn: _erase_sqlite(conn, ALICE))
    assert counts["provider_turns rows"] == 1
    assert ledger.claim(key()) == "claimed" and ledger.claim(key(BOB, "t9")) == "busy"
