"""The background plane: RQ queues and the jobs that run outside the turn.

``workers.queues`` names the queues and enqueues jobs; ``workers.context`` holds what a job
needs (database, provider manager, Redis), built once per worker process; ``workers.jobs``
has the entry functions RQ calls (provider sync, recall prefetch) and the wrapper every job
runs in; ``workers.review`` and ``workers.maint`` hold the review and maintenance jobs.
``mnemogate worker`` (``gateway.cli.worker_cmd``) serves the queues.
"""
