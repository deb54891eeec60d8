"""Migration 5 of state.db: access grants, pairing codes, approval lockouts, erasure confirmations.

``access_grants`` holds the tenants an admin allowed at run time (``/allow``, a pairing
approval); a revoked grant keeps its row with ``revoked_at`` set. ``pairing_codes`` holds the
one-time codes handed to unknown users (``status``: ``pending``, ``approved``, ``revoked``).
``pairing_failures`` records each wrong or expired code an approver tried, and
``pairing_lockouts`` when too many of them lock the approver out for a while.
``erasure_confirmations`` keeps the one live ``/forgetme`` confirmation code of a tenant.
The rules live in :mod:`gateway.access` and :mod:`gateway.privacy`.
"""

from __future__ import annotations

import sqlite3

from gateway.history.db import migration, run_script


@migration(5, "access grants, pairing codes and lockouts, erasure confirmations")
def _v5(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE access_grants (
            tenant_id   TEXT PRIMARY KEY,
            granted_by  TEXT,
            granted_at  REAL NOT NULL,
            revoked_at  REAL,
            revoked_by  TEXT
        );
        CREATE TABLE pairing_codes (
            code         TEXT PRIMARY KEY,
            tenant_id    TEXT NOT NULL,
            chat_id      TEXT NOT NULL,
            display_name TEXT,
            created_at   REAL NOT NULL,
            expires_at   REAL NOT NULL,
            status       TEXT NOT NULL DEFAULT 'pending',
            approved_by  TEXT,
            approved_at  REAL
        );
        CREATE INDEX pairing_codes_by_tenant ON pairing_codes(tenant_id, created_at);
        CREATE INDEX pairing_codes_by_status ON pairing_codes(status, expires_at);
        CREATE TABLE pairing_failures (
            id              INTEGER PRIMARY KEY,
            actor_tenant_id TEXT NOT NULL,
            at              REAL NOT NULL
        );
        CREATE INDEX pairing_failures_by_actor ON pairing_failures(actor_tenant_id, at);
        CREATE TABLE pairing_lockouts (
            actor_tenant_id TEXT PRIMARY KEY,
            until           REAL NOT NULL
        );
        CREATE TABLE erasure_confirmations (
            tenant_id  TEXT PRIMARY KEY,
            code       TEXT NOT NULL,
            expires_at REAL NOT NULL
        );
        """,
    )
