"""The model-facing ``memory`` tool: argument handling, JSON answers, failure budget."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from gateway.memory.store import MemoryStore
from gateway.memory.tool import MEMORY_GUIDANCE, MEMORY_TOOL_SCHEMA, MemoryTool
from gateway.settings import MemorySettings
from gateway.tenants import MemoryScope, TenantId

SCOPE = MemoryScope.private(TenantId.parse("discord:42"))
TERMINAL = "Stop calling the memory tool and continue your reply to the user."


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path, MemorySettings(memory_char_limit=200, user_char_limit=150))


@pytest.fixture
def tool(store: MemoryStore) -> MemoryTool:
    return MemoryTool(store, SCOPE)


def call(tool: MemoryTool, arguments: dict[str, Any] | str) -> dict[str, Any]:
    answer = json.loads(tool.handle(arguments))
    assert isinstance(answer, dict)
    return answer


def test_schema_is_a_stable_function_tool_without_read() -> None:
    before = json.dumps(MEMORY_TOOL_SCHEMA, sort_keys=True)
    assert MEMORY_TOOL_SCHEMA["type"] == "function"
    function = MEMORY_TOOL_SCHEMA["function"]
    assert function["name"] == "memory"
    properties = function["parameters"]["properties"]
    assert set(properties) == {"action", "target", "content", "old_text", "operations"}
    assert properties["action"]["enum"] == ["add", "replace", "remove"]
    assert properties["target"]["enum"] == ["memory", "user"]
    assert properties["operations"]["items"]["properties"]["action"]["enum"] == [
        "add",
        "replace",
        "remove",
    ]
    assert json.dumps(copy.deepcopy(MEMORY_TOOL_SCHEMA), sort_keys=True) == before
    assert json.dumps(MemoryTool.schema, sort_keys=True) == before


def test_guidance_covers_both_targets_and_what_not_to_save() -> None:
    for phrase in ("`user` target", "`memory` target", "Do not save", "Good:", "Bad:"):
        assert phrase in MEMORY_GUIDANCE


def test_add_from_a_json_string_answers_usage_and_count_only(
    tool: MemoryTool, store: MemoryStore
) -> None:
    answer = call(tool, json.dumps({"action": "add", "target": "user", "content": "Name: Li"}))
    assert set(answer) == {"success", "message", "usage", "entry_count"}
    assert answer["success"] is True
    assert answer["usage"] == "8/150"
    assert answer["entry_count"] == 1
    assert store.read(SCOPE, "user")[0].origin == "user-chat"
    assert len(tool.writes) == 1 and tool.writes[0].changed


def test_batch_operations_apply_together(tool: MemoryTool, store: MemoryStore) -> None:
    call(tool, {"action": "add", "target": "memory", "content": "old editor: VS Code"})
    answer = call(
        tool,
        {
            "target": "memory",
            "operations": [
                {"action": "remove", "old_text": "VS Code"},
                {"action": "add", "content": "Editor: Helix"},
                {"action": "add", "content": "Shell: fish"},
            ],
        },
    )
    assert answer["success"] is True
    assert [entry.text for entry in store.read(SCOPE, "memory")] == ["Editor: Helix", "Shell: fish"]


def test_error_answer_carries_current_entries(tool: MemoryTool) -> None:
    call(tool, {"action": "add", "target": "memory", "content": "alpha"})
    answer = call(tool, {"action": "remove", "target": "memory", "old_text": "omega"})
    assert answer["success"] is False
    assert answer["current_entries"] == ["alpha"]
    assert answer["usage"] == "5/200"
    assert "omega" in answer["error"]


@pytest.mark.parametrize(
    ("arguments", "phrase"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ({"action": "add", "content": "x"}, "target"),
        ({"action": "add", "target": "notes", "content": "x"}, "'notes'"),
        ({"action": "read", "target": "memory"}, "Unknown action 'read'"),
        ({"target": "memory"}, "Missing action"),
        ({"action": "add", "target": "memory"}, "content is empty"),
        ({"action": "replace", "target": "memory", "content": "x"}, "old_text is missing"),
        ({"action": "add", "target": "memory", "content": 5}, "content must be a string"),
        ({"target": "memory", "operations": []}, "non-empty list"),
        ({"target": "memory", "operations": ["add"]}, "operations[0]"),
        (
            {"action": "add", "target": "memory", "operations": [{"action": "add"}]},
            "not both",
        ),
        ({"action": "add", "target": "memory", "content": "y" * 201}, "at most 200"),
    ],
)
def test_bad_arguments_answer_an_error_instead_of_raising(
    tool: MemoryTool, arguments: dict[str, Any] | str, phrase: str
) -> None:
    answer = call(tool, arguments)
    assert answer["success"] is False
    assert phrase in answer["error"]
    assert tool.writes == []


def test_three_failures_make_the_tool_answer_terminally_until_the_next_turn(
    tool: MemoryTool, store: MemoryStore
) -> None:
    bad = {"action": "remove", "target": "memory", "old_text": "missing"}
    assert TERMINAL not in call(tool, bad)["error"]
    assert TERMINAL not in call(tool, bad)["error"]
    third = call(tool, bad)
    assert TERMINAL in third["error"] and "missing" in third["error"]
    good = {"action": "add", "target": "memory", "content": "a fact"}
    fourth = call(tool, good)
    assert fourth == {
        "success": False,
        "error": "Memory has failed 3 times this turn. " + TERMINAL,
    }
    assert store.read(SCOPE, "memory") == []
    tool.new_turn()
    assert call(tool, good)["success"] is True


def test_successes_do_not_reset_the_failure_count_within_a_turn(tool: MemoryTool) -> None:
    bad = "{broken"
    call(tool, bad)
    call(tool, {"action": "add", "target": "memory", "content": "ok"})
    call(tool, bad)
    call(tool, bad)
    assert TERMINAL in call(tool, {"action": "add", "target": "memory", "content": "ok2"})["error"]


def test_read_only_reason_refuses_every_call(store: MemoryStore) -> None:
    tool = MemoryTool(store, SCOPE, read_only_reason="this is an incognito session")
    for _ in range(5):
        answer = call(tool, {"action": "add", "target": "memory", "content": "secret"})
        assert answer["success"] is False
        assert "incognito session" in answer["error"]
    assert store.read(SCOPE, "memory") == []


def test_writes_list_holds_changing_writes_of_this_turn(tool: MemoryTool) -> None:
    add = {"action": "add", "target": "memory", "content": "fact"}
    call(tool, add)
    call(tool, add)
    assert len(tool.writes) == 1, "a duplicate add changes nothing"
    tool.new_turn()
    assert tool.writes == []


def test_origin_is_recorded(store: MemoryStore) -> None:
    tool = MemoryTool(store, SCOPE, origin="background-review")
    call(tool, {"action": "add", "target": "user", "content": "Prefers terse replies"})
    assert store.read(SCOPE, "user")[0].origin == "background-review"


def test_corrupt_file_is_reported_not_raised(tool: MemoryTool, store: MemoryStore) -> None:
    path = store.path(SCOPE, "memory")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xc3\x28 bad")
    answer = call(tool, {"action": "add", "target": "memory", "content": "x"})
    assert answer["success"] is False
    assert "UTF-8" in answer["error"]


def test_storage_failure_is_reported_not_raised(tool: MemoryTool, tmp_path: Path) -> None:
    blocker = SCOPE.directory(tmp_path).parent
    blocker.parent.mkdir(parents=True)
    blocker.write_text("a file where the tenant's directory should be")
    answer = call(tool, {"action": "add", "target": "memory", "content": "x"})
    assert answer["success"] is False
    assert "Memory could not be written" in answer["error"]
