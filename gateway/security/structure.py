"""Structural threat scoring: which combinations of cues make a note an attack.

Phrase rules (:mod:`gateway.security.patterns`) recognise known wording; this module asks
what a note is *for*. A poisoned memory entry is an instruction addressed to the assistant
that outlives the conversation and points something sensitive somewhere it should not go,
or that changes who the assistant obeys. Each check below is one such combination of the
cues in :mod:`gateway.security.cues_target`, :mod:`gateway.security.cues_sink`,
:mod:`gateway.security.cues_intent` and :mod:`gateway.security.cues_smuggle`:

* ``planted-rule`` — a lasting trigger ("whenever", "以后每当") + something sensitive
  (money, credentials, conversation content) + a destination or a capture of it;
* ``data-forwarding`` — credentials or conversation content sent to an outside address, or
  anything sent there "quietly" / "without telling the user";
* ``authority-claim`` — "I am the owner/admin" + a request for rights or other users' data,
  or a plain request for admin/owner rights;
* ``others-data-request`` — "send me what the others told you": no claim needed;
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
from gateway.security import cues_intent as intent
from gateway.security import cues_sink as dest
from gateway.security import cues_smuggle as smuggle
from gateway.security import cues_target as target
from gateway.security.cues import Cue, Text

PLANTED_RULE = "planted-rule"
PRIVILEGE_CLAIM = "privilege-claim"
CONFIG_TAMPERING = "config-tampering"
EXFILTRATION = "exfiltration"
MARKDOWN_EXFILTRATION = "markdown-exfiltration"
INJECTION = "injection"
ROLE_HIJACK = "role-hijack"
PROMPT_LEAK = "prompt-leak"

CATEGORIES = frozenset({PLANTED_RULE, PRIVILEGE_CLAIM, CONFIG_TAMPERING})

# How far apart (characters) a change verb and the configuration it changes may be.
_NEAR = 60

Finding = tuple[str, str, str]


def _near(first: Cue, second: Cue, text: Text, distance: int) -> str | None:
    """Text spanning a match of ``first`` and one of ``second`` at most ``distance`` apart
    (both uncased cues, so positions refer to the same lowercase string)."""
    if first.search(text) is None:
        return None
    spans = [m.span() for m in second.finditer(text)]
    if not spans:
        return None
    for hit in first.finditer(text):
        for start, end in spans:
            if start - distance <= hit.end() and hit.start() <= end + distance:
                return text.lowered[min(hit.start(), start) : max(hit.end(), end)]
    return None


def _sink(text: Text) -> re.Match[str] | None:
    return dest.SINK_ADDRESS.search(text) or dest.SINK_NUMBER.search(text)


def _planted(text: Text) -> str | None:
    trigger = target.TRIGGER.search(text)
    if trigger is None:
        return None
    outside = _sink(text)
    sends = outside and (dest.SEND.search(text) or dest.TO_SINK.search(text))
    if outside and sends and not dest.OWN_SINK.search(text):
        return trigger.group() + " … " + outside.group()
    money = target.MONEY.search(text)
    credential = target.CREDENTIAL.search(text)
    data = target.DATA.search(text)
    sensitive = money or credential or data
    if sensitive is None:
        return None
    personal = credential or data
    own = dest.OWN_SINK.search(text)
    # The trigger's own words ("if anyone asks", "记住") are not also the capture or the
    # other people of the rule.
    rest = text.without(trigger)
    if money and not own:
        destination = dest.SINK_NUMBER.search(text) or dest.MONEY_REDIRECT.search(text)
        if destination:
            return trigger.group() + " … " + destination.group()
    if money and dest.SWAP.search(text) and (own or _sink(text)):
        # Other people's money sent somewhere else "instead of" where it belongs.
        return trigger.group() + " … " + money.group()
    sink = _sink(text)
    if sink and not own and dest.DIVERT.search(text):
        return trigger.group() + " … " + sink.group()
    if dest.COVERT.search(text) and dest.DIVERT.search(text):
        return trigger.group() + " … " + sensitive.group()
    if credential and (dest.CAPTURE.search(rest) or dest.SEND.search(text)):
        return trigger.group() + " … " + credential.group()
    if personal and dest.THIRD_PARTY.search(text) and dest.ASKER.search(text):
        return trigger.group() + " … " + personal.group()
    if personal and target.OTHERS.search(rest) and dest.DIVERT.search(text):
        return trigger.group() + " … " + personal.group()
    return None


def _forwarding(text: Text) -> str | None:
    sensitive = target.CREDENTIAL.search(text) or target.DATA.search(text)
    if sensitive is None:
        return None
    send = dest.SEND.search(text)
    if send is None:
        return None
    sink = _sink(text)
    if sink is None or dest.OWN_SINK.search(text):
        return None
    return f"{send.group()} … {sink.group()}"


def _covert_send(text: Text) -> str | None:
    covert = dest.COVERT.search(text)
    if covert is None or not dest.SEND.search(text):
        return None
    sink = _sink(text)
    return f"{covert.group()} … {sink.group()}" if sink else None


def _authority(text: Text) -> str | None:
    claim = intent.AUTHORITY.search(text)
    if claim is None:
        return _first(intent.PRIVILEGE_REQUEST, text)
    rest = text.without(claim)
    asked = intent.PRIVILEGE_REQUEST.search(rest)
    if asked:
        return f"{claim.group()} … {asked.group()}"
    if not intent.REQUEST.search(rest):
        return None
    wanted = (
        target.OTHERS.search(rest)
        or intent.PRIVATE.search(rest)
        or target.RIGHTS.search(rest)
        or target.CREDENTIAL.search(rest)
        or target.DATA.search(rest)
        or dest.OTHERS_GAVE.search(rest)
    )
    return f"{claim.group()} … {wanted.group()}" if wanted else None


def _others_data(text: Text) -> str | None:
    """A request to hand over what other people told the assistant: no claim needed."""
    gave = dest.OTHERS_GAVE.search(text)
    if gave is None:
        return None
    wanted = intent.TO_ME.search(text)
    return f"{wanted.group().strip()} … {gave.group()}" if wanted else None


def _staff(text: Text) -> str | None:
    staff = intent.STAFF.search(text)
    if staff is None or not intent.STAFF_INTRO.search(text) or intent.REPORTED.search(text):
        return None
    if not intent.ASSISTANT_DIRECTIVE.search(text):
        return None
    wanted = (
        target.CREDENTIAL.search(text)
        or target.DATA.search(text)
        or target.RIGHTS.search(text)
        or target.OWN_CONFIG.search(text)
        or intent.SAFETY.search(text)
        or target.MONEY.search(text)
    )
    return f"{staff.group()} … {wanted.group()}" if wanted else None


def _config(text: Text) -> str | None:
    claim = target.PERSONA_CLAIM.search(text)
    if claim:
        return claim.group()
    return _near(target.CHANGE, target.OWN_CONFIG, text, _NEAR)


def _outbound(text: Text) -> str | None:
    slot = dest.URL_SLOT.search(text)
    if slot and (target.DATA.search(text) or dest.CARRY.search(text)):
        return slot.group()
    link = dest.LINK_WORD.search(text)
    if link is None or not dest.CARRY.search(text):
        return None
    sensitive = target.DATA.search(text) or target.CREDENTIAL.search(text)
    if sensitive and (target.TRIGGER.search(text) or slot or dest.HIDDEN_LINK.search(text)):
        return f"{link.group()} … {sensitive.group()}"
    return None


def _role_prefix(text: Text) -> str | None:
    for marker in smuggle.ROLE_PREFIX.finditer(text):
        if smuggle.DIRECTIVE.search(text, marker.end()):
            return marker.group().strip()
    return None


def _override(text: Text) -> str | None:
    hit = smuggle.OVERRIDE.search(text)
    if hit is None or (cues.quoted(text.lowered, hit) and intent.DISCUSSION.search(text)):
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
    ("others-data-request", PRIVILEGE_CLAIM, _others_data),
    ("staff-impersonation", PRIVILEGE_CLAIM, _staff),
    ("config-tampering", CONFIG_TAMPERING, _config),
    ("outbound-data-link", MARKDOWN_EXFILTRATION, _outbound),
    ("translate-then-execute", INJECTION, lambda t: _first(smuggle.TRANSLATE_EXECUTE, t)),
    ("role-prefix", INJECTION, _role_prefix),
    ("prompt-override", INJECTION, _override),
    ("role-hijack", ROLE_HIJACK, lambda t: _first(intent.ROLEPLAY_SECRETS, t)),
    ("system-prompt-leak", PROMPT_LEAK, lambda t: _first(intent.PROMPT_LEAK, t)),
)


def assess(text: Text | str) -> list[Finding]:
    """Every structural check that holds for ``text`` (folded; a :class:`Text` lets the
    caller share cue matches with its own checks)."""
    if isinstance(text, str):
        text = Text(text)
    found: list[Finding] = []
    for rule, category, check in _CHECKS:
        matched = check(text)
        if matched:
            found.append((rule, category, matched))
    return found
