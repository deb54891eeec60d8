"""Scraping a real process's /metrics, /healthz and /readyz; starting run and worker for it."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import REPO, cli_env
from tests.fakes.llm_server import FakeLLM
from tests.fakes.telegram_server import TOKEN, FakeTelegram

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def scrape(base: str) -> Samples:
    """Every sample of ``base``/metrics, parsed by prometheus_client's own parser."""
    status, text = get(f"{base}/metrics")
    assert status == 200, text
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sum over samples named ``name`` whose labels include ``labels`` (0 if none)."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= ls)


def wait_for(check: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)  # another process changes state; nothing to await across processes


def ready(base: str) -> bool:
    try:
        return get(f"{base}/readyz")[0] == 200
    except OSError:
        return False


def gateway_env(
    home: Path,
    tg: FakeTelegram,
    llm: FakeLLM,
    redis_url: str,
    prefix: str,
    listen: str,
    **extra: str,
) -> dict[str, str]:
    return cli_env(
        home,
        TELEGRAM_BOT_TOKEN=TOKEN,
        MNEMOGATE_TELEGRAM__BASE_URL=tg.base_url,
        MNEMOGATE_TELEGRAM__POLL_TIMEOUT_S="1",
        MNEMOGATE_LLM__BASE_URL=llm.base_url,
        MNEMOGATE_LLM__MODEL="fake-model",
        MNEMOGATE_LLM__MAX_RETRIES="0",
        MNEMOGATE_REDIS_URL=redis_url,
        MNEMOGATE_REDIS_PREFIX=prefix,
        MNEMOGATE_METRICS__LISTEN=listen,
        **extra,
    )


def start(command: str, env: Mapping[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", command, *args],
        env=dict(env),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def stop(process: subprocess.Popen[str]) -> str:
    """SIGTERM, wait, return stderr (killing it if it does not stop)."""
    if process.poll() is None:
        process.terminate()
    try:
        _out, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        _out, err = process.communicate()
    return err
