"""The Hindsight memory provider: one Hindsight bank per memory scope, over its HTTP API.

Modules: :mod:`.client` (the ``hindsight-client`` SDK on a private event loop, timeouts,
errors), :mod:`.tools` (``hindsight_retain`` / ``hindsight_recall`` / ``hindsight_reflect``)
and :mod:`.provider` (the MemoryProvider: sync, recall, mirror, erase, health).
"""
