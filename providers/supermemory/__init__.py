"""The Supermemory memory provider: each tenant scope one container tag.

Modules: ``client`` (a small httpx client for the v3/v4 routes), ``tools`` (the four tools,
their kebab-case aliases, and the search ledger that makes ``forget`` safe), ``provider``
(:class:`SupermemoryProvider`).

**Why httpx and not the ``supermemory`` SDK.** The reference plugin calls the v3/v4 API
(``documents.add``, ``search.memories``, ``profile``, ``memories.forget``) through the 3.x
SDK, and posts conversations with raw HTTP because the SDK has no such call. The 5.x SDK is
a breaking rewrite around a different API surface (namespaces), so it cannot serve those
routes, and pinning the superseded 3.x line would tie us to an SDK its vendor has moved on
from. The six routes we need fit in one small module on httpx (already a dependency): no
extra to install, explicit timeouts, no hidden retries, and every route visible in one
table (``client``).

Settings (``[supermemory]``, ``gateway.provider_settings.SupermemorySettings``): ``api_key``
(``SUPERMEMORY_API_KEY`` only), ``base_url`` (``SUPERMEMORY_BASE_URL``; every route, the
conversation ingest included, goes there — the reference hard-codes the hosted URL for
ingest), ``timeout_s``, ``search_mode``, ``profile_frequency``, ``max_recall_results``,
``max_recall_chars``, ``max_tool_result_chars``, ``entity_context``, ``forget_window_s``.
"""
