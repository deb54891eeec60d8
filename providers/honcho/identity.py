"""Who is who in Honcho: peer and session ids, observation flags, and the session cache.

* **User peer**: one per tenant, ``peer_prefix + namespace`` (what the gateway puts in
  ``ctx.user_peer_id``), unless ``peer_aliases`` maps the tenant id or namespace elsewhere.
* **Group peer**: an *isolated* group chat (``groups.memory`` ``isolated`` or ``off``: the
  memory scope is not the DM scope) gets its own peer for the (tenant, group) scope,
  ``<user peer>__<group namespace>``. Honcho's reasoning, cards, conclusions and message
  recall are all per peer, so nothing learned in a DM can reach a group reply and nothing
  said in the group can reach the DM profile — by construction, not by filtering.
* **Assistant peer**: one per user peer, ``<honcho.ai_peer>__<user peer>`` (e.g.
  ``mnemogate__telegram-123``), never shared between tenants or scopes. Honcho's dialectic
  answers from every session of the peer that asks, and the assistant is the peer that
  asks whenever it observes the user: a single assistant peer in everyone's sessions would
  recall one tenant's words for another. Per scope, its sessions are the scope's sessions.
* **Session**: one per session key, ``peer_prefix + namespace + "__" + escaped key``.
  Namespaces never contain ``__`` (``_`` only starts a ``_XX`` escape), so two tenants can
  never share a Honcho session, and a group peer never collides with a tenant's peer.
* **Observation**: the ``directional`` (everyone observes everyone) or ``unified`` (only
  the AI observes the user) preset, then the per-flag overrides. When a session is joined
  the flags the server reports win (an operator may change them in Honcho's UI); where the
  server has none, ours are set.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from gateway.settings import HonchoSettings
from gateway.tenants import TenantId, escape_id
from providers.base import ProviderContext
from providers.honcho.client import HonchoClient, Observe

MAX_SESSION_ID = 200
PRESETS: dict[str, tuple[Observe, Observe]] = {
    # (user, ai)
    "directional": (Observe(me=True, others=True), Observe(me=True, others=True)),
    "unified": (Observe(me=True, others=False), Observe(me=False, others=True)),
}


def configured_flags(settings: HonchoSettings) -> tuple[Observe, Observe]:
    """(user, ai) flags: the preset with each explicitly set override applied."""
    user, ai = PRESETS[settings.observation]

    def pick(override: bool | None, preset: bool | None) -> bool | None:
        return preset if override is None else override

    return (
        Observe(
            me=pick(settings.user_observe_me, user.me),
            others=pick(settings.user_observe_others, user.others),
        ),
        Observe(
            me=pick(settings.ai_observe_me, ai.me),
            others=pick(settings.ai_observe_others, ai.others),
        ),
    )


def is_isolated(ctx: ProviderContext) -> bool:
    """A group chat whose memory is not the tenant's DM scope (``groups.memory`` isolated/off)."""
    return ctx.chat_type == "group" and ctx.memory_scope_key != ctx.namespace


def user_peer_id(ctx: ProviderContext, aliases: dict[str, str]) -> str:
    """The peer of ``ctx``'s memory scope: the tenant's, or its group peer when isolated."""
    tenant_peer = aliases.get(str(ctx.tenant)) or aliases.get(ctx.namespace) or ctx.user_peer_id
    if not is_isolated(ctx):
        return tenant_peer
    _, _, group = ctx.memory_scope_key.partition(".")
    return f"{tenant_peer}__{group}"


def tenant_peer_id(tenant: TenantId, settings: HonchoSettings) -> str:
    """The user peer of ``tenant`` without a context (erasure, operator commands)."""
    aliases = settings.peer_aliases
    return (
        aliases.get(str(tenant))
        or aliases.get(tenant.namespace)
        or f"{settings.peer_prefix}{tenant.namespace}"
    )


def assistant_peer_id(ai_peer: str, user_peer: str) -> str:
    """The assistant peer that talks with ``user_peer`` (and with no one else)."""
    return f"{ai_peer}__{user_peer}"


def session_id_for(prefix: str, namespace: str, session_key: str) -> str:
    """A Honcho-safe (``[A-Za-z0-9_-]``), per-tenant session id for ``session_key``."""
    readable = f"{prefix}{namespace}__{escape_id(session_key)}"
    if len(readable) <= MAX_SESSION_ID:
        return readable
    digest = hashlib.sha256(session_key.encode("utf-8")).hexdigest()[:32]
    return f"{prefix}{namespace}__h{digest}"


@dataclass(frozen=True, slots=True)
class Identity:
    """The Honcho names of one provider context."""

    user_peer: str
    ai_peer: str
    session: str
    former_ai: str  # ``honcho.ai_peer``: the assistant every tenant shared before
    scope: str  # the memory scope key; messages carry it so DM searches skip group talk
    isolated: bool


@dataclass(frozen=True, slots=True)
class SessionState:
    """A joined Honcho session with the observation flags in effect there."""

    ident: Identity
    user: Observe
    ai: Observe
    joined_at: float

    @property
    def ai_observes_user(self) -> bool:
        return bool(self.ai.others) and self.user.me is not False

    def perspective(self) -> tuple[str, str | None]:
        """(observer, target) for reading what Honcho knows about the user.

        When the AI peer observes the user its view is used; otherwise the user's own
        (self-observation, target None).
        """
        if self.ai_observes_user:
            return self.ident.ai_peer, self.ident.user_peer
        return self.ident.user_peer, None


class Sessions:
    """Joins Honcho sessions once per process (refreshed after ``refresh_s``); thread-safe."""

    def __init__(
        self,
        client: Callable[[], HonchoClient],
        settings: HonchoSettings,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._settings = settings
        self._clock = clock
        self._lock = threading.Lock()
        self._states: dict[str, SessionState] = {}
        self._peer_metadata: dict[str, dict[str, object]] = {}

    def identity(self, ctx: ProviderContext) -> Identity:
        user_peer = user_peer_id(ctx, self._settings.peer_aliases)
        return Identity(
            user_peer=user_peer,
            ai_peer=assistant_peer_id(ctx.ai_peer_id, user_peer),
            former_ai=ctx.ai_peer_id,
            session=session_id_for(self._settings.peer_prefix, ctx.namespace, ctx.session_key),
            scope=ctx.memory_scope_key,
            isolated=is_isolated(ctx),
        )

    def join(self, ctx: ProviderContext) -> SessionState:
        """The session of ``ctx``, created and joined on first use."""
        ident = self.identity(ctx)
        with self._lock:
            state = self._states.get(ident.session)
        refresh = self._settings.config_refresh_s
        if state is not None and self._clock() - state.joined_at < refresh:
            return state
        state = self._join(ctx, ident)
        with self._lock:
            self._states[ident.session] = state
        return state

    def peer_metadata(self, peer_id: str) -> dict[str, object]:
        """The metadata read when the peer was ensured in this process ({} before that)."""
        with self._lock:
            return dict(self._peer_metadata.get(peer_id, {}))

    def remember_peer_metadata(self, peer_id: str, metadata: dict[str, object]) -> None:
        with self._lock:
            self._peer_metadata[peer_id] = dict(metadata)

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._states.pop(session_id, None)

    def clear(self) -> None:
        """Forget every join and peer read (after an erasure)."""
        with self._lock:
            self._states.clear()
            self._peer_metadata.clear()

    def _join(self, ctx: ProviderContext, ident: Identity) -> SessionState:
        client = self._client()
        user_flags, ai_flags = configured_flags(self._settings)
        for peer_id in (ident.user_peer, ident.ai_peer):
            with self._lock:
                known = peer_id in self._peer_metadata
            if not known:  # once per process; observation is set per session, below
                self.remember_peer_metadata(peer_id, client.ensure_peer(peer_id))
        metadata: dict[str, object] = {
            "tenant": str(ctx.tenant),
            "scope": ctx.memory_scope_key,
            "chat_type": ctx.chat_type,
        }
        client.ensure_session(ident.session, metadata=metadata)
        wanted = {ident.user_peer: user_flags, ident.ai_peer: ai_flags}
        effective: dict[str, Observe] = {}
        missing: dict[str, Observe] = {}
        for peer_id, flags in wanted.items():
            server = client.session_peer_config(ident.session, peer_id)
            if server is None or (server.me is None and server.others is None):
                missing[peer_id] = flags
                effective[peer_id] = flags
            else:
                effective[peer_id] = Observe(
                    me=flags.me if server.me is None else server.me,
                    others=flags.others if server.others is None else server.others,
                )
        if missing:
            client.add_session_peers(ident.session, missing)
        return SessionState(
            ident=ident,
            user=effective[ident.user_peer],
            ai=effective[ident.ai_peer],
            joined_at=self._clock(),
        )
