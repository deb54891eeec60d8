"""Metric hooks, the work-horse event hand-back, JSON log lines and the new settings."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from gateway.errors import ConfigError
from gateway.memory.operations import WriteResult
from gateway.observability import metrics
from gateway.observability.logs import JsonFormatter, bind, configure, log_context
from gateway.redaction import MASK, install
from gateway.security.patterns import RULES
from gateway.settings import load_settings


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_horse_events_are_replayed_once_in_the_parent(tmp_path: Path) -> None:
    labels = {"provider": "unit", "op": "recall", "outcome": "timeout"}
    before = sample("mnemogate_provider_calls_total", **labels)
    metrics.record_events()  # as in a forked work horse
    metrics.provider_call("unit", "recall", "timeout", 0.25)
    metrics.job_done("unit-kind", "ok", 1.5)
    spool = tmp_path / "job-1"
    metrics.write_events(spool)
    horse = sample("mnemogate_provider_calls_total", **labels)
    assert horse == before + 1  # the horse's own registry (thrown away with it in real life)
    spool.write_text(spool.read_text() + "\nnot json\n" + json.dumps(["no_such_hook", []]))
    assert metrics.replay(spool) == 2
    assert sample("mnemogate_provider_calls_total", **labels) == horse + 1
    assert sample("mnemogate_provider_call_seconds_sum", provider="unit", op="recall") >= 0.5
    assert not spool.exists()
    assert metrics.replay(spool) == 0  # the horse died before writing: nothing, no error
    metrics.provider_call("unit", "recall", "timeout", 0.1)  # recording is off again
    assert metrics._events is None


def test_hooks_never_raise_into_the_caller() -> None:
    metrics.memory_write(object())  # not a WriteResult
    metrics.llm_call("m", object(), 0.1)
    metrics.tool_call("memory", "not json")
    assert sample("mnemogate_tool_calls_total", tool="memory", outcome="ok") >= 1


def test_tool_outcomes_and_memory_refusal_categories() -> None:
    before = sample("mnemogate_tool_calls_total", tool="t", outcome="error")
    metrics.tool_call("t", json.dumps({"success": False, "error": "nope"}))
    assert sample("mnemogate_tool_calls_total", tool="t", outcome="error") == before + 1
    rule = RULES[0]
    refused = WriteResult(success=False, usage="", entry_count=0, error="x", rule=rule.name)
    labels = {"outcome": "refused", "category": rule.category}
    before = sample("mnemogate_memory_writes_total", **labels)
    metrics.memory_write(refused)
    assert sample("mnemogate_memory_writes_total", **labels) == before + 1
    invalid = {"outcome": "refused", "category": "invalid"}
    before = sample("mnemogate_memory_writes_total", **invalid)
    metrics.memory_write(WriteResult(success=False, usage="", entry_count=0, error="no match"))
    assert sample("mnemogate_memory_writes_total", **invalid) == before + 1


def test_turn_splits_model_time_from_overhead() -> None:
    class Usage:
        prompt_tokens, completion_tokens, cached_tokens = 10, 5, 2

    before = sample("mnemogate_turns_total", platform="unit", outcome="llm_error")
    model_before = sample("mnemogate_turn_seconds_sum", part="model")
    with metrics.turn("unit") as timer:
        metrics.llm_call("unit-model", Usage(), 0.75)

        class Failed:
            error = "model down"

        timer.result(Failed())
    assert sample("mnemogate_turns_total", platform="unit", outcome="llm_error") == before + 1
    assert sample("mnemogate_turn_seconds_sum", part="model") == pytest.approx(model_before + 0.75)
    assert sample("mnemogate_llm_tokens_total", model="unit-model", kind="cached") >= 2
    with pytest.raises(RuntimeError), metrics.turn("unit"):
        raise RuntimeError("boom")
    assert sample("mnemogate_turns_total", platform="unit", outcome="error") >= 1


def test_exported_names_cover_counters_histograms_and_scraped_gauges() -> None:
    names = metrics.exported_names()
    assert {"mnemogate_turns_total", "mnemogate_turn_seconds_bucket"} <= names
    assert {"mnemogate_queue_depth", "mnemogate_outbox_backlog"} <= names
    assert all(name.startswith("mnemogate_") for name in names)


@pytest.fixture
def json_logger(monkeypatch: pytest.MonkeyPatch) -> tuple[logging.Logger, io.StringIO]:
    monkeypatch.setenv("MNEMOGATE_LOG__FORMAT", "json")
    monkeypatch.setenv("MNEMOGATE_LLM__API_KEY", "sk-live-abcdef")
    logger = logging.getLogger("json-log-test")
    logger.propagate = False
    stream = io.StringIO()
    logger.handlers = [logging.StreamHandler(stream)]
    logger.setLevel(logging.INFO)
    settings = load_settings()
    configure(settings, logger)
    install(settings, logger)
    return logger, stream


def test_json_lines_carry_context_and_mask_secrets(
    json_logger: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = json_logger
    with log_context(namespace="telegram-1", job="sync-1"):
        bind(session="s-1")
        logger.info("calling with key %s", "sk-live-abcdef")
        try:
            raise ValueError("bad sk-live-abcdef")
        except ValueError:
            logger.exception("failed")
    logger.warning("outside", extra={"tenant": "discord-2", "job_id": "j-9"})
    first, second, third = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["namespace"] == "telegram-1" and first["session"] == "s-1"
    assert first["job"] == "sync-1" and first["level"] == "INFO" and first["logger"]
    assert first["message"] == f"calling with key {MASK}" and first["time"].endswith("+00:00")
    assert "sk-live" not in second["exception"] and "ValueError" in second["exception"]
    assert (third["namespace"], third["job"]) == ("discord-2", "j-9")
    assert "session" not in third  # the context ended with its block
    assert isinstance(logger.handlers[0].formatter, JsonFormatter)


def test_settings_for_metrics_logs_and_an_empty_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOGATE_MEMORY__PROVIDER", "")  # what compose passes when unset
    monkeypatch.setenv("MNEMOGATE_METRICS__LISTEN", "0.0.0.0:9464")
    settings = load_settings()
    assert settings.memory.provider is None
    assert settings.metrics.listen == "0.0.0.0:9464" and settings.log.format == "text"
    monkeypatch.setenv("MNEMOGATE_METRICS__LISTEN", "9464")
    with pytest.raises(ConfigError, match="MNEMOGATE_METRICS__LISTEN"):
        load_settings()
    monkeypatch.delenv("MNEMOGATE_METRICS__LISTEN")
    monkeypatch.setenv("MNEMOGATE_LOG__FORMAT", "xml")
    with pytest.raises(ConfigError, match="MNEMOGATE_LOG__FORMAT"):
        load_settings()


def test_image_healthcheck_probes_healthz_on_the_configured_listen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gateway.observability import healthcheck
    from gateway.observability.server import HealthServer

    assert healthcheck.probe_url("0.0.0.0:9464") == "http://127.0.0.1:9464/healthz"
    assert healthcheck.main() == 1  # endpoint off
    server = HealthServer("127.0.0.1:0", lambda: (False, "not ready yet")).start()
    monkeypatch.setenv("MNEMOGATE_METRICS__LISTEN", server.address)
    try:
        assert healthcheck.main() == 0  # alive although not ready
    finally:
        server.stop()
    assert healthcheck.main() == 1  # nothing answers any more


def test_inline_jobs_are_timed_and_counted_by_outcome() -> None:
    ok_before = sample("mnemogate_jobs_total", kind="unit-inline", outcome="ok")
    with metrics.job("unit-inline"):
        pass
    with pytest.raises(ValueError), metrics.job("unit-inline"):
        raise ValueError("body failed")
    assert sample("mnemogate_jobs_total", kind="unit-inline", outcome="ok") == ok_before + 1
    assert sample("mnemogate_jobs_total", kind="unit-inline", outcome="failed") >= 1
    assert sample("mnemogate_job_seconds_count", kind="unit-inline") >= 2
