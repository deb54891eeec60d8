"""Secrets never reach the logs: a filter that masks every configured secret value.

Installed on the root logger's handlers once settings are loaded; it rewrites the rendered
message of every record (arguments included), whichever library logged it.
"""

from __future__ import annotations

import logging
from urllib.parse import unquote, urlsplit, urlunsplit

from pydantic import BaseModel, SecretStr

from gateway.settings import Settings

MASK = "***"


def secret_values(settings: Settings) -> list[str]:
    """Every secret string in the settings (API keys, bot tokens, webhook secrets)."""
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, SecretStr):
            secret = value.get_secret_value()
            if len(secret) >= 4:
                found.append(secret)
        elif isinstance(value, BaseModel):
            for name in type(value).model_fields:
                walk(getattr(value, name))

    walk(settings)
    password = urlsplit(settings.redis_url).password  # MNEMOGATE_REDIS_URL may carry one
    if password and len(password) >= 4:
        found.append(unquote(password))
        found.append(password)
    return sorted(set(found), key=len, reverse=True)


def safe_url(url: str) -> str:
    """``url`` without user name or password, for messages (e.g. a Redis URL)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))


class RedactSecrets(logging.Filter):
    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        masked = message
        for secret in self.secrets:
            masked = masked.replace(secret, MASK)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            for secret in self.secrets:
                record.exc_text = record.exc_text.replace(secret, MASK)
        if masked != message:
            record.msg, record.args = masked, None
        return True


def install(settings: Settings, logger: logging.Logger | None = None) -> RedactSecrets:
    """Attach the filter to every handler of ``logger`` (the root logger by default)."""
    target = logger or logging.getLogger()
    redact = RedactSecrets(secret_values(settings))
    for handler in target.handlers:
        handler.addFilter(redact)
    return redact
