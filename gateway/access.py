"""Who may talk to the bot: allow-lists, admins and runtime grants (SPEC §8.3).

Default deny. A tenant is allowed when ``access.allow_all`` is on, when it is listed in
``access.allowed_users`` or ``access.admins`` (admins are always allowed), or when it holds
an active runtime grant (``/allow``, or an approved pairing code — see
:mod:`gateway.pairing`, reached through :attr:`AccessPolicy.pairing`). Tenants the
configuration lists cannot be revoked at run time: the configuration is their authority.
Grants are kept in ``access_grants``; a revoked grant keeps its row with ``revoked_at``.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from gateway.errors import ConfigError, MnemogateError, UserInputError
from gateway.history.db import Database
from gateway.observability import metrics
from gateway.pairing import OPERATOR, Pairing, PairingCode
from gateway.routing import Conversation
from gateway.settings import Settings
from gateway.tenants import TenantId

__all__ = ["OPERATOR", "AccessPolicy", "Grant", "NotRevocable", "erase_tenant", "export_records"]


class NotRevocable(UserInputError):
    """The tenant is allowed by the configuration, which a runtime revoke cannot change."""


@dataclass(frozen=True, slots=True)
class Grant:
    tenant: TenantId
    granted_by: str | None
    granted_at: float


def _parse_ids(values: Iterable[str], setting: str) -> frozenset[str]:
    ids = set()
    for value in values:
        try:
            ids.add(str(TenantId.parse(value)))
        except MnemogateError as exc:
            raise ConfigError(f"{setting}: {exc}") from None
    return frozenset(ids)


def insert_grant(conn: sqlite3.Connection, tenant: TenantId, by: str, now: float) -> bool:
    """Grant access inside the caller's transaction; False when a grant was already active."""
    cur = conn.execute(
        "INSERT INTO access_grants (tenant_id, granted_by, granted_at) VALUES (?, ?, ?) "
        "ON CONFLICT(tenant_id) DO UPDATE SET granted_by = excluded.granted_by, "
        "granted_at = excluded.granted_at, revoked_at = NULL, revoked_by = NULL "
        "WHERE access_grants.revoked_at IS NOT NULL",
        (str(tenant), by, now),
    )
    return cur.rowcount > 0


class AccessPolicy:
    """Access decisions over ``settings.access`` and the grants and codes in state.db."""

    def __init__(
        self, settings: Settings, db: Database, *, clock: Callable[[], float] = time.time
    ) -> None:
        access = settings.access
        self.allow_all = access.allow_all
        self._admins = _parse_ids(access.admins, "access.admins")
        self._listed = _parse_ids(access.allowed_users, "access.allowed_users") | self._admins
        self._db = db
        self._clock = clock
        self.pairing = Pairing(db, insert_grant, clock=clock)

    # --- decisions -----------------------------------------------------------------------
    def is_admin(self, tenant: TenantId) -> bool:
        return str(tenant) in self._admins

    def is_listed(self, tenant: TenantId) -> bool:
        """Allowed by the configuration (allowed_users or admins)."""
        return str(tenant) in self._listed

    def is_allowed(self, tenant: TenantId) -> bool:
        return self.allow_all or self.is_listed(tenant) or self.is_granted(tenant)

    def is_granted(self, tenant: TenantId) -> bool:
        row = self._db.read(
            lambda c: c.execute(
                "SELECT 1 FROM access_grants WHERE tenant_id = ? AND revoked_at IS NULL",
                (str(tenant),),
            ).fetchone()
        )
        return row is not None

    # --- grants ---------------------------------------------------------------------------
    def grant(self, tenant: TenantId, by: str) -> bool:
        """Allow ``tenant`` at run time (``/allow``); False when it already had a grant."""
        return self._db.write(lambda c: insert_grant(c, tenant, by, self._clock()))

    def revoke(self, tenant: TenantId, by: str) -> bool:
        """Withdraw a runtime grant and any pending code (``/deny``); False if there was none.

        Raises :class:`NotRevocable` for tenants the configuration allows.
        """
        if self.is_listed(tenant):
            setting = "access.admins" if self.is_admin(tenant) else "access.allowed_users"
            raise NotRevocable(
                f"{tenant} is allowed by the configuration ({setting}); it cannot be revoked "
                "at run time. Remove it there and restart."
            )

        def write(conn: sqlite3.Connection) -> bool:
            conn.execute(
                "UPDATE pairing_codes SET status = 'revoked' WHERE tenant_id = ? "
                "AND status = 'pending'",
                (str(tenant),),
            )
            cur = conn.execute(
                "UPDATE access_grants SET revoked_at = ?, revoked_by = ? "
                "WHERE tenant_id = ? AND revoked_at IS NULL",
                (self._clock(), by, str(tenant)),
            )
            return cur.rowcount > 0

        return self._db.write(write)

    def grants(self) -> list[Grant]:
        """Every active runtime grant (admin listing across tenants), oldest first."""
        rows = self._db.read(
            lambda c: c.execute(
                "SELECT tenant_id, granted_by, granted_at FROM access_grants "
                "WHERE revoked_at IS NULL ORDER BY granted_at, tenant_id"
            ).fetchall()
        )
        return [Grant(TenantId.parse(r[0]), r[1], r[2]) for r in rows]

    # --- pairing (see gateway.pairing) ----------------------------------------------------
    def pairing_reply(self, conversation: Conversation) -> str | None:
        """What to answer a user who may not talk to the bot: their pairing code in a DM;
        None in groups (stay silent) or when the tenant is allowed after all."""
        if conversation.chat_type != "dm" or self.is_allowed(conversation.tenant):
            return None
        metrics.pairing_request(conversation.tenant.platform)
        return self.pairing.reply_for(conversation)

    def approve(self, code: str, by: str) -> PairingCode:
        """Approve a pairing code as admin ``by`` (``OPERATOR`` from the CLI)."""
        return self.pairing.approve(code, by)

    def list_pending(self) -> list[PairingCode]:
        return self.pairing.list_pending()


# --- privacy (inside the caller's export / erasure transaction) ---------------------------
def export_records(conn: sqlite3.Connection, tenant: TenantId) -> dict[str, Any]:
    """The tenant's grant and pairing codes as plain data, for the export archive."""
    grant = conn.execute(
        "SELECT granted_by, granted_at, revoked_at, revoked_by FROM access_grants "
        "WHERE tenant_id = ?",
        (str(tenant),),
    ).fetchone()
    codes = conn.execute(
        "SELECT code, chat_id, display_name, created_at, expires_at, status, approved_by, "
        "approved_at FROM pairing_codes WHERE tenant_id = ? ORDER BY created_at",
        (str(tenant),),
    ).fetchall()
    return {
        "grant": dict(grant) if grant is not None else None,
        "pairing_codes": [dict(row) for row in codes],
    }


def erase_tenant(conn: sqlite3.Connection, tenant: TenantId) -> int:
    """Delete the tenant's access rows and its name from rows it acted on; rows touched."""
    tid = str(tenant)
    touched = 0
    for statement in (
        "DELETE FROM access_grants WHERE tenant_id = ?",
        "DELETE FROM pairing_codes WHERE tenant_id = ?",
        "DELETE FROM pairing_failures WHERE actor_tenant_id = ?",
        "DELETE FROM pairing_lockouts WHERE actor_tenant_id = ?",
        "UPDATE access_grants SET granted_by = NULL WHERE granted_by = ?",
        "UPDATE access_grants SET revoked_by = NULL WHERE revoked_by = ?",
        "UPDATE pairing_codes SET approved_by = NULL WHERE approved_by = ?",
    ):
        touched += conn.execute(statement, (tid,)).rowcount
    return touched
