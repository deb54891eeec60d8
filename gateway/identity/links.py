"""The account → tenant link table and link codes on state.db (migration 30).

An *account* is the platform identity that sends a message (``telegram:123``); the *tenant*
is the memory owner it resolves to. An account with no row in ``account_links`` is its own
tenant; a linked account has one row naming the tenant (always an account that is not itself
linked, so resolution is one lookup and never a chain). :meth:`LinkStore.resolve` is the only
place that maps an account to its tenant.

Link codes (``/link``) are per issuer account: 8 characters from the pairing alphabet, valid
:data:`LINK_CODE_TTL_S`, at most :data:`LINK_CODES_PER_HOUR` per issuer, one live code at a
time, single use. A claim (``/link CODE`` from another account) ties the code to the
claimant, who must then confirm. Wrong codes count per claimant toward a lockout, with the
pairing thresholds. Every SQL statement about links lives in this module, so it ports to
another storage layer as one unit.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass

from gateway.errors import UserInputError
from gateway.history.db import Database, migration, run_script
from gateway.pairing import (
    LOCKOUT_FAILURES,
    LOCKOUT_S,
    LOCKOUT_WINDOW_S,
    clock_time,
    new_code,
    normalize_code,
)
from gateway.tenants import TenantId

LINK_CODE_TTL_S = 600.0
LINK_CODES_PER_HOUR = 5
HOUR_S = 3600.0


@migration(30, "account links and link codes")
def _v30(conn: sqlite3.Connection) -> None:
    # ``tenant_id`` columns name what erasure of that tenant must sweep: the links into a
    # tenant, and the codes and failures of an account.
    run_script(
        conn,
        """
        CREATE TABLE account_links (
            account_id TEXT PRIMARY KEY,
            tenant_id  TEXT NOT NULL,
            linked_at  REAL NOT NULL,
            linked_by  TEXT NOT NULL
        );
        CREATE INDEX account_links_by_tenant ON account_links(tenant_id);
        CREATE TABLE link_codes (
            code        TEXT PRIMARY KEY,
            tenant_id   TEXT NOT NULL,
            created_at  REAL NOT NULL,
            expires_at  REAL NOT NULL,
            status      TEXT NOT NULL DEFAULT 'pending',
            claimant_id TEXT
        );
        CREATE INDEX link_codes_by_issuer ON link_codes(tenant_id, created_at);
        CREATE TABLE link_failures (
            tenant_id TEXT NOT NULL,
            at        REAL NOT NULL
        );
        CREATE TABLE link_lockouts (
            tenant_id TEXT PRIMARY KEY,
            until     REAL NOT NULL
        );
        """,
    )


class LinkLocked(UserInputError):
    """The account tried too many wrong link codes."""


@dataclass(frozen=True, slots=True)
class LinkCode:
    code: str
    issuer: TenantId
    expires_at: float


@dataclass(frozen=True, slots=True)
class Link:
    account: TenantId
    tenant: TenantId
    linked_at: float
    linked_by: str


def _resolve(conn: sqlite3.Connection, account: TenantId) -> TenantId:
    row = conn.execute(
        "SELECT tenant_id FROM account_links WHERE account_id = ?", (str(account),)
    ).fetchone()
    return account if row is None else TenantId.parse(row[0])


def _members(conn: sqlite3.Connection, tenant: TenantId) -> list[TenantId]:
    rows = conn.execute(
        "SELECT account_id FROM account_links WHERE tenant_id = ? ORDER BY account_id",
        (str(tenant),),
    ).fetchall()
    return [TenantId.parse(r[0]) for r in rows]


class LinkStore:
    """Resolution, links and link codes; every call names the account(s) it is about."""

    def __init__(self, db: Database, *, clock: Callable[[], float] = time.time) -> None:
        self._db = db
        self._clock = clock

    # --- resolution ----------------------------------------------------------------------
    def resolve(self, account: TenantId) -> TenantId:
        """The tenant whose memory ``account`` uses (itself when it is not linked)."""
        return self._db.read(lambda c: _resolve(c, account))

    def accounts(self, tenant: TenantId) -> list[TenantId]:
        """Every account that resolves to ``tenant``: the tenant first, then linked ones."""
        return [tenant, *self._db.read(lambda c: _members(c, tenant))]

    def all_links(self) -> list[Link]:
        """Every link (operator listing across tenants)."""
        rows = self._db.read(
            lambda c: c.execute(
                "SELECT account_id, tenant_id, linked_at, linked_by FROM account_links "
                "ORDER BY tenant_id, account_id"
            ).fetchall()
        )
        return [Link(TenantId.parse(r[0]), TenantId.parse(r[1]), r[2], r[3]) for r in rows]

    # --- linking ---------------------------------------------------------------------------
    def check_linkable(self, issuer: TenantId, joining: TenantId) -> TenantId:
        """The tenant ``joining`` would move into; UserInputError when it cannot be linked."""
        return self._db.read(lambda c: _linkable(c, issuer, joining))

    def link_in(
        self,
        conn: sqlite3.Connection,
        issuer: TenantId,
        joining: TenantId,
        by: str,
    ) -> TenantId:
        """Link ``joining`` (and any account linked to it) into the issuer's tenant, inside
        the caller's transaction (the data merge runs in the same one); returns the tenant."""
        target = _linkable(conn, issuer, joining)
        now = self._clock()
        conn.execute(
            "UPDATE account_links SET tenant_id = ?, linked_at = ?, linked_by = ? "
            "WHERE tenant_id = ?",
            (str(target), now, by, str(joining)),
        )
        conn.execute(
            "INSERT INTO account_links (account_id, tenant_id, linked_at, linked_by) "
            "VALUES (?, ?, ?, ?)",
            (str(joining), str(target), now, by),
        )
        return target

    def unlink(self, account: TenantId) -> TenantId | None:
        """Detach ``account``: its future turns use its own tenant. Returns the tenant it
        was linked to, or None when it was not linked. The owner account of a shared tenant
        cannot be detached (its tenant *is* the shared memory): UserInputError naming the
        accounts to unlink instead."""

        def write(conn: sqlite3.Connection) -> TenantId | None:
            members = _members(conn, account)
            if members:
                names = ", ".join(str(m) for m in members)
                raise UserInputError(
                    f"{account} holds the shared memory that {names} use; unlink "
                    f"{'that account' if len(members) == 1 else 'those accounts'} instead."
                )
            was = _resolve(conn, account)
            if was == account:
                return None
            conn.execute("DELETE FROM account_links WHERE account_id = ?", (str(account),))
            return was

        return self._db.write(write)

    def forget_identity(self, conn: sqlite3.Connection, tenant: TenantId) -> int:
        """Drop every link into ``tenant`` (linked erasure), in the caller's transaction."""
        return conn.execute(
            "DELETE FROM account_links WHERE tenant_id = ?", (str(tenant),)
        ).rowcount

    # --- codes -----------------------------------------------------------------------------
    def issue_code(self, issuer: TenantId) -> LinkCode:
        """A new code for ``issuer`` (earlier live ones are voided); UserInputError when it
        asked for too many in the last hour."""

        def write(conn: sqlite3.Connection) -> LinkCode:
            now = self._clock()
            _purge(conn, now)
            recent = conn.execute(
                "SELECT created_at FROM link_codes WHERE tenant_id = ? AND created_at > ? "
                "ORDER BY created_at",
                (str(issuer), now - HOUR_S),
            ).fetchall()
            if len(recent) >= LINK_CODES_PER_HOUR:
                after = float(recent[len(recent) - LINK_CODES_PER_HOUR][0]) + HOUR_S
                raise UserInputError(
                    f"You asked for several link codes within the hour; ask again after "
                    f"{clock_time(after)}."
                )
            conn.execute(
                "UPDATE link_codes SET status = 'void' WHERE tenant_id = ? "
                "AND status IN ('pending', 'claimed')",
                (str(issuer),),
            )
            while True:  # a clash with a stored code is astronomically rare; draw again
                code = new_code()
                cur = conn.execute(
                    "INSERT OR IGNORE INTO link_codes (code, tenant_id, created_at, expires_at) "
                    "VALUES (?, ?, ?, ?)",
                    (code, str(issuer), now, now + LINK_CODE_TTL_S),
                )
                if cur.rowcount:
                    return LinkCode(code, issuer, now + LINK_CODE_TTL_S)

        return self._db.write(write)

    def claim(self, code: str, claimant: TenantId) -> LinkCode:
        """Tie a live code to ``claimant`` (who confirms next). A wrong code, a used one, or
        one issued by an account already sharing the claimant's tenant is a failure."""
        return self._use(code, claimant, from_status="pending", to_status="claimed")

    def redeem(self, code: str, claimant: TenantId) -> LinkCode:
        """Use up a code ``claimant`` claimed (the confirmation); failures count as above."""
        return self._use(code, claimant, from_status="claimed", to_status="used")

    def void(self, code: str) -> bool:
        """Invalidate a code (it was shown in a group); True when a live code was voided."""
        wanted = normalize_code(code)
        return self._db.write(
            lambda c: (
                c.execute(
                    "UPDATE link_codes SET status = 'void' WHERE code = ? "
                    "AND status IN ('pending', 'claimed')",
                    (wanted,),
                ).rowcount
                > 0
            )
        )

    def _use(self, code: str, claimant: TenantId, *, from_status: str, to_status: str) -> LinkCode:
        wanted = normalize_code(code)

        def write(conn: sqlite3.Connection) -> LinkCode | UserInputError:
            now = self._clock()
            _purge(conn, now)
            row = conn.execute(
                "SELECT until FROM link_lockouts WHERE tenant_id = ? AND until > ?",
                (str(claimant), now),
            ).fetchone()
            if row is not None:
                return _locked(float(row[0]))
            found = conn.execute(
                "SELECT tenant_id, expires_at, status, claimant_id FROM link_codes WHERE code = ?",
                (wanted,),
            ).fetchone()
            valid = (
                found is not None
                and found["status"] == from_status
                and found["expires_at"] > now
                and found["tenant_id"] != str(claimant)
                and (from_status == "pending" or found["claimant_id"] == str(claimant))
            )
            if not valid:
                return _fail(conn, claimant, now)
            conn.execute(
                "UPDATE link_codes SET status = ?, claimant_id = ? WHERE code = ?",
                (to_status, str(claimant), wanted),
            )
            return LinkCode(wanted, TenantId.parse(found["tenant_id"]), found["expires_at"])

        outcome = self._db.write(write)  # a failure is committed before it is raised
        if isinstance(outcome, UserInputError):
            raise outcome
        return outcome


def _linkable(conn: sqlite3.Connection, issuer: TenantId, joining: TenantId) -> TenantId:
    target = _resolve(conn, issuer)
    if _resolve(conn, joining) == target:
        raise UserInputError(f"{joining} and {issuer} already share one memory.")
    if _resolve(conn, joining) != joining:
        raise UserInputError(
            f"{joining} is linked to {_resolve(conn, joining)} already; /unlink it first."
        )
    return target


def _locked(until: float) -> LinkLocked:
    return LinkLocked(
        f"Too many wrong link codes: linking is locked for this account until {clock_time(until)}."
    )


def _fail(conn: sqlite3.Connection, claimant: TenantId, now: float) -> UserInputError:
    conn.execute("INSERT INTO link_failures (tenant_id, at) VALUES (?, ?)", (str(claimant), now))
    failures = conn.execute(
        "SELECT COUNT(*) FROM link_failures WHERE tenant_id = ? AND at > ?",
        (str(claimant), now - LOCKOUT_WINDOW_S),
    ).fetchone()[0]
    if failures >= LOCKOUT_FAILURES:
        conn.execute(
            "INSERT INTO link_lockouts (tenant_id, until) VALUES (?, ?) "
            "ON CONFLICT(tenant_id) DO UPDATE SET until = excluded.until",
            (str(claimant), now + LOCKOUT_S),
        )
        conn.execute("DELETE FROM link_failures WHERE tenant_id = ?", (str(claimant),))
        return _locked(now + LOCKOUT_S)
    left = LOCKOUT_FAILURES - failures
    return UserInputError(
        f"That link code is wrong, expired or already used. {left} more wrong "
        f"attempt{'s' if left != 1 else ''} lock linking for {round(LOCKOUT_S / 60)} minutes."
    )


def _purge(conn: sqlite3.Connection, now: float) -> None:
    """Housekeeping: codes older than a day, stale failures, ended lockouts."""
    conn.execute("DELETE FROM link_codes WHERE created_at < ?", (now - 86_400.0,))
    conn.execute("DELETE FROM link_failures WHERE at < ?", (now - LOCKOUT_WINDOW_S,))
    conn.execute("DELETE FROM link_lockouts WHERE until <= ?", (now,))
