"""Security checks on what memory stores and recalls (SPEC §10).

* :mod:`gateway.security.scanner` — ``scan(text)``, the threat scan every memory write and
  every memory snapshot goes through; a blocked result names the rule that fired.
* :mod:`gateway.security.fence` — ``wrap_recalled`` / ``sanitize_recalled``, the
  ``<memory-context>`` fence around recalled text, which stored text cannot close.
* :mod:`gateway.security.unicode` — hidden-character checks and folding for matching.
* :mod:`gateway.security.payloads` — base64 / hex / percent-encoded payloads, decoded.
* :mod:`gateway.security.patterns` — the rule table, assembled from ``patterns_en``,
  ``patterns_zh`` and ``patterns_code``; :mod:`gateway.security.rules` builds the rules.
"""
