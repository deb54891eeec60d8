"""The Honcho memory provider: each tenant a Honcho peer that Honcho's server reasons about.

Modules, each one concern:

* ``client``    — our thin interface over the ``honcho-ai`` SDK (explicit URL and workspace,
  writes never retried, every failure a ``HonchoCallError``);
* ``identity``  — peer and session ids, observation presets, joined-session cache;
* ``scope``     — :class:`~.scope.TenantScope`, the only way calls for a context are made;
* ``sync``      — a finished turn stored once (fences stripped, long texts chunked);
* ``recall``    — base context + multi-pass dialectic for the next turn;
* ``tools``     — ``honcho_profile/search/context/reasoning/conclude``;
* ``lifecycle`` — first-session migration of MEMORY.md/USER.md, adoption of old data;
* ``erasure``   — what Honcho can erase for a tenant, and an exact list of what it cannot;
* ``provider``  — :class:`HonchoProvider`, which wires them together.

Settings (``[honcho]``, see ``gateway.settings.HonchoSettings``): ``base_url`` (required,
``HONCHO_BASE_URL``), ``workspace``, ``api_key`` (``HONCHO_API_KEY`` only), ``ai_peer``,
``peer_prefix``, ``peer_aliases``, ``recall_mode`` (hybrid|context|tools), ``observation``
(directional|unified) and the four ``*_observe_*`` overrides, ``dialectic_depth`` (1–3),
``reasoning_level`` / ``reasoning_level_cap``, ``dialectic_dynamic``, timeouts, retries of
reads, size caps and ``message_chunk_chars``. Cadences (how often recall runs) belong to
the caller (``[recall]``), not to this package.

**Tenant isolation: one assistant peer per user peer.** Honcho's dialectic
(``peer.chat``) is an agent that searches the messages of *every session the asking peer
belongs to*; representations, cards and conclusions are keyed by (observer, target). Recall
asks as the assistant peer (its view of the user), so an assistant peer in every tenant's
sessions — as ``mnemogate`` once was — let Bob's question be answered from Carol's
messages. Two fixes were possible:

* a session allowlist (``filters={"session_id": {"in": [...]}}``) on every dialectic,
  representation and context call. Rejected: every call site must remember it (the leak
  was exactly a call that passed none), the list has to be fetched and kept current per
  tenant, and Honcho confines allowlisted recall to conclusions stated directly in those
  sessions and drops the peer card (OpenAPI 3.0.12), so recall gets worse for everyone;
* **an assistant peer per user peer**, ``<ai_peer>__<user peer>`` (chosen). Its sessions
  are that user's sessions and nobody else's, so whatever Honcho searches on its behalf
  is confined by construction, with cards and cross-session conclusions intact, and its
  own self-representation is safe to read. Every call for a context goes through a
  :class:`~.scope.TenantScope` built in one place (``HonchoProvider._joined``) from the
  joined session: recall, tools and sync never see the SDK client, so none can ask as
  another peer. On the first join after an upgrade the new assistant adopts what the
  shared one had concluded about that user (``lifecycle.adopt``).

**Group isolation.** A group chat whose memory scope is not the DM scope (``groups.memory``
``isolated`` or ``off``) talks to Honcho as its own peer, ``<user peer>__<group namespace>``,
one per (tenant, group) — the same boundary as the curated-memory scopes. Honcho keeps
representations, peer cards, conclusions and dialectic message recall per peer, so a group
reply never sees what was learned in DMs (the tenant's peer is never read in a group), and
what is said in the group never reaches the DM profile (it is never written to the
tenant's peer). Session-level filtering could not give the second half: the dialectic
recalls a peer's messages across all its sessions. The group peer has its own assistant
peer too, for the same reason. ``groups.memory = "private"`` opts a group into the
tenant's DM peer.

**Recall freshness.** Honcho derives conclusions from new messages in a background queue,
so a recall computed right after a turn may not know it. :meth:`HonchoProvider.is_caught_up`
reads the queue status of the session; the recall job schedules follow-ups until it is
drained (see ``workers.jobs.recall_next``).
"""
