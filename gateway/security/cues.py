"""Cue machinery for the structural scorer: a pattern gated by cheap substring anchors.

A *cue* is one compiled pattern, English and Chinese alternatives together, matched on the
folded text (see :mod:`gateway.security.unicode`), lowercased unless the cue is cased.
A cue alone proves nothing — "always", "password", a URL and "I am the admin" all occur in
ordinary notes — and no cue is ever a finding by itself; :mod:`gateway.security.structure`
decides which *combinations* are. The cues themselves live in
:mod:`gateway.security.cues_target` (what lasts, what is sensitive, what configures the
assistant), :mod:`gateway.security.cues_sink` (where it goes: addresses, hand-over verbs,
links), :mod:`gateway.security.cues_intent` (who speaks and what they ask for) and
:mod:`gateway.security.cues_smuggle` (instructions smuggled in: role markers, translation,
overrides).
"""

from __future__ import annotations

import re

# Inside one Chinese clause: any character but a sentence end or a line break.
G = r"[^。！？!?\n]"


_TOKEN_RE = re.compile(r"[a-z0-9_']+")
_WORD_ANCHOR_RE = re.compile(r"[a-z][a-z0-9_']{0,11}")
# Lengths of the word anchors in use (filled as cues are made): only those prefixes matter.
_ANCHOR_SIZES: set[int] = set()


class Text:
    """A folded text, its lowercase form (which most cues are matched on), the prefixes of
    its words (for anchors) and the cue matches found so far, so that checks sharing a cue
    search the text once."""

    __slots__ = ("_chars", "_prefixes", "ascii", "folded", "found", "lowered")

    def __init__(self, folded: str) -> None:
        self.folded = folded
        self.lowered = folded.lower()
        self.ascii = self.lowered.isascii()
        self.found: dict[int, re.Match[str] | None] = {}
        self._prefixes: set[str] | None = None
        self._chars: frozenset[str] | None = None

    @property
    def chars(self) -> frozenset[str]:
        """The characters of the lowercase text (a cheap first test for substring anchors)."""
        if self._chars is None:
            self._chars = frozenset(self.lowered)
        return self._chars

    @property
    def prefixes(self) -> set[str]:
        """The prefixes of the text's ASCII words that are as long as some word anchor."""
        if self._prefixes is None:
            self._prefixes = {
                token[:size]
                for token in set(_TOKEN_RE.findall(self.lowered))
                for size in _ANCHOR_SIZES
                if size <= len(token)
            }
        return self._prefixes

    def without(self, match: re.Match[str]) -> Text:
        """This text with the span of ``match`` (found in ``lowered``) blanked out."""
        return Text(self.lowered[: match.start()] + " " + self.lowered[match.end() :])


class Cue:
    """One cue: a pattern and the anchors one of which every match contains.

    Anchors are checked before the pattern, which is far cheaper: most cues have no anchor
    in most notes. An anchor that starts a word ("when", "passw", "i'm") is looked up among
    the prefixes of the text's words (only its first word if it has several); any other
    anchor ("://", "@", ".com", "密码") is searched for as a substring, Chinese ones only in
    text that is not plain ASCII. A cased cue (addresses, placeholders in capitals) is
    matched on the folded text.
    """

    __slots__ = ("anchors", "cased", "pattern", "substrings", "substrings_ascii", "words")

    def __init__(self, pattern: re.Pattern[str], anchors: tuple[str, ...], cased: bool) -> None:
        self.pattern = pattern
        self.anchors = anchors
        self.cased = cased
        words: set[str] = set()
        substrings: list[str] = []
        for anchor in anchors:
            first = anchor.split(" ")[0]
            if anchor.isascii() and _WORD_ANCHOR_RE.fullmatch(first):
                words.add(first)
            else:
                substrings.append(anchor)
        self.words = frozenset(words)
        _ANCHOR_SIZES.update(len(word) for word in words)
        self.substrings = tuple(substrings)
        self.substrings_ascii = tuple(a for a in substrings if a.isascii())

    def possible(self, text: Text) -> bool:
        if not self.anchors:
            return True
        if self.words and not self.words.isdisjoint(text.prefixes):
            return True
        if text.ascii:
            return any(a in text.lowered for a in self.substrings_ascii)
        chars = text.chars
        return any(a[0] in chars and a in text.lowered for a in self.substrings)

    def search(self, text: Text, pos: int = 0) -> re.Match[str] | None:
        if pos == 0 and id(self) in text.found:
            return text.found[id(self)]
        hit = None
        if self.possible(text):
            hit = self.pattern.search(text.folded if self.cased else text.lowered, pos)
        if pos == 0:
            text.found[id(self)] = hit
        return hit

    def finditer(self, text: Text) -> list[re.Match[str]]:
        if not self.possible(text):
            return []
        return list(self.pattern.finditer(text.folded if self.cased else text.lowered))


_QUOTES = "\"'「」『』"


def quoted(text: str, hit: re.Match[str]) -> bool:
    """Whether ``hit`` is a short quotation in ``text`` ("… "ignore previous instructions"
    attacks work because …"): with a word like "attack" nearby, a phrase being talked
    about in a note on security rather than addressed to the assistant."""
    before = text[max(0, hit.start() - 2) : hit.start()]
    after = text[hit.end() : hit.end() + 2]
    short = hit.end() - hit.start() <= 60
    return short and any(q in before for q in _QUOTES) and any(q in after for q in _QUOTES)


def cue(*alternatives: str, anchors: str, cased: bool = False) -> Cue:
    """A cue from alternatives (English ones written in lowercase) and "|"-separated anchors
    ("" = no anchor: the cue is only ever tried after a rarer one has matched)."""
    pattern = re.compile("|".join(f"(?:{a})" for a in alternatives))
    return Cue(pattern, tuple(a for a in anchors.split("|") if a), cased)
