"""Erasing a tenant in Honcho: all the API can delete, and an exact list of what it cannot.

Honcho deletes sessions (with their messages) and conclusions, and a peer card can be
emptied. It cannot delete a peer, and it keeps two kinds of records the API neither shows
nor removes: a *collection* row per (observer, observed) pair that ever held a conclusion,
and each peer card as a key of the observer's internal metadata (``peer_card`` for its own
card, ``<target>_peer_card`` for a card about another peer), which emptying leaves in place.

:func:`erase` works on the tenant's peers — its user peer and the group peers found among
its sessions' members — and on their assistant peers: today's one per user peer, and the
single assistant peer that earlier versions shared between every tenant (``honcho.ai_peer``),
whose conclusions and cards about the tenant are removed too, as are its self-conclusions
drawn in the tenant's sessions. The leftovers it reports name each remaining peer, each
collection row it saw holding conclusions about or by the tenant's peers, and each card key
it emptied. A second erase no longer sees collection rows whose conclusions are gone.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from gateway.settings import HonchoSettings
from gateway.tenants import TenantId
from providers.honcho.client import FoundConclusion, HonchoCallError, HonchoClient
from providers.honcho.identity import assistant_peer_id, tenant_peer_id

ALL = 100_000
Pair = tuple[str, str]


def card_key(observer: str, target: str | None) -> str:
    """The internal-metadata key under which Honcho keeps ``observer``'s card."""
    return "peer_card" if target in (None, observer) else f"{target}_peer_card"


def erase(
    client: HonchoClient, tenant: TenantId, settings: HonchoSettings
) -> tuple[int, list[str]]:
    """Delete the tenant's sessions, conclusions, cards and peer metadata; (removed, leftovers)."""
    shared = settings.ai_peer
    sessions = client.sessions({"metadata": {"tenant": str(tenant)}})
    users = [tenant_peer_id(tenant, settings)]
    for session_id in sessions:
        for peer in client.session_peers(session_id):
            if peer not in users and peer != shared and not peer.startswith(f"{shared}__"):
                users.append(peer)
    assistants = {user: assistant_peer_id(shared, user) for user in users}

    found: dict[Pair, list[FoundConclusion]] = {}
    for user, own in assistants.items():
        pairs = ((own, user), (user, user), (user, own), (own, own), (shared, user), (user, shared))
        for pair in pairs:
            found[pair] = client.list_conclusions(*pair, limit=ALL)
    drawn_here = [  # the shared assistant's view of itself, from this tenant's sessions
        item
        for session_id in sessions
        for item in client.list_conclusions(shared, shared, limit=ALL, session=session_id)
    ]

    removed = 0
    for item in [*(c for items in found.values() for c in items), *drawn_here]:
        removed += _gone(partial(client.delete_conclusion, item.id))
    removed += sum(_gone(partial(client.delete_session, s)) for s in sessions)
    emptied: list[tuple[str, str]] = []
    for user, own in assistants.items():
        cards = (
            (user, None),
            (own, None),
            (own, user),
            (shared, user),
            (user, own),
            (user, shared),
        )
        for observer, target in cards:
            card = _card(client, observer, target)
            if card is None:
                continue  # never set: no key
            if card:
                client.set_card(observer, [], target)
                removed += 1
            emptied.append((observer, card_key(observer, target)))
    kept = [
        peer for user, own in assistants.items() for peer in (user, own) if _empty(client, peer)
    ]
    return removed, _leftovers(kept, [pair for pair, items in found.items() if items], emptied)


def _leftovers(
    peers: list[str], collections: list[Pair], cards: list[tuple[str, str]]
) -> list[str]:
    out = []
    if peers:
        names = ", ".join(repr(peer) for peer in peers)
        out.append(f"Honcho peers {names} (Honcho cannot delete peers; they are left empty)")
    if collections:
        rows = ", ".join(f"{observer} → {observed}" for observer, observed in collections)
        out.append(
            f"Honcho's internal collection rows (observer → observed) {rows} "
            "(the API cannot delete them; they no longer hold any conclusion)"
        )
    for observer, key in cards:
        out.append(
            f"the emptied peer card key {key!r} in the internal metadata of Honcho peer "
            f"{observer!r} (the API cannot remove the key)"
        )
    return out


def _card(client: HonchoClient, observer: str, target: str | None) -> list[str] | None:
    try:
        return client.get_card(observer, target)
    except HonchoCallError as exc:
        if exc.not_found:  # no such peer: no card either
            return None
        raise


def _empty(client: HonchoClient, peer: str) -> bool:
    """Clear the peer's metadata; whether the peer exists (and so stays behind)."""
    return _gone(partial(client.set_peer_metadata, peer, {})) == 1


def _gone(delete: Callable[[], None]) -> int:
    """Run a delete; 1 if it removed something, 0 if it was already gone (404)."""
    try:
        delete()
    except HonchoCallError as exc:
        if exc.not_found:
            return 0
        raise
    return 1
