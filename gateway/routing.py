"""Where a message belongs: the conversation it came from, its session key, its memory scope.

``session_key`` is the one function that names live sessions:
``<platform>:dm:<chat_id>`` for direct messages and
``<platform>:group:<chat_id>[:<thread_id>]:<user_id>`` for groups (one session per user).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from gateway.tenants import GroupId, MemoryScope, TenantId

ChatType = Literal["dm", "group"]
GroupMemoryMode = Literal["isolated", "private", "off"]


def session_key(
    platform: str, chat_type: ChatType, chat_id: str, user_id: str, thread_id: str | None = None
) -> str:
    if chat_type == "dm":
        return f"{platform}:dm:{chat_id}"
    where = chat_id if thread_id is None else f"{chat_id}:{thread_id}"
    return f"{platform}:group:{where}:{user_id}"


@dataclass(frozen=True, slots=True)
class Conversation:
    """The tenant and chat a message came from; built by the platform adapter or console.

    ``tenant`` owns the memory; ``linked_account`` is the platform account that wrote when it
    is linked into another account's tenant (:mod:`gateway.identity`). The chat (platform,
    session key, group) always follows the :attr:`account`, never the tenant.
    """

    tenant: TenantId
    chat_id: str
    chat_type: ChatType = "dm"
    thread_id: str | None = None
    display_name: str | None = None
    linked_account: TenantId | None = None

    @classmethod
    def console(cls, name: str) -> Conversation:
        return cls(TenantId.of("console", name), chat_id=name, display_name=name)

    @property
    def account(self) -> TenantId:
        """The platform account that wrote (access and admin checks use it)."""
        return self.linked_account or self.tenant

    def resolved(self, tenant: TenantId) -> Conversation:
        """This chat with its memory owned by ``tenant`` (the account's resolved tenant)."""
        account = self.account
        return replace(self, tenant=tenant, linked_account=None if tenant == account else account)

    @property
    def platform(self) -> str:
        return self.account.platform

    @property
    def group(self) -> GroupId | None:
        return GroupId(self.platform, self.chat_id) if self.chat_type == "group" else None

    @property
    def session_key(self) -> str:
        return session_key(
            self.platform, self.chat_type, self.chat_id, self.account.user, self.thread_id
        )

    def memory_scope(self, mode: GroupMemoryMode) -> MemoryScope | None:
        """The curated-memory scope for this chat, or None when group memory is off."""
        group = self.group
        if group is None or mode == "private":
            return MemoryScope.private(self.tenant)
        if mode == "off":
            return None
        return MemoryScope(self.tenant, group)

    def search_scope_key(self) -> str:
        """Which sessions ``session_search`` may see: the DM scope or this (tenant, group)."""
        group = self.group
        if group is None:
            return self.tenant.namespace
        return MemoryScope(self.tenant, group).key
