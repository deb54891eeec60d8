"""Configured secrets are masked in log output, whoever logs them."""

from __future__ import annotations

import io
import logging

import pytest

from gateway.redaction import MASK, install
from gateway.settings import load_settings


@pytest.fixture
def captured() -> tuple[logging.Logger, io.StringIO]:
    logger = logging.getLogger("redaction-test")
    logger.propagate = False
    stream = io.StringIO()
    logger.handlers = [logging.StreamHandler(stream)]
    logger.setLevel(logging.DEBUG)
    return logger, stream


def test_tokens_and_keys_are_masked(
    monkeypatch: pytest.MonkeyPatch, captured: tuple[logging.Logger, io.StringIO]
) -> None:
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456:SECRET-telegram-token")
    monkeypatch.setenv("MNEMOGATE_LLM__API_KEY", "sk-live-abcdef")
    logger, stream = captured
    install(load_settings(), logger)
    logger.info("GET https://api.telegram.org/bot%s/getMe", "123456:SECRET-telegram-token")
    logger.warning("auth failed with key sk-live-abcdef")
    try:
        raise RuntimeError("boom sk-live-abcdef")
    except RuntimeError:
        logger.exception("request failed")
    text = stream.getvalue()
    assert "SECRET-telegram-token" not in text and "sk-live-abcdef" not in text
    assert text.count(MASK) >= 3 and "getMe" in text and "boom" in text


def test_nothing_to_mask_leaves_records_alone(captured: tuple[logging.Logger, io.StringIO]) -> None:
    logger, stream = captured
    install(load_settings(), logger)
    logger.info("plain %s", "message")
    assert stream.getvalue() == "plain message\n"


def test_the_redis_password_is_masked_and_left_out_of_urls(
    monkeypatch: pytest.MonkeyPatch, captured: tuple[logging.Logger, io.StringIO]
) -> None:
    from gateway.doctor import check_redis
    from gateway.redaction import safe_url

    monkeypatch.setenv("MNEMOGATE_REDIS_URL", "redis://:s3cret-pw@127.0.0.1:1/0")
    settings = load_settings()
    logger, stream = captured
    install(settings, logger)
    logger.warning("lost %s", settings.redis_url)
    assert "s3cret-pw" not in stream.getvalue() and MASK in stream.getvalue()
    assert safe_url(settings.redis_url) == "redis://127.0.0.1:1/0"
    assert safe_url("unix:///run/redis.sock") == "unix:///run/redis.sock"
    check = check_redis(settings)  # nothing listens on port 1
    assert "s3cret-pw" not in check.detail and "127.0.0.1:1" in check.detail
