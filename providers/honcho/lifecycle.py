"""First-session migration of a tenant's curated memory into Honcho.

The first time a tenant's DM session joins Honcho, the entries of their
private ``USER.md`` (who the user is) and ``MEMORY.md`` (the agent's notes about them) are
stored as conclusions about the user peer, so Honcho starts from what mnemogate already
knows. A marker in the peer's metadata (``mnemogate_migrated``: namespace → time) records
it; entries Honcho already holds as conclusions are not sent again, so a migration cut
short is simply redone. Group scopes are never migrated.
"""

from __future__ import annotations

from datetime import UTC, datetime

from gateway.memory.store import MemoryStore
from gateway.tenants import MemoryScope
from providers.base import ProviderContext
from providers.honcho.identity import Sessions, SessionState
from providers.honcho.scope import TenantScope
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
    scope: TenantScope, sessions: Sessions, ctx: ProviderContext, store: MemoryStore
) -> int:
    """Send the tenant's USER.md and MEMORY.md entries as conclusions; how many were new."""
    private = MemoryScope.private(ctx.tenant)
    about_user = [strip_fences(entry.text) for entry in store.read(private, "user")]
    notes = [strip_fences(entry.text) for entry in store.read(private, "memory")]
    contents = [text for text in about_user if text]
    contents += [NOTE_PREFIX + text for text in notes if text]
    contents = list(dict.fromkeys(contents))
    user = scope.ident.user_peer
    created = 0
    if contents:
        held = {item.content for item in scope.conclusions(limit=ALL)}
        new = [text for text in contents if text not in held]
        created = len(scope.conclude(new)) if new else 0
    metadata = sessions.peer_metadata(user)
    marker = metadata.get(MIGRATED_KEY)
    done = dict(marker) if isinstance(marker, dict) else {}
    done[ctx.namespace] = datetime.now(UTC).isoformat(timespec="seconds")
    metadata[MIGRATED_KEY] = done
    scope.set_user_metadata(metadata)
    sessions.remember_peer_metadata(user, metadata)
    return created
