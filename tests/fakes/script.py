"""Answer the fake LLM by request kind: the chat turn from a script, background work by rule.

Background requests (titles, summaries, flushes, reviews) run concurrently with the chat, so
a single FIFO of answers would race; this routes on each request's system prompt instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gateway.agent.compression import FLUSH_PROMPT, SUMMARY_PROMPT
from gateway.agent.titles import TITLE_PROMPT

Answer = str | dict[str, Any]


def is_chat_request(body: dict[str, Any]) -> bool:
    """A main-turn request (it offers session_search), not background work."""
    names = [t["function"]["name"] for t in body.get("tools") or []]
    return "session_search" in names


def chat_requests(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in requests if is_chat_request(r)]


class Script:
    """A handler for ``FakeLLM.handler``; chat answers are consumed in order."""

    def __init__(
        self,
        chat: list[Answer] | None = None,
        *,
        title: str = "Test chat",
        summary: str = "- earlier messages summarised",
        flush: list[Answer] | None = None,
        review: list[Answer] | None = None,
        fallback: Callable[[dict[str, Any]], Answer] | None = None,
    ) -> None:
        self.chat = list(chat or [])
        self.title = title
        self.summary = summary
        self.flush = list(flush or [])
        self.review = list(review or [])
        self.fallback = fallback

    def __call__(self, body: dict[str, Any]) -> Answer:
        system = str(body["messages"][0].get("content", ""))
        if system.startswith(TITLE_PROMPT):
            return self.title
        if system.startswith(SUMMARY_PROMPT):
            return self.summary
        if system.startswith(FLUSH_PROMPT):
            return self.flush.pop(0) if self.flush else "Nothing to save."
        if not is_chat_request(body):
            return self.review.pop(0) if self.review else "Nothing to save."
        if self.chat:
            return self.chat.pop(0)
        if self.fallback is not None:
            return self.fallback(body)
        return "ok"


def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A handler answer asking for one tool call."""
    return {"tool_calls": [(name, arguments)]}
