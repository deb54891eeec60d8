"""``mnemogate sessions …`` through the real CLI in a subprocess, against a real state.db."""

from __future__ import annotations

import json
import subprocess
from datetime import date, timedelta
from pathlib import Path

import pytest

from gateway.history.db import Database
from gateway.history.search import SessionSearch
from gateway.history.search_tool import SessionSearchTool
from gateway.history.store import NewMessage, SessionStore
from gateway.history.transfer import ExportedSession
from gateway.tenants import GroupId, MemoryScope, TenantId
from tests.conftest import run_cli

pytestmark = pytest.mark.integration

ALICE = TenantId.parse("telegram:1001")
BOB = TenantId.parse("telegram:2002")
GROUP = GroupId("telegram", "-100777")


def sessions(
    home: Path, *args: str, input_text: str | None = None
) -> subprocess.CompletedProcess[str]:
    return run_cli(["sessions", *args], home=home, input_text=input_text)


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def failed(proc: subprocess.CompletedProcess[str]) -> str:
    """The one-line reason of a failed command."""
    assert proc.returncode != 0, proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def open_store(home: Path) -> SessionStore:
    return SessionStore(Database(home / "state.db"))


def chat(
    store: SessionStore,
    tenant: TenantId,
    title: str,
    texts: list[str],
    *,
    group: GroupId | None = None,
    end: bool = True,
) -> str:
    scope = MemoryScope(tenant, group)
    s = store.create_session(
        tenant,
        session_key=f"telegram:dm:{tenant.user}",
        source="telegram",
        system_prompt="frozen",
        tools_json="[]",
        scope_key=scope.key,
        title=title,
        chat_type="dm" if group is None else "group",
    )
    turn = []
    for text in texts:
        turn += [NewMessage("user", text, name="Alice"), NewMessage("assistant", f"ok: {text}")]
    store.record_turn(tenant, s.id, turn)
    if end:
        store.end_session(tenant, s.id, "new")
    return s.id


def old_session(store: SessionStore, tenant: TenantId, sid: str, text: str) -> None:
    store.import_session(
        tenant,
        ExportedSession.model_validate(
            {
                "id": sid,
                "title": f"old {sid}",
                "started_at": "2020-01-01T10:00:00Z",
                "ended_at": "2020-01-01T11:00:00Z",
                "source": "telegram",
                "parent_id": None,
                "messages": [
                    {
                        "role": "user",
                        "content": text,
                        "timestamp": "2020-01-01T10:00:01Z",
                        "name": None,
                    }
                ],
            }
        ),
    )


@pytest.fixture
def seeded(home: Path) -> dict[str, str]:
    store = open_store(home)
    try:
        return {
            "tea": chat(store, ALICE, "Tea 茶", ["I only drink oolong tea", "部署脚本在哪里"]),
            "trip": chat(store, ALICE, "Trip", ["booking a train to Kyoto 🚄"]),
            "group": chat(
                store, ALICE, "Group plans", ["the group picnic is at noon"], group=GROUP
            ),
            "bob": chat(store, BOB, "Bob's", ["bob likes espresso and oolong"]),
        }
    finally:
        store.db.close()


def test_list_and_show(home: Path, seeded: dict[str, str]) -> None:
    listed = json.loads(ok(sessions(home, "list", "--tenant", str(ALICE), "--json")))
    assert {s["id"] for s in listed} == {seeded["tea"], seeded["trip"], seeded["group"]}
    tea = next(s for s in listed if s["id"] == seeded["tea"])
    assert (tea["title"], tea["messages"], tea["source"], tea["parent_id"]) == (
        "Tea 茶",
        4,
        "telegram",
        None,
    )
    assert list(tea) == ["id", "title", "started_at", "ended_at", "messages", "source", "parent_id"]

    table = ok(sessions(home, "list", "--tenant", str(ALICE))).splitlines()
    assert table[0].split()[:2] == ["ID", "STARTED"] and len(table) == 4
    assert "Tea 茶" in "\n".join(table)
    assert "has no sessions" in ok(sessions(home, "list", "--tenant", "console:nobody"))

    shown = json.loads(ok(sessions(home, "show", seeded["tea"], "--tenant", str(ALICE), "--json")))
    assert [m["content"] for m in shown["messages"]][:2] == [
        "I only drink oolong tea",
        "ok: I only drink oolong tea",
    ]
    text = ok(sessions(home, "show", seeded["tea"], "--tenant", str(ALICE)))
    assert "部署脚本在哪里" in text and "user (Alice)" in text


def test_a_tenant_cannot_reach_another_tenants_session(home: Path, seeded: dict[str, str]) -> None:
    tea = seeded["tea"]
    for args in (["show", tea], ["rename", tea, "mine now"], ["delete", tea, "--yes"]):
        reason = failed(sessions(home, *args, "--tenant", str(BOB)))
        assert reason == f"Error: no session {tea!r} for {BOB}"
    listed = json.loads(ok(sessions(home, "list", "--tenant", str(ALICE), "--json")))
    assert {s["id"]: s["title"] for s in listed}[tea] == "Tea 茶"
    found = json.loads(ok(sessions(home, "search", "oolong", "--tenant", str(BOB), "--json")))
    assert [h["id"] for h in found["sessions"]] == [seeded["bob"]]


def test_search_json_is_the_tool_result(home: Path, seeded: dict[str, str]) -> None:
    printed = json.loads(ok(sessions(home, "search", "oolong", "--tenant", str(ALICE), "--json")))
    store = open_store(home)
    try:
        tool = SessionSearchTool(
            SessionSearch(store.db),
            tenant=ALICE,
            scope_key=ALICE.namespace,
            chat_type="dm",
            current_session_id=None,
        )
        expected = tool.handle({"query": "oolong"})
    finally:
        store.db.close()
    assert printed == json.loads(expected)
    assert [h["id"] for h in printed["sessions"]] == [seeded["tea"]]

    cjk = json.loads(ok(sessions(home, "search", "脚本", "--tenant", str(ALICE), "--json")))
    assert len(cjk["sessions"]) == 1
    human = ok(sessions(home, "search", "Kyoto", "--tenant", str(ALICE)))
    assert seeded["trip"] in human and "Kyoto" in human
    assert "No matching" in ok(sessions(home, "search", "picnic", "--tenant", str(ALICE)))

    in_group = json.loads(
        ok(
            sessions(
                home,
                "search",
                "picnic",
                "--tenant",
                str(ALICE),
                "--group",
                "telegram:-100777",
                "--json",
            )
        )
    )
    assert [h["id"] for h in in_group["sessions"]] == [seeded["group"]]
    usage = sessions(home, "search", "x", "--tenant", str(ALICE), "--group", "nonsense")
    assert usage.returncode == 2 and "Invalid value for --group" in usage.stderr


def test_export_import_round_trip_across_homes(
    home: Path, seeded: dict[str, str], tmp_path: Path
) -> None:
    exported = ok(sessions(home, "export", "--tenant", str(ALICE)))
    assert len(exported.splitlines()) == 3
    out = tmp_path / "alice.jsonl"
    assert ok(sessions(home, "export", "--tenant", str(ALICE), "--out", str(out))) == ""
    assert out.read_text(encoding="utf-8") == exported
    assert out.stat().st_mode & 0o777 == 0o600

    fresh = tmp_path / "fresh-home"
    said = ok(sessions(fresh, "import", str(out), "--tenant", str(ALICE)))
    assert said.startswith("imported 3 sessions (8 messages)")
    assert ok(sessions(fresh, "export", "--tenant", str(ALICE))) == exported
    found = json.loads(ok(sessions(fresh, "search", "Kyoto", "--tenant", str(ALICE), "--json")))
    assert len(found["sessions"]) == 1

    reason = failed(sessions(fresh, "import", str(out), "--tenant", str(ALICE)))
    assert reason.startswith("Error: line 1: id ") and "--on-conflict" in reason
    assert "imported 0 sessions" in ok(
        sessions(fresh, "import", str(out), "--tenant", str(ALICE), "--on-conflict", "skip")
    )
    # Another tenant's import never hears that Alice has those ids: they get fresh ones.
    copied = ok(sessions(fresh, "import", "-", "--tenant", str(BOB), input_text=exported))
    assert copied.startswith("imported 3 sessions") and copied.count(" → ") == 3
    assert "in use" not in copied and str(ALICE) not in copied
    assert ok(sessions(fresh, "export", "--tenant", str(ALICE))) == exported


def test_import_refuses_a_bad_file_whole(home: Path, tmp_path: Path) -> None:
    good: dict[str, object] = {
        "id": "s1",
        "title": None,
        "started_at": "2024-05-01T09:30:00Z",
        "ended_at": None,
        "source": "console",
        "parent_id": None,
        "messages": [],
    }
    bad = dict(
        good,
        id="s2",
        messages=[
            {"role": "robot", "content": "x", "name": None, "timestamp": "2024-05-01T09:30:00Z"}
        ],
    )
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    reason = failed(sessions(home, "import", str(path), "--tenant", str(ALICE)))
    assert reason.startswith("Error: line 2: messages.0.role")
    assert json.loads(ok(sessions(home, "list", "--tenant", str(ALICE), "--json"))) == []
    path.write_bytes(b"\xff\xfe")
    assert "not UTF-8" in failed(sessions(home, "import", str(path), "--tenant", str(ALICE)))


def test_rename_and_delete(home: Path, seeded: dict[str, str]) -> None:
    tea, trip = seeded["tea"], seeded["trip"]
    assert "'Teatime'" in ok(sessions(home, "rename", tea, "Teatime", "--tenant", str(ALICE)))
    reason = failed(sessions(home, "rename", trip, "Teatime", "--tenant", str(ALICE)))
    assert "already has a session titled 'Teatime'" in reason
    assert "1–100" in failed(sessions(home, "rename", trip, "   ", "--tenant", str(ALICE)))

    kept = sessions(home, "delete", tea, "--tenant", str(ALICE), input_text="n\n")
    assert kept.returncode == 1 and "Aborted" in kept.stderr
    assert "4 messages" in kept.stdout  # the prompt says what would go
    said = ok(sessions(home, "delete", tea, "--tenant", str(ALICE), input_text="y\n"))
    assert said.strip().endswith(f"deleted session {tea} (4 messages)")
    assert failed(sessions(home, "show", tea, "--tenant", str(ALICE))).startswith(
        "Error: no session"
    )
    found = json.loads(ok(sessions(home, "search", "oolong", "--tenant", str(ALICE), "--json")))
    assert len(found["sessions"]) == 0


def test_prune_removes_old_ended_sessions_and_their_hits(home: Path) -> None:
    store = open_store(home)
    try:
        old_session(store, ALICE, "old_alice", "ancient zeppelin notes")
        old_session(store, BOB, "old_bob", "ancient zeppelin too")
        recent = chat(store, ALICE, "Recent", ["recent zeppelin talk"])
        live = store.create_session(
            ALICE,
            session_key="k",
            source="telegram",
            system_prompt="p",
            tools_json="[]",
            scope_key=ALICE.namespace,
            started_at=1_500_000_000.0,
        )
        store.record_turn(ALICE, live.id, [NewMessage("user", "live zeppelin chat")])
    finally:
        store.db.close()

    assert "no retention period" in failed(sessions(home, "prune"))

    def hits(tenant: TenantId) -> set[str]:
        out = ok(sessions(home, "search", "zeppelin", "--tenant", str(tenant), "--json"))
        return {h["id"] for h in json.loads(out)["sessions"]}

    assert hits(ALICE) == {"old_alice", recent, live.id}
    only_bob = json.loads(
        ok(sessions(home, "prune", "--days", "30", "--tenant", str(BOB), "--json"))
    )
    assert (only_bob["sessions"], only_bob["messages"], only_bob["tenants"]) == (1, 1, 1)
    assert hits(BOB) == set() and "old_alice" in hits(ALICE)

    said = ok(run_cli(["sessions", "prune"], home=home, MNEMOGATE_SESSIONS__RETENTION_DAYS="30"))
    assert said.startswith("pruned 1 sessions (1 messages) of 1 tenants")
    assert hits(ALICE) == {recent, live.id}
    listed = json.loads(ok(sessions(home, "list", "--tenant", str(ALICE), "--json")))
    assert {s["id"] for s in listed} == {recent, live.id}


def test_every_subcommand_has_help_and_needs_a_tenant(home: Path) -> None:
    names = ["list", "show", "search", "export", "import", "rename", "delete", "prune"]
    listing = ok(sessions(home, "--help"))
    assert all(name in listing for name in names)
    proc = sessions(home, "list")
    assert proc.returncode == 2 and "--tenant" in proc.stderr
    assert "must look like" in sessions(home, "list", "--tenant", "alice").stderr


def test_search_now_anchors_time_expressions(home: Path, seeded: dict[str, str]) -> None:
    listed = json.loads(ok(sessions(home, "list", "--tenant", str(ALICE), "--json")))
    day = date.fromisoformat(next(s for s in listed if s["id"] == seeded["tea"])["started_at"][:10])
    args = ["search", "what did I say yesterday?", "--tenant", str(ALICE), "--json", "--now"]
    found = json.loads(ok(sessions(home, *args, (day + timedelta(days=1)).isoformat())))
    assert found["when"] == day.isoformat()
    assert seeded["tea"] in {s["id"] for s in found["sessions"]}
    later = json.loads(ok(sessions(home, *args, "2199-01-01")))
    assert later["when"] == "2198-12-31" and later["sessions"] == []
    bad = sessions(home, "search", "x", "--tenant", str(ALICE), "--now", "soon")
    assert bad.returncode == 2 and "--now" in bad.stderr
