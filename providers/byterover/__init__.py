"""ByteRover provider: the ``brv`` CLI (npm ``byterover-cli``, Elastic-2.0) per tenant scope.

Each scope gets its own directory ``$MNEMOGATE_HOME/providers/byterover/<backend key>/``
holding the working directory (``work/``, where ``brv`` keeps its context tree) and the HOME
(``home/``) the CLI runs with, so no two scopes share a tree, a config or a login. ``brv``
runs without a shell, from an argv list, with a timeout after which its process group is
killed. Queries run in the recall worker and in the ``brv_query`` tool; curation runs only
in the sync worker: ``brv_curate`` queues its content in the scope's ``pending/`` directory
and the next sync job curates it, and finished turns are curated only when
``[byterover] auto_curate`` is on (off by default).
"""
