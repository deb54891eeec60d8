"""Recall for the next turn: Honcho's base context plus a multi-pass dialectic answer.

Everything is read through a :class:`~providers.honcho.scope.TenantScope`, about the peer
of the context's memory scope (the tenant's peer, or in an isolated group its group peer:
see :mod:`~providers.honcho.identity`), asked by the scope's own assistant peer.

**Base context** is one session-context call (session summary, the user's representation
and peer card from the assistant's perspective when it observes the user, else the user's
own) plus the scope's assistant peer's self-representation.

**Dialectic** (``peer.chat``) runs ``dialectic_depth`` passes at most:

1. the question — *cold* (Honcho knows nothing of the user yet: ask for the essentials) or
   *warm* (ask what is relevant to the message); its level follows the message's length,
   never above ``reasoning_level_cap``;
2. an audit of that answer one level higher, skipped when the first answer is already
   sufficient (it covers every content word of the message, or is long);
3. a reconcile pass merging answer and audit at the first pass's level.

The passes share one time budget, ``dialectic_timeout_s``; a pass that times out or fails
is logged and the recall goes on with the base context alone.

Trivial messages ("ok", "thanks", "/commands") get no dialectic. An empty first answer
backs the session off: the next 1, 2, 4 … 8 recalls skip the dialectic (per process). Every
section is capped at ``max_section_chars`` and the whole text at
``max_recall_chars``, most query-specific sections first.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass

from gateway.security.fence import sanitize_recalled
from gateway.settings import HonchoSettings
from providers.base import RecallQuery
from providers.honcho.client import HonchoCallError, Level
from providers.honcho.scope import TenantScope

log = logging.getLogger(__name__)

LEVELS: tuple[Level, ...] = ("minimal", "low", "medium", "high", "max")
SUFFICIENT_CHARS = 600
MIN_PASS_S = 0.5  # a later dialectic pass needs at least this much of the budget left
MAX_BACKOFF = 8
_TRIVIAL = re.compile(
    r"^(ok(ay)?|k+|kk|thx|thanks?( you)?|thank you|ty|yes|no|yep|yeah|nope|sure|cool|nice"
    r"|great|lol|hi|hello|hey|bye|good night|gm|gn)[\s.!?~]*$",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w{3,}")
_STOP = frozenset(
    re.findall(
        r"[\w']+",
        "the and for you your are was what who how why when where which with this that have has"
        " does did can could would should will about from into they them their there then than"
        " any all our out not but its it's just also been being",
    )
)
_NOTHING = re.compile(r"^\W*(none|nothing|n/?a|ok)\W*$", re.IGNORECASE)


def is_trivial(text: str) -> bool:
    """Too small to be worth a dialectic: empty, a slash command, a courtesy, no words."""
    stripped = text.strip()
    return (
        not stripped
        or stripped.startswith("/")
        or bool(_TRIVIAL.match(stripped))
        or not any(char.isalnum() for char in stripped)
    )


def cap_level(level: Level, cap: Level) -> Level:
    return LEVELS[min(LEVELS.index(level), LEVELS.index(cap))]


def bump(level: Level, cap: Level) -> Level:
    return cap_level(LEVELS[min(LEVELS.index(level) + 1, len(LEVELS) - 1)], cap)


def level_for(text: str, cap: Level) -> Level:
    """Longer messages get deeper reasoning: <40 chars minimal, <120 low, <400 medium, else high."""
    size = len(text.strip())
    level: Level = (
        "minimal" if size < 40 else "low" if size < 120 else "medium" if size < 400 else "high"
    )
    return cap_level(level, cap)


def keywords(text: str) -> set[str]:
    return {word for word in _WORD.findall(text.casefold()) if word not in _STOP}


def sufficient(answer: str, question: str) -> bool:
    """Whether ``answer`` already covers the question (every content word, or simply long)."""
    wanted = keywords(question)
    return len(answer) >= SUFFICIENT_CHARS or (bool(wanted) and wanted <= keywords(answer))


def clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + "…"


def shorten_query(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut or text[:limit]


@dataclass(frozen=True, slots=True)
class Pass:
    """One dialectic pass; ``final`` is the answer composed from the others, not a call."""

    kind: str
    level: Level
    answer: str


class Recaller:
    """Builds the recall text of one context; thread-safe (back-off state under a lock)."""

    def __init__(self, settings: HonchoSettings) -> None:
        self._settings = settings
        self._lock = threading.Lock()
        self._backoff: dict[str, tuple[int, int]] = {}  # session → (skip left, next skip)

    def recall(self, scope: TenantScope, query: RecallQuery) -> str:
        base = self.base_context(scope)
        sections: list[tuple[str, str]] = []
        wanted = query.dialectic and not is_trivial(query.text)
        if wanted and self._take_turn(scope.session):
            cold = not (base.get("representation") or base.get("card"))
            passes = self._dialectic_or_none(scope, query.text, cold=cold)
            if passes:
                sections.append(("What Honcho reasons about this message", passes[-1].answer))
        sections.extend(
            (title, base[key])
            for key, title in (
                ("card", "User profile (peer card)"),
                ("summary", "Summary of this conversation so far"),
                ("representation", "What Honcho knows about the user"),
                ("ai_self", "The assistant's own profile"),
            )
            if base.get(key)
        )
        return self.render(sections)

    def base_context(self, scope: TenantScope, focus: str | None = None) -> dict[str, str]:
        """Summary, representation (curated around ``focus`` when given), card, AI self-view."""
        view = scope.context(tokens=self._settings.context_tokens, focus=focus)
        found = {
            "summary": view.summary,
            "representation": view.representation,
            "card": "\n".join(f"- {line}" for line in view.peer_card),
        }
        if scope.state.ai.me:
            found["ai_self"] = scope.assistant_self()
        return found

    def dialectic(self, scope: TenantScope, text: str, *, cold: bool) -> list[Pass]:
        """The passes run for ``text`` (an empty first answer ends the list).

        All passes share one budget, ``dialectic_timeout_s``: a later pass gets what is left
        and is skipped when under :data:`MIN_PASS_S` remains.
        """
        settings = self._settings
        deadline = time.monotonic() + settings.dialectic_timeout_s
        question = shorten_query(text, settings.dialectic_max_input_chars)
        first_level = level_for(question, settings.reasoning_level_cap)
        if cold:
            prompt = (
                "What are the most important things to know about this user (who they are, "
                f"what they want, how they like answers) to reply to: {question}"
            )
        else:
            prompt = f"Given what you know about this user, what is relevant to: {question}"
        passes = [Pass("question", first_level, self.ask(scope, prompt, first_level))]
        if not passes[0].answer:
            self._back_off(scope.session)
            return []
        self._reset(scope.session)
        first = passes[0].answer
        if settings.dialectic_depth == 1 or sufficient(first, question):
            return passes
        if deadline - time.monotonic() < MIN_PASS_S:
            return passes
        audit_level = bump(first_level, settings.reasoning_level_cap)
        audit_prompt = (
            "Check this answer about the user against everything you know. List only missing "
            f"facts or contradictions, or reply NONE.\nQuestion: {question}\nAnswer: {first}"
        )
        audit = self._later_pass(scope, audit_prompt, audit_level, deadline)
        passes.append(Pass("audit", audit_level, audit))
        if not audit or _NOTHING.match(audit):
            return [*passes, Pass("final", first_level, first)]
        if settings.dialectic_depth == 2 or deadline - time.monotonic() < MIN_PASS_S:
            return [*passes, Pass("final", audit_level, f"{first}\nAlso: {audit}")]
        reconcile_prompt = (
            "Merge these into one short, consistent answer about the user, preferring the "
            f"corrections.\nQuestion: {question}\nAnswer: {first}\nCorrections: {audit}"
        )
        merged = self._later_pass(scope, reconcile_prompt, first_level, deadline)
        passes.append(Pass("reconcile", first_level, merged or f"{first}\nAlso: {audit}"))
        return passes

    def ask(
        self, scope: TenantScope, prompt: str, level: Level, *, deadline: float | None = None
    ) -> str:
        """One ``peer.chat`` about the scope's peer, within ``deadline`` when given."""
        timeout = self._settings.dialectic_timeout_s
        if deadline is not None:
            timeout = max(deadline - time.monotonic(), MIN_PASS_S)
        return scope.dialectic(prompt, level=level, timeout_s=timeout).strip()

    def render(self, sections: list[tuple[str, str]]) -> str:
        settings = self._settings
        parts: list[str] = []
        used = 0
        for title, body in sections:
            text = clip(sanitize_recalled(body), settings.max_section_chars)
            if not text:
                continue
            block = f"## {title}\n{text}"
            room = settings.max_recall_chars - used - (2 if parts else 0)
            if room < len(title) + 20:
                break
            parts.append(clip(block, room))
            used += len(parts[-1]) + (2 if len(parts) > 1 else 0)
        return "\n\n".join(parts)

    def _later_pass(self, scope: TenantScope, prompt: str, level: Level, deadline: float) -> str:
        """An audit or reconcile pass; on failure "" (logged): the answers so far stand."""
        try:
            return self.ask(scope, prompt, level, deadline=deadline)
        except HonchoCallError as exc:
            log.warning("honcho dialectic pass skipped for %s: %s", scope.session, exc)
            return ""

    def _dialectic_or_none(self, scope: TenantScope, text: str, *, cold: bool) -> list[Pass]:
        try:
            return self.dialectic(scope, text, cold=cold)
        except HonchoCallError as exc:
            # The base context is still worth delivering; the failure is logged and the
            # next recall tries again.
            log.warning("honcho dialectic skipped for %s: %s", scope.session, exc)
            return []

    def _take_turn(self, session: str) -> bool:
        """False while the session is backed off (and count the skipped recall)."""
        with self._lock:
            skip, step = self._backoff.get(session, (0, 1))
            if skip <= 0:
                return True
            self._backoff[session] = (skip - 1, step)
            return False

    def _back_off(self, session: str) -> None:
        with self._lock:
            _, step = self._backoff.get(session, (0, 1))
            self._backoff[session] = (step, min(step * 2, MAX_BACKOFF))

    def _reset(self, session: str) -> None:
        with self._lock:
            self._backoff.pop(session, None)

    def forget(self, session: str) -> None:
        self._reset(session)
