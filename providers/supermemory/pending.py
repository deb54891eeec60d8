"""Sessions whose ingest has not succeeded yet, so an outage at a session's end loses nothing.

A session is ingested when it ends, in the gateway; if Supermemory is down then, the marker
stays and the next ``sync_turn`` of the same scope (in a worker, after a later turn) posts it
again. Posting a conversation again under the same ``conversationId`` replaces it, so a
retry can never duplicate. A marker is a small JSON file under
``$MNEMOGATE_HOME/supermemory/pending/<backend key>/`` holding the session's context (ids,
no message text: the text is read from the transcript store when posting); the gateway and
the workers share the home, as they share state.db. Erasure drops a tenant's markers.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from pathlib import Path

from providers.base import ProviderContext

_SAFE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


class PendingIngests:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _file(self, key: str, session_id: str) -> Path | None:
        if not (_SAFE.match(key) and _SAFE.match(session_id)) or session_id.startswith("."):
            return None
        return self.root / key / f"{session_id}.json"

    def add(self, ctx: ProviderContext, session_id: str, reason: str) -> None:
        path = self._file(ctx.backend_key, session_id)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"ctx": ctx.to_payload(), "session_id": session_id, "reason": reason}
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(record), encoding="utf-8")
        temporary.replace(path)

    def done(self, key: str, session_id: str) -> None:
        path = self._file(key, session_id)
        if path is not None:
            path.unlink(missing_ok=True)

    def waiting(self, key: str) -> list[tuple[ProviderContext, str, str]]:
        """The scope's sessions still to ingest: (their context, session id, end reason)."""
        folder = self.root / key if _SAFE.match(key) else None
        if folder is None or not folder.is_dir():
            return []
        found = []
        for path in sorted(folder.glob("*.json")):
            with contextlib.suppress(OSError, ValueError, KeyError):
                record = json.loads(path.read_text(encoding="utf-8"))
                ctx = ProviderContext.from_payload(record["ctx"])
                if ctx.backend_key == key:
                    found.append((ctx, str(record["session_id"]), str(record["reason"])))
        return found

    def drop(self, keys: set[str]) -> None:
        for key in keys:
            if _SAFE.match(key):
                shutil.rmtree(self.root / key, ignore_errors=True)
