"""Run the real gateway (App + Gateway + platform adapters) in-process against fakes."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import redis

from gateway.runner import gateway_running
from gateway.service import Gateway
from gateway.settings import Settings


def running_gateway(settings: Settings) -> AbstractAsyncContextManager[Gateway]:
    """Everything ``mnemogate run`` starts, minus signal handling and background loops."""
    return gateway_running(settings)


def state_db_mentions(home: Path, needles: list[str]) -> list[str]:
    """Every (table.column) in state.db whose text contains one of ``needles``."""
    conn = sqlite3.connect(home / "state.db")
    found = []
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            columns = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
            for column in columns:
                for needle in needles:
                    hit = conn.execute(
                        f'SELECT 1 FROM "{table}" WHERE CAST("{column}" AS TEXT) LIKE ? LIMIT 1',
                        (f"%{needle}%",),
                    ).fetchone()
                    if hit:
                        found.append(f"{table}.{column} ~ {needle}")
    finally:
        conn.close()
    return found


def files_mentioning(home: Path, needles: list[str]) -> list[str]:
    hits = []
    for path in home.rglob("*"):
        if path.is_file() and not path.name.startswith("state.db"):
            data = path.read_bytes()
            hits.extend(f"{path}: {n}" for n in needles if n.encode() in data)
        if any(n in path.name for n in needles):
            hits.append(str(path))
    return hits


def redis_keys_mentioning(url: str, needles: list[str]) -> list[str]:
    client = redis.Redis.from_url(url)
    try:
        return [
            key.decode()
            for key in client.scan_iter(count=1000)
            if any(n in key.decode() for n in needles)
        ]
    finally:
        client.close()
