"""First-session migration of a tenant's curated memory into Honcho.

The first time a tenant's DM session joins Honcho, the entries of their
private ``USER.md`` (who the user is) and ``MEMORY.md`` (the agent's notes about them) are
stored as conclusions about the user peer, so Honcho starts from what mnemogate already
knows. A marker in the peer's metadata (``mnemogate_migrated``: namespace → time) records
it; entries Honcho already holds as conclusions are not sent again, so a migration cut
short is simply redone. Group scopes are never migrated.

**Adoption.** Earlier versions had one assistant peer shared by every tenant; now each
user peer has its own (see :mod:`~providers.honcho.identity`). The first time a scope's
session is joined, what the shared assistant had concluded about this user, and its card
about them, are copied to the scope's own assistant (marker ``mnemogate_assistant`` in the
user peer's metadata), so an upgrade loses nothing the user told the bot.
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
ADOPTED_KEY = "mnemogate_assistant"  # the per-user assistant that took over the shared one
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


def needs_adoption(sessions: Sessions, state: SessionState) -> bool:
    """Whether the scope's assistant has not yet taken over what the shared one knew."""
    adopted = sessions.peer_metadata(state.ident.user_peer).get(ADOPTED_KEY)
    return state.ai_observes_user and adopted != state.ident.ai_peer


def adopt(scope: TenantScope, sessions: Sessions) -> int:
    """Copy the formerly shared assistant's conclusions and card about this user to the
    scope's own assistant (what it knew stays known); how many conclusions were new.

    Only what the shared peer concluded *about this user* is read, never a dialectic or
    representation of it (those would search every tenant's sessions).
    """
    contents, card = scope.former_view()
    held = {item.content for item in scope.conclusions(limit=ALL)}
    new = list(dict.fromkeys(text for text in contents if text not in held))
    created = len(scope.conclude(new)) if new else 0
    if card and not scope.card():
        scope.set_card(card)
    user = scope.ident.user_peer
    metadata = sessions.peer_metadata(user)
    metadata[ADOPTED_KEY] = scope.ident.ai_peer
    scope.set_user_metadata(metadata)
    sessions.remember_peer_metadata(user, metadata)
    return created
