"""Account links on real SQLite and memory files: resolution, codes, merge, operator CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.agent.sessions import conversation_of
from gateway.errors import UserInputError
from gateway.history.db import Database
from gateway.history.records import NewMessage
from gateway.history.search import SessionSearch
from gateway.history.store import SessionStore
from gateway.identity import LinkLocked, LinkStore, link_accounts
from gateway.memory.approval import ApprovalStore
from gateway.memory.store import MemoryStore, Operation
from gateway.notices import Notice
from gateway.pairing import LOCKOUT_FAILURES
from gateway.privacy import forget_tenant
from gateway.settings import MemorySettings
from gateway.tenants import GroupId, MemoryScope, TenantId
from tests.conftest import run_cli
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script, chat_requests, tool_call

CELLO = "Plays the cello in a community orchestra on Tuesdays"
NUTS = "Allergic to hazelnuts and to most tree nuts, badly so"
TG, DC, OTHER = (TenantId.parse(t) for t in ("telegram:11", "discord:22", "telegram:33"))


@pytest.fixture
def db(home: Path) -> Database:
    return Database(home / "state.db")


def _session(db: Database, tenant: TenantId, key: str, text: str, title: str | None = None) -> str:
    store = SessionStore(db)
    record = store.create_session(
        tenant,
        session_key=key,
        source=key.partition(":")[0],
        system_prompt="p",
        tools_json="[]",
        scope_key=tenant.namespace,
        chat_id=key.rpartition(":")[2],
        title=title,
    )
    store.record_turn(tenant, record.id, [NewMessage("user", text), NewMessage("assistant", "ok")])
    return record.id


def _found(db: Database, tenant: TenantId, query: str) -> list[str]:
    hits = SessionSearch(db).search(tenant, query, scope_key=tenant.namespace, chat_type="dm")
    return [hit.id for hit in hits.sessions]


def test_codes_are_single_use_per_issuer_and_wrong_ones_lock_out(db: Database) -> None:
    links = LinkStore(db)
    code = links.issue_code(TG)
    with pytest.raises(UserInputError):
        links.claim(code.code, TG)  # the issuer cannot claim its own code
    assert links.claim(code.code.lower(), DC).issuer == TG
    assert links.redeem(code.code, DC).issuer == TG
    with pytest.raises(UserInputError):
        links.redeem(code.code, DC)  # used up
    for _ in range(LOCKOUT_FAILURES - 1):
        with pytest.raises(UserInputError) as wrong:
            links.claim("ZZZZZZZZ", OTHER)
        assert not isinstance(wrong.value, LinkLocked)
    live = links.issue_code(TG)
    with pytest.raises(LinkLocked):
        links.claim("ZZZZZZZZ", OTHER)
    with pytest.raises(LinkLocked):  # locked: even the right code is refused now
        links.claim(live.code, OTHER)


def test_a_voided_code_cannot_be_claimed(db: Database) -> None:
    links = LinkStore(db)
    code = links.issue_code(TG)
    assert links.void(code.code)
    with pytest.raises(UserInputError):
        links.claim(code.code, DC)


def test_linking_merges_sessions_index_and_memory_without_loss(db: Database, home: Path) -> None:
    memory = MemoryStore(home, MemorySettings(memory_char_limit=100))
    tg_scope, dc_scope = MemoryScope.private(TG), MemoryScope.private(DC)
    memory.apply(tg_scope, "memory", [Operation("add", "Owns a cat named Miso")], origin="import")
    roomy = MemoryStore(home, MemorySettings())  # the joining account's own, larger limit
    for text in ("Owns a cat named Miso", CELLO, NUTS):
        roomy.apply(dc_scope, "memory", [Operation("add", text)], origin="import")
    _session(db, TG, "telegram:dm:11", "the telegram pelican", title="Birds")
    moved = _session(db, DC, "discord:dm:900", "the discord flamingo", title="Birds")

    report = link_accounts(db, home, memory, TG, DC, by="test")

    assert LinkStore(db).resolve(DC) == TG and report.tenant == TG
    assert (report.sessions, report.messages) == (1, 2)
    assert _found(db, TG, "flamingo") == [moved] and _found(db, DC, "flamingo") == []
    assert SessionStore(db).get_session(TG, moved).title == "Birds (discord:22)"
    kept = [e.text for e in memory.read(tg_scope, "memory")]
    assert report.duplicates == ["Owns a cat named Miso"]
    assert kept == ["Owns a cat named Miso", CELLO]
    assert report.merged == 1 and len(report.staged) == 1  # over the 100-char limit: staged
    staged = ApprovalStore(db).get(TG, report.staged[0])
    assert NUTS in staged.describe()
    assert memory.read(dc_scope, "memory") == []  # everything is kept under TG now
    assert "Moved 1 conversation(s)" in "\n".join(report.lines())


def test_unlink_and_refusals(db: Database, home: Path) -> None:
    memory = MemoryStore(home, MemorySettings())
    links = LinkStore(db)
    link_accounts(db, home, memory, TG, DC, by="test")
    with pytest.raises(UserInputError, match="already share"):
        link_accounts(db, home, memory, DC, TG, by="test")
    with pytest.raises(UserInputError, match="holds the shared memory"):
        links.unlink(TG)
    assert links.accounts(TG) == [TG, DC]
    assert links.unlink(DC) == TG
    assert links.resolve(DC) == DC and links.unlink(DC) is None


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 3), st.integers(0, 3)), max_size=12))
def test_accounts_never_linked_never_share_a_tenant(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[bool, int, int]]
) -> None:
    """Random link/unlink sequences against a model of who is linked to whom: resolution
    agrees with the model, and search of one tenant never finds another tenant's words."""
    home = tmp_path_factory.mktemp("prop")
    db = Database(home / "state.db")
    memory = MemoryStore(home, MemorySettings())
    accounts = [TenantId.of("telegram", 1), TenantId.of("discord", 2)]
    accounts += [TenantId.of("telegram", 3), TenantId.of("discord", 4)]
    words = ["alpaca", "bison", "condor", "dingo"]
    for account, word in zip(accounts, words, strict=True):
        _session(db, account, f"{account.platform}:dm:{account.user}", f"the {word}")
    owner = {a: a for a in accounts}  # the model: account -> tenant
    data = {word: a for a, word in zip(accounts, words, strict=True)}  # word -> tenant
    links = LinkStore(db)
    for is_link, i, j in steps:
        a, b = accounts[i], accounts[j]
        if is_link:
            allowed = owner[b] == b and owner[a] != b
            try:
                link_accounts(db, home, memory, a, b, by="prop")
            except UserInputError:
                assert not allowed
                continue
            assert allowed
            target = owner[a]
            owner = {x: target if t == b else t for x, t in owner.items()}
            data = {w: target if t == b else t for w, t in data.items()}
        else:
            try:
                links.unlink(b)
            except UserInputError:
                assert any(owner[x] == b for x in accounts if x != b)
                continue
            owner[b] = b  # history stays where it is: ``data`` does not change
        for x in accounts:
            assert links.resolve(x) == owner[x]
    for y in accounts:
        tenant = links.resolve(y)
        for word in words:
            assert bool(_found(db, tenant, word)) == (data[word] == tenant), (y, word)
    db.close()


def test_operator_cli_links_lists_and_unlinks(home: Path, db: Database) -> None:
    _session(db, DC, "discord:dm:900", "the discord flamingo")
    db.close()
    linked = run_cli(["tenants", "link", "telegram:11", "discord:22"], home=home)
    assert linked.returncode == 0, linked.stderr
    assert "Linked discord:22 to telegram:11" in linked.stdout
    listed = run_cli(["tenants", "list", "--json"], home=home)
    assert '"linked_to": "telegram:11"' in listed.stdout
    again = run_cli(["tenants", "link", "telegram:11", "discord:22"], home=home)
    assert again.returncode != 0 and "already share" in again.stderr
    unlinked = run_cli(["tenants", "unlink", "discord:22"], home=home)
    assert "Unlinked discord:22 from telegram:11" in unlinked.stdout
    bad = run_cli(["tenants", "link", "telegram:011", "discord:22"], home=home)
    assert bad.returncode != 0
    unseen = run_cli(["tenants", "link", "telegram:11", "discord:99"], home=home)
    assert unseen.returncode == 0, unseen.stderr
    table = run_cli(["tenants", "list"], home=home).stdout
    assert "LINKED TO" in table
    assert any(
        line.startswith("discord:99") and "telegram:11" in line for line in table.splitlines()
    )


def test_a_moved_session_keeps_its_platform_for_group_scope_and_notices(
    db: Database, home: Path
) -> None:
    store = SessionStore(db)
    group = store.create_session(
        DC,
        session_key="discord:group:777:22",
        source="discord",
        system_prompt="p",
        tools_json="[]",
        scope_key=f"{DC.namespace}.discord-777",
        chat_id="777",
        chat_type="group",
    )
    dm = _session(db, DC, "discord:dm:900", "hello")
    roomy = MemoryStore(home, MemorySettings())
    group_scope = MemoryScope(DC, GroupId("discord", "777"))
    roomy.apply(group_scope, "user", [Operation("add", "Group-only fact")], origin="import")
    link_accounts(db, home, roomy, TG, DC, by="test")

    moved = store.get_session(TG, group.id)
    assert moved.scope_key == f"{TG.namespace}.discord-777"
    conversation = conversation_of(moved)
    assert conversation.tenant == TG and conversation.platform == "discord"
    assert conversation.memory_scope("isolated") == MemoryScope(TG, GroupId("discord", "777"))
    assert [e.text for e in roomy.read(MemoryScope(TG, GroupId("discord", "777")), "user")] == [
        "Group-only fact"
    ]
    notice = Notice.for_session(store.get_session(TG, dm), "💾 Memory updated")
    assert (notice.platform, notice.chat_id, notice.tenant) == ("discord", "900", TG)
    assert Notice.for_session(moved, "x").platform == "discord"


def test_console_chat_resolves_a_linked_console_account(home: Path, fake_llm: FakeLLM) -> None:
    env = {
        "MNEMOGATE_LLM__BASE_URL": fake_llm.base_url,
        "MNEMOGATE_LLM__MODEL": "m",
        "MNEMOGATE_LLM__MAX_RETRIES": "0",
        "MNEMOGATE_JOBS__MODE": "inline",
    }
    fake_llm.handler = Script(
        [tool_call("memory", {"action": "add", "target": "user", "content": "Likes okra"}), "ok"]
    )
    told = run_cli(["chat", "--user", "alice"], home=home, input_text="I like okra\n", **env)
    assert told.returncode == 0, told.stderr
    linked = run_cli(["tenants", "link", "console:alice", "console:al"], home=home)
    assert linked.returncode == 0, linked.stderr
    asked = run_cli(["chat", "--user", "al"], home=home, input_text="/whoami\nhi\n", **env)
    assert asked.returncode == 0, asked.stderr
    assert "console:alice" in asked.stdout
    assert "Likes okra" in str(chat_requests(fake_llm.requests)[-1]["messages"][0]["content"])


def test_erasing_one_linked_account_detaches_it(
    db: Database, home: Path, make_settings: Any
) -> None:
    memory = MemoryStore(home, MemorySettings())
    third = TenantId.of("discord", 44)
    link_accounts(db, home, memory, TG, DC, by="test")
    link_accounts(db, home, memory, TG, third, by="test")
    report = forget_tenant(make_settings(), DC, db=db)
    assert report.erased["account links"] == 1
    links = LinkStore(db)
    assert links.resolve(DC) == DC and links.accounts(TG) == [TG, third]
    forget_tenant(make_settings(), TG, db=db)  # erasing the owner detaches the rest
    assert links.resolve(third) == third
