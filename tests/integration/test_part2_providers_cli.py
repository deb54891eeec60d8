"""``memory setup`` and ``doctor`` for OpenViking, RetainDB and ByteRover, through the real CLI."""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.fakes.fake_brv import install_fake_brv
from tests.fakes.llm_server import FakeLLM
from tests.fakes.openviking_server import FakeOpenViking
from tests.fakes.retaindb_server import FakeRetainDB

pytestmark = pytest.mark.integration


def config(home: Path) -> dict[str, object]:
    return tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))


def test_setup_retaindb_names_the_missing_key_and_saves_the_answers(home: Path) -> None:
    proc = run_cli(["memory", "setup", "retaindb"], home=home, input_text="http://rdb.test\nbots\n")
    assert proc.returncode == 0, proc.stderr
    assert "missing: environment variable RETAINDB_API_KEY is not set" in proc.stdout
    assert config(home)["retaindb"] == {"base_url": "http://rdb.test", "project": "bots"}
    assert config(home)["memory"] == {"provider": "retaindb"}


def test_setup_openviking_reports_the_endpoint_and_key(home: Path) -> None:
    proc = run_cli(["memory", "setup", "openviking"], home=home, input_text="\ndefault\n")
    assert proc.returncode == 0, proc.stderr
    assert "OPENVIKING_API_KEY is not set" in proc.stdout
    assert "missing: OPENVIKING_ENDPOINT (or [openviking] base_url)" in proc.stdout
    bad = run_cli(["memory", "setup", "openviking"], home=home, input_text="http://ov\nno such!\n")
    assert bad.returncode != 0 and "openviking.account" in bad.stderr


def test_setup_byterover_says_how_to_install_the_cli(home: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    proc = run_cli(
        ["memory", "setup", "byterover"],
        home=home,
        input_text="brv\ntrue\n",
        PATH=f"{empty}{os.pathsep}{Path(sys.executable).parent}",
    )
    assert proc.returncode == 0, proc.stderr
    assert "npm install -g byterover-cli (Elastic-2.0 licence)" in proc.stdout
    assert config(home)["byterover"] == {"command": "brv", "auto_curate": "true"}


def test_doctor_checks_each_service(home: Path, fake_llm: FakeLLM, tmp_path: Path) -> None:
    llm: dict[str, Any] = {
        "MNEMOGATE_LLM__BASE_URL": fake_llm.base_url,
        "MNEMOGATE_LLM__MODEL": "fake-model",
    }
    with FakeOpenViking() as viking, FakeRetainDB() as retaindb:
        good_viking = run_cli(
            ["doctor"],
            home=home,
            MNEMOGATE_MEMORY__PROVIDER="openviking",
            OPENVIKING_ENDPOINT=viking.base_url,
            OPENVIKING_API_KEY="root-key",
            **llm,
        )
        bad_viking = run_cli(
            ["doctor"],
            home=home,
            MNEMOGATE_MEMORY__PROVIDER="openviking",
            OPENVIKING_ENDPOINT=viking.base_url,
            OPENVIKING_API_KEY="wrong",
            **llm,
        )
        good_retaindb = run_cli(
            ["doctor"],
            home=home,
            MNEMOGATE_MEMORY__PROVIDER="retaindb",
            RETAINDB_BASE_URL=retaindb.base_url,
            RETAINDB_API_KEY="rdb-key",
            **llm,
        )
    assert "✓ provider: openviking: server http://127.0.0.1" in good_viking.stdout
    assert "✗ provider: openviking: ServiceError" in bad_viking.stdout
    assert "401" in bad_viking.stdout and bad_viking.returncode == 1
    assert "✓ provider: retaindb:" in good_retaindb.stdout, good_retaindb.stdout
    brv = install_fake_brv(tmp_path / "bin")
    path = f"{brv.directory}{os.pathsep}{os.environ['PATH']}"
    good_brv = run_cli(
        ["doctor"], home=home, MNEMOGATE_MEMORY__PROVIDER="byterover", PATH=path, **llm
    )
    assert "✓ provider: byterover: brv CLI at" in good_brv.stdout and "brv 9.9.9" in good_brv.stdout
    assert brv.calls()[-1]["cwd"].endswith("providers/byterover/_doctor/work")
