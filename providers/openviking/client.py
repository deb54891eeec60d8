"""The OpenViking HTTP routes mnemogate uses, each on behalf of one user (trusted mode).

Answers come as ``{"status": "ok", "result": …}`` or ``{"status": "error", "error":
{"code", "message"}}``; :meth:`VikingClient.call` returns ``result`` and raises
:class:`~providers.service.ServiceError` for both an HTTP error and an error envelope.
"""

from __future__ import annotations

from typing import Any

from providers.service import JsonHttp, ServiceError

LEVEL_ROUTES = {
    "abstract": "/api/v1/content/abstract",
    "overview": "/api/v1/content/overview",
    "full": "/api/v1/content/read",
}
BROWSE_ROUTES = {"list": "/api/v1/fs/ls", "tree": "/api/v1/fs/tree", "stat": "/api/v1/fs/stat"}


class VikingClient:
    """One OpenViking server; ``user`` is a parameter of every call, never client state."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None,
        account: str,
        agent: str,
        timeout_s: float,
    ) -> None:
        headers = {"X-OpenViking-Account": account, "X-OpenViking-Agent": agent}
        if api_key:
            headers.update({"X-API-Key": api_key, "Authorization": f"Bearer {api_key}"})
        self.account = account
        self.http = JsonHttp(base_url, headers=headers, timeout_s=timeout_s, label="OpenViking")

    def call(
        self,
        user: str,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        body: Any = None,
        timeout_s: float | None = None,
    ) -> Any:
        answer = self.http.call(
            method,
            path,
            params=params,
            body=body,
            headers={"X-OpenViking-User": user},
            timeout_s=timeout_s,
        )
        if isinstance(answer, dict) and answer.get("status") == "error":
            error = answer["error"] if isinstance(answer.get("error"), dict) else {}
            code = str(error.get("code") or "ERROR")
            raise ServiceError(f"OpenViking {path}: {code}: {error.get('message', '')}", code=code)
        return answer.get("result") if isinstance(answer, dict) else answer

    # -- routes ----------------------------------------------------------------------------

    def find(
        self, user: str, query: str, target_uri: str, limit: int, timeout_s: float | None = None
    ) -> dict[str, Any]:
        body = {"query": query, "target_uri": target_uri, "limit": limit}
        result = self.call(user, "POST", "/api/v1/search/find", body=body, timeout_s=timeout_s)
        return result if isinstance(result, dict) else {}

    def read(self, user: str, uri: str, level: str) -> Any:
        return self.call(user, "GET", LEVEL_ROUTES[level], params={"uri": uri})

    def browse(self, user: str, action: str, uri: str) -> Any:
        return self.call(user, "GET", BROWSE_ROUTES[action], params={"uri": uri})

    def write(self, user: str, uri: str, content: str) -> Any:
        body = {"uri": uri, "content": content, "mode": "create"}
        return self.call(user, "POST", "/api/v1/content/write", body=body)

    def remove(self, user: str, uri: str, *, recursive: bool = False) -> Any:
        params = {"uri": uri, "recursive": "true" if recursive else "false"}
        return self.call(user, "DELETE", "/api/v1/fs", params=params)

    def add_resource(self, user: str, url: str, parent: str, reason: str) -> Any:
        body = {"path": url, "parent": parent, "reason": reason}
        return self.call(user, "POST", "/api/v1/resources", body=body)

    def create_session(self, user: str, session_id: str) -> None:
        try:
            self.call(user, "POST", "/api/v1/sessions", body={"session_id": session_id})
        except ServiceError as exc:
            if exc.status != 409 and exc.code not in ("ALREADY_EXISTS", "CONFLICT"):
                raise

    def add_message(self, user: str, session_id: str, role: str, content: str, at: str) -> None:
        body = {"role": role, "content": content, "created_at": at}
        self.call(user, "POST", f"/api/v1/sessions/{session_id}/messages", body=body)

    def commit(self, user: str, session_id: str) -> Any:
        return self.call(user, "POST", f"/api/v1/sessions/{session_id}/commit")

    def sessions(self, user: str) -> list[str]:
        result = self.call(user, "GET", "/api/v1/sessions")
        rows = result if isinstance(result, list) else (result or {}).get("sessions", [])
        return [
            str(row.get("session_id", "")) if isinstance(row, dict) else str(row) for row in rows
        ]

    def pending_tokens(self, user: str, session_id: str) -> int:
        """How much of the session is not committed yet (0 when nothing is pending)."""
        result = self.call(user, "GET", f"/api/v1/sessions/{session_id}")
        return int((result or {}).get("pending_tokens") or 0) if isinstance(result, dict) else 0

    def delete_session(self, user: str, session_id: str) -> None:
        self.call(user, "DELETE", f"/api/v1/sessions/{session_id}")

    def delete_user(self, user: str) -> None:
        """The admin API's user delete (unregisters the user of the operator's account)."""
        self.call(user, "DELETE", f"/api/v1/admin/accounts/{self.account}/users/{user}")

    def health(self) -> Any:
        return self.http.call("GET", "/health")

    def close(self) -> None:
        self.http.close()
