"""The Honcho memory provider: each tenant a Honcho peer that Honcho's server reasons about.

Modules, each one concern:

* ``client``    — our thin interface over the ``honcho-ai`` SDK (explicit URL and workspace,
  writes never retried, every failure a ``HonchoCallError``);
* ``identity``  — peer and session ids, observation presets, joined-session cache;
* ``sync``      — a finished turn stored once (fences stripped, long texts chunked);
* ``recall``    — base context + multi-pass dialectic for the next turn;
* ``tools``     — ``honcho_profile/search/context/reasoning/conclude``;
* ``lifecycle`` — first-session migration of MEMORY.md/USER.md, erasure;
* ``provider``  — :class:`HonchoProvider`, which wires them together.

Settings (``[honcho]``, see ``gateway.settings.HonchoSettings``): ``base_url`` (required,
``HONCHO_BASE_URL``), ``workspace``, ``api_key`` (``HONCHO_API_KEY`` only), ``ai_peer``,
``peer_prefix``, ``peer_aliases``, ``recall_mode`` (hybrid|context|tools), ``observation``
(directional|unified) and the four ``*_observe_*`` overrides, ``dialectic_depth`` (1–3),
``reasoning_level`` / ``reasoning_level_cap``, ``dialectic_dynamic``, timeouts, retries of
reads, size caps and ``message_chunk_chars``. Cadences (how often recall runs) belong to
the caller (``[recall]``), not to this package.

**Group isolation.** A group chat whose memory scope is not the DM scope (``groups.memory``
``isolated`` or ``off``) talks to Honcho as its own peer, ``<user peer>__<group namespace>``,
one per (tenant, group) — the same boundary as the curated-memory scopes. Honcho keeps
representations, peer cards, conclusions and dialectic message recall per peer, so a group
reply never sees what was learned in DMs (the tenant's peer is never read in a group), and
what is said in the group never reaches the DM profile (it is never written to the
tenant's peer). Session-level filtering could not give the second half: the dialectic
recalls a peer's messages across all its sessions. The AI peer is shared by everyone, so
its self-representation is only read within the current session. ``groups.memory =
"private"`` opts a group into the tenant's DM peer.
"""
