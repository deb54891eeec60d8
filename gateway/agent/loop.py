"""The bounded LLM tool loop shared by the turn, background review and memory flush."""

from __future__ import annotations

import asyncio
import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from gateway.llm.client import LLMClient
from gateway.llm.types import Completion, ToolCall, Usage
from gateway.observability import metrics

log = logging.getLogger(__name__)

OUT_OF_STEPS = (
    "(I ran out of tool steps for this message. Ask me again, or split it into smaller parts.)"
)


class Tool(Protocol):
    """A blocking tool the model may call; ``handle`` never raises and returns JSON text.

    Blocking tools (file locks, SQLite) run in a worker thread, off the event loop.
    """

    def handle(self, arguments: dict[str, Any] | str) -> str: ...


class AsyncTool(ABC):
    """A tool that awaits I/O itself (e.g. calls the auxiliary model); runs on the loop."""

    @abstractmethod
    async def run(self, arguments: dict[str, Any] | str) -> str:
        """Never raises; returns JSON text."""


@dataclass(slots=True)
class LoopResult:
    text: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    tool_calls: list[ToolCall] = field(default_factory=list)
    requests: int = 0
    last_prompt_tokens: int = 0


async def call_tool(tools: Mapping[str, Tool | AsyncTool], call: ToolCall) -> str:
    """Run one tool call off the event loop; unknown names and crashes become error JSON."""
    tool = tools.get(call.name)
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        return json.dumps(
            {"success": False, "error": f"unknown tool {call.name!r}; available: {known}"}
        )
    try:
        if isinstance(tool, AsyncTool):
            return await tool.run(call.arguments)
        return await asyncio.to_thread(tool.handle, call.arguments)
    except Exception:
        log.exception("tool %s crashed", call.name)
        return json.dumps({"success": False, "error": f"tool {call.name} failed internally"})


async def run_tool_loop(
    llm: LLMClient,
    messages: list[dict[str, Any]],
    tool_schemas: list[dict[str, Any]],
    tools: Mapping[str, Tool | AsyncTool],
    *,
    max_iterations: int,
) -> LoopResult:
    """Ask the model, run the tools it calls, repeat until it answers or steps run out.

    ``messages`` is not modified; the assistant and tool messages produced are returned in
    ``LoopResult.messages``. When the steps run out, one last request with
    ``tool_choice="none"`` (same tools array, so the prompt prefix stays cacheable) asks for
    a plain answer.
    """
    result = LoopResult(text="")
    convo = list(messages)
    schemas = tool_schemas or None
    for step in range(max_iterations + 1):
        final_step = step == max_iterations
        completion: Completion = await llm.complete(
            convo, tools=schemas, tool_choice="none" if final_step and schemas else None
        )
        result.requests += 1
        result.usage = result.usage + completion.usage
        result.last_prompt_tokens = completion.usage.prompt_tokens
        calls = [] if final_step else completion.tool_calls
        assistant = (
            completion.to_message()
            if calls
            else {"role": "assistant", "content": completion.content or ""}
        )
        convo.append(assistant)
        result.messages.append(assistant)
        if not calls:
            result.text = (completion.content or "").strip() or (OUT_OF_STEPS if final_step else "")
            return result
        for call in calls:
            result.tool_calls.append(call)
            output = await call_tool(tools, call)
            metrics.tool_call(call.name if call.name in tools else "unknown", output)
            tool_msg = {"role": "tool", "tool_call_id": call.id, "content": output}
            convo.append(tool_msg)
            result.messages.append(tool_msg)
    raise AssertionError("unreachable: the final step never calls tools")
