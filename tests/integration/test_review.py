"""Background memory review against the fake LLM over HTTP, and the memory chat commands."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from gateway.agent.dispatch import dispatch
from gateway.app import App
from gateway.history.store import StoredMessage
from gateway.memory.approval import ApprovalStore
from gateway.memory.operations import Operation
from gateway.memory.review import (
    MAX_REVIEW_ITERATIONS,
    NOTHING_TO_SAVE,
    REVIEW_PROMPT,
    build_digest,
    run_review,
)
from gateway.routing import Conversation
from gateway.security.fence import wrap_recalled
from gateway.settings import Settings
from gateway.tenants import MemoryScope
from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script, is_chat_request, tool_call

pytestmark = pytest.mark.integration

ALICE = Conversation.console("alice")
SCOPE = MemoryScope.private(ALICE.tenant)
FACT = "Prefers metric units and 24-hour times"
DIGEST = "User (alice): Please always use metric units, and 24-hour times.\nAssistant: Will do."


def msg(n: int, role: str, content: str, **extra: Any) -> StoredMessage:
    fields: dict[str, Any] = {
        "name": None,
        "tool_calls": None,
        "tool_call_id": None,
        "platform_message_id": None,
    }
    fields.update(extra)
    return StoredMessage(
        id=n, session_id="s1", role=role, content=content, timestamp=float(n), **fields
    )


@pytest.fixture
async def app(make_settings: Callable[..., Settings]) -> AsyncIterator[App]:
    async with App(make_settings()) as built:
        yield built


def review_requests(llm: FakeLLM) -> list[dict[str, Any]]:
    return [r for r in llm.requests if not is_chat_request(r)]


async def test_review_writes_the_fact_to_user_md_as_background_review(
    app: App, fake_llm: FakeLLM
) -> None:
    fake_llm.handler = Script(
        review=[tool_call("memory", {"action": "add", "target": "user", "content": FACT}), "done"]
    )
    outcome = await run_review(app.aux_llm, app.memory, SCOPE, DIGEST)
    assert outcome.final_text == "done"
    assert len(outcome.writes) == 1 and outcome.staged == []
    assert [(c.target, c.result.changed) for c in outcome.changes] == [("user", True)]
    [entry] = app.memory.read(SCOPE, "user")
    assert (entry.text, entry.origin) == (FACT, "background-review")

    first, second = review_requests(fake_llm)
    assert first["messages"][0]["content"].startswith(REVIEW_PROMPT)
    assert first["messages"][1] == {"role": "user", "content": DIGEST}
    assert [t["function"]["name"] for t in first["tools"]] == ["memory"]
    assert json.loads(second["messages"][-1]["content"])["success"] is True


async def test_nothing_to_save_writes_nothing(app: App, fake_llm: FakeLLM) -> None:
    fake_llm.handler = Script(review=[NOTHING_TO_SAVE])
    outcome = await run_review(app.aux_llm, app.memory, SCOPE, DIGEST)
    assert outcome.final_text == NOTHING_TO_SAVE
    assert not outcome.saved_anything
    assert not app.memory.path(SCOPE, "user").exists()
    assert not app.memory.path(SCOPE, "memory").exists()
    assert len(review_requests(fake_llm)) == 1


async def test_an_empty_digest_costs_no_request(app: App, fake_llm: FakeLLM) -> None:
    outcome = await run_review(app.aux_llm, app.memory, SCOPE, "   ")
    assert outcome.final_text == NOTHING_TO_SAVE
    assert fake_llm.requests == []


async def test_a_model_calling_the_tool_forever_is_stopped(app: App, fake_llm: FakeLLM) -> None:
    counter = itertools.count(1)
    fake_llm.handler = lambda body: tool_call(
        "memory", {"action": "add", "target": "memory", "content": f"fact number {next(counter)}"}
    )
    outcome = await run_review(app.aux_llm, app.memory, SCOPE, DIGEST, max_iterations=50)
    requests = review_requests(fake_llm)
    assert len(requests) == MAX_REVIEW_ITERATIONS + 1
    assert requests[-1]["tool_choice"] == "none"
    assert len(outcome.writes) == MAX_REVIEW_ITERATIONS
    assert len(app.memory.read(SCOPE, "memory")) == MAX_REVIEW_ITERATIONS


async def test_staged_review_waits_for_memory_approve(app: App, fake_llm: FakeLLM) -> None:
    fake_llm.handler = Script(
        review=[tool_call("memory", {"action": "add", "target": "user", "content": FACT}), "ok"]
    )
    approvals = ApprovalStore(app.db)
    stage = approvals.stager(SCOPE, origin="background-review")
    outcome = await run_review(app.aux_llm, app.memory, SCOPE, DIGEST, stage=stage)
    assert outcome.writes == [] and len(outcome.staged) == 1
    assert not app.memory.path(SCOPE, "user").exists()
    tool_answer = json.loads(review_requests(fake_llm)[1]["messages"][-1]["content"])
    assert tool_answer["staged"] is True
    write_id = outcome.staged[0].id
    assert tool_answer["pending_id"] == write_id

    listing = await dispatch(app.agent, ALICE, "/memory pending")
    assert listing is not None
    assert f"#{write_id} user: + " in listing and FACT[:40] in listing
    assert "background-review" in listing

    approved = await dispatch(app.agent, ALICE, "/memory approve all")
    assert approved is not None and f"#{write_id} saved" in approved
    [entry] = app.memory.read(SCOPE, "user")
    assert (entry.text, entry.origin) == (FACT, "background-review")
    assert "No memory changes are waiting" in (
        await dispatch(app.agent, ALICE, "/memory pending") or ""
    )
    shown = await dispatch(app.agent, ALICE, "/memory")
    assert shown is not None and FACT in shown and "[background-review," in shown


async def test_reject_and_the_approval_preference(app: App) -> None:
    approvals = ApprovalStore(app.db)
    assert "approval is off" in (await dispatch(app.agent, ALICE, "/memory approval") or "")
    assert "approval is on" in (await dispatch(app.agent, ALICE, "/memory approval on") or "")
    assert approvals.enabled(ALICE.tenant, default=False) is True
    staged = approvals.stage(SCOPE, "user", [Operation("add", content=FACT)], origin="user-chat")
    reply = await dispatch(app.agent, ALICE, f"/memory reject {staged.id}")
    assert reply == f"❌ #{staged.id} dropped; nothing was saved."
    again = await dispatch(app.agent, ALICE, f"/memory reject {staged.id}")
    assert again == f"Memory change #{staged.id} was already rejected."
    assert await dispatch(app.agent, ALICE, "/memory approve 424242") == (
        "You have no memory change #424242."
    )
    assert (await dispatch(app.agent, ALICE, "/memory approve soon") or "").startswith("Usage")
    assert (await dispatch(app.agent, ALICE, "/memory frobnicate") or "").startswith("Usage")
    stale = approvals.stage(
        SCOPE, "user", [Operation("remove", old_text="zzz")], origin="user-chat"
    )
    assert await dispatch(app.agent, ALICE, f"/memory approve {stale.id}") == (
        f"⚠️ #{stale.id} could not be saved and was marked failed: No entry in the user "
        f"profile (USER.md) contains 'zzz'. (the change was user: − \"zzz\")"
    )
    assert "approval is off" in (await dispatch(app.agent, ALICE, "/memory approval off") or "")
    assert not app.memory.path(SCOPE, "user").exists()


async def test_other_tenants_writes_cannot_be_approved(app: App) -> None:
    bob = Conversation.console("bob")
    approvals = ApprovalStore(app.db)
    bobs = approvals.stage(
        MemoryScope.private(bob.tenant),
        "user",
        [Operation("add", content="Bob")],
        origin="user-chat",
    )
    assert await dispatch(app.agent, ALICE, f"/memory approve {bobs.id}") == (
        f"You have no memory change #{bobs.id}."
    )
    assert "No memory changes" in (await dispatch(app.agent, ALICE, "/memory approve all") or "")
    assert len(approvals.pending(bob.tenant)) == 1


async def test_forget_removes_matching_entries_of_both_files(app: App) -> None:
    app.memory.apply(
        SCOPE,
        "user",
        [Operation("add", content="Drinks oolong Tea"), Operation("add", content="Name: Alice")],
        origin="operator",
    )
    app.memory.apply(
        SCOPE, "memory", [Operation("add", content="tea kettle is 1.7 l")], origin="operator"
    )
    reply = await dispatch(app.agent, ALICE, "/forget tea")
    assert reply == "Forgot 2 entries (1 from your profile, 1 from my notes)."
    assert [e.text for e in app.memory.read(SCOPE, "user")] == ["Name: Alice"]
    assert app.memory.read(SCOPE, "memory") == []
    assert (
        await dispatch(app.agent, ALICE, "/forget tea") == "Nothing in your memory contains “tea”."
    )
    assert (await dispatch(app.agent, ALICE, "/forget") or "").startswith("Usage")


async def test_memory_commands_refuse_group_chats(app: App) -> None:
    group = Conversation(ALICE.tenant, chat_id="-100", chat_type="group")
    for text in ("/memory pending", "/memory approve all", "/forget tea"):
        reply = await dispatch(app.agent, group, text)
        assert reply is not None and "only works in a direct message" in reply


def test_digest_keeps_text_summarises_tools_and_strips_fences() -> None:
    messages = [
        msg(1, "system", "frozen prompt"),
        msg(2, "user", "I'm a nurse. " + wrap_recalled("old: likes jazz"), name="Alice"),
        msg(3, "assistant", "", tool_calls=[{"id": "c1", "function": {"name": "session_search"}}]),
        msg(4, "tool", '{"success": true, "results": ["x"]}', tool_call_id="c1"),
        msg(5, "assistant", "Noted."),
    ]
    digest = build_digest(messages)
    lines = digest.splitlines()
    assert lines[0].startswith("User (Alice): I'm a nurse.")
    assert "frozen prompt" not in digest
    assert "memory-context" not in digest and "Recalled memory" not in digest
    assert "Assistant: [called session_search]" in lines
    assert any(line.startswith('[tool result: {"success": true') for line in lines)
    assert lines[-1] == "Assistant: Noted."


def test_digest_keeps_the_newest_messages_within_the_limit() -> None:
    messages = [msg(n, "user", f"message {n:03d} " + "x" * 80) for n in range(200)]
    digest = build_digest(messages, limit_chars=1000)
    assert len(digest) <= 1000
    assert digest.splitlines()[0].startswith("[… ") and "left out]" in digest
    assert "message 199" in digest.splitlines()[-1]
    assert "message 000" not in digest
    huge = build_digest([msg(1, "user", "start " + "y" * 5000 + " the end")], limit_chars=300)
    assert len(huge) <= 300 and huge.endswith("the end")
