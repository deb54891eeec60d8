"""The scanner's rule table: every rule, in the order findings are reported.

Each :class:`~gateway.security.rules.Rule` has a name (what a blocked write reports), a
category, a language (``en``, ``zh`` or ``any``) and compiled patterns. The table is
assembled from three smaller ones:

* :mod:`gateway.security.patterns_en` — English phrasing (injection, role hijack,
  concealment, prompt leaking, exfiltration requests);
* :mod:`gateway.security.patterns_zh` — the same threats in Chinese;
* :mod:`gateway.security.patterns_code` — commands, URLs and key formats (any language).

Categories: ``injection``, ``role-hijack``, ``concealment``, ``prompt-leak``,
``exfiltration``, ``backdoor``, ``markdown-exfiltration`` and ``secret``; the scanner adds
``invisible-unicode`` for its raw-character checks.
"""

from __future__ import annotations

from gateway.security import patterns_code, patterns_en, patterns_zh
from gateway.security.rules import Rule

RULES: tuple[Rule, ...] = patterns_en.RULES + patterns_zh.RULES + patterns_code.RULES

CATEGORIES: frozenset[str] = frozenset(rule.category for rule in RULES)
