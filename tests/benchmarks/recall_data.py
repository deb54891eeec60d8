"""Synthetic long multi-session histories with planted facts, for the recall benchmark.

Each generated user has a few dozen sessions over half a year of small talk (drawn from a
filler pool), with facts planted in some of them, distractors that reuse the facts' topic
words with other details, and questions asked the way people ask them: paraphrased, with
question words, sometimes with a time expression ("last week", "上个月") whose answer is
the one mention in that period. Every question lists its evidence: the user messages that
state the fact (two or three for questions that gather facts from several sessions).

Two parts, each in English and Chinese:

``tune``
    seeds 1xx and the ``TUNE_*`` templates: what ranking constants may be adjusted on.
``heldout``
    seeds 9xx and the ``HELDOUT_*`` templates, whose facts, topics, vocabulary and question
    phrasings differ, so the score measures generalisation. Never tune on it.

A template is ``(kind, facts, questions, distractors)`` where facts and distractors are
formats over the slot values; ``kind`` is ``single`` (one fact), ``multi`` (every fact is
evidence) or ``dated`` (the fact is planted in a known period and the question names it; the
same topic is planted again well outside it as a distractor). Dated facts get a session of
their own on the day the question's time expression names (``PERIODS``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime

from tests.benchmarks.recall_templates import FILLER, FILLER_SLOTS, PERIODS, TEMPLATES, Template

NOW = datetime(2024, 6, 15, 12, 0, tzinfo=UTC).timestamp()
DAY = 86_400.0
PARTS = {"tune": 100, "heldout": 900}


@dataclass(eq=False)
class Message:
    role: str
    text: str
    ts: float = 0.0


@dataclass
class Session:
    started: float
    messages: list[Message] = field(default_factory=list)


@dataclass
class Question:
    text: str
    kind: str
    evidence: list[Message]

    def located(self, sessions: list[Session]) -> list[tuple[int, int]]:
        """(session index, message index) of each evidence message."""
        return [
            (si, mi)
            for si, session in enumerate(sessions)
            for mi, message in enumerate(session.messages)
            if any(message is e for e in self.evidence)
        ]


@dataclass
class History:
    user: str
    lang: str
    sessions: list[Session]
    questions: list[Question]


def generate(part: str, lang: str, users: int = 10, sessions: int = 36) -> list[History]:
    """``users`` histories of ``part`` ("tune" or "heldout") in ``lang`` ("en" or "zh")."""
    templates = TEMPLATES[(part, lang)]
    periods = PERIODS[(part, lang)]
    offset = PARTS[part] + (0 if lang == "en" else 50)
    return [
        _history(random.Random(offset + i), lang, templates, periods, i, sessions)
        for i in range(users)
    ]


def _history(
    rng: random.Random,
    lang: str,
    templates: list[Template],
    periods: list[tuple[int, str]],
    index: int,
    n_sessions: int,
) -> History:
    days = sorted(rng.sample(range(3, 180), n_sessions), reverse=True)
    sessions = [Session(_day(d) + rng.randrange(8 * 3600, 20 * 3600)) for d in days]
    for session in sessions:
        for _ in range(rng.randint(4, 8)):
            _exchange(rng, lang, session, _fill(rng, rng.choice(FILLER[lang]), lang))
    questions = [
        _plant(rng, lang, sessions, template, periods)
        for template in rng.sample(templates, min(len(templates), 12))
    ]
    sessions.sort(key=lambda s: s.started)
    for session in sessions:  # timestamps follow the order of the messages
        for i, message in enumerate(session.messages):
            message.ts = session.started + 60 * i
    return History(f"{lang}-user{index}", lang, sessions, questions)


def _day(ago: int) -> float:
    return NOW - ago * DAY - (NOW % DAY)


def _fill(rng: random.Random, text: str, lang: str) -> str:
    return text.format(**{k: rng.choice(v) for k, v in FILLER_SLOTS[lang].items()})


def _exchange(rng: random.Random, lang: str, session: Session, user: str) -> Message:
    """Insert a user message and a reply between two exchanges of ``session``."""
    at = 2 * rng.randint(0, len(session.messages) // 2)
    message = Message("user", user)
    session.messages[at:at] = [message, Message("assistant", rng.choice(REPLIES[lang]))]
    return message


def _plant(
    rng: random.Random,
    lang: str,
    sessions: list[Session],
    t: Template,
    periods: list[tuple[int, str]],
) -> Question:
    slots = {key: rng.choice(values) for key, values in t.slots.items()}
    facts = [f.format(**slots) for f in t.facts]
    when = ""
    if t.kind == "dated":
        ago, when = rng.choice(periods)
        dated = Session(_day(ago) + rng.randrange(8 * 3600, 20 * 3600))
        for _ in range(rng.randint(3, 6)):
            _exchange(rng, lang, dated, _fill(rng, rng.choice(FILLER[lang]), lang))
        sessions.append(dated)
        chosen = [dated]
        # the same topic, other details, well outside the period
        others = [s for s in sessions if abs(s.started - dated.started) > 40 * DAY]
    else:
        chosen = rng.sample(sessions, len(facts))
        others = [s for s in sessions if s not in chosen]
    for distractor in t.distractors:
        other = {k: rng.choice(v) for k, v in t.slots.items()}
        _exchange(rng, lang, rng.choice(others), distractor.format(**other))
    evidence = [_exchange(rng, lang, s, f) for s, f in zip(chosen, facts, strict=True)]
    wording = rng.choice(t.questions).format(when=when, **slots)
    return Question(wording, t.kind, evidence)


REPLIES = {
    "en": [
        "That sounds good, thanks for telling me.",
        "Got it. Anything else on your mind?",
        "Nice! How do you feel about it?",
        "I'll keep that in mind.",
        "Interesting, tell me more if you like.",
        "Sounds like a busy day.",
        "Okay, noted.",
        "That makes sense.",
    ],
    "zh": [
        "听起来不错，谢谢你告诉我。",
        "明白了，还有别的事吗？",
        "真好！你觉得怎么样？",
        "我记住了。",
        "挺有意思的，愿意的话可以多说说。",
        "听起来今天挺忙的。",
        "好的，知道了。",
        "有道理。",
    ],
}
