"""Tenants, namespaces and memory scopes.

A tenant is one person on one platform (``telegram:123``, ``discord:456``,
``console:alice``) and is the security principal. Its *namespace* is an injective,
filesystem- and key-safe spelling (``telegram-123``) used in paths, Redis keys, job ids and
provider peer ids. A memory scope is the tenant's private scope or a per-(tenant, group)
scope; it is always derived from a tenant, so no path can be built without one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gateway.errors import TenantError

PLATFORMS = ("telegram", "discord", "console")
_SAFE = re.compile(r"[A-Za-z0-9-]")
_NAMESPACE = re.compile(r"^(telegram|discord|console)-((?:[A-Za-z0-9-]|_[0-9A-F]{2})+)$")
MAX_ID_LEN = 128
#: Platforms whose user ids are integers; written in canonical form only (no sign, no
#: leading zeros), so ``telegram:042`` can never name a second tenant beside ``telegram:42``.
NUMERIC_PLATFORMS = ("telegram", "discord")
_CANONICAL_INT = re.compile(r"^-?[1-9][0-9]*$")
_ANY_INT = re.compile(r"^[+-]?[0-9]+$")


def escape_id(raw: str) -> str:
    """Spell ``raw`` with ``[A-Za-z0-9_-]`` only; ``_XX`` escapes each other UTF-8 byte.

    ``_`` itself is escaped, so distinct inputs never share a spelling.
    """
    out: list[str] = []
    for char in raw:
        if _SAFE.fullmatch(char):
            out.append(char)
        else:
            out.extend(f"_{byte:02X}" for byte in char.encode("utf-8"))
    return "".join(out)


def unescape_id(safe: str) -> str:
    data = bytearray()
    i = 0
    while i < len(safe):
        if safe[i] == "_":
            data.append(int(safe[i + 1 : i + 3], 16))
            i += 3
        else:
            data.extend(safe[i].encode("ascii"))
            i += 1
    return data.decode("utf-8")


@dataclass(frozen=True, slots=True)
class TenantId:
    """``<platform>:<user id>``; construct with :meth:`parse` or :meth:`of`."""

    platform: str
    user: str

    def __post_init__(self) -> None:
        if self.platform not in PLATFORMS:
            raise TenantError(f"unknown platform {self.platform!r}; expected one of {PLATFORMS}")
        if not self.user or len(self.user) > MAX_ID_LEN:
            raise TenantError(f"tenant user id must be 1–{MAX_ID_LEN} characters")
        if any(ch.isspace() or ord(ch) < 32 for ch in self.user):
            raise TenantError("tenant user id may not contain spaces or control characters")

    @classmethod
    def parse(cls, text: str) -> TenantId:
        platform, sep, user = text.strip().partition(":")
        if not sep:
            raise TenantError(
                f"tenant id {text!r} must look like telegram:<id>, discord:<id> or console:<name>"
            )
        if platform in NUMERIC_PLATFORMS and not _CANONICAL_INT.match(user):
            hint = ""
            if _ANY_INT.match(user) and int(user) != 0:
                hint = f"; did you mean {platform}:{int(user)}?"
            raise TenantError(
                f"tenant id {text!r}: a {platform} user id is a number written without "
                f"leading zeros or a sign{hint}"
            )
        return cls(platform, user)

    @classmethod
    def of(cls, platform: str, user: str | int) -> TenantId:
        return cls(platform, str(user))

    @classmethod
    def from_namespace(cls, namespace: str) -> TenantId:
        match = _NAMESPACE.match(namespace)
        if not match:
            raise TenantError(f"{namespace!r} is not a tenant namespace")
        return cls(match.group(1), unescape_id(match.group(2)))

    @property
    def namespace(self) -> str:
        return f"{self.platform}-{escape_id(self.user)}"

    def __str__(self) -> str:
        return f"{self.platform}:{self.user}"


@dataclass(frozen=True, slots=True)
class GroupId:
    """A group chat on a platform (a Telegram group, a Discord guild channel or thread)."""

    platform: str
    chat: str

    @property
    def namespace(self) -> str:
        return f"{self.platform}-{escape_id(self.chat)}"

    def __str__(self) -> str:
        return f"{self.platform}:{self.chat}"


@dataclass(frozen=True, slots=True)
class MemoryScope:
    """Where curated memory lives: the tenant's private scope, or one per (tenant, group)."""

    tenant: TenantId
    group: GroupId | None = None

    @classmethod
    def private(cls, tenant: TenantId) -> MemoryScope:
        return cls(tenant, None)

    def directory(self, home: Path) -> Path:
        base = home / "tenants" / self.tenant.namespace
        if self.group is not None:
            base = base / "groups" / self.group.namespace
        return base / "memories"

    @property
    def key(self) -> str:
        """A stable key-safe name of the scope (used in Redis keys and session rows)."""
        if self.group is None:
            return self.tenant.namespace
        return f"{self.tenant.namespace}.{self.group.namespace}"

    def __str__(self) -> str:
        return str(self.tenant) if self.group is None else f"{self.tenant} in {self.group}"


def tenant_dir(home: Path, tenant: TenantId) -> Path:
    return home / "tenants" / tenant.namespace
