"""The holographic memory provider: local facts with trust scores and HRR vectors.

Modules: :mod:`.facts` (the record, the store protocol, entities, trust), :mod:`.hrr`
(phase-vector algebra, numpy), :mod:`.retrieval` (search, probe, related, reason,
contradictions), :mod:`.writer` (adds, updates, the curated-memory mirror), :mod:`.tools`
(``fact_store`` / ``fact_feedback``) and :mod:`.provider` (the MemoryProvider).
"""
