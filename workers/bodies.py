"""Job bodies by kind, for running outbox work in-process (``jobs.mode = "inline"``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from workers import jobs, maint, review, session_hooks
from workers.queues import JobKind

Body = Callable[..., Any]

BODIES: Mapping[JobKind, Body] = MappingProxyType(
    {
        "sync": jobs.sync_body,
        "recall": jobs.recall_body,
        "review": review.review_body,
        "title": maint.title_body,
        "flush": maint.flush_body,
        "compress": maint.compress_body,
        "session_end": session_hooks.end_body,
        "session_switch": session_hooks.switch_body,
    }
)
