"""Time expressions in search questions ("last week", "in May 2023", "昨天", "上个月").

:func:`extract` finds the expressions a question uses, resolves them against ``now`` (UTC)
into one :class:`Span` of dates, and returns the question with those words removed so they
are not searched as text. The search boosts messages written inside the span; it does not
drop the others, because people misremember dates by a day or a week.

Understood (English): today, yesterday, the day before yesterday, N days/weeks/months/years
ago (digits or words up to twelve), last/this week|month|year, a month name with an optional
day and year ("May 2nd", "on 2 May 2023", "in May"), ISO dates (2023-05-02). Chinese: 今天,
昨天, 前天, 上周/上个星期/本周, 上个月/这个月, 去年/今年, N天前/N周前/N个月前, 5月2日/5月2号,
2023年5月, 5月. A month or day without a year means the latest one not after ``now``.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

DAY_S = 86_400.0

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_EN_NUMBERS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        ]
    )
}
_EN_NUMBERS.update({"a": 1, "an": 1, "a couple of": 2, "couple of": 2, "a few": 3, "few": 3})
_ZH_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九十")}
_ZH_DIGITS["两"] = 2

_MONTH_NAME = "|".join(sorted(_MONTHS, key=len, reverse=True))
_EN_NUM = r"\d{1,3}|" + "|".join(sorted(_EN_NUMBERS, key=len, reverse=True))
_ORD = r"(?:st|nd|rd|th)?"
_ZH_NUM = r"[0-9]{1,3}|[零一二两三四五六七八九十]{1,3}"

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")),
    (
        "month_day",
        re.compile(
            rf"\b(?:on\s+)?(?:the\s+)?(?:({_MONTH_NAME})\.?\s+(\d{{1,2}}){_ORD}|(\d{{1,2}}){_ORD}"
            rf"\s+(?:of\s+)?({_MONTH_NAME}))\b(?:,?\s+(\d{{4}})\b)?",
            re.IGNORECASE,
        ),
    ),
    ("month", re.compile(rf"\b(?:in\s+)?({_MONTH_NAME})\b(?:,?\s+(\d{{4}})\b)?", re.IGNORECASE)),
    ("ago", re.compile(rf"\b({_EN_NUM})\s+(day|week|month|year)s?\s+ago\b", re.IGNORECASE)),
    ("rel", re.compile(r"\b(last|this|past|previous)\s+(week|month|year)\b", re.IGNORECASE)),
    ("before_yesterday", re.compile(r"\bthe\s+day\s+before\s+yesterday\b", re.IGNORECASE)),
    ("day_word", re.compile(r"\b(today|yesterday|tonight)\b", re.IGNORECASE)),
    ("zh_ymd", re.compile(r"(?:(\d{4})年)?(" + _ZH_NUM + r")月(" + _ZH_NUM + r")[日号]")),
    ("zh_ym", re.compile(r"(?:(\d{4})年)?(" + _ZH_NUM + r")月份?")),
    ("zh_ago", re.compile(r"(" + _ZH_NUM + r"|几)\s*(天|周|个星期|星期|个月|年)(?:前|以前|之前)")),
    (
        "zh_word",
        re.compile(
            r"大前天|前天|昨天|昨晚|今天|今晚|上周|上个星期|上星期|上礼拜|本周|这周|这个星期|"
            r"上个月|上月|这个月|本月|去年|今年"
        ),
    ),
]


@dataclass(frozen=True, slots=True)
class Span:
    """Dates ``first`` to ``last`` inclusive, as epoch seconds ``[start, end)`` in UTC."""

    first: date
    last: date

    @property
    def start(self) -> float:
        return datetime(self.first.year, self.first.month, self.first.day, tzinfo=UTC).timestamp()

    @property
    def end(self) -> float:
        return self.start + ((self.last - self.first).days + 1) * DAY_S

    @property
    def days(self) -> int:
        return (self.last - self.first).days + 1

    def contains(self, ts: float) -> bool:
        return self.start <= ts < self.end

    def label(self) -> str:
        if self.first == self.last:
            return self.first.isoformat()
        return f"{self.first.isoformat()}..{self.last.isoformat()}"

    def union(self, other: Span) -> Span:
        return Span(min(self.first, other.first), max(self.last, other.last))


def extract(text: str, now: float) -> tuple[str, Span | None]:
    """``text`` without its time expressions, and the span they name (None if none)."""
    today = datetime.fromtimestamp(now, UTC).date()
    span: Span | None = None
    for kind, pattern in _PATTERNS:
        pieces: list[str] = []
        last = 0
        for match in pattern.finditer(text):
            found = _resolve(kind, match, today)
            if found is None:
                continue
            span = found if span is None else span.union(found)
            pieces.append(text[last : match.start()])
            pieces.append(" ")
            last = match.end()
        if pieces:
            text = "".join(pieces) + text[last:]
    return text, span


def _resolve(kind: str, m: re.Match[str], today: date) -> Span | None:
    try:
        return _RESOLVERS[kind](m, today)
    except (ValueError, OverflowError):  # 31 February, year 0, ...
        return None


def _day(day: date) -> Span:
    return Span(day, day)


def _month_span(year: int, month: int) -> Span:
    return Span(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]))


def _latest_month(month: int, year: str | None, today: date) -> Span:
    if year:
        return _month_span(int(year), month)
    y = today.year if month <= today.month else today.year - 1
    return _month_span(y, month)


def _latest_day(month: int, day: int, year: str | None, today: date) -> Span:
    if year:
        return _day(date(int(year), month, day))
    candidate = date(today.year, month, day)
    if candidate > today:
        candidate = date(today.year - 1, month, day)
    return _day(candidate)


def _ago(amount: int, unit: str, today: date) -> Span:
    """Around ``amount`` units before today: people round, so the span has some slack."""
    if unit in ("day", "天"):
        return Span(today - timedelta(days=amount + 1), today - timedelta(days=max(amount - 1, 0)))
    if unit in ("week", "周", "星期", "个星期"):
        centre = today - timedelta(weeks=amount)
        return Span(centre - timedelta(days=6), centre + timedelta(days=3))
    if unit in ("month", "个月"):
        centre = today - timedelta(days=30 * amount)
        return Span(centre - timedelta(days=20), centre + timedelta(days=15))
    centre = today - timedelta(days=365 * amount)
    return Span(centre - timedelta(days=120), centre + timedelta(days=120))


def _relative(which: str, unit: str, today: date) -> Span:
    previous = which.lower() in ("last", "past", "previous")
    if unit == "week":
        monday = today - timedelta(days=today.weekday())
        if which.lower() == "past":
            return Span(today - timedelta(days=7), today)
        return (
            Span(monday - timedelta(days=7), monday - timedelta(days=1))
            if previous
            else (Span(monday, today))
        )
    if unit == "month":
        if not previous:
            return Span(today.replace(day=1), today)
        if which.lower() == "past":
            return Span(today - timedelta(days=30), today)
        last_month_end = today.replace(day=1) - timedelta(days=1)
        return _month_span(last_month_end.year, last_month_end.month)
    year = today.year - 1 if previous else today.year
    return Span(date(year, 1, 1), date(year, 12, 31) if previous else today)


def _zh_number(text: str) -> int:
    if text.isdigit():
        return int(text)
    if text == "几":
        return 3
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS.get(ones, 0))
    value = 0
    for char in text:
        value = value * 10 + _ZH_DIGITS[char]
    return value


def _en_number(text: str) -> int:
    lowered = " ".join(text.lower().split())
    return int(lowered) if lowered.isdigit() else _EN_NUMBERS[lowered]


def _zh_word(word: str, today: date) -> Span:
    days = {"大前天": 3, "前天": 2, "昨天": 1, "昨晚": 1, "今天": 0, "今晚": 0}
    if word in days:
        return _day(today - timedelta(days=days[word]))
    if word in ("上周", "上个星期", "上星期", "上礼拜"):
        return _relative("last", "week", today)
    if word in ("本周", "这周", "这个星期"):
        return _relative("this", "week", today)
    if word in ("上个月", "上月"):
        return _relative("last", "month", today)
    if word in ("这个月", "本月"):
        return _relative("this", "month", today)
    return _relative("last" if word == "去年" else "this", "year", today)


def _month_day(m: re.Match[str], today: date) -> Span:
    name = m.group(1) or m.group(4)
    day = m.group(2) or m.group(3)
    return _latest_day(_MONTHS[name.lower()], int(day), m.group(5), today)


def _month_only(m: re.Match[str], today: date) -> Span | None:
    name = m.group(1)
    # "may" and "march" are also ordinary words; take them as months only when capitalised
    # or followed by a year.
    if name.lower() in ("may", "march", "jan", "mar", "jun", "sept", "dec") and not (
        name[0].isupper() or m.group(2)
    ):
        return None
    if name.lower() == "may" and not m.group(2) and not m.group(0).lower().startswith("in"):
        return None
    return _latest_month(_MONTHS[name.lower()], m.group(2), today)


def _day_word(m: re.Match[str], today: date) -> Span:
    return _day(today - timedelta(days=1 if m.group(1).lower() == "yesterday" else 0))


_RESOLVERS = {
    "iso": lambda m, t: _day(date(int(m.group(1)), int(m.group(2)), int(m.group(3)))),
    "month_day": _month_day,
    "month": _month_only,
    "ago": lambda m, t: _ago(_en_number(m.group(1)), m.group(2).lower(), t),
    "rel": lambda m, t: _relative(m.group(1), m.group(2).lower(), t),
    "before_yesterday": lambda m, t: _day(t - timedelta(days=2)),
    "day_word": _day_word,
    "zh_ymd": lambda m, t: _latest_day(
        _zh_number(m.group(2)), _zh_number(m.group(3)), m.group(1), t
    ),
    "zh_ym": lambda m, t: _latest_month(_zh_number(m.group(2)), m.group(1), t),
    "zh_ago": lambda m, t: _ago(_zh_number(m.group(1)), m.group(2), t),
    "zh_word": lambda m, t: _zh_word(m.group(0), t),
}
