"""The Mem0 memory provider: each tenant scope one Mem0 ``user_id``, in-process or hosted.

Modules:

* ``backends`` — the backend interface and the ``oss`` backend (``mem0ai``'s ``Memory`` in
  this process, telemetry off, a local Qdrant by default);
* ``platform`` — the ``platform`` backend (the hosted API via ``mem0ai``'s ``MemoryClient``);
* ``tools``    — ``mem0_search``, ``mem0_add``, ``mem0_update``, ``mem0_delete``;
* ``provider`` — :class:`Mem0Provider`.

Settings (``[mem0]``, ``gateway.provider_settings.Mem0Settings``): ``mode`` (``oss`` |
``platform``); platform: ``api_key`` (``MEM0_API_KEY`` only), ``base_url``; oss: the LLM
is the auxiliary model (``[aux_llm]``, else ``[llm]``) unless ``llm_model`` names another on
that endpoint, ``embedding_model`` / ``embedding_dims`` / ``embedding_base_url`` (default:
the auxiliary endpoint), ``vector_store`` + ``vector_store_config`` (a mem0 vector-store
config; empty = a local Qdrant under ``$MNEMOGATE_HOME/mem0/qdrant``), ``collection``;
both: ``timeout_s``, ``recall_top_k``, ``search_threshold``, ``max_recall_chars``,
``max_tool_result_chars``.

The ``mem0ai`` version is pinned (``mnemogate[mem0]``): the provider relies on
``Memory.add(infer=…)``, metadata filters in ``get_all`` and the client's routes as of
that version, and the tests run that exact library.
"""
