"""The holographic provider's fact store on state.db (migration 20): facts, entities, FTS.

:class:`providers.holographic.facts.FactStore` on SQLite. Three tables:

``holo_facts``
    one row per fact of a (tenant, bank); the content is unique within the bank. The HRR
    vector is a blob of ``dim`` float32 phases and ``dim`` is stored next to it, so a
    change of the configured dimension is detected per row (the provider re-encodes).
``holo_entities``
    (tenant, bank, normalised name, fact): entity lookups are equality on the name — never
    ``LIKE`` — so ``%`` or ``_`` in a name match only themselves.
``holo_facts_fts``
    FTS5 over content and tags; its ``scope_tok`` column holds one token naming the
    (tenant, bank), and every search is ``scope_tok : "<token>" AND (...)``, so FTS5 walks
    only that bank's posting list. The rowid is the fact id.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import time
from collections.abc import Sequence

from gateway.history.db import Database, migration, run_script
from gateway.tenants import TenantId
from providers.holographic.facts import Fact, FactChange, NewFact, clamp_trust, normalise_entity

_TERM = re.compile(r"[^\W_]+")
MAX_TERMS = 16


@migration(20, "holographic facts")
def _v20(conn: sqlite3.Connection) -> None:
    run_script(
        conn,
        """
        CREATE TABLE holo_facts (
            id         INTEGER PRIMARY KEY,
            tenant_id  TEXT NOT NULL,
            bank       TEXT NOT NULL,
            content    TEXT NOT NULL,
            category   TEXT NOT NULL,
            tags       TEXT NOT NULL DEFAULT '[]',
            entities   TEXT NOT NULL DEFAULT '[]',
            source     TEXT NOT NULL,
            trust      REAL NOT NULL,
            helpful    INTEGER NOT NULL DEFAULT 0,
            unhelpful  INTEGER NOT NULL DEFAULT 0,
            dim        INTEGER NOT NULL,
            vector     BLOB NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            UNIQUE (tenant_id, bank, content)
        );
        CREATE INDEX holo_facts_trust ON holo_facts (tenant_id, bank, trust DESC, id DESC);
        CREATE TABLE holo_entities (
            tenant_id TEXT NOT NULL,
            bank      TEXT NOT NULL,
            name      TEXT NOT NULL,
            fact_id   INTEGER NOT NULL REFERENCES holo_facts (id) ON DELETE CASCADE,
            PRIMARY KEY (tenant_id, bank, name, fact_id)
        );
        CREATE INDEX holo_entities_fact ON holo_entities (fact_id);
        CREATE VIRTUAL TABLE holo_facts_fts USING fts5(
            scope_tok, content, tags, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        """,
    )


def scope_token(tenant: TenantId, bank: str) -> str:
    """One FTS token naming (tenant, bank); letters and digits only, so it is never split."""
    return "s" + hashlib.sha256(f"{tenant}\x00{bank}".encode()).hexdigest()[:20]


class SqliteFactStore:
    """Facts in ``holo_facts``; every statement filters by tenant and bank."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def add(self, tenant: TenantId, bank: str, fact: NewFact) -> tuple[Fact, bool]:
        def insert(c: sqlite3.Connection) -> tuple[Fact, bool]:
            now = time.time()
            cursor = c.execute(
                "INSERT INTO holo_facts (tenant_id, bank, content, category, tags, entities, "
                "source, trust, dim, vector, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (tenant_id, bank, content) DO NOTHING",
                (
                    str(tenant),
                    bank,
                    fact.content,
                    fact.category,
                    json.dumps(list(fact.tags)),
                    json.dumps(list(fact.entities)),
                    fact.source,
                    clamp_trust(fact.trust),
                    fact.dim,
                    fact.vector,
                    now,
                    now,
                ),
            )
            created = cursor.rowcount == 1
            row = _row(c, tenant, bank, "content = ?", (fact.content,))
            assert row is not None  # inserted or already there, inside this transaction
            if created:
                _index(c, tenant, bank, row)
            return row, created

        return self.db.write(insert)

    def get(self, tenant: TenantId, bank: str, fact_id: int) -> Fact | None:
        return self.db.read(lambda c: _row(c, tenant, bank, "id = ?", (fact_id,)))

    def find(self, tenant: TenantId, bank: str, content: str) -> Fact | None:
        return self.db.read(lambda c: _row(c, tenant, bank, "content = ?", (content,)))

    def update(self, tenant: TenantId, bank: str, fact_id: int, change: FactChange) -> Fact | None:
        def apply(c: sqlite3.Connection) -> Fact | None:
            old = _row(c, tenant, bank, "id = ?", (fact_id,))
            if old is None:
                return None
            content = change.content if change.content is not None else old.content
            if content != old.content and _row(c, tenant, bank, "content = ?", (content,)):
                raise ValueError("another fact already says exactly this")
            c.execute(
                "UPDATE holo_facts SET content = ?, category = ?, tags = ?, entities = ?, "
                "trust = ?, helpful = helpful + ?, unhelpful = unhelpful + ?, dim = ?, "
                "vector = ?, updated_at = ? WHERE id = ? AND tenant_id = ? AND bank = ?",
                (
                    content,
                    change.category or old.category,
                    json.dumps(list(change.tags if change.tags is not None else old.tags)),
                    json.dumps(
                        list(change.entities if change.entities is not None else old.entities)
                    ),
                    clamp_trust(old.trust + change.trust_delta),
                    int(change.helpful is True),
                    int(change.helpful is False),
                    change.dim or old.dim,
                    change.vector if change.vector is not None else old.vector,
                    time.time(),
                    fact_id,
                    str(tenant),
                    bank,
                ),
            )
            new = _row(c, tenant, bank, "id = ?", (fact_id,))
            assert new is not None
            if (new.content, new.tags, new.entities) != (old.content, old.tags, old.entities):
                _unindex(c, tenant, bank, [fact_id])
                _index(c, tenant, bank, new)
            return new

        return self.db.write(apply)

    def remove(self, tenant: TenantId, bank: str, fact_id: int) -> bool:
        def delete(c: sqlite3.Connection) -> bool:
            if _row(c, tenant, bank, "id = ?", (fact_id,)) is None:
                return False
            _unindex(c, tenant, bank, [fact_id])
            c.execute(
                "DELETE FROM holo_facts WHERE id = ? AND tenant_id = ? AND bank = ?",
                (fact_id, str(tenant), bank),
            )
            return True

        return self.db.write(delete)

    def facts(
        self,
        tenant: TenantId,
        bank: str,
        *,
        category: str | None = None,
        min_trust: float = 0.0,
        limit: int | None = None,
    ) -> list[Fact]:
        where = "tenant_id = ? AND bank = ? AND trust >= ?"
        params: list[object] = [str(tenant), bank, min_trust]
        if category is not None:
            where += " AND category = ?"
            params.append(category)
        params.append(-1 if limit is None else limit)
        rows = self.db.read(
            lambda c: c.execute(
                f"SELECT * FROM holo_facts WHERE {where} ORDER BY trust DESC, id DESC LIMIT ?",
                params,
            ).fetchall()
        )
        return [_fact(r) for r in rows]

    def text_search(
        self, tenant: TenantId, bank: str, terms: Sequence[str], limit: int
    ) -> list[tuple[Fact, float]]:
        tokens = list(dict.fromkeys(t for term in terms for t in _TERM.findall(term.lower())))
        if not tokens:
            return []
        query = f'scope_tok : "{scope_token(tenant, bank)}" AND {{content tags}} : (' + (
            " OR ".join(f'"{t}"' for t in tokens[:MAX_TERMS]) + ")"
        )
        rows = self.db.read(
            lambda c: c.execute(
                "SELECT f.*, bm25(holo_facts_fts, 0.0, 1.0, 0.5) AS rank "
                "FROM holo_facts_fts JOIN holo_facts f ON f.id = holo_facts_fts.rowid "
                "WHERE holo_facts_fts MATCH ? AND f.tenant_id = ? AND f.bank = ? "
                "ORDER BY rank LIMIT ?",
                (query, str(tenant), bank, limit),
            ).fetchall()
        )
        return [(_fact(r), -float(r["rank"])) for r in rows]

    def with_entity(self, tenant: TenantId, bank: str, entity: str) -> list[Fact]:
        rows = self.db.read(
            lambda c: c.execute(
                "SELECT f.* FROM holo_entities e JOIN holo_facts f ON f.id = e.fact_id "
                "WHERE e.tenant_id = ? AND e.bank = ? AND e.name = ? "
                "AND f.tenant_id = e.tenant_id AND f.bank = e.bank ORDER BY f.id",
                (str(tenant), bank, normalise_entity(entity)),
            ).fetchall()
        )
        return [_fact(r) for r in rows]

    def count(self, tenant: TenantId, bank: str) -> int:
        row = self.db.read(
            lambda c: c.execute(
                "SELECT COUNT(*) FROM holo_facts WHERE tenant_id = ? AND bank = ?",
                (str(tenant), bank),
            ).fetchone()
        )
        return int(row[0])

    def total(self) -> int:
        row = self.db.read(lambda c: c.execute("SELECT COUNT(*) FROM holo_facts").fetchone())
        return int(row[0])

    def erase(self, tenant: TenantId) -> int:
        def delete(c: sqlite3.Connection) -> int:
            rows = c.execute(
                "SELECT id, bank FROM holo_facts WHERE tenant_id = ?", (str(tenant),)
            ).fetchall()
            by_bank: dict[str, list[int]] = {}
            for row in rows:
                by_bank.setdefault(row["bank"], []).append(int(row["id"]))
            for bank, ids in by_bank.items():
                _unindex(c, tenant, bank, ids)
            c.execute("DELETE FROM holo_entities WHERE tenant_id = ?", (str(tenant),))
            return int(
                c.execute("DELETE FROM holo_facts WHERE tenant_id = ?", (str(tenant),)).rowcount
            )

        return self.db.write(delete)


def _row(
    c: sqlite3.Connection, tenant: TenantId, bank: str, cond: str, args: tuple[object, ...]
) -> Fact | None:
    row = c.execute(
        f"SELECT * FROM holo_facts WHERE tenant_id = ? AND bank = ? AND {cond}",
        (str(tenant), bank, *args),
    ).fetchone()
    return _fact(row) if row is not None else None


def _fact(row: sqlite3.Row) -> Fact:
    return Fact(
        id=int(row["id"]),
        content=row["content"],
        category=row["category"],
        tags=tuple(json.loads(row["tags"])),
        entities=tuple(json.loads(row["entities"])),
        source=row["source"],
        trust=float(row["trust"]),
        helpful=int(row["helpful"]),
        unhelpful=int(row["unhelpful"]),
        dim=int(row["dim"]),
        vector=bytes(row["vector"]),
        created_at=float(row["created_at"]),
        updated_at=float(row["updated_at"]),
    )


def _index(c: sqlite3.Connection, tenant: TenantId, bank: str, fact: Fact) -> None:
    c.execute(
        "INSERT INTO holo_facts_fts (rowid, scope_tok, content, tags) VALUES (?, ?, ?, ?)",
        (fact.id, scope_token(tenant, bank), fact.content, " ".join(fact.tags)),
    )
    names = {normalise_entity(e) for e in fact.entities}
    c.executemany(
        "INSERT OR IGNORE INTO holo_entities (tenant_id, bank, name, fact_id) VALUES (?, ?, ?, ?)",
        [(str(tenant), bank, name, fact.id) for name in sorted(names) if name],
    )


def _unindex(c: sqlite3.Connection, tenant: TenantId, bank: str, ids: Sequence[int]) -> None:
    for fact_id in ids:
        c.execute("DELETE FROM holo_facts_fts WHERE rowid = ?", (fact_id,))
        c.execute(
            "DELETE FROM holo_entities WHERE tenant_id = ? AND bank = ? AND fact_id = ?",
            (str(tenant), bank, fact_id),
        )
