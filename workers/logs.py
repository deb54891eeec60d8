"""Worker log hygiene: an expected job failure is one line, not a traceback per attempt.

RQ logs every exception a job raises, traceback included, before our exception handler
runs. For a failure the job wrapper already reported in one line — :class:`JobFailed`, a
dependency (the memory provider, a lock) that is not there right now — the traceback says
nothing new, and during an outage it is most of the log: :class:`QuietExpectedFailures`
shortens RQ's record to one INFO line. Unexpected exceptions keep their traceback.
"""

from __future__ import annotations

import logging

from workers.jobs import JobFailed

RQ_LOGGER = "rq.worker"
_RAISED = "exception raised while executing"
EXPECTED: tuple[type[BaseException], ...] = (JobFailed,)


def _qualified(kind: type[BaseException]) -> str:
    return f"{kind.__module__}.{kind.__qualname__}"


class QuietExpectedFailures(logging.Filter):
    """Rewrites RQ's "exception raised while executing" record for expected failures."""

    def __init__(self, expected: tuple[type[BaseException], ...] = EXPECTED) -> None:
        super().__init__()
        self._prefixes = tuple(f"{_qualified(kind)}: " for kind in expected)

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if _RAISED not in str(record.msg) or not isinstance(args, tuple) or len(args) != 4:
            return True
        worker, job_id, func, trace = args
        lines = str(trace).strip().splitlines()
        last = lines[-1] if lines else ""
        if last.startswith(self._prefixes):
            record.msg = "Worker %s: job %s (%s) failed: %s"
            record.args = (worker, job_id, func, last.split(": ", 1)[1])
            # The provider and the job wrapper already told why; this is bookkeeping.
            record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
        return True


def install() -> QuietExpectedFailures:
    """Attach the filter to RQ's worker logger (once per process is enough)."""
    quiet = QuietExpectedFailures()
    logging.getLogger(RQ_LOGGER).addFilter(quiet)
    return quiet
