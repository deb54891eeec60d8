"""RetainDB provider: each tenant scope is one RetainDB ``user_id`` (= its backend key).

There is no SDK and no public API reference; :mod:`.client` holds the routes the reference
plugin calls, in one place. Turns reach RetainDB through mnemogate's own durable outbox and
sync jobs (once each, by the turn ledger), not through a local retry queue. The reference's
file tools are not offered: they share one store across all users and read host paths.
"""
