"""Titles and lineage of a tenant's sessions: unique titles, continuations, resume targets.

Every way a title is stored (generated, ``/title``, ``sessions rename``, ``sessions import``)
goes through :func:`title_problem`: titles are shown to the model (search results) and in
listings, so they are capped at :data:`MAX_TITLE_CHARS`, kept on one line, and scanned.
"""

from __future__ import annotations

import logging
import sqlite3
import time

from gateway.errors import NotFound, UserInputError
from gateway.history import endings
from gateway.history.db import Database
from gateway.security.scanner import scan
from gateway.tenants import TenantId

log = logging.getLogger(__name__)
MAX_TITLE_CHARS = 100


def title_problem(title: str) -> str | None:
    """Why ``title`` may not be stored, or None when it may."""
    if not title.strip() or len(title) > MAX_TITLE_CHARS:
        return f"a title must be 1–{MAX_TITLE_CHARS} characters (this one has {len(title):,})"
    if any(ch in title for ch in "\r\n\x00"):
        return "a title must be one line"
    scanned = scan(title)
    if scanned.blocked:
        return f"the title was refused by the security scan: {scanned.describe()}"
    return None


def check_title(title: str) -> str:
    """``title`` when it may be stored; :class:`UserInputError` saying why not otherwise."""
    problem = title_problem(title)
    if problem is not None:
        raise UserInputError(problem[0].upper() + problem[1:] + ".")
    return title


def title_taken(
    conn: sqlite3.Connection, tenant: TenantId, title: str, except_id: str | None = None
) -> bool:
    row = conn.execute(
        "SELECT id FROM sessions WHERE tenant_id = ? AND title = ? AND id IS NOT ?",
        (str(tenant), title, except_id),
    ).fetchone()
    return row is not None


def unique_title(
    conn: sqlite3.Connection, tenant: TenantId, title: str, except_id: str | None = None
) -> str:
    """``title``, or ``title (2)``, ``title (3)`` … whichever this tenant has not used."""
    candidate, n = title, 2
    while title_taken(conn, tenant, candidate, except_id):
        candidate, n = f"{title} ({n})", n + 1
    return candidate


def set_generated_title(db: Database, tenant: TenantId, session_id: str, title: str) -> str | None:
    """Give an untitled session a (uniquified) title; None when it already had one."""

    def write(conn: sqlite3.Connection) -> str | None:
        row = conn.execute(
            "SELECT title FROM sessions WHERE tenant_id = ? AND id = ?", (str(tenant), session_id)
        ).fetchone()
        if row is None:
            raise NotFound(f"no session {session_id!r} for {tenant}")
        if row["title"] or not title:
            return None
        problem = title_problem(title)
        if problem is not None:
            log.warning("generated title for %s not stored: %s", tenant.namespace, problem)
            return None
        final = unique_title(conn, tenant, title, session_id)
        conn.execute(
            "UPDATE sessions SET title = ? WHERE tenant_id = ? AND id = ?",
            (final, str(tenant), session_id),
        )
        return final

    return db.write(write)


def set_title(db: Database, tenant: TenantId, session_id: str, title: str) -> str:
    """A title chosen by the user; refused when another of their sessions has it, or when
    :func:`title_problem` objects."""
    check_title(title)

    def write(conn: sqlite3.Connection) -> str:
        if title_taken(conn, tenant, title, session_id):
            raise UserInputError(f"You already have a session titled {title!r}.")
        cur = conn.execute(
            "UPDATE sessions SET title = ? WHERE tenant_id = ? AND id = ?",
            (title, str(tenant), session_id),
        )
        if cur.rowcount == 0:
            raise NotFound(f"no session {session_id!r} for {tenant}")
        return title

    return db.write(write)


def lineage_root(conn: sqlite3.Connection, tenant: TenantId, session_id: str) -> str:
    """The first ancestor of ``session_id`` (itself when it has no parent)."""
    row = conn.execute(
        """
        WITH RECURSIVE up(id, parent_id) AS (
            SELECT id, parent_id FROM sessions WHERE tenant_id = ? AND id = ?
            UNION ALL
            SELECT s.id, s.parent_id FROM sessions s JOIN up ON s.id = up.parent_id
            WHERE s.tenant_id = ?
        )
        SELECT id FROM up WHERE parent_id IS NULL LIMIT 1
        """,
        (str(tenant), session_id, str(tenant)),
    ).fetchone()
    if row is None:
        raise NotFound(f"no session {session_id!r} for {tenant}")
    return str(row["id"])


def newest_in_lineage(conn: sqlite3.Connection, tenant: TenantId, session_id: str) -> str:
    """The newest session descending from ``session_id``'s lineage root."""
    root = lineage_root(conn, tenant, session_id)
    row = conn.execute(
        """
        WITH RECURSIVE down(id) AS (
            SELECT ? UNION ALL
            SELECT s.id FROM sessions s JOIN down ON s.parent_id = down.id WHERE s.tenant_id = ?
        )
        SELECT s.id FROM sessions s JOIN down ON s.id = down.id
        WHERE s.tenant_id = ? ORDER BY s.started_at DESC, s.rowid DESC LIMIT 1
        """,
        (root, str(tenant), str(tenant)),
    ).fetchone()
    return str(row["id"])


def resolve_resume_target(db: Database, tenant: TenantId, ref: str, scope_key: str) -> str:
    """A session id or title (in this scope) → the newest continuation of its lineage."""

    def query(conn: sqlite3.Connection) -> str:
        row = conn.execute(
            "SELECT id FROM sessions WHERE tenant_id = ? AND scope_key = ? "
            "AND (id = ? OR title = ?) ORDER BY (id = ?) DESC LIMIT 1",
            (str(tenant), scope_key, ref, ref, ref),
        ).fetchone()
        if row is None:
            row = conn.execute(
                "SELECT id FROM sessions WHERE tenant_id = ? AND scope_key = ? "
                "AND title LIKE ? ESCAPE '\\' ORDER BY started_at DESC LIMIT 1",
                (str(tenant), scope_key, _like_prefix(ref)),
            ).fetchone()
        if row is None:
            raise NotFound(f"No session called {ref!r}. Send /sessions to see them.")
        return newest_in_lineage(conn, tenant, str(row["id"]))

    return db.read(query)


def reopen(
    db: Database, tenant: TenantId, session_id: str, session_key: str, *, notify: bool = False
) -> list[int]:
    """End the live session of ``session_key`` and make ``session_id`` the live one; the
    outbox rows telling the provider (``notify``: one is configured), to run after commit."""

    def write(conn: sqlite3.Connection) -> list[int]:
        live = conn.execute(
            "SELECT id FROM sessions WHERE tenant_id = ? AND session_key = ? "
            "AND ended_at IS NULL AND id != ?",
            (str(tenant), session_key, session_id),
        ).fetchall()
        cur = conn.execute(
            "UPDATE sessions SET ended_at = NULL, end_reason = NULL, session_key = ?, "
            "active_at = ? WHERE tenant_id = ? AND id = ?",
            (session_key, time.time(), str(tenant), session_id),
        )
        if cur.rowcount == 0:
            raise NotFound(f"no session {session_id!r} for {tenant}")
        rows: list[int] = []
        for row in live:
            rows += endings.end(
                conn, tenant, row["id"], "resume", notify=notify, successor=session_id
            )
        return rows

    return db.write(write)


def freeze_prompt(
    db: Database, tenant: TenantId, session_id: str, system_prompt: str, tools_json: str
) -> None:
    """Store the frozen prompt of a session that has none yet (imported ones); a session
    that already has its prompt keeps it — frozen means frozen."""
    db.write(
        lambda c: c.execute(
            "UPDATE sessions SET system_prompt = ?, tools_json = ? "
            "WHERE tenant_id = ? AND id = ? AND system_prompt = ''",
            (system_prompt, tools_json, str(tenant), session_id),
        )
    )


def _like_prefix(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


def scope_sessions(
    db: Database, tenant: TenantId, scope_key: str, limit: int = 10
) -> list[sqlite3.Row]:
    """The tenant's newest sessions in one scope (DM or a group), with message counts."""
    return db.read(
        lambda c: c.execute(
            "SELECT s.id, s.title, s.started_at, s.ended_at, s.parent_id, s.incognito, "
            "(SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id AND m.tenant_id = ?) "
            "AS message_count FROM sessions s WHERE s.tenant_id = ? AND s.scope_key = ? "
            "ORDER BY s.started_at DESC, s.rowid DESC LIMIT ?",
            (str(tenant), str(tenant), scope_key, limit),
        ).fetchall()
    )
