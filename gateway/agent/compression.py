"""Context compression: summarise the middle of a long session into a child session.

When a request nears the model's window, the first ``protect_first`` and last
``protect_last`` messages are kept, the middle is summarised by the auxiliary model, and the
conversation continues in a child session (``… #N``) with a refreshed memory snapshot. The
parent keeps every message, so old messages stay searchable. Before that, when the session
had at least ``flush_min_turns`` user turns, a memory flush lets the auxiliary model save
what is worth keeping from the messages about to leave the context.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass

from gateway.agent.loop import run_tool_loop
from gateway.history.store import NewMessage, StoredMessage
from gateway.llm.client import LLMClient
from gateway.memory.store import MemoryStore
from gateway.memory.tool import MEMORY_GUIDANCE, MEMORY_TOOL_SCHEMA, MemoryChange, MemoryTool
from gateway.security.fence import sanitize_recalled
from gateway.tenants import MemoryScope

SUMMARY_PREFIX = "[Summary of the earlier part of this conversation]\n"
SUMMARY_PROMPT = (
    "Summarise the conversation excerpt below so the assistant can continue without it. "
    "Keep decisions, facts about the user, open questions, names, numbers, file paths and "
    "commitments; drop greetings and repetition. Write in the conversation's language, as "
    "compact bullet points, at most 300 words."
)
FLUSH_PROMPT = (
    "The messages below are about to leave your context window. Save anything in them that "
    "is worth remembering long-term about this user (preferences, corrections, stable facts) "
    "with the memory tool. If nothing is worth saving, answer exactly: Nothing to save."
)


@dataclass(frozen=True, slots=True)
class CompressionPlan:
    head: list[StoredMessage]
    middle: list[StoredMessage]
    tail: list[StoredMessage]


def plan_compression(
    messages: Sequence[StoredMessage], protect_first: int, protect_last: int
) -> CompressionPlan | None:
    """Split into head / middle / tail without separating a tool call from its results."""
    msgs = list(messages)
    head_end = min(protect_first, len(msgs))
    while head_end < len(msgs) and msgs[head_end].role == "tool":
        head_end += 1
    tail_start = max(head_end, len(msgs) - protect_last)
    while tail_start > head_end and msgs[tail_start].role == "tool":
        tail_start -= 1
    middle = msgs[head_end:tail_start]
    if not middle:
        return None
    return CompressionPlan(msgs[:head_end], middle, msgs[tail_start:])


def needs_compression(prompt_tokens: int, context_window: int, threshold: float) -> bool:
    return prompt_tokens >= int(context_window * threshold)


def transcript(messages: Sequence[StoredMessage], limit: int = 60_000) -> str:
    """A plain-text rendering for the auxiliary model (tool traffic summarised)."""
    lines: list[str] = []
    for m in messages:
        if m.role == "tool":
            lines.append(f"[tool result] {m.content[:300]}")
        elif m.tool_calls:
            names = ", ".join(c.get("function", {}).get("name", "?") for c in m.tool_calls)
            lines.append(f"assistant (called {names}): {m.content}")
        else:
            who = m.name or m.role
            lines.append(f"{who}: {sanitize_recalled(m.content)}")
    text = "\n".join(lines)
    return text if len(text) <= limit else text[-limit:]


async def summarize(aux: LLMClient, middle: Sequence[StoredMessage], extra: str = "") -> str:
    prompt = SUMMARY_PROMPT
    if extra.strip():
        prompt += "\n\nContext from the memory provider:\n" + extra.strip()
    completion = await aux.complete(
        [{"role": "system", "content": prompt}, {"role": "user", "content": transcript(middle)}],
        max_tokens=800,
    )
    return (completion.content or "").strip()


async def flush_memory(
    aux: LLMClient,
    memory: MemoryStore,
    scope: MemoryScope,
    dropped: Sequence[StoredMessage],
    *,
    max_iterations: int = 8,
) -> list[MemoryChange]:
    """Let the auxiliary model save what matters from ``dropped``; memory tool only."""
    tool = MemoryTool(memory, scope, origin="background-review")
    snapshot = await asyncio.to_thread(memory.render_snapshot, scope)
    request = [
        {"role": "system", "content": f"{FLUSH_PROMPT}\n\n{MEMORY_GUIDANCE}\n\n{snapshot}"},
        {"role": "user", "content": transcript(dropped)},
    ]
    await run_tool_loop(
        aux, request, [MEMORY_TOOL_SCHEMA], {"memory": tool}, max_iterations=max_iterations
    )
    return list(tool.changes)


def child_messages(plan: CompressionPlan, summary: str) -> list[NewMessage]:
    """The child session's starting history: head, the summary, tail (copies)."""

    def copy(m: StoredMessage) -> NewMessage:
        return NewMessage(
            role=m.role,
            content=m.content,
            name=m.name,
            tool_calls=m.tool_calls,
            tool_call_id=m.tool_call_id,
            timestamp=m.timestamp,
            platform_message_id=m.platform_message_id,
        )

    middle_span = f"{len(plan.middle)} messages"
    note = NewMessage(role="user", content=f"{SUMMARY_PREFIX}({middle_span})\n{summary}")
    ack = NewMessage(role="assistant", content="Understood — continuing from that summary.")
    return [*(copy(m) for m in plan.head), note, ack, *(copy(m) for m in plan.tail)]


def describe(plan: CompressionPlan) -> str:
    return json.dumps({"head": len(plan.head), "middle": len(plan.middle), "tail": len(plan.tail)})
