"""Log format (``MNEMOGATE_LOG__FORMAT=text|json``) and the context every line carries.

JSON lines hold ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message`` and, when
known, ``namespace`` (the tenant's, never its raw id), ``session`` and ``job`` — taken from
:func:`log_context` (context variables, so concurrent turns do not mix) or from a record's
``extra``. Secrets are masked by the redaction filter on the same handlers (the formatter
renders the already-masked message). Message text of users is never logged at INFO.
"""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from gateway.settings import Settings

TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"
_FIELDS = ("namespace", "session", "job")
_VARS: dict[str, contextvars.ContextVar[str | None]] = {
    name: contextvars.ContextVar(f"log_{name}", default=None) for name in _FIELDS
}
# names other modules already pass in ``extra`` for the same facts
_EXTRA_ALIASES = {"namespace": ("namespace", "tenant"), "session": ("session",), "job": ("job_id",)}


@contextmanager
def log_context(**fields: Any) -> Iterator[None]:
    """Within this block, log lines carry ``namespace``/``session``/``job``; every one of
    them is restored on exit, including those a nested :func:`bind` set."""
    unknown = set(fields) - set(_FIELDS)
    if unknown:
        raise TypeError(f"unknown log context field(s): {sorted(unknown)}")
    tokens = [
        (var, var.set(_text(fields[name]) if name in fields else var.get()))
        for name, var in _VARS.items()
    ]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)


def bind(**fields: Any) -> None:
    """Set context fields until the enclosing :func:`log_context` ends."""
    for name, value in fields.items():
        _VARS[name].set(_text(value))


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


class JsonFormatter(logging.Formatter):
    """One JSON object per line (see module doc)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in _FIELDS:
            value = _VARS[name].get()
            if value is None:
                value = next(
                    (getattr(record, a) for a in _EXTRA_ALIASES[name] if hasattr(record, a)), None
                )
            if value is not None:
                entry[name] = str(value)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = record.exc_text
        return json.dumps(entry, ensure_ascii=False)


def configure(settings: Settings, logger: logging.Logger | None = None) -> None:
    """Give the handlers of ``logger`` (root by default) the configured format."""
    target = logger or logging.getLogger()
    formatter: logging.Formatter = (
        JsonFormatter() if settings.log.format == "json" else logging.Formatter(TEXT_FORMAT)
    )
    for handler in target.handlers:
        handler.setFormatter(formatter)
