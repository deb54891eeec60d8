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
