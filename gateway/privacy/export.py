"""Per-tenant data export (SPEC §11): the archive behind ``/export`` and ``tenants export``.

One zip archive (created 0600) holding

* ``manifest.json`` — format and version, tenant, namespace, creation time, counts;
* ``tenant.json`` — the tenant record, its preferences, access grant and pairing codes;
* ``sessions.jsonl`` — every session, in the ``mnemogate sessions export`` format;
* ``pending_writes.json`` — memory writes staged for approval, with their state;
* ``files/…`` — every file under ``tenants/<namespace>/``: the memory files of every scope
  with their metadata sidecars and backups, and transcripts (lock files and symlinks left out).
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from gateway import access, fsutil
from gateway.errors import NotFound, UserInputError
from gateway.history.db import Database
from gateway.history.store import SessionStore
from gateway.history.transfer import export_lines
from gateway.settings import Settings
from gateway.tenants import TenantId, tenant_dir

EXPORT_VERSION = 1


@contextmanager
def opened_database(settings: Settings, db: Database | None) -> Iterator[Database]:
    """``db`` as it is, or state.db opened for the block and closed after it."""
    if db is not None:
        yield db
        return
    opened = Database(settings.state_db)
    try:
        yield opened
    finally:
        opened.close()


def _tenant_files(home: Path, tenant: TenantId) -> list[Path]:
    """Regular files under the tenant's directory (no symlinks followed, no lock files)."""
    root = tenant_dir(home, tenant)
    found = []
    for directory, _dirs, files in os.walk(root, followlinks=False):
        for name in files:
            path = Path(directory) / name
            if not name.endswith(".lock") and path.is_file() and not path.is_symlink():
                found.append(path)
    return sorted(found)


def _rows(conn: sqlite3.Connection, sql: str, tenant: TenantId) -> list[dict[str, Any]]:
    return [dict(row) for row in conn.execute(sql, (str(tenant),)).fetchall()]


def _entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, datetime.now(UTC).timetuple()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o600 << 16
    return info


def _write_archive(handle: IO[bytes], settings: Settings, tenant: TenantId, db: Database) -> None:
    conn = db.connection()
    record = _rows(conn, "SELECT * FROM tenants WHERE id = ?", tenant)
    prefs = _rows(conn, "SELECT * FROM tenant_prefs WHERE tenant_id = ?", tenant)
    pending = _rows(conn, "SELECT * FROM pending_writes WHERE tenant_id = ? ORDER BY id", tenant)
    records = access.export_records(conn, tenant)
    files = _tenant_files(settings.home, tenant)
    if not (record or files or records["grant"] or records["pairing_codes"] or pending):
        raise NotFound(f"nothing is stored for {tenant}")
    base = tenant_dir(settings.home, tenant)
    counts = {"memory_files": 0, "sessions": 0, "pending_writes": len(pending)}
    counts["pairing_codes"] = len(records["pairing_codes"])
    with zipfile.ZipFile(handle, "w") as archive:
        with archive.open(_entry("sessions.jsonl"), "w") as sessions:
            for line in export_lines(SessionStore(db), tenant):
                sessions.write(line.encode("utf-8"))
                counts["sessions"] += 1
        for path in files:
            archive.writestr(
                _entry(f"files/{path.relative_to(base).as_posix()}"), path.read_bytes()
            )
            counts["memory_files"] += 1
        about = {"tenant": record[0] if record else None, "preferences": prefs, **records}
        archive.writestr(_entry("tenant.json"), _json(about))
        archive.writestr(_entry("pending_writes.json"), _json(pending))
        manifest = {
            "format": "mnemogate-export",
            "version": EXPORT_VERSION,
            "tenant": str(tenant),
            "namespace": tenant.namespace,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "counts": counts,
        }
        archive.writestr(_entry("manifest.json"), _json(manifest))


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def export_name(tenant: TenantId) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"mnemogate-export-{tenant.namespace}-{stamp}.zip"


def export_bytes(settings: Settings, tenant: TenantId, *, db: Database | None = None) -> bytes:
    """The export archive in memory (for sending as a chat document)."""
    buffer = io.BytesIO()
    with opened_database(settings, db) as opened:
        _write_archive(buffer, settings, tenant, opened)
    return buffer.getvalue()


def export_tenant(
    settings: Settings, tenant: TenantId, *, out: Path | None = None, db: Database | None = None
) -> Path:
    """Write the tenant's archive (0600) and return its path.

    ``out``: an existing directory (a named file is created in it), a file path that does
    not exist yet, or None for a fresh private temporary directory. NotFound when nothing
    is stored for the tenant.
    """
    if out is None:
        target = Path(tempfile.mkdtemp(prefix="mnemogate-export-")) / export_name(tenant)
    elif out.is_dir():
        target = out / export_name(tenant)
    else:
        target = out
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, fsutil.FILE_MODE)
    except FileExistsError:
        raise UserInputError(f"{target} already exists; choose another --out") from None
    except OSError as exc:
        raise UserInputError(f"cannot create {target}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle, opened_database(settings, db) as opened:
            _write_archive(handle, settings, tenant, opened)
    except BaseException:
        target.unlink(missing_ok=True)
        if out is None:
            target.parent.rmdir()
        raise
    return target
