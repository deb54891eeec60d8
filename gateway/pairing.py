"""Pairing codes: how an unknown user asks for access and an admin approves it (SPEC §8.3).

An unknown user who writes in a direct message gets a one-time code of :data:`CODE_LENGTH`
characters from :data:`ALPHABET` (no 0/O/1/I/L), drawn with :mod:`secrets`, valid for
:data:`CODE_TTL_S`. A tenant has at most one live code (asking again returns it) and gets at
most :data:`CODES_PER_DAY` codes in 24 hours. An admin approves the code (``/pair approve
CODE``; ``mnemogate pairing approve CODE`` acts as :data:`OPERATOR`), which grants access.
Every wrong, expired or used code an approver tries is a failure; :data:`LOCKOUT_FAILURES`
failures within :data:`LOCKOUT_WINDOW_S` lock that approver out for :data:`LOCKOUT_S`.

Nothing an unapproved user writes is stored: only the code row (tenant id, chat id, display
name), which unapproved codes keep for a day. Approving by code, listing pending codes and
the housekeeping purge are admin operations across tenants — the only statements here not
bound to one tenant.
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from gateway.errors import UserInputError
from gateway.history.db import Database
from gateway.routing import Conversation
from gateway.tenants import TenantId

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8
CODE_TTL_S = 3600.0
CODES_PER_DAY = 5
DAY_S = 86_400.0
LOCKOUT_FAILURES = 5
LOCKOUT_WINDOW_S = 900.0
LOCKOUT_S = 900.0
OPERATOR = "operator"
_COLUMNS = "code, tenant_id, chat_id, display_name, created_at, expires_at, status"
#: Grants access inside the approving transaction: (conn, tenant, approver, now).
GrantInTransaction = Callable[[sqlite3.Connection, TenantId, str, float], object]


def clock_time(ts: float) -> str:
    """``ts`` as ``HH:MM UTC`` (with the date when it is not today's)."""
    moment = datetime.fromtimestamp(ts, UTC)
    if moment.date() == datetime.now(UTC).date():
        return moment.strftime("%H:%M UTC")
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def normalize_code(text: str) -> str:
    """Upper case without spaces or dashes, as people retype codes."""
    return "".join(ch for ch in text.upper() if ch not in " -")


def new_code(length: int = CODE_LENGTH) -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


class PairingLocked(UserInputError):
    """The approver tried too many wrong codes; ``retry_after`` seconds until it may retry."""

    def __init__(self, actor: str, until: float, now: float) -> None:
        minutes = max(1, round((until - now) / 60))
        super().__init__(
            f"Too many wrong pairing codes: approvals by {actor} are locked for {minutes} "
            f"more minute{'s' if minutes != 1 else ''} (until {clock_time(until)})."
        )
        self.actor = actor
        self.until = until
        self.retry_after = until - now


@dataclass(frozen=True, slots=True)
class PairingCode:
    code: str
    tenant: TenantId
    chat_id: str
    display_name: str | None
    created_at: float
    expires_at: float
    status: str


@dataclass(frozen=True, slots=True)
class Issued:
    """A code handed out (``reused``: the live one again), or ``limited_until`` a new one."""

    code: PairingCode | None
    reused: bool = False
    limited_until: float | None = None


def _code(row: sqlite3.Row) -> PairingCode:
    return PairingCode(
        code=row["code"],
        tenant=TenantId.parse(row["tenant_id"]),
        chat_id=row["chat_id"],
        display_name=row["display_name"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        status=row["status"],
    )


class Pairing:
    """Issues and approves codes; ``grant`` records the access an approval gives."""

    def __init__(
        self,
        db: Database,
        grant: GrantInTransaction,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = db
        self._grant = grant
        self._clock = clock

    def issue_code(
        self, tenant: TenantId, *, chat_id: str, display_name: str | None = None
    ) -> Issued:
        """The tenant's live code, a new one, or when the next one may be asked for."""

        def write(conn: sqlite3.Connection) -> Issued:
            now = self._clock()
            _purge(conn, now)
            live = conn.execute(
                f"SELECT {_COLUMNS} FROM pairing_codes WHERE tenant_id = ? "
                "AND status = 'pending' AND expires_at > ? ORDER BY created_at DESC LIMIT 1",
                (str(tenant), now),
            ).fetchone()
            if live is not None:
                return Issued(_code(live), reused=True)
            recent = conn.execute(
                "SELECT created_at FROM pairing_codes WHERE tenant_id = ? AND created_at > ? "
                "ORDER BY created_at",
                (str(tenant), now - DAY_S),
            ).fetchall()
            if len(recent) >= CODES_PER_DAY:
                oldest_counted = float(recent[len(recent) - CODES_PER_DAY][0])
                return Issued(None, limited_until=oldest_counted + DAY_S)
            expires = now + CODE_TTL_S
            while True:  # a clash with a stored code is astronomically rare; draw again
                code = new_code()
                cur = conn.execute(
                    "INSERT OR IGNORE INTO pairing_codes (code, tenant_id, chat_id, display_name, "
                    "created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (code, str(tenant), chat_id, display_name, now, expires),
                )
                if cur.rowcount:
                    return Issued(
                        PairingCode(code, tenant, chat_id, display_name, now, expires, "pending")
                    )

        return self._db.write(write)

    def reply_for(self, conversation: Conversation) -> str:
        """The message for an unknown user: their code and how to get approved."""
        issued = self.issue_code(
            conversation.tenant,
            chat_id=conversation.chat_id,
            display_name=conversation.display_name,
        )
        if issued.code is None:
            assert issued.limited_until is not None
            return (
                "I only talk with people the operator has approved, and you have asked for "
                "several pairing codes today already. You can ask for a new one after "
                f"{clock_time(issued.limited_until)}."
            )
        code = issued.code
        return (
            "Hello! I only talk with people the operator has approved.\n"
            f"Your pairing code is {code.code} (valid until {clock_time(code.expires_at)}).\n"
            "Send it to the bot's admin; they approve it with "
            f"/pair approve {code.code} (or `mnemogate pairing approve {code.code}`).\n"
            "Until then I do not read or keep anything you write."
        )

    def approve(self, code: str, by: str) -> PairingCode:
        """Approve a pending code and grant its tenant access.

        A wrong, expired or used code is a failure of ``by`` (UserInputError saying how many
        attempts are left); too many lock ``by`` out (:class:`PairingLocked`).
        """
        wanted = normalize_code(code)

        def write(conn: sqlite3.Connection) -> PairingCode | UserInputError:
            now = self._clock()
            _purge(conn, now)
            locked = _locked_until(conn, by, now)
            if locked is not None:
                return PairingLocked(by, locked, now)
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM pairing_codes WHERE code = ?", (wanted,)
            ).fetchone()
            if row is None or row["status"] != "pending" or row["expires_at"] <= now:
                return _fail(conn, by, now, wanted, row)
            conn.execute(
                "UPDATE pairing_codes SET status = 'approved', approved_by = ?, approved_at = ? "
                "WHERE code = ? AND tenant_id = ?",
                (by, now, wanted, row["tenant_id"]),
            )
            approved = _code(row)
            self._grant(conn, approved.tenant, by, now)
            conn.execute("DELETE FROM pairing_failures WHERE actor_tenant_id = ?", (by,))
            return approved

        # The failure is committed before it is raised: it must count.
        outcome = self._db.write(write)
        if isinstance(outcome, UserInputError):
            raise outcome
        return outcome

    def lockout(self, actor: str) -> float | None:
        """Until when ``actor``'s approvals are locked, if they are."""
        return self._db.read(lambda c: _locked_until(c, actor, self._clock()))

    def list_pending(self) -> list[PairingCode]:
        """Every live, unapproved code (admin listing), oldest first."""
        rows = self._db.read(
            lambda c: c.execute(
                f"SELECT {_COLUMNS} FROM pairing_codes WHERE status = 'pending' "
                "AND expires_at > ? ORDER BY created_at, code",
                (self._clock(),),
            ).fetchall()
        )
        return [_code(r) for r in rows]


def _fail(
    conn: sqlite3.Connection, by: str, now: float, code: str, row: sqlite3.Row | None
) -> UserInputError:
    """Record a failed approval of ``by``; lock ``by`` out when there were too many."""
    conn.execute("INSERT INTO pairing_failures (actor_tenant_id, at) VALUES (?, ?)", (by, now))
    failures = conn.execute(
        "SELECT COUNT(*) FROM pairing_failures WHERE actor_tenant_id = ? AND at > ?",
        (by, now - LOCKOUT_WINDOW_S),
    ).fetchone()[0]
    if failures >= LOCKOUT_FAILURES:
        conn.execute(
            "INSERT INTO pairing_lockouts (actor_tenant_id, until) VALUES (?, ?) "
            "ON CONFLICT(actor_tenant_id) DO UPDATE SET until = excluded.until",
            (by, now + LOCKOUT_S),
        )
        conn.execute("DELETE FROM pairing_failures WHERE actor_tenant_id = ?", (by,))
        return PairingLocked(by, now + LOCKOUT_S, now)
    if row is not None and row["status"] == "pending":
        reason = (
            f"Pairing code {code} expired at {clock_time(row['expires_at'])}; "
            "the user gets a new one by writing to the bot again."
        )
    else:
        reason = f"No pending pairing code {code}: it is wrong, expired or already used."
    left = LOCKOUT_FAILURES - failures
    return UserInputError(
        f"{reason} {left} more wrong attempt{'s' if left != 1 else ''} lock approvals "
        f"for {round(LOCKOUT_S / 60)} minutes."
    )


def _locked_until(conn: sqlite3.Connection, actor: str, now: float) -> float | None:
    row = conn.execute(
        "SELECT until FROM pairing_lockouts WHERE actor_tenant_id = ? AND until > ?",
        (actor, now),
    ).fetchone()
    return None if row is None else float(row[0])


def _purge(conn: sqlite3.Connection, now: float) -> None:
    """Housekeeping: unapproved codes older than a day, stale failures, ended lockouts."""
    conn.execute(
        "DELETE FROM pairing_codes WHERE status != 'approved' AND created_at < ?", (now - DAY_S,)
    )
    conn.execute("DELETE FROM pairing_failures WHERE at < ?", (now - LOCKOUT_WINDOW_S,))
    conn.execute("DELETE FROM pairing_lockouts WHERE until <= ?", (now,))
