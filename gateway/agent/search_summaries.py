"""``session_search`` with auxiliary-model summaries of each hit (``sessions.summarize``).

The plain tool answers from SQLite alone. When summaries are on, each returned session gets
a short summary of what it says about the query, written by the auxiliary model; the calls
run concurrently and a failed or slow summary just leaves that hit without one.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from gateway.agent.loop import AsyncTool
from gateway.errors import LLMError
from gateway.history.search_tool import SessionSearchTool
from gateway.llm.client import LLMClient
from gateway.security.fence import sanitize_recalled

log = logging.getLogger(__name__)

SUMMARY_TIMEOUT_S = 20.0
HIT_PROMPT = (
    "Below are excerpts of one past conversation between the user and the assistant. In at "
    "most three sentences, state what they say about: {query}. Only report what the "
    "excerpts contain; if they say nothing relevant, answer: Not relevant."
)


def _excerpt(hit: dict[str, Any], limit: int = 6000) -> str:
    lines: list[str] = []
    for message in hit.get("messages") or []:
        who = message.get("name") or message.get("role", "?")
        lines.append(f"{who}: {sanitize_recalled(str(message.get('text', '')))}")
    return "\n".join(lines)[:limit]


class SummarizingSearchTool(AsyncTool):
    """Wraps the tenant-bound search tool; adds ``summary`` to each session of a search."""

    def __init__(self, inner: SessionSearchTool, aux: LLMClient) -> None:
        self.inner = inner
        self.aux = aux

    async def run(self, arguments: dict[str, Any] | str) -> str:
        answer = await asyncio.to_thread(self.inner.handle, arguments)
        data = json.loads(answer)
        hits = data.get("sessions") if isinstance(data, dict) else None
        query = data.get("query") if isinstance(data, dict) else None
        if not hits or not query:
            return answer
        summaries = await asyncio.gather(*(self._summarize(str(query), hit) for hit in hits))
        for hit, summary in zip(hits, summaries, strict=True):
            if summary:
                hit["summary"] = summary
        return json.dumps(data, ensure_ascii=False)

    async def _summarize(self, query: str, hit: dict[str, Any]) -> str | None:
        request = [
            {"role": "system", "content": HIT_PROMPT.format(query=query[:200])},
            {"role": "user", "content": _excerpt(hit)},
        ]
        try:
            completion = await asyncio.wait_for(
                self.aux.complete(request, max_tokens=200), SUMMARY_TIMEOUT_S
            )
        except (LLMError, TimeoutError) as exc:
            log.warning("session_search summary failed: %s", exc)
            return None
        return sanitize_recalled((completion.content or "").strip()) or None
