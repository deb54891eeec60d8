"""The threat scanner every memory write and every memory snapshot goes through (SPEC §10).

``scan(text)`` runs, in order:

1. raw-character checks on the text as given: invisible characters, bidi controls, tag
   characters outside emoji flags, variation-selector smuggling, control characters;
2. folding (NFKC-style mapping, look-alikes to Latin, invisible characters removed,
   whitespace collapsed) and the pattern rules of :mod:`gateway.security.patterns`; when the
   text spaces out single letters ("i g n o r e"), the phrase rules run again on a compact
   copy with everything but letters and digits removed. A phrase quoted in a note that
   talks about attacks ('"ignore previous instructions" attacks work because …') is a
   mention, not a use;
3. the structural checks of :mod:`gateway.security.structure` and the secrets detector of
   :mod:`gateway.security.secrets` on the same folded text;
4. decoding of what was hidden (tag characters, variation-selector runs, base64, hex,
   percent-encoding, rot13, leetspeak, spaced-out letters) and a rescan of the decoded
   text, at most two levels deep.

It returns every rule that fired (once each), first the raw-character ones. It does not
raise on any ``str``: lone surrogates, control characters and megabytes of input included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gateway.security.cues import Text, quoted
from gateway.security.cues_intent import DISCUSSION
from gateway.security.layers import readings
from gateway.security.patterns import RULES
from gateway.security.payloads import encoded_payloads
from gateway.security.rules import Rule
from gateway.security.secrets import find_secrets
from gateway.security.structure import assess
from gateway.security.unicode import fold, hidden_characters, printable_excerpt, smuggled_text

INVISIBLE_UNICODE = "invisible-unicode"
MAX_DEPTH = 2
EXCERPT_CHARS = 80
_CONTEXT_CHARS = 12

# Five or more single letters/digits in a row, each followed by 1-3 non-word characters.
_SPACED_LETTERS_RE = re.compile(r"(?<![^\W_])(?:[^\W_][\W_]{1,3}){4,}[^\W_](?![^\W_])")
_NON_WORD_RE = re.compile(r"[\W_]+")
_WORD_RE = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class ScanFinding:
    """One rule that fired: its name, category and a short printable excerpt (≤ 80 chars)."""

    rule: str
    category: str
    excerpt: str


@dataclass(frozen=True, slots=True)
class ScanResult:
    """Everything :func:`scan` found; empty means the text may be stored."""

    findings: tuple[ScanFinding, ...] = ()

    @property
    def blocked(self) -> bool:
        return bool(self.findings)

    @property
    def rule(self) -> str | None:
        """Name of the first rule that fired, or None."""
        return self.findings[0].rule if self.findings else None

    def describe(self) -> str:
        """One line for the user or the model: which rule blocked the text and on what."""
        if not self.findings:
            return "passed: no rule matched"
        first = self.findings[0]
        line = f"blocked by rule '{first.rule}' ({first.category}): '{first.excerpt}'"
        if len(self.findings) > 1:
            line += f" (+{len(self.findings) - 1} more)"
        return line


def scan(text: str) -> ScanResult:
    """Scan ``text`` for prompt injection, exfiltration, backdoors, secrets and hidden
    characters; see the module docstring for the steps."""
    found: dict[str, ScanFinding] = {}
    _scan_into(text, depth=0, label="", found=found)
    return ScanResult(tuple(found.values()))


def _scan_into(text: str, *, depth: int, label: str, found: dict[str, ScanFinding]) -> None:
    for name, index in hidden_characters(text).items():
        window = text[max(0, index - _CONTEXT_CHARS) : index + _CONTEXT_CHARS]
        _add(found, name, INVISIBLE_UNICODE, label, window)

    folded = fold(text)
    cued = Text(folded)
    for rule, matched in _match_rules(folded, cued):
        _add(found, rule.name, rule.category, label, _shown(rule, matched))
    for name, category, matched in assess(cued) + find_secrets(folded):
        _add(found, name, category, label, matched)

    if depth >= MAX_DEPTH:
        return
    hidden = smuggled_text(text)
    if hidden:
        _scan_into("\n".join(hidden), depth=depth + 1, label=f"{label}hidden: ", found=found)
    for kind, decoded in (encoded_payloads(folded) | readings(text, folded)).items():
        _scan_into(decoded, depth=depth + 1, label=f"{label}{kind}: ", found=found)


def _match_rules(folded: str, cued: Text) -> list[tuple[Rule, str]]:
    lowered = folded.lower()
    words = frozenset(_WORD_RE.findall(lowered))
    chars = None if lowered.isascii() else frozenset(lowered)
    matches: list[tuple[Rule, str]] = []
    for rule in RULES:
        if rule.should_try(lowered, words, chars):
            hit = rule.pattern.search(folded)
            if hit and not (rule.lang != "any" and _mentioned(folded, hit, cued)):
                matches.append((rule, hit.group()))
    if _SPACED_LETTERS_RE.search(folded):
        compact = _NON_WORD_RE.sub("", lowered)
        for rule in RULES:
            if rule.compact is not None and rule.should_try(compact, None, chars):
                hit = rule.compact.search(compact)
                if hit:
                    matches.append((rule, hit.group()))
    return matches


def _mentioned(folded: str, hit: re.Match[str], cued: Text) -> bool:
    """A quoted phrase in a note that talks about attacks is mentioned, not used."""
    return quoted(folded, hit) and DISCUSSION.search(cued) is not None


def _shown(rule: Rule, matched: str) -> str:
    return f"{matched[:4]}…[redacted]" if rule.redact else matched


def _add(found: dict[str, ScanFinding], rule: str, category: str, label: str, shown: str) -> None:
    if rule not in found:
        excerpt = printable_excerpt(label + shown, EXCERPT_CHARS)
        found[rule] = ScanFinding(rule, category, excerpt)
