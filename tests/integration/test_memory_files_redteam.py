"""Memory files broken by hand: ``/memory`` says what is wrong, ``doctor`` reports them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.fakes.llm_server import FakeLLM

pytestmark = pytest.mark.integration

ANA_MEMORIES = Path("tenants/console-ana/memories")


def llm_env(fake_llm: FakeLLM) -> dict[str, str]:
    return {"MNEMOGATE_LLM__BASE_URL": fake_llm.base_url, "MNEMOGATE_LLM__MODEL": "m"}


def test_memory_command_explains_a_file_that_is_not_utf8(home: Path, fake_llm: FakeLLM) -> None:
    memories = home / ANA_MEMORIES
    memories.mkdir(parents=True)
    (memories / "MEMORY.md").write_bytes(b"likes tea\n\xff\xfe broken\n")
    (memories / "USER.md").write_text("Name: Ana\n", encoding="utf-8")
    proc = run_cli(
        ["chat", "--user", "ana", "--jobs", "inline"],
        home=home,
        input_text="/memory\n",
        **llm_env(fake_llm),
    )
    assert proc.returncode == 0, proc.stderr
    assert "something went wrong" not in proc.stdout.lower()
    assert "Name: Ana" in proc.stdout  # the readable file is still listed
    assert "can't read MEMORY.md: it is not valid UTF-8 (byte 0xff at offset 10)" in proc.stdout
    assert "mnemogate memory reset --tenant console:ana --target memory" in proc.stdout
    assert list(memories.glob("MEMORY.md.bak-*"))


def test_doctor_reports_memory_files_to_fix(home: Path, fake_llm: FakeLLM) -> None:
    memories = home / ANA_MEMORIES
    memories.mkdir(parents=True)
    (memories / "MEMORY.md").write_bytes(b"\xff")
    (memories / "USER.md").write_text("x" * 5000 + "\n", encoding="utf-8")
    proc = run_cli(["doctor"], home=home, **llm_env(fake_llm))
    assert "! memory files:" in proc.stdout
    assert "MEMORY.md: not valid UTF-8" in proc.stdout
    assert "USER.md: 5,000/1,375 chars, over its limit (363%)" in proc.stdout
