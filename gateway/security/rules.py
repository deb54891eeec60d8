"""The shape of one scanner rule and the builders the pattern tables are written with.

A rule is matched against the folded text (see :mod:`gateway.security.unicode`). Phrase
rules also carry a *compact* pattern, matched against the folded text with everything but
letters and digits removed, which is how "i g n o r e  a l l  p r e v i o u s" is caught.

English phrase templates are written with plain spaces between words and two markers:

* ``{F}`` — up to two filler words ("ignore *completely and* all previous instructions");
* ``{NP}`` — "not followed by a possessive 's" ("tell the user" but not "tell the user's").

Named parts (``{verb}``) are substituted from the table's own ``parts`` mapping first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

# Between two words of a phrase: spaces and light punctuation or markup, never a full stop.
SEPARATOR = r"""[\s,;:*~`'"-]{1,4}"""
_FILLER = rf"(?:[^\W_]+{SEPARATOR}){{0,2}}"
_COMPACT_FILLER = r"[^\W_]{0,20}?"
_NOT_POSSESSIVE = r"(?!['’]s\b)"
_PART_RE = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class Rule:
    """One named threat pattern.

    ``triggers`` are lowercase strings of which at least one must occur before the (costlier)
    regular expression is tried; empty means always try. With ``whole_words`` they must
    occur as whole words of the folded text (as substrings of the compact text).
    ``redact`` hides the matched text in findings (it is a secret).
    """

    name: str
    category: str
    lang: str
    pattern: re.Pattern[str]
    compact: re.Pattern[str] | None = None
    triggers: tuple[str, ...] = ()
    whole_words: bool = False
    redact: bool = False

    def should_try(
        self, lowered: str, words: frozenset[str] | None, chars: frozenset[str] | None
    ) -> bool:
        """Whether the pattern may match ``lowered`` (the lowercased text). ``words`` is its
        set of words (None for the compact text, which has no word boundaries left);
        ``chars`` its set of characters, given for non-ASCII text, where substring search
        is slower than a set look-up."""
        if not self.triggers:
            return True
        if self.whole_words and words is not None:
            return not words.isdisjoint(self.triggers)
        if chars is not None:
            return any(t[0] in chars and t in lowered for t in self.triggers)
        return any(t in lowered for t in self.triggers)


def _expand(template: str, parts: Mapping[str, str]) -> str:
    for _ in range(4):  # parts may refer to other parts
        expanded = _PART_RE.sub(lambda m: parts.get(m.group(1), m.group(0)), template)
        if expanded == template:
            break
        template = expanded
    return template


def _spaced(template: str) -> str:
    body = template.replace(" ", SEPARATOR)
    body = body.replace("{F}", _FILLER).replace("{NP}", _NOT_POSSESSIVE)
    return rf"\b(?:{body})(?!\w)"


def _compact(template: str) -> str:
    return (
        template.replace(" ", "")
        .replace("'", "")
        .replace("{F}", _COMPACT_FILLER)
        .replace("{NP}", "")
    )


def phrase(
    name: str,
    category: str,
    templates: tuple[str, ...],
    *,
    parts: Mapping[str, str],
    triggers: tuple[str, ...],
    compact: bool = True,
) -> Rule:
    """An English phrase rule: case-insensitive, words separated by :data:`SEPARATOR`."""
    expanded = [_expand(t, parts) for t in templates]
    pattern = re.compile("|".join(_spaced(t) for t in expanded), re.IGNORECASE)
    compact_pattern = None
    if compact:
        compact_pattern = re.compile(
            "|".join(f"(?:{_compact(t)})" for t in expanded), re.IGNORECASE
        )
    return Rule(name, category, "en", pattern, compact_pattern, triggers, whole_words=True)


def cjk(
    name: str,
    category: str,
    patterns: tuple[str, ...],
    *,
    parts: Mapping[str, str],
    triggers: tuple[str, ...] = (),
) -> Rule:
    """A Chinese rule: written without spaces, so the same pattern serves the compact text.

    Case-sensitive (which lets the regex engine skip ahead on its first characters); Latin
    words inside are written with ``(?i:...)``."""
    body = "|".join(f"(?:{_expand(p, parts)})" for p in patterns)
    compiled = re.compile(body)
    return Rule(name, category, "zh", compiled, compiled, triggers)


def technical(
    name: str,
    category: str,
    patterns: tuple[str, ...],
    *,
    triggers: tuple[str, ...],
    whole_words: bool = False,
    parts: Mapping[str, str] | None = None,
    ignore_case: bool = True,
    redact: bool = False,
) -> Rule:
    """A language-neutral rule (commands, URLs, key formats); never run on compact text."""
    body = "|".join(f"(?:{_expand(p, parts or {})})" for p in patterns)
    flags = re.IGNORECASE if ignore_case else 0
    return Rule(name, category, "any", re.compile(body, flags), None, triggers, whole_words, redact)


def words(text: str) -> tuple[str, ...]:
    """Trigger words written as one space-separated string."""
    return tuple(text.split())
