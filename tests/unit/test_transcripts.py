"""On-disk transcripts: one export-format line per session, private modes, never incognito."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.errors import NotFound, StorageError
from gateway.history.db import Database
from gateway.history.store import NewMessage, SessionRecord, SessionStore
from gateway.history.transcripts import transcript_path, write_transcript
from gateway.history.transfer import export_lines
from gateway.tenants import TenantId

ALICE = TenantId.parse("telegram:1001")
BOB = TenantId.parse("telegram:1002")


@pytest.fixture
def store(home: Path) -> Iterator[SessionStore]:
    db = Database(home / "state.db")
    yield SessionStore(db)
    db.close()


def session(store: SessionStore, tenant: TenantId, *, incognito: bool = False) -> SessionRecord:
    s = store.create_session(
        tenant,
        session_key="telegram:dm:1",
        source="telegram",
        system_prompt="p",
        tools_json="[]",
        scope_key=tenant.namespace,
        incognito=incognito,
    )
    store.record_turn(
        tenant, s.id, [NewMessage("user", "我喜欢乌龙茶 🍵"), NewMessage("assistant", "Noted.")]
    )
    return s


def test_transcript_is_the_export_line_with_private_modes(home: Path, store: SessionStore) -> None:
    s = session(store, ALICE)
    path = write_transcript(home, store, ALICE, s.id)

    assert path == home / "tenants" / "telegram-1001" / "transcripts" / f"{s.id}.jsonl"
    assert path.read_text(encoding="utf-8") == "".join(export_lines(store, ALICE))
    assert json.loads(path.read_text(encoding="utf-8"))["messages"][0]["content"] == (
        "我喜欢乌龙茶 🍵"
    )
    assert path.stat().st_mode & 0o777 == 0o600
    for directory in (path.parent, path.parent.parent, home / "tenants"):
        assert directory.stat().st_mode & 0o777 == 0o700
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left


def test_transcript_is_rewritten_after_each_turn(home: Path, store: SessionStore) -> None:
    s = session(store, ALICE)
    path = write_transcript(home, store, ALICE, s.id)
    assert path is not None
    store.record_turn(ALICE, s.id, [NewMessage("user", "and green tea")])
    write_transcript(home, store, ALICE, s.id)

    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1
    assert [m["content"] for m in json.loads(lines[0])["messages"]][-1] == "and green tea"


def test_incognito_sessions_are_never_written(home: Path, store: SessionStore) -> None:
    s = session(store, ALICE, incognito=True)
    assert write_transcript(home, store, ALICE, s.id) is None
    assert not transcript_path(home, ALICE, s.id).exists()
    assert not (home / "tenants").exists()


def test_another_tenants_session_is_not_found(home: Path, store: SessionStore) -> None:
    s = session(store, ALICE)
    with pytest.raises(NotFound):
        write_transcript(home, store, BOB, s.id)
    assert not (home / "tenants").exists()


def test_session_ids_cannot_escape_the_directory(home: Path) -> None:
    with pytest.raises(StorageError):
        transcript_path(home, ALICE, "../../state")
