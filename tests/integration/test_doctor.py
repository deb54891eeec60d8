"""``mnemogate doctor`` against real dependencies: what passes, what fails and the fix."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.fakes.llm_server import FakeLLM

pytestmark = pytest.mark.integration


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_doctor_all_good(home: Path, fake_llm: FakeLLM) -> None:
    proc = run_cli(
        ["doctor"],
        home=home,
        MNEMOGATE_LLM__BASE_URL=fake_llm.base_url,
        MNEMOGATE_LLM__MODEL="fake-model",
    )
    assert "✓ sqlite: SQLite" in proc.stdout and "FTS5 and trigram" in proc.stdout
    assert "✓ state.db" in proc.stdout and "schema v" in proc.stdout
    assert "✓ llm:" in proc.stdout and "fake-model" in proc.stdout
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_doctor_explains_missing_llm(home: Path) -> None:
    proc = run_cli(["doctor"], home=home)
    assert proc.returncode == 1
    assert "✗ llm: not configured" in proc.stdout
    assert "fix: set MNEMOGATE_LLM__BASE_URL" in proc.stdout
    assert "check(s) failed: llm" in proc.stderr


def test_doctor_llm_unreachable_and_redis_down(home: Path) -> None:
    port = closed_port()
    proc = run_cli(
        ["doctor"],
        home=home,
        MNEMOGATE_LLM__BASE_URL=f"http://127.0.0.1:{port}/v1",
        MNEMOGATE_LLM__MODEL="m",
        MNEMOGATE_REDIS_URL=f"redis://127.0.0.1:{port}/0",
    )
    assert proc.returncode == 1
    assert "✗ llm:" in proc.stdout and "start the model server" in proc.stdout
    assert "! redis:" in proc.stdout


def test_doctor_bad_config_is_one_line(home: Path) -> None:
    proc = run_cli(["doctor"], home=home, MNEMOGATE_MEMORY__NOTIFICATIONS="loud")
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0
    assert "memory.notifications" in proc.stderr


def test_doctor_checks_platform_tokens_and_provider(home: Path, fake_llm: FakeLLM) -> None:
    from tests.fakes.discord_server import FakeDiscord

    with FakeDiscord(guilds=[]) as discord:
        good = run_cli(
            ["doctor"],
            home=home,
            MNEMOGATE_LLM__BASE_URL=fake_llm.base_url,
            MNEMOGATE_LLM__MODEL="fake-model",
            DISCORD_BOT_TOKEN=discord.token,
            MNEMOGATE_DISCORD__API_BASE_URL=discord.api_base_url,
            MNEMOGATE_MEMORY__PROVIDER="reference",
        )
        bad = run_cli(
            ["doctor"],
            home=home,
            MNEMOGATE_LLM__BASE_URL=fake_llm.base_url,
            MNEMOGATE_LLM__MODEL="fake-model",
            DISCORD_BOT_TOKEN="wrong-token",
            MNEMOGATE_DISCORD__API_BASE_URL=discord.api_base_url,
            MNEMOGATE_MEMORY__PROVIDER="nosuch",
        )
    assert "✓ discord: bot" in good.stdout and "✓ provider: reference" in good.stdout
    assert good.returncode == 0, good.stdout
    assert "✗ discord: HTTP 401" in bad.stdout and "DISCORD_BOT_TOKEN" in bad.stdout
    assert "✗ provider:" in bad.stdout and bad.returncode == 1


def test_doctor_checks_the_telegram_token(home: Path, fake_llm: FakeLLM) -> None:
    from tests.fakes.telegram_server import TOKEN, FakeTelegram

    with FakeTelegram() as telegram:
        good, bad = (
            run_cli(
                ["doctor"],
                home=home,
                MNEMOGATE_LLM__BASE_URL=fake_llm.base_url,
                MNEMOGATE_LLM__MODEL="fake-model",
                TELEGRAM_BOT_TOKEN=token,
                MNEMOGATE_TELEGRAM__BASE_URL=telegram.base_url,
            )
            for token in (TOKEN, "123:wrong")
        )
    assert "✓ telegram: bot @" in good.stdout and good.returncode == 0, good.stdout
    assert "✗ telegram:" in bad.stdout and "TELEGRAM_BOT_TOKEN" in bad.stdout
    assert "123:wrong" not in bad.stdout + bad.stderr


def _damage_an_index(state_db: Path) -> None:
    """Fill the root page of an index of a populated state.db with garbage."""
    from gateway.history.db import Database

    db = Database(state_db)
    conn = db.connection()
    conn.execute("INSERT INTO tenants VALUES ('console:a', 'console-a', 0, NULL)")
    conn.execute(
        "INSERT INTO sessions (id, tenant_id, session_key, source, scope_key, started_at, "
        "system_prompt, tools_json) VALUES ('s', 'console:a', 'k', 'console', 'x', 0, '', '[]')"
    )
    conn.executemany(
        "INSERT INTO messages (session_id, tenant_id, role, content, timestamp) "
        "VALUES ('s', 'console:a', 'user', ?, 0)",
        [(f"hello {i} " * 5,) for i in range(2000)],
    )
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    root = conn.execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'messages_by_session'"
    ).fetchone()[0]
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    data = bytearray(state_db.read_bytes())
    start = (root - 1) * page_size
    data[start : start + page_size] = b"\xa5" * page_size
    state_db.write_bytes(bytes(data))


def test_doctor_finds_damaged_pages_in_state_db(home: Path, fake_llm: FakeLLM) -> None:
    _damage_an_index(home / "state.db")
    proc = run_cli(
        ["doctor"],
        home=home,
        MNEMOGATE_LLM__BASE_URL=fake_llm.base_url,
        MNEMOGATE_LLM__MODEL="fake-model",
    )
    assert proc.returncode == 1, proc.stdout
    assert "✗ state.db:" in proc.stdout and "is damaged" in proc.stdout
    assert "Page " in proc.stdout and ".recover" in proc.stdout
