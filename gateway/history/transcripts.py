"""Optional on-disk transcripts (``sessions.write_transcripts``) in the export format.

Each session is one JSONL line at ``tenants/<namespace>/transcripts/<session_id>.jsonl``,
rewritten atomically after every turn (directories 0700, files 0600). Incognito sessions
are never written to disk.
"""

from __future__ import annotations

import re
from pathlib import Path

from gateway.errors import StorageError
from gateway.fsutil import atomic_write_text, ensure_private_dir
from gateway.history.store import SessionStore
from gateway.history.transfer import SESSION_ID_PATTERN, exported_session
from gateway.tenants import TenantId, tenant_dir

_SAFE_ID = re.compile(SESSION_ID_PATTERN)


def transcript_path(home: Path, tenant: TenantId, session_id: str) -> Path:
    """Where the transcript of one of the tenant's sessions lives."""
    if not _SAFE_ID.match(session_id):
        raise StorageError(f"session id {session_id!r} cannot name a file")
    return tenant_dir(home, tenant) / "transcripts" / f"{session_id}.jsonl"


def write_transcript(
    home: Path, store: SessionStore, tenant: TenantId, session_id: str
) -> Path | None:
    """Rewrite the session's transcript; returns its path, or None for incognito sessions."""
    session = store.get_session(tenant, session_id)
    if session.incognito:
        return None
    path = transcript_path(home, tenant, session_id)
    for directory in (home / "tenants", tenant_dir(home, tenant), path.parent):
        ensure_private_dir(directory)
    line = exported_session(store, tenant, session_id).to_json_line()
    atomic_write_text(path, line + "\n")
    return path
