"""Security checks on what memory stores and recalls (SPEC §10).

* :mod:`gateway.security.scanner` — ``scan(text)``, the threat scan every memory write and
  every memory snapshot goes through; a blocked result names the rule that fired.
* :mod:`gateway.security.fence` — ``wrap_recalled`` / ``sanitize_recalled``, the
  ``<memory-context>`` fence around recalled text, which stored text cannot close.
* :mod:`gateway.security.unicode` — hidden-character checks and folding for matching.
* :mod:`gateway.security.payloads` — base64 / hex / percent-encoded payloads, decoded;
  :mod:`gateway.security.layers` — rot13, leetspeak, spaced-out and percent-encoded readings.
* :mod:`gateway.security.structure` — checks that block a note for what it does (lasting
  rules steering money or data, authority claims, config tampering, outbound links, …),
  built from the cues in ``cues_target`` / ``cues_sink`` / ``cues_intent`` /
  ``cues_smuggle`` (machinery in ``cues``).
* :mod:`gateway.security.secrets` — token formats and credentials with real-looking values.
* :mod:`gateway.security.patterns` — the rule table, assembled from ``patterns_en``,
  ``patterns_zh`` and ``patterns_code``; :mod:`gateway.security.rules` builds the rules.
"""
