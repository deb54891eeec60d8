"""Decode layers beyond base64/hex: percent-encoding, rot13, leetspeak and spaced-out text.

Each layer returns a *reading* of the whole text to scan again, only when the reading is
plausibly what the writer meant: percent-escapes that decode to something else, rot13
that reads as more English than the original, leetspeak with enough digit-for-letter
words, letters or ideographs spaced out one by one. Ordinary text yields no layer, so the
common case costs a few regex searches.
"""

from __future__ import annotations

import codecs
import re
from urllib.parse import unquote

_PERCENT_RE = re.compile(r"%[0-9A-Fa-f]{2}")
_LATIN_WORD_RE = re.compile(r"[A-Za-z]+")
_ROT13_HINT_RE = re.compile(r"\brot-?13\b", re.IGNORECASE)
# Frequent English words: a reading with many more of them than the original is English.
_COMMON = frozenset(
    [
        "the",
        "and",
        "to",
        "of",
        "you",
        "your",
        "all",
        "is",
        "in",
        "for",
        "that",
        "this",
        "with",
        "user",
        "users",
        "send",
        "me",
        "my",
        "it",
        "be",
        "are",
        "on",
        "from",
        "now",
        "as",
        "any",
        "every",
        "when",
        "whenever",
        "if",
        "what",
        "show",
        "give",
        "tell",
        "ignore",
        "instructions",
        "password",
        "previous",
        "always",
        "then",
        "do",
        "not",
        "system",
        "prompt",
        "admin",
        "owner",
        "access",
        "data",
        "their",
        "other",
        "should",
        "can",
        "must",
        "never",
        "new",
        "rules",
        "need",
        "memory",
        "chat",
        "history",
    ]
)
_COMMON_ROT13 = frozenset(codecs.encode(word, "rot13") for word in _COMMON)
_LEET_WORD_RE = re.compile(
    r"(?<![\w@$!])(?=[\w@$!']*[A-Za-z])(?=[\w@$!']*(?:[0-9@$]|![\w]))[\w@$!']{2,}"
)
_TOKEN_RE = re.compile(r"[\w@$!']+")
# A letter next to a digit or symbol standing in for one: the least leetspeak needs.
_LEET_HINT_RE = re.compile(r"[A-Za-z][0-9@$!]|[0-9@$][A-Za-z]")
_LEET_I = str.maketrans(
    {
        "0": "o",
        "1": "i",
        "3": "e",
        "4": "a",
        "5": "s",
        "7": "t",
        "8": "b",
        "@": "a",
        "$": "s",
        "!": "i",
    }
)
_LEET_L = str.maketrans({"1": "l"})
# Single letters separated by single spaces or dots; a wider gap separates words.
_SPACED_LATIN_RE = re.compile(r"(?<![^\W_])(?:[^\W_][ .·_-]){2,}[^\W_](?![^\W_])")
# Four or more ideographs each standing alone between separators ("忽 略 之 前").
_SPACED_CJK_RE = re.compile(
    r"(?<![\u4e00-\u9fff])(?:[\u4e00-\u9fff][ .·_*-]{1,3}){3,}[\u4e00-\u9fff](?![\u4e00-\u9fff])"
)
_SEPARATORS_RE = re.compile(r"[ .·_*-]")
_DOTTED_RE = re.compile(r"[^\W_][.·_*-][^\W_][.·_*-][^\W_]")
# A run of letters joined by dots (no spaces): one word, so "d.i.s.a.b.l.e y.o.u.r" keeps
# the space between its words.
_DOTTED_RUN_RE = re.compile(r"(?<![^\W_])(?:[^\W_][.·_*-]){2,}[^\W_](?![^\W_])")
_PUNCT_SEPARATORS_RE = re.compile(r"[.·_*-]")


def _english_words(words: list[str], vocabulary: frozenset[str] = _COMMON) -> int:
    return sum(1 for w in words if w.lower() in vocabulary)


def _rot13(text: str, words: list[str]) -> str | None:
    # Counting the common words in their rot13 form ("gur", "lbh") avoids rotating
    # ordinary text at all.
    if len(words) < 4:
        return None
    hinted = _ROT13_HINT_RE.search(text) is not None
    rotated_words = _english_words(words, _COMMON_ROT13)
    if not hinted and (rotated_words < 2 or rotated_words <= 2 * _english_words(words)):
        return None
    return codecs.encode(text, "rot13")


def _percent(text: str) -> str | None:
    if "%" not in text or len(_PERCENT_RE.findall(text)) < 3:
        return None
    decoded = unquote(text.replace("+", " "))
    return decoded if decoded != text else None


def _leet(text: str) -> list[str]:
    if _LEET_HINT_RE.search(text) is None:
        return []
    words = _LEET_WORD_RE.findall(text)
    if len(words) < 2:
        return []
    # Mostly leetspeak: every token is read, bare digits included ("4" → "a");
    # otherwise only the tokens that mix letters and digits are.
    heavy = len(words) >= 3 and len(words) >= 0.3 * len(_TOKEN_RE.findall(text))
    pattern = _TOKEN_RE if heavy else _LEET_WORD_RE
    readings = [pattern.sub(lambda m: m.group().lower().translate(_LEET_I), text)]
    if "1" in text:
        readings.append(
            pattern.sub(lambda m: m.group().lower().translate(_LEET_L).translate(_LEET_I), text)
        )
    if heavy:
        # Numbers stay numbers in one reading: "p1n 4417" is a PIN, not "pin aait".
        readings.append(_LEET_WORD_RE.sub(lambda m: m.group().lower().translate(_LEET_I), text))
        return readings
    # A few mixed tokens are worth a rescan only when the reading has more English in it
    # ("B1 level, 2FA" has not).
    before = _english_words(_LATIN_WORD_RE.findall(text))
    return [r for r in readings if _english_words(_LATIN_WORD_RE.findall(r)) > before]


def _respaced(raw: str) -> str | None:
    # Spaced-out text has many one-character tokens, or dots between letters
    # ("s.y.s.t.e.m", "系.统"); ordinary text is left alone without a regex pass.
    singles = sum(1 for token in raw.split() if len(token) == 1 and token.isalnum())
    dotted = _DOTTED_RE.search(raw) is not None
    joined = raw
    if not raw.isascii() and (singles >= 3 or any(c in raw for c in ".·_*-")):
        joined = _SPACED_CJK_RE.sub(lambda m: _SEPARATORS_RE.sub("", m.group()), joined)
    if dotted:
        joined = _DOTTED_RUN_RE.sub(lambda m: _PUNCT_SEPARATORS_RE.sub("", m.group()), joined)
    if singles >= 3:
        joined = _SPACED_LATIN_RE.sub(lambda m: _SEPARATORS_RE.sub("", m.group()), joined)
    return joined if joined != raw else None


def readings(raw: str, folded: str) -> dict[str, str]:
    """Other readings of a text, by layer name (``url-encoded``, ``rot13``, ``leetspeak``,
    ``spaced``); empty for ordinary text."""
    found: dict[str, str] = {}
    decoded = _percent(folded)
    if decoded:
        found["url-encoded"] = decoded
    rotated = _rot13(folded, _LATIN_WORD_RE.findall(folded))
    if rotated:
        found["rot13"] = rotated
    leet = _leet(folded)
    if leet:
        found["leetspeak"] = "\n".join(leet)
    spaced = _respaced(raw)
    if spaced:
        found["spaced"] = spaced
    return found
