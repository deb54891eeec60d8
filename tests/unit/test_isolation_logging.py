"""A provider's own errors cost one WARNING line; anything else keeps its traceback."""

from __future__ import annotations

import logging

import pytest

from providers.errors import ProviderError
from providers.isolation import FAILED, IsolatedCalls, ProviderStats


def fail_with(error: BaseException) -> object:
    raise error


def test_a_provider_error_is_one_warning_line_without_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls = IsolatedCalls(5.0, 2, ProviderStats())
    error = ProviderError("honcho", "honcho ensure peer failed: Connection refused\n(twice)")
    with caplog.at_level(logging.DEBUG, logger="providers.isolation"):
        result = calls.run("honcho", "recall", "honcho.recall for x", lambda: fail_with(error), str)
    assert result is FAILED
    [record] = caplog.records
    assert record.levelno == logging.WARNING and record.exc_info is None
    assert "\n" not in record.getMessage() and "Connection refused (twice)" in record.getMessage()
    assert calls.stats.get("honcho", "recall").errors == 1


def test_any_other_exception_is_an_error_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls = IsolatedCalls(5.0, 2, ProviderStats())
    with caplog.at_level(logging.DEBUG, logger="providers.isolation"):
        calls.run("p", "recall", "p.recall", lambda: fail_with(KeyError("bug")), str)
    [record] = caplog.records
    assert record.levelno == logging.ERROR and record.exc_info is not None
