"""Shared pieces of the providers that call an external service per backend key.

OpenViking, RetainDB (HTTP) and ByteRover (a CLI) differ in what they call, not in how a
provider around the call behaves, so this module holds what is really the same:

* :class:`ServiceError` — the one error type a service call raises (HTTP status and the
  service's error code when there is one), so providers catch one thing;
* :class:`JsonHttp` — an ``httpx`` client for one JSON service: base URL, fixed headers,
  a timeout on every call, errors turned into :class:`ServiceError`;
* :class:`ServiceProvider` — a :class:`~providers.base.MemoryProvider` base that keeps the
  services the gateway lends (the turn ledger), delivers a turn once
  (:meth:`~ServiceProvider.deliver_turn`), dispatches tool calls to handlers with bounded
  JSON answers, and erases scope by scope, reporting each scope it could not erase.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import httpx
from pydantic import ValidationError

from gateway.config_file import update_config
from gateway.errors import ConfigError
from gateway.settings import config_file_path
from gateway.tenants import TenantId
from providers.base import (
    MemoryProvider,
    ProviderContext,
    ProviderServices,
    SyncedTurn,
    tool_error,
)
from providers.ledger import TurnKey, deliver_once
from providers.scoping import ScopeRecord

log = logging.getLogger(__name__)
ToolHandler = Callable[[ProviderContext, dict[str, Any]], Any]


class ServiceError(Exception):
    """A call to the memory service failed; ``status`` is None when nothing answered."""

    def __init__(self, message: str, *, status: int | None = None, code: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.code = code

    @property
    def not_found(self) -> bool:
        return self.status == 404 or self.code == "NOT_FOUND"


class ToolRefused(ValueError):
    """A tool call that is refused before anything is sent (bad argument, foreign URI)."""


class JsonHttp:
    """One JSON service over HTTP; thread-safe (one ``httpx.Client`` with a pool)."""

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout_s: float = 10.0,
        label: str = "service",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.label = label
        self._client = httpx.Client(
            base_url=self.base_url, headers=dict(headers or {}), timeout=timeout_s
        )

    def call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> Any:
        """The decoded JSON answer (None when empty); raises :class:`ServiceError`."""
        extra: dict[str, Any] = {}
        if timeout_s is not None:
            extra["timeout"] = timeout_s
        try:
            response = self._client.request(
                method,
                path,
                params=dict(params) if params else None,
                json=body,
                headers=dict(headers) if headers else None,
                **extra,
            )
        except httpx.HTTPError as exc:
            raise ServiceError(f"{self.label} {method} {path}: {type(exc).__name__}") from exc
        try:
            payload = response.json() if response.content else None
        except ValueError:
            payload = response.text
        if response.status_code >= 400:
            code, message = _error_of(payload)
            raise ServiceError(
                f"{self.label} {method} {path} answered {response.status_code}"
                + (f" {code}" if code else "")
                + (f": {message}" if message else ""),
                status=response.status_code,
                code=code,
            )
        return payload

    def close(self) -> None:
        self._client.close()


def _error_of(payload: Any) -> tuple[str, str]:
    """(code, message) from the usual error shapes: {"error": {...}}, {"error": "..."}."""
    if not isinstance(payload, dict):
        return "", str(payload or "")[:300]
    error = payload.get("error")
    if isinstance(error, dict):
        return str(error.get("code") or ""), str(error.get("message") or "")[:300]
    message = payload.get("message") or error or payload.get("detail") or ""
    return str(payload.get("code") or ""), str(message)[:300]


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying so when it was cut."""
    text = text.strip()
    return text if len(text) <= limit else text[: max(0, limit - 14)].rstrip() + " […truncated]"


def bounded_json(payload: Any, limit: int) -> str:
    """``payload`` as JSON text of at most about ``limit`` characters (strings are clipped)."""
    text = json.dumps(payload, ensure_ascii=False, default=str)
    if len(text) <= limit:
        return text
    return json.dumps(_shrink(payload, max(40, limit // 8)), ensure_ascii=False, default=str)[
        : limit + 200
    ]


def _shrink(value: Any, limit: int) -> Any:
    if isinstance(value, str):
        return clip(value, limit)
    if isinstance(value, list):
        return [_shrink(item, limit) for item in value[:20]]
    if isinstance(value, dict):
        return {key: _shrink(item, limit) for key, item in value.items()}
    return value


def text_arg(args: Mapping[str, Any], name: str, *, limit: int = 8000) -> str:
    """A required, non-empty string argument, or :class:`ToolRefused`."""
    value = args.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ToolRefused(f"{name} is required (a non-empty string)")
    if len(value) > limit:
        raise ToolRefused(f"{name} is longer than {limit} characters")
    return value.strip()


def int_arg(args: Mapping[str, Any], name: str, default: int, low: int, high: int) -> int:
    """An optional integer argument clamped to [low, high]."""
    value = args.get(name, default)
    try:
        number = int(value)
    except (TypeError, ValueError) as exc:
        raise ToolRefused(f"{name} must be an integer") from exc
    return min(max(number, low), high)


class ServiceProvider(MemoryProvider):
    """Base of the service-backed providers: ledger, tool dispatch, per-scope erasure."""

    max_tool_result_chars = 4000
    # The setup wizard's non-secret answers written to the provider's ``[name]`` table.
    saved_keys: ClassVar[tuple[str, ...]] = ()
    settings: Any

    def __init__(self) -> None:
        self.services = ProviderServices()

    def save_config(self, values: Mapping[str, str], home: Path) -> None:
        """Validate the answers against the provider's settings section, then write them."""
        chosen = {k: values[k].strip() for k in self.saved_keys if values.get(k, "").strip()}
        if not chosen:
            return
        try:
            type(self.settings).model_validate(chosen)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise ConfigError(f"{self.name}.{where}: {first['msg']}") from exc
        update_config(config_file_path() or home / "config.toml", self.name, chosen)

    def attach(self, services: ProviderServices) -> None:
        self.services = services

    def deliver_turn(
        self, ctx: ProviderContext, turn: SyncedTurn, send: Callable[[], None]
    ) -> bool:
        """``send()`` once per (backend key, session, turn id); whether it ran now."""
        key = TurnKey(ctx.tenant, self.name, ctx.backend_key, turn.session_id, turn.turn_id)
        return deliver_once(self.services.turns, key, send)

    def tool_handlers(self) -> Mapping[str, ToolHandler]:
        """Tool name → handler(ctx, args) returning a JSON-able payload."""
        return {}

    def handle_tool_call(self, ctx: ProviderContext, name: str, args: dict[str, Any]) -> str:
        handler = self.tool_handlers().get(name)
        if handler is None:
            known = ", ".join(sorted(self.tool_handlers()))
            return tool_error(f"unknown tool {name!r}; this provider offers {known}")
        try:
            payload = handler(ctx, args)
        except ToolRefused as exc:
            return tool_error(str(exc))
        except ServiceError as exc:
            log.warning("%s tool %s for %s failed: %s", self.name, name, ctx.namespace, exc)
            return tool_error(f"the memory service failed: {exc}")
        if isinstance(payload, dict) and "success" not in payload:
            payload = {"success": True, **payload}
        return bounded_json(payload, self.max_tool_result_chars)

    def erase(self, tenant: TenantId, scopes: Sequence[ScopeRecord] = ()) -> tuple[int, list[str]]:
        removed, leftovers = 0, []
        for record in scopes:
            try:
                removed += self.erase_scope(tenant, record)
            except (ServiceError, OSError) as exc:
                leftovers.append(
                    f"{self.name} scope {record.scope_key} (key {record.backend_key}): {exc}"
                )
        return removed, leftovers

    def erase_scope(self, tenant: TenantId, record: ScopeRecord) -> int:
        """Remove everything stored under ``record.backend_key``; how many items went."""
        raise NotImplementedError(f"{self.name} has no erasure support")
