"""Structural threat scoring: which combinations of cues make a note an attack.

Phrase rules (:mod:`gateway.security.patterns`) recognise known wording; this module asks
what a note is *for*. A poisoned memory entry is an instruction addressed to the assistant
that outlives the conversation and points something sensitive somewhere it should not go,
or that changes who the assistant obeys. Each check below is one such combination of the
cues in :mod:`gateway.security.cues`:

* ``planted-rule`` — a lasting trigger ("whenever", "以后每当") + something sensitive
  (money, credentials, conversation content) + a destination or a capture of it;
* ``data-forwarding`` — credentials or conversation content sent to an outside address;
* ``authority-claim`` — "I am the owner/admin" + a request for rights or other users' data;
* ``staff-impersonation`` — "this is the support/safety team" + a directive to the assistant
  about credentials, data, rights or its safety settings (notes *about* such scams pass);
* ``config-tampering`` — a change to the assistant's own persona, configuration, access
  lists or keys;
* ``outbound-data-link`` — a link or image whose address is left open for conversation data;
* ``translate-then-execute``, ``role-prefix`` (``system:``, ``[SYSTEM]``, ``系统：``) and
  ``prompt-override`` / ``role-hijack`` phrasing the phrase tables do not cover.

:func:`assess` returns ``(rule, category, matched text)`` for each check that holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gateway.security import cues
from gateway.security.cues import Cue, Text

PLANTED_RULE = "planted-rule"
PRIVILEGE_CLAIM = "privilege-claim"
CONFIG_TAMPERING = "config-tampering"
EXFILTRATION = "exfiltration"
MARKDOWN_EXFILTRATION = "markdown-exfiltration"
INJECTION = "injection"
ROLE_HIJACK = "role-hijack"

CATEGORIES = frozenset({PLANTED_RULE, PRIVILEGE_CLAIM, CONFIG_TAMPERING})

# How far apart (characters) a change verb and the configuration it changes may be.
_NEAR = 60

Finding = tuple[str, str, str]


def _near(first: Cue, second: Cue, text: Text, distance: int) -> str | None:
    """Text spanning a match of ``first`` and one of ``second`` at most ``distance`` apart
    (both uncased cues, so positions refer to the same lowercase string)."""
    spans = [m.span() for m in second.finditer(text)]
    if not spans:
        return None
    for hit in first.finditer(text):
        for start, end in spans:
            if start - distance <= hit.end() and hit.start() <= end + distance:
                return text.lowered[min(hit.start(), start) : max(hit.end(), end)]
    return None


def _sink(text: Text) -> re.Match[str] | None:
    return cues.SINK_ADDRESS.search(text) or cues.SINK_NUMBER.search(text)


def _planted(text: Text) -> str | None:
    trigger = cues.TRIGGER.search(text)
    if trigger is None:
        return None
    outside = _sink(text)
    if outside and cues.SEND.search(text) and not cues.OWN_SINK.search(text):
        return trigger.group() + " … " + outside.group()
    money = cues.MONEY.search(text)
    credential = cues.CREDENTIAL.search(text)
    data = cues.DATA.search(text)
    if not (money or credential or data):
        return None
    sink = _sink(text)
    if sink and not cues.OWN_SINK.search(text) and cues.DIVERT.search(text):
        return trigger.group() + " … " + sink.group()
    if cues.COVERT.search(text) and cues.DIVERT.search(text):
        return trigger.group() + " … " + (money or credential or data).group()  # type: ignore[union-attr]
    if credential and (cues.CAPTURE.search(text) or cues.SEND.search(text)):
        return trigger.group() + " … " + credential.group()
    if (credential or data) and cues.OTHERS.search(text) and cues.DIVERT.search(text):
        return trigger.group() + " … " + (credential or data).group()  # type: ignore[union-attr]
    return None


def _forwarding(text: Text) -> str | None:
    sensitive = cues.CREDENTIAL.search(text) or cues.DATA.search(text)
    if sensitive is None:
        return None
    sink = _sink(text)
    if sink is None or cues.OWN_SINK.search(text):
        return None
    send = cues.SEND.search(text)
    return f"{send.group()} … {sink.group()}" if send else None


def _covert_send(text: Text) -> str | None:
    covert = cues.COVERT.search(text)
    if covert is None or not cues.SEND.search(text):
        return None
    sink = _sink(text)
    return f"{covert.group()} … {sink.group()}" if sink else None


def _authority(text: Text) -> str | None:
    claim = cues.AUTHORITY.search(text)
    if claim is None:
        return _first(cues.PRIVILEGE_REQUEST, text)
    rest = text.without(claim)
    if not cues.REQUEST.search(rest):
        return None
    wanted = (
        cues.OTHERS.search(rest)
        or cues.RIGHTS.search(rest)
        or cues.CREDENTIAL.search(rest)
        or cues.DATA.search(rest)
    )
    return f"{claim.group()} … {wanted.group()}" if wanted else None


def _staff(text: Text) -> str | None:
    staff = cues.STAFF.search(text)
    if staff is None or not cues.STAFF_INTRO.search(text) or cues.REPORTED.search(text):
        return None
    if not cues.ASSISTANT_DIRECTIVE.search(text):
        return None
    wanted = (
        cues.CREDENTIAL.search(text)
        or cues.DATA.search(text)
        or cues.RIGHTS.search(text)
        or cues.OWN_CONFIG.search(text)
        or cues.SAFETY.search(text)
        or cues.MONEY.search(text)
    )
    return f"{staff.group()} … {wanted.group()}" if wanted else None


def _config(text: Text) -> str | None:
    claim = cues.PERSONA_CLAIM.search(text)
    if claim:
        return claim.group()
    return _near(cues.CHANGE, cues.OWN_CONFIG, text, _NEAR)


def _outbound(text: Text) -> str | None:
    slot = cues.URL_SLOT.search(text)
    if slot and (cues.DATA.search(text) or cues.CARRY.search(text)):
        return slot.group()
    link = cues.LINK_WORD.search(text)
    if link is None or not cues.CARRY.search(text):
        return None
    sensitive = cues.DATA.search(text) or cues.CREDENTIAL.search(text)
    if sensitive and (cues.TRIGGER.search(text) or slot):
        return f"{link.group()} … {sensitive.group()}"
    return None


def _role_prefix(text: Text) -> str | None:
    for marker in cues.ROLE_PREFIX.finditer(text):
        if cues.DIRECTIVE.search(text, marker.end()):
            return marker.group().strip()
    return None


def _override(text: Text) -> str | None:
    hit = cues.OVERRIDE.search(text)
    if hit is None or (cues.quoted(text.lowered, hit) and cues.DISCUSSION.search(text)):
        return None
    return hit.group()


def _first(cue: Cue, text: Text) -> str | None:
    hit = cue.search(text)
    return hit.group() if hit else None


_CHECKS: tuple[tuple[str, str, Callable[[Text], str | None]], ...] = (
    ("planted-rule", PLANTED_RULE, _planted),
    ("data-forwarding", EXFILTRATION, _forwarding),
    ("data-forwarding", EXFILTRATION, _covert_send),
    ("authority-claim", PRIVILEGE_CLAIM, _authority),
    ("staff-impersonation", PRIVILEGE_CLAIM, _staff),
    ("config-tampering", CONFIG_TAMPERING, _config),
    ("outbound-data-link", MARKDOWN_EXFILTRATION, _outbound),
    ("translate-then-execute", INJECTION, lambda t: _first(cues.TRANSLATE_EXECUTE, t)),
    ("role-prefix", INJECTION, _role_prefix),
    ("prompt-override", INJECTION, _override),
    ("role-hijack", ROLE_HIJACK, lambda t: _first(cues.ROLEPLAY_SECRETS, t)),
)


def assess(folded: str) -> list[Finding]:
    """Every structural check that holds for ``folded`` (the folded text)."""
    text = Text(folded)
    found: list[Finding] = []
    for rule, category, check in _CHECKS:
        matched = check(text)
        if matched:
            found.append((rule, category, matched))
    return found
