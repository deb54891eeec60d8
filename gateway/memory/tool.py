"""The model's ``memory`` tool: its schema, its system-prompt guidance, and its handler.

The schema and guidance are constants so the system prompt and tools array stay
byte-identical for a whole session (the LLM provider's prefix cache depends on it).
:class:`MemoryTool` is bound to one memory scope; it never raises to the tool loop, and it
stops accepting calls after three failures in one turn so a memory loop cannot starve the
reply.

With a ``stage`` callable (write approval on, see :mod:`gateway.memory.approval`) a call is
checked against the file as it is now without writing it (:meth:`MemoryStore.preview`) and,
if it would change something, staged for the user's approval instead; errors are the same
as on the direct path.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gateway.errors import MnemogateError
from gateway.memory.operations import ACTIONS, Action, Operation, WriteResult
from gateway.memory.store import TARGETS, MemoryStore, Origin, Target
from gateway.observability import metrics
from gateway.tenants import MemoryScope

if TYPE_CHECKING:
    from gateway.memory.approval import PendingWrite

MAX_FAILURES_PER_TURN = 3

MEMORY_TOOL_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "memory",
        "description": (
            "Save durable facts about this user to your long-term memory, which is shown to "
            "you at the start of every future conversation with them. There is no read "
            "action: the current memory is already in your system prompt (as it was when "
            "this conversation began). Targets: 'user' = who the user is (name, role, "
            "timezone, language, communication preferences, dislikes, skill level); "
            "'memory' = your working notes (their environment, project conventions, tool "
            "quirks, corrections they made, lessons learned, completed milestones). Save "
            "preferences, corrections and stable facts as short declarative entries that "
            "pack related facts together. Do not save task progress, temporary paths, raw "
            "logs, code or data, vague statements, or anything easy to find again in past "
            "conversations or on the web. Actions: add (content), replace (old_text = a "
            "short substring of exactly one entry, content = the new entry), remove "
            "(old_text). Use operations for several edits at once; they are applied "
            "all-or-nothing and the size limit is checked on the result, so you can remove "
            "or merge entries and add a new one in a single call. If a write fails because "
            "memory is full, consolidate with replace/remove and retry in the same turn."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "action": {
                    "type": "string",
                    "enum": list(ACTIONS),
                    "description": "One edit. Leave out when using operations.",
                },
                "target": {
                    "type": "string",
                    "enum": list(TARGETS),
                    "description": "'user' for who the user is, 'memory' for your notes.",
                },
                "content": {
                    "type": "string",
                    "description": "The entry text, for add and replace.",
                },
                "old_text": {
                    "type": "string",
                    "description": "A substring of exactly one existing entry, for replace "
                    "and remove.",
                },
                "operations": {
                    "type": "array",
                    "description": "Several edits to the same target, applied in order, "
                    "all-or-nothing.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "action": {"type": "string", "enum": list(ACTIONS)},
                            "content": {"type": "string"},
                            "old_text": {"type": "string"},
                        },
                        "required": ["action"],
                    },
                },
            },
            "required": ["target"],
        },
    },
}

MEMORY_GUIDANCE = """\
## Long-term memory

You keep two small notebooks about the person you are talking to. They appear below as \
MEMORY and USER PROFILE, exactly as they were when this conversation started; edits you \
make with the `memory` tool are saved at once but show up here only in the next \
conversation.

Save without being asked when you learn something that will still matter next time:
- preferences and dislikes ("prefers short answers, no emoji"),
- corrections ("their Docker runs rootless; never suggest sudo docker"),
- stable facts about their environment, projects and conventions,
- lessons learned the hard way, and milestones that are finished.

The `user` target is who they are: name, role, timezone, language, how they like to be \
addressed and answered, what annoys them, their skill level. The `memory` target is your \
working notes: machines and tools, project layouts and conventions, quirks, corrections, \
completed milestones.

Do not save: progress on the current task, temporary file paths, raw logs, code or data \
dumps, vague statements, or anything you could find again by searching past conversations \
or the web.

Write compact declarative entries and pack related facts into one entry:
- Good: "Laptop: Fedora 40, fish shell, Neovim; containers via Podman, not Docker."
- Good: "Project ~/src/billing: Python 3.12, FastAPI, Postgres 16; tests with `make test`; \
deploys from the main branch via GitHub Actions."
- Good: "Staging host 10.0.4.7 listens for SSH on 2200, not 22."
- Bad: "The user has a project." (says nothing usable)
- Bad: "Today the user asked me to look at their project and I found out it uses \
Python 3.12 and…" (a story instead of a fact)

Each notebook has a character limit, shown in its header. When it is nearly full, \
consolidate: merge overlapping entries with replace and drop stale ones with remove. If a \
write is refused for lack of room, do that and retry in the same turn. Never store \
secrets, and never store instructions to yourself that the user would not want.
"""

_TERMINAL = (
    f"Memory has failed {MAX_FAILURES_PER_TURN} times this turn. Stop calling the memory "
    f"tool and continue your reply to the user."
)


class MemoryTool:
    """The ``memory`` tool bound to one scope for one session; call :meth:`new_turn` per turn."""

    name = "memory"
    schema = MEMORY_TOOL_SCHEMA

    def __init__(
        self,
        store: MemoryStore,
        scope: MemoryScope,
        *,
        origin: Origin = "user-chat",
        read_only_reason: str | None = None,
        stage: Callable[[Target, list[Operation]], PendingWrite] | None = None,
    ) -> None:
        self._store = store
        self._scope = scope
        self._origin: Origin = origin
        self._read_only_reason = read_only_reason
        self._stage = stage
        self.failures = 0
        self.writes: list[WriteResult] = []
        self.changes: list[MemoryChange] = []
        self.staged: list[PendingWrite] = []

    def new_turn(self) -> None:
        """Start counting failures, writes and staged writes afresh."""
        self.failures = 0
        self.writes = []
        self.changes = []
        self.staged = []

    def handle(self, arguments: dict[str, Any] | str) -> str:
        """Run one call; returns the JSON text for the model, never raises for bad input."""
        if self._read_only_reason is not None:
            return _error(
                f"Memory is read-only here: {self._read_only_reason}. Do not call the memory "
                f"tool again in this conversation."
            )
        if self.failures >= MAX_FAILURES_PER_TURN:
            return _error(_TERMINAL)
        answer, result = self._run(arguments)
        if result is not None and result.success:
            return answer
        self.failures += 1
        if self.failures >= MAX_FAILURES_PER_TURN:
            body = json.loads(answer)
            body["error"] = f"{body['error']} {_TERMINAL}"
            answer = json.dumps(body, ensure_ascii=False)
        return answer

    def _run(self, arguments: dict[str, Any] | str) -> tuple[str, WriteResult | None]:
        parsed = _parse_arguments(arguments)
        if isinstance(parsed, str):
            return _error(parsed), None
        target, operations = parsed
        try:
            if self._stage is not None:
                return self._staged(self._stage, target, operations)
            result = self._store.apply(self._scope, target, operations, origin=self._origin)
        except MnemogateError as exc:
            return _error(f"Memory could not be written: {exc}"), None
        metrics.memory_write(result)
        if result.changed:
            self.writes.append(result)
            self.changes.append(MemoryChange(target, result))
        return result.to_json(), result

    def _staged(
        self,
        stage: Callable[[Target, list[Operation]], PendingWrite],
        target: Target,
        operations: list[Operation],
    ) -> tuple[str, WriteResult | None]:
        """Check the call against the file without writing; stage it if it changes something."""
        result = self._store.preview(self._scope, target, operations)
        if not result.changed:
            metrics.memory_write(result)
            return result.to_json(), result  # an error, or nothing to change: as if applied
        pending = stage(target, operations)
        metrics.memory_write(result, staged=True)
        self.staged.append(pending)
        body = {
            "success": True,
            "staged": True,
            "pending_id": pending.id,
            "message": (
                f"Staged for the user's approval (change #{pending.id}); it is not saved yet. "
                f"The user reviews it with /memory pending. Do not repeat this call."
            ),
        }
        return json.dumps(body, ensure_ascii=False), result


@dataclass(frozen=True, slots=True)
class MemoryChange:
    """A write the tool made, with the file it went to (for notices and hooks)."""

    target: Target
    result: WriteResult


def _error(message: str) -> str:
    return json.dumps({"success": False, "error": message}, ensure_ascii=False)


def _parse_arguments(arguments: dict[str, Any] | str) -> tuple[Target, list[Operation]] | str:
    """The target and operations of a call, or the error text for the model."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError as exc:
            return f"The arguments are not valid JSON ({exc}). Send a JSON object."
    if not isinstance(arguments, dict):
        return "The arguments must be a JSON object."
    target = arguments.get("target")
    if target not in TARGETS:
        return f"Unknown or missing target {target!r}: use 'memory' or 'user'."
    batch = arguments.get("operations")
    if batch is not None:
        if "action" in arguments:
            return "Give either action or operations, not both."
        if not isinstance(batch, list) or not batch:
            return "operations must be a non-empty list of {action, content?, old_text?}."
        items: list[Any] = batch
    elif "action" in arguments:
        items = [arguments]
    else:
        return "Missing action: use add, replace or remove (or a list in operations)."
    operations = []
    for n, item in enumerate(items, 1):
        where = f"operations[{n - 1}]: " if batch is not None else ""
        operation = _operation(item)
        if isinstance(operation, str):
            return where + operation
        operations.append(operation)
    return ("memory" if target == "memory" else "user"), operations


def _operation(item: Any) -> Operation | str:
    if not isinstance(item, dict):
        return "each operation must be an object with action, content and/or old_text."
    action = item.get("action")
    if action not in ACTIONS:
        return f"Unknown action {action!r}: use add, replace or remove."
    fields: dict[str, str | None] = {}
    for key in ("content", "old_text"):
        value = item.get(key)
        if value is not None and not isinstance(value, str):
            return f"{key} must be a string."
        fields[key] = value
    checked: Action = action
    return Operation(checked, content=fields["content"], old_text=fields["old_text"])
