"""state.db: one SQLite file in WAL mode, a connection per thread, versioned migrations.

Writers serialise on SQLite's lock; ``busy_timeout`` waits for it and :func:`retry_busy`
retries the rare ``database is locked`` that escapes it (WAL checkpoint races).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from tenacity import retry, retry_if_exception, stop_after_attempt, wait_random_exponential

from gateway.errors import StorageError
from gateway.fsutil import ensure_private_dir, touch_private

T = TypeVar("T")
Migration = Callable[[sqlite3.Connection], None]
_MIGRATIONS: list[tuple[int, str, Migration]] = []


def migration(version: int, name: str) -> Callable[[Migration], Migration]:
    """Register a schema migration; versions are applied in order, each exactly once."""

    def register(func: Migration) -> Migration:
        if any(v == version for v, _, _ in _MIGRATIONS):
            raise RuntimeError(f"migration {version} registered twice")
        _MIGRATIONS.append((version, name, func))
        _MIGRATIONS.sort(key=lambda item: item[0])
        return func

    return register


def _is_busy(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and (
        "locked" in str(exc) or "busy" in str(exc)
    )


retry_busy = retry(
    retry=retry_if_exception(_is_busy),
    stop=stop_after_attempt(6),
    wait=wait_random_exponential(multiplier=0.02, max=0.5),
    reraise=True,
)


class Database:
    """Opens ``state.db``, applies migrations, hands out per-thread connections."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        ensure_private_dir(path.parent)
        touch_private(path)
        try:
            self._migrate()
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open or migrate {path}: {exc}") from exc

    def connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path, timeout=10.0, isolation_level=None, check_same_thread=False
            )
            conn.row_factory = sqlite3.Row
            retry_busy(conn.execute)("PRAGMA journal_mode=WAL")  # does not wait on busy
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=10000")
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT on this thread's connection; ROLLBACK on error."""
        conn = self.connection()
        _begin(conn)
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")

    def write(self, func: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``func`` in one immediate transaction, retrying when the database is busy."""

        @retry_busy
        def attempt() -> T:
            with self.transaction() as conn:
                return func(conn)

        return attempt()

    def read(self, func: Callable[[sqlite3.Connection], T]) -> T:
        return retry_busy(func)(self.connection())

    @property
    def schema_version(self) -> int:
        row = self.connection().execute("PRAGMA user_version").fetchone()
        return int(row[0])

    def quick_check(self) -> list[str]:
        """``PRAGMA quick_check``: an empty list when every page and index is sound.

        A damaged page can also make the pragma itself fail; that is reported as a problem.
        """
        try:
            rows = self.connection().execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError as exc:
            return [str(exc)]
        lines = [line for row in rows for line in str(row[0]).splitlines()]
        problems = [line for line in lines if line != "ok" and not line.startswith("***")]
        return problems

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()

    def _migrate(self) -> None:
        from gateway.history import schema  # noqa: F401  (registers the migrations)

        conn = self.connection()
        _begin(conn)
        try:
            current = int(conn.execute("PRAGMA user_version").fetchone()[0])
            for version, _name, func in _MIGRATIONS:
                if version > current:
                    func(conn)
                    conn.execute(f"PRAGMA user_version={int(version)}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def run_script(conn: sqlite3.Connection, script: str) -> None:
    """Execute several statements inside the caller's transaction.

    ``executescript`` would commit the open transaction first, which breaks migrations.
    """
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            conn.execute(pending)
            pending = ""
    if pending.strip():
        raise StorageError(f"incomplete SQL statement: {pending.strip()[:80]}")


@retry_busy
def _begin(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
