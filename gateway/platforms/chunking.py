"""Split a reply into platform-sized chunks without breaking code fences.

Cuts prefer paragraph breaks, then line breaks, then spaces; a chunk that ends inside a
fenced code block closes the fence and the next chunk reopens it with the same info string.
Lengths are measured by a platform function (Telegram counts UTF-16 code units).
"""

from __future__ import annotations

from collections.abc import Callable

FENCE = "```"


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _open_fence(text: str) -> str | None:
    """The info line of a fence left open at the end of ``text``, else None."""
    info: str | None = None
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith(FENCE):
            info = None if info is not None else stripped[len(FENCE) :].strip()
    return info


def _cut(text: str, budget: int, measure: Callable[[str], int]) -> int:
    """Index at which to cut ``text`` so the head measures at most ``budget``."""
    lo, hi = 1, len(text)
    while lo < hi:  # longest prefix that fits
        mid = (lo + hi + 1) // 2
        if measure(text[:mid]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    fit = lo
    if fit >= len(text):
        return len(text)
    for sep in ("\n\n", "\n", " "):
        pos = text.rfind(sep, 0, fit)
        if pos > fit // 2:
            return pos + len(sep)
    return fit  # no separator: a hard cut (Python strings never split a code point)


def split_message(text: str, limit: int, *, measure: Callable[[str], int] = len) -> list[str]:
    """Chunks of at most ``limit`` units each; empty text gives no chunks."""
    if limit < 16:
        raise ValueError("limit too small to split safely")
    chunks: list[str] = []
    rest = text.strip("\n")
    reopen = ""
    while rest:
        candidate = reopen + rest
        if measure(candidate) <= limit:
            chunks.append(candidate)
            break
        closing = "\n" + FENCE
        budget = limit - measure(reopen) - measure(closing)
        cut = _cut(rest, budget, measure)
        head, rest = rest[:cut].rstrip(), rest[cut:].lstrip("\n")
        body = reopen + head
        info = _open_fence(body)
        if info is not None:
            chunks.append(body + closing)
            reopen = f"{FENCE}{info}\n"
        else:
            chunks.append(body)
            reopen = ""
    return [c for c in chunks if c.strip()]
