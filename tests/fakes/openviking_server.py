"""A fake OpenViking server (trusted mode) over HTTP: per-user spaces, sessions, admin API.

Modelled on the server's routers (``openviking/server/routers``): answers are
``{"status": "ok", "result": …}`` or ``{"status": "error", "error": {"code", "message"}}``
with the HTTP status of the error. Every request must carry ``X-OpenViking-Account`` and
``X-OpenViking-User`` (trusted mode) and, when ``api_key`` is set, that key. Each user owns
``viking://user/<user>/``: a URI in another user's space answers 403 PERMISSION_DENIED, the
uid-less ``viking://user/peers/…``/``viking://user/memories/…`` shorthands 400 INVALID_URI.
Messages go only to a session created before (``POST /api/v1/sessions``; the real 0.5.2
server would create it on the first message, the fake is stricter so the provider's
explicit creation is tested); committing a session "extracts" one memory per user
message, ``<user> said: <text>``, under
``memories/events/``. ``admin_api`` False answers the admin API as a trusted-mode server
does (0.5.2 answers 404 "User not found" for an unregistered user; older ones 403).
Deleting the user root itself is refused (403), as on the real server: erase deletes its
top-level directories.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tests.fakes.http_fake import Answer, FakeHTTPServer, Request

_WORD = re.compile(r"\w{3,}")
TRUSTED_ADMIN = "Admin API is unavailable in trusted mode."


class VikingError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


@dataclass
class SessionRec:
    user: str
    session_id: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    commits: int = 0


class FakeOpenViking(FakeHTTPServer):
    error_field = "error"
    name = "fake-openviking"

    def __init__(self, port: int = 0, *, api_key: str | None = "root-key", admin_api: bool = True):
        super().__init__(port)
        self.api_key = api_key
        self.admin_api = admin_api
        self.files: dict[str, str] = {}  # uri → content (directories are implied)
        self.sessions: dict[tuple[str, str], SessionRec] = {}
        self.deleted_users: list[tuple[str, str]] = []
        self._ids = itertools.count(1)

    # -- inspection --------------------------------------------------------------------------

    def user_files(self, user: str) -> dict[str, str]:
        prefix = f"viking://user/{user}/"
        with self.lock:
            return {uri: text for uri, text in self.files.items() if uri.startswith(prefix)}

    # -- routing -----------------------------------------------------------------------------

    def route(self, request: Request) -> Answer:
        try:
            return 200, {"status": "ok", "result": self._dispatch(request)}
        except VikingError as exc:
            error = {"code": exc.code, "message": str(exc)}
            return exc.status, {"status": "error", "error": error}

    def _dispatch(self, r: Request) -> Any:
        if r.path == "/health":
            return {"healthy": True}
        if self.api_key is not None and r.header("x-api-key") != self.api_key:
            raise VikingError(401, "UNAUTHENTICATED", "missing or invalid API key")
        account, user = r.header("x-openviking-account"), r.header("x-openviking-user")
        if not account or not user:
            raise VikingError(
                400,
                "INVALID_ARGUMENT",
                "Trusted mode requests must include X-OpenViking-Account and X-OpenViking-User",
            )
        admin = re.fullmatch(r"/api/v1/admin/accounts/([^/]+)/users/([^/]+)", r.path)
        if admin and r.method == "DELETE":
            if not self.admin_api:
                raise VikingError(403, "PERMISSION_DENIED", TRUSTED_ADMIN + " (trusted mode)")
            self.deleted_users.append((admin.group(1), admin.group(2)))
            return {"deleted": True}
        session = re.fullmatch(r"/api/v1/sessions/([A-Za-z0-9_-]+)(/messages|/commit)?", r.path)
        if session:
            return self._session(r, user, session.group(1), session.group(2) or "")
        handler = {
            ("POST", "/api/v1/search/find"): self._find,
            ("GET", "/api/v1/content/read"): lambda r, u: self._read(r, u, None),
            ("GET", "/api/v1/content/abstract"): lambda r, u: self._read(r, u, 200),
            ("GET", "/api/v1/content/overview"): lambda r, u: self._read(r, u, 1000),
            ("POST", "/api/v1/content/write"): self._write,
            ("GET", "/api/v1/fs/ls"): lambda r, u: self._list(r, u, recursive=False),
            ("GET", "/api/v1/fs/tree"): lambda r, u: self._list(r, u, recursive=True),
            ("GET", "/api/v1/fs/stat"): self._stat,
            ("DELETE", "/api/v1/fs"): self._remove,
            ("POST", "/api/v1/resources"): self._add_resource,
            ("POST", "/api/v1/sessions"): self._create_session,
            ("GET", "/api/v1/sessions"): self._list_sessions,
        }.get((r.method, r.path))
        if handler is None:
            raise VikingError(404, "NOT_FOUND", f"no route {r.method} {r.path}")
        return handler(r, user)

    # -- URIs and files ------------------------------------------------------------------------

    def _check(self, uri: Any, user: str) -> str:
        """The caller may use ``uri``: their own space or the account's resources."""
        if not isinstance(uri, str) or not uri.startswith("viking://"):
            raise VikingError(400, "INVALID_URI", f"not a viking:// URI: {uri!r}")
        parts = uri[len("viking://") :].split("/")
        if parts[0] == "user":
            if len(parts) < 2 or parts[1] in ("", "peers", "memories", "resources"):
                raise VikingError(400, "INVALID_URI", f"{uri}: the user id is required")
            if parts[1] != user:
                raise VikingError(403, "PERMISSION_DENIED", f"{uri} is not in {user}'s space")
        elif parts[0] not in ("resources",):
            raise VikingError(403, "PERMISSION_DENIED", f"{uri} is not accessible")
        return uri

    def _find(self, r: Request, user: str) -> Any:
        target = self._check(r.body.get("target_uri") or f"viking://user/{user}/", user)
        words = set(_WORD.findall(str(r.body["query"]).lower()))
        hits: list[dict[str, Any]] = []
        for uri, text in self.files.items():
            overlap = words & set(_WORD.findall(text.lower()))
            if uri.startswith(target) and overlap:
                score = len(overlap) / max(1, len(words))
                hits.append({"uri": uri, "abstract": text[:200], "score": score, "level": 2})
        hits.sort(key=lambda hit: -hit["score"])
        hits = hits[: int(r.body.get("limit", 10))]
        memories = [h for h in hits if "/memories/" in h["uri"]]
        return {
            "memories": memories,
            "resources": [h for h in hits if h not in memories],
            "skills": [],
        }

    def _read(self, r: Request, user: str, limit: int | None) -> Any:
        uri = self._check(r.arg("uri"), user)
        if uri not in self.files:
            raise VikingError(404, "NOT_FOUND", f"{uri} not found")
        return self.files[uri][:limit] if limit else self.files[uri]

    def _write(self, r: Request, user: str) -> Any:
        uri = self._check(r.body["uri"], user)
        if uri in self.files and r.body.get("mode", "replace") == "create":
            raise VikingError(409, "ALREADY_EXISTS", f"{uri} already exists")
        self.files[uri] = str(r.body["content"])
        return {"uri": uri, "written_bytes": len(self.files[uri].encode())}

    def _children(self, uri: str) -> list[str]:
        prefix = uri if uri.endswith("/") else uri + "/"
        return [u for u in self.files if u.startswith(prefix)]

    def _list(self, r: Request, user: str, *, recursive: bool) -> Any:
        uri = self._check(r.arg("uri"), user)
        prefix = uri if uri.endswith("/") else uri + "/"
        entries: dict[str, dict[str, Any]] = {}
        for path in self._children(uri):
            rest = path[len(prefix) :]
            if recursive or "/" not in rest:
                entries[path] = {"uri": path, "isDir": False, "abstract": self.files[path][:100]}
            else:  # the real server lists directories without a trailing slash
                child = prefix + rest.split("/", 1)[0]
                entries[child] = {"uri": child, "isDir": True, "abstract": ""}
        if prefix == f"viking://user/{user}/" and any(k[0] == user for k in self.sessions):
            entries[prefix + "sessions"] = {"uri": prefix + "sessions", "isDir": True}
        return sorted(entries.values(), key=lambda e: e["uri"])

    def _stat(self, r: Request, user: str) -> Any:
        uri = self._check(r.arg("uri"), user)
        if uri in self.files:
            return {"uri": uri, "isDir": False, "size": len(self.files[uri])}
        if self._children(uri):
            return {"uri": uri, "isDir": True}
        raise VikingError(404, "NOT_FOUND", f"{uri} not found")

    def _remove(self, r: Request, user: str) -> Any:
        uri = self._check(r.arg("uri"), user)
        if uri.rstrip("/") == f"viking://user/{user}":
            raise VikingError(
                403,
                "PERMISSION_DENIED",
                "Deleting a namespace root requires root access; use a concrete content path",
            )
        if uri.rstrip("/") == f"viking://user/{user}/sessions":  # where sessions live
            mine = [key for key in self.sessions if key[0] == user]
            for key in mine:
                del self.sessions[key]
            return {"uri": uri, "estimated_deleted_count": len(mine)}
        if uri in self.files:
            del self.files[uri]
            return {"uri": uri, "estimated_deleted_count": 1}
        children = self._children(uri)
        if not children:
            raise VikingError(404, "NOT_FOUND", f"{uri} not found")
        if r.arg("recursive") != "true":
            raise VikingError(400, "INVALID_ARGUMENT", f"{uri} is a directory; recursive=true")
        for child in children:
            del self.files[child]
        return {"uri": uri, "estimated_deleted_count": len(children)}

    def _add_resource(self, r: Request, user: str) -> Any:
        url = str(r.body.get("path") or "")
        host = urlsplit(url).hostname or ""
        if not url.startswith(("http://", "https://")) or host in ("localhost", "127.0.0.1"):
            raise VikingError(400, "INVALID_ARGUMENT", f"not a public remote resource: {url}")
        parent = self._check(r.body.get("parent") or "viking://resources/", user)
        root = parent.rstrip("/") + "/" + re.sub(r"[^a-z0-9]+", "_", host) + f"_{next(self._ids)}"
        self.files[root + "/page.md"] = f"Page fetched from {url}"
        return {"root_uri": root, "status": "processing"}

    # -- sessions ------------------------------------------------------------------------------

    def _create_session(self, r: Request, user: str) -> Any:
        session_id = (r.body or {}).get("session_id") or f"auto{next(self._ids)}"
        if (user, session_id) in self.sessions:
            raise VikingError(409, "ALREADY_EXISTS", f"session {session_id} exists")
        self.sessions[(user, session_id)] = SessionRec(user, session_id)
        return {"session_id": session_id, "user": {"account_id": "default", "user_id": user}}

    def _list_sessions(self, r: Request, user: str) -> Any:
        return [{"session_id": s.session_id} for (u, _), s in self.sessions.items() if u == user]

    def _session(self, r: Request, user: str, session_id: str, action: str) -> Any:
        rec = self.sessions.get((user, session_id))
        if rec is None:
            raise VikingError(404, "NOT_FOUND", f"Session {session_id} not found")
        if r.method == "GET" and not action:
            pending = sum(max(1, len(m["content"]) // 4) for m in rec.messages)
            return {"session_id": session_id, "pending_tokens": pending, "commits": rec.commits}
        if r.method == "DELETE" and not action:
            del self.sessions[(user, session_id)]
            return {"session_id": session_id}
        if r.method == "POST" and action == "/messages":
            if r.body.get("role") not in ("user", "assistant"):
                raise VikingError(400, "INVALID_ARGUMENT", "role is user or assistant")
            rec.messages.append({"role": r.body["role"], "content": str(r.body["content"])})
            return {"session_id": session_id, "message_count": len(rec.messages)}
        if r.method == "POST" and action == "/commit":
            for message in rec.messages:
                if message["role"] == "user":
                    uri = f"viking://user/{user}/memories/events/mem_x{next(self._ids)}.md"
                    self.files[uri] = f"{user} said: {message['content']}"
            rec.messages.clear()
            rec.commits += 1
            return {"session_id": session_id, "status": "accepted", "task_id": f"t{rec.commits}"}
        raise VikingError(405, "METHOD_NOT_ALLOWED", f"{r.method} {r.path}")
