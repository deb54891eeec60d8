"""Our thin interface over the official ``honcho-ai`` SDK: the calls the provider makes.

Every call goes to an explicit ``base_url`` and ``workspace`` (the SDK would otherwise
fall back to the hosted service and a "default" workspace). Two SDK clients share one
connection pool: the *retrying* client retries idempotent reads and get-or-creates
(``read_retries``); the *once* client is built with ``max_retries=0`` and sends every write
(message post, conclusion create, card replace, deletes) and every dialectic call at most
once — the SDK would otherwise re-post after a 5xx or a lost response and store a turn
twice, or pay for a slow dialectic twice. Repeats across calls are the caller's business
(the sync path dedupes by the turn key it stores in message metadata).

Every SDK, HTTP or response-shape failure leaves this module as :class:`HonchoCallError`
(what was attempted, the HTTP status when there was one); a missing ``base_url`` is a
:class:`HonchoConfigError` raised before anything is sent.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import httpx
import pydantic
from honcho import Honcho, HonchoError, Peer, Session
from honcho.api_types import MessageCreateParams, PeerConfig, SessionPeerConfig

from providers.errors import ProviderError

PROVIDER = "honcho"
Level = Literal["minimal", "low", "medium", "high", "max"]
LIST_PAGE = 100


class HonchoConfigError(ProviderError):
    """The Honcho client cannot be built: ``setting`` is missing or invalid."""

    def __init__(self, setting: str, message: str) -> None:
        super().__init__(PROVIDER, message)
        self.setting = setting


class HonchoCallError(ProviderError):
    """A call to the Honcho server failed; ``status`` is the HTTP status when one came back."""

    def __init__(self, operation: str, reason: str, status: int | None = None) -> None:
        where = f" (HTTP {status})" if status else ""
        super().__init__(PROVIDER, f"honcho {operation} failed{where}: {reason}")
        self.operation = operation
        self.status = status

    @property
    def not_found(self) -> bool:
        return self.status == 404


@dataclass(frozen=True, slots=True)
class Observe:
    """The two observation flags of one peer in one session (None: the server's default)."""

    me: bool | None
    others: bool | None


@dataclass(frozen=True, slots=True)
class OutgoingMessage:
    peer_id: str
    content: str
    metadata: Mapping[str, object]
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class FoundMessage:
    id: str
    peer_id: str
    session_id: str
    content: str
    metadata: Mapping[str, Any]
    created_at: str


@dataclass(frozen=True, slots=True)
class FoundConclusion:
    id: str
    content: str
    observer_id: str
    observed_id: str
    session_id: str | None


@dataclass(frozen=True, slots=True)
class SessionView:
    """What session context returned; empty strings and lists where the server had nothing."""

    summary: str
    representation: str
    peer_card: list[str]
    messages: list[FoundMessage]


class HonchoClient:
    """The Honcho calls mnemogate needs; thread-safe; build once per process, then :meth:`close`."""

    def __init__(
        self,
        base_url: str | None,
        workspace: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 8.0,
        read_retries: int = 1,
    ) -> None:
        if not base_url or not base_url.startswith(("http://", "https://")):
            raise HonchoConfigError(
                "honcho.base_url",
                "Honcho needs an explicit server URL: set HONCHO_BASE_URL (or base_url in the "
                "[honcho] table), e.g. http://127.0.0.1:8000 — it is never guessed, so data "
                "cannot land on the hosted service by accident",
            )
        if not workspace:
            raise HonchoConfigError("honcho.workspace", "set HONCHO_WORKSPACE to a workspace id")
        self.base_url = base_url.rstrip("/")
        self.workspace = workspace
        self._pool = httpx.Client(base_url=self.base_url, timeout=httpx.Timeout(timeout_s))
        common: dict[str, Any] = {
            "api_key": api_key,
            "base_url": self.base_url,
            "workspace_id": workspace,
            "timeout": timeout_s,
            "http_client": self._pool,
        }
        self._retrying = Honcho(max_retries=read_retries, **common)
        self._once = Honcho(max_retries=0, **common)
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._pool.close()

    # -- peers and sessions ------------------------------------------------------------------

    def ensure_peer(self, peer_id: str, *, observe_me: bool | None = None) -> dict[str, object]:
        """Get or create the peer (setting ``observe_me`` when given); its stored metadata.

        Metadata is never sent here, so what :meth:`set_peer_metadata` stored survives.
        """
        config = PeerConfig(observe_me=observe_me) if observe_me is not None else None
        with _translated("ensure peer"):
            peer = self._retrying.peer(peer_id, configuration=config)
            return dict(peer.metadata or {})

    def set_peer_metadata(self, peer_id: str, metadata: dict[str, object]) -> None:
        with _translated("set peer metadata"):
            Peer(peer_id, self._once).set_metadata(metadata)

    def ensure_session(self, session_id: str, *, metadata: dict[str, object]) -> None:
        """Get or create the session (its metadata is set on creation)."""
        with _translated("ensure session"):
            self._retrying.session(session_id, metadata=metadata)

    def add_session_peers(self, session_id: str, peers: Mapping[str, Observe]) -> None:
        """Put ``peers`` in the session, each with its observation flags (an idempotent upsert)."""
        members = [
            (peer_id, SessionPeerConfig(observe_me=flags.me, observe_others=flags.others))
            for peer_id, flags in peers.items()
        ]
        with _translated("add session peers"):
            Session(session_id, self._retrying).add_peers(members)

    def session_peer_config(self, session_id: str, peer_id: str) -> Observe | None:
        """The flags the server applies to ``peer_id`` in the session; None if not a member."""
        try:
            with _translated("read session peer config"):
                config = Session(session_id, self._retrying).get_peer_configuration(peer_id)
        except HonchoCallError as exc:
            if exc.not_found:
                return None
            raise
        return Observe(me=config.observe_me, others=config.observe_others)

    def session_peers(self, session_id: str) -> list[str]:
        """Ids of the peers in the session."""
        with _translated("list session peers"):
            return [peer.id for peer in Session(session_id, self._retrying).peers()]

    def delete_session(self, session_id: str) -> None:
        with _translated("delete session"):
            Session(session_id, self._once).delete()

    def peers(self, filters: dict[str, object] | None = None) -> list[str]:
        with _translated("list peers"):
            return [peer.id for peer in self._retrying.peers(filters=filters)]

    def sessions(self, filters: dict[str, object] | None = None) -> list[str]:
        with _translated("list sessions"):
            return [
                session.id for session in self._retrying.sessions(filters=filters, size=LIST_PAGE)
            ]

    # -- messages ----------------------------------------------------------------------------

    def add_messages(self, session_id: str, messages: Sequence[OutgoingMessage]) -> int:
        """Post ``messages`` in one request (sent once: never retried); how many were stored."""
        params = [
            MessageCreateParams(
                peer_id=message.peer_id,
                content=message.content,
                metadata=dict(message.metadata),
                created_at=message.created_at,
            )
            for message in messages
        ]
        with _translated("add messages"):
            return len(Session(session_id, self._once).add_messages(params))

    def find_messages(
        self, session_id: str, filters: dict[str, object], *, limit: int = 1
    ) -> list[FoundMessage]:
        with _translated("list messages"):
            page = Session(session_id, self._retrying).messages(filters=filters, size=limit)
            return [_message(item) for item in page.items]

    def search_peer(
        self, peer_id: str, query: str, *, limit: int, filters: dict[str, object] | None = None
    ) -> list[FoundMessage]:
        with _translated("search peer"):
            found = Peer(peer_id, self._retrying).search(query, filters=filters, limit=limit)
            return [_message(item) for item in found]

    def get_card(self, observer: str, target: str | None = None) -> list[str] | None:
        """The card ``observer`` keeps about ``target`` (itself when None); None if never set."""
        with _translated("get peer card"):
            card = Peer(observer, self._retrying).get_card(target)
            return None if card is None else list(card)

    def set_card(self, observer: str, card: Sequence[str], target: str | None = None) -> list[str]:
        with _translated("set peer card"):
            return list(Peer(observer, self._once).set_card(list(card), target) or [])

    def representation(
        self,
        observer: str,
        target: str | None = None,
        *,
        sessions: Sequence[str] | None = None,
        search_query: str | None = None,
    ) -> str:
        """The observer's representation of ``target`` (itself when None), within ``sessions``."""
        with _translated("get representation"):
            return Peer(observer, self._retrying).representation(
                target=target,
                search_query=search_query,
                sessions=list(sessions) if sessions is not None else None,
            )

    def session_context(
        self,
        session_id: str,
        *,
        peer_target: str,
        peer_perspective: str | None,
        limit_to_session: bool,
        tokens: int,
        search_query: str | None = None,
    ) -> SessionView:
        with _translated("get session context"):
            context = Session(session_id, self._retrying).context(
                summary=True,
                tokens=tokens,
                peer_target=peer_target,
                peer_perspective=peer_perspective,
                limit_to_session=limit_to_session,
                search_query=search_query,
            )
            return SessionView(
                summary=context.summary.content if context.summary else "",
                representation=context.peer_representation or "",
                peer_card=list(context.peer_card or []),
                messages=[_message(item) for item in context.messages],
            )

    def session_summary(self, session_id: str) -> str:
        with _translated("get session summaries"):
            summaries = Session(session_id, self._retrying).summaries()
            best = summaries.long_summary or summaries.short_summary
            return best.content if best else ""

    def chat(
        self,
        observer: str,
        query: str,
        *,
        target: str | None,
        level: Level,
        timeout_s: float,
        sessions: Sequence[str] | None = None,
    ) -> str:
        """The dialectic answer ("" when Honcho had nothing); ``sessions`` confines recall."""
        with _translated("dialectic chat"):
            answer = Peer(observer, self._once).chat(
                query,
                target=target,
                sessions=list(sessions) if sessions is not None else None,
                reasoning_level=level,
                timeout=timeout_s,
            )
            return answer if isinstance(answer, str) else ""

    def queue_idle(self, *, session: str) -> bool:
        """Whether Honcho's deriver has no pending or running work for ``session``."""
        with _translated("read queue status"):
            status = self._retrying.queue_status(session=session)
            return status.pending_work_units + status.in_progress_work_units == 0

    # -- conclusions -------------------------------------------------------------------------

    def create_conclusions(
        self, observer: str, observed: str, contents: Sequence[str], session_id: str | None
    ) -> list[str]:
        """Store ``contents`` as conclusions (sent once); their ids."""
        items: list[dict[str, Any]] = [
            {"content": content, "session_id": session_id} for content in contents
        ]
        if not items:
            return []
        with _translated("create conclusions"):
            view = Peer(observer, self._once).conclusions_of(observed)
            return [conclusion.id for conclusion in view.create(items)]

    def list_conclusions(
        self,
        observer: str,
        observed: str,
        *,
        limit: int = LIST_PAGE,
        newest_first: bool = True,
        session: str | None = None,
    ) -> list[FoundConclusion]:
        """What ``observer`` concluded about ``observed`` (only from ``session`` when given)."""
        with _translated("list conclusions"):
            view = Peer(observer, self._retrying).conclusions_of(observed)
            # Honcho lists newest first; ``reverse`` asks for the oldest first.
            size = min(limit, LIST_PAGE)
            page = view.list(size=size, session=session, reverse=not newest_first)
            found: list[FoundConclusion] = []
            for item in page:
                found.append(
                    FoundConclusion(
                        id=item.id,
                        content=item.content,
                        observer_id=item.observer_id,
                        observed_id=item.observed_id,
                        session_id=item.session_id,
                    )
                )
                if len(found) >= limit:
                    break
            return found

    def delete_conclusion(self, conclusion_id: str) -> None:
        with _translated("delete conclusion"):
            # The view's observer pair does not matter for a delete by id.
            Peer("_", self._once).conclusions.delete(conclusion_id)


def _message(item: Any) -> FoundMessage:
    return FoundMessage(
        id=item.id,
        peer_id=item.peer_id,
        session_id=item.session_id,
        content=item.content,
        metadata=dict(item.metadata or {}),
        created_at=item.created_at.isoformat(),
    )


@contextmanager
def _translated(operation: str) -> Iterator[None]:
    """Turn whatever the SDK or httpx raise into :class:`HonchoCallError`."""
    try:
        yield
    except HonchoError as exc:
        raise HonchoCallError(operation, exc.message, exc.status or None) from exc
    except httpx.HTTPError as exc:
        raise HonchoCallError(operation, f"{type(exc).__name__}: {exc}") from exc
    except (pydantic.ValidationError, KeyError, TypeError, ValueError) as exc:
        raise HonchoCallError(operation, f"unexpected answer or argument: {exc}") from exc
