"""One-off work on a tenant's Honcho data: first-session migration and erasure.

**Migration.** The first time a tenant's DM session joins Honcho, the entries of their
private ``USER.md`` (who the user is) and ``MEMORY.md`` (the agent's notes about them) are
stored as conclusions about the user peer, so Honcho starts from what mnemogate already
knows. A marker in the peer's metadata (``mnemogate_migrated``: namespace → time) records
it; entries Honcho already holds as conclusions are not sent again, so a migration cut
short is simply redone. Group scopes are never migrated.

**Erasure.** Honcho can delete sessions (with their messages, asynchronously on its side)
and conclusions, and a peer card can be emptied; it cannot delete a peer. :func:`erase`
removes all it can for the tenant's peer and its group peers, and lists the peers that
stay (empty). Conclusions about an aliased peer shared with another tenant go too.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial

from gateway.memory.store import MemoryStore
from gateway.tenants import MemoryScope, TenantId
from providers.base import ProviderContext
from providers.honcho.client import HonchoCallError, HonchoClient
from providers.honcho.identity import Sessions, SessionState
from providers.honcho.sync import strip_fences

MIGRATED_KEY = "mnemogate_migrated"
NOTE_PREFIX = "Agent note: "
ALL = 100_000


def needs_migration(sessions: Sessions, state: SessionState, ctx: ProviderContext) -> bool:
    if ctx.memory_scope_key != ctx.namespace:
        return False  # only the DM scope, never a group's
    marker = sessions.peer_metadata(state.ident.user_peer).get(MIGRATED_KEY)
    return not (isinstance(marker, dict) and ctx.namespace in marker)


def migrate(
    client: HonchoClient,
    sessions: Sessions,
    state: SessionState,
    ctx: ProviderContext,
    store: MemoryStore,
) -> int:
    """Send the tenant's USER.md and MEMORY.md entries as conclusions; how many were new."""
    scope = MemoryScope.private(ctx.tenant)
    about_user = [strip_fences(entry.text) for entry in store.read(scope, "user")]
    notes = [strip_fences(entry.text) for entry in store.read(scope, "memory")]
    contents = [text for text in about_user if text]
    contents += [NOTE_PREFIX + text for text in notes if text]
    contents = list(dict.fromkeys(contents))
    observer, _ = state.perspective()
    user = state.ident.user_peer
    created = 0
    if contents:
        held = {item.content for item in client.list_conclusions(observer, user, limit=ALL)}
        new = [text for text in contents if text not in held]
        created = len(client.create_conclusions(observer, user, new, state.ident.session))
    metadata = sessions.peer_metadata(user)
    marker = metadata.get(MIGRATED_KEY)
    done = dict(marker) if isinstance(marker, dict) else {}
    done[ctx.namespace] = datetime.now(UTC).isoformat(timespec="seconds")
    metadata[MIGRATED_KEY] = done
    client.set_peer_metadata(user, metadata)
    sessions.remember_peer_metadata(user, metadata)
    return created


def erase(
    client: HonchoClient, tenant: TenantId, user_peer: str, ai_peer: str
) -> tuple[int, list[str]]:
    """Delete the tenant's sessions, conclusions and cards; (items removed, what stays).

    The tenant's peers are its own and the group peers found among its sessions' members.
    """
    sessions = client.sessions({"metadata": {"tenant": str(tenant)}})
    peers = [user_peer]
    for session_id in sessions:
        peers += [p for p in client.session_peers(session_id) if p not in (ai_peer, *peers)]
    removed = 0
    for session_id in sessions:
        removed += _gone(partial(client.delete_session, session_id))
    for peer in peers:
        for observer, observed in ((ai_peer, peer), (peer, peer), (peer, ai_peer)):
            for item in client.list_conclusions(observer, observed, limit=ALL):
                removed += _gone(partial(client.delete_conclusion, item.id))
        for observer, target in ((peer, None), (ai_peer, peer)):
            if client.get_card(observer, target):
                client.set_card(observer, [], target)
                removed += 1
        client.set_peer_metadata(peer, {})
    stays = [
        f"Honcho peer {peer!r} (Honcho cannot delete peers; it is left empty)" for peer in peers
    ]
    return removed, stays


def _gone(delete: Callable[[], None]) -> int:
    """Run a delete; 1 if it removed something, 0 if it was already gone (404)."""
    try:
        delete()
    except HonchoCallError as exc:
        if exc.not_found:
            return 0
        raise
    return 1
