"""The size cap on what one turn sends back (``agent.max_reply_chars``).

A model can answer with megabytes; split to a platform's limit that became hundreds of
messages. :func:`cap_reply` keeps the head of an over-long reply (cut at a paragraph, line
or word boundary, a code fence left open closed again), appends a notice, and hands back the
whole reply as a file for the platforms to attach (the console, which cannot, says where
the full text is kept). The full reply is stored in the session history either way.
"""

from __future__ import annotations

from dataclasses import dataclass

FENCE = "```"
FILENAME = "reply.md"
#: Beyond this even the attached file is cut (platform upload limits start near 10 MB).
MAX_DOCUMENT_BYTES = 8_000_000


@dataclass(frozen=True, slots=True)
class CappedReply:
    """What to send: ``text`` (within the cap) and, when it was cut, the whole reply."""

    text: str
    document: tuple[str, bytes] | None = None  # (filename, data) when attaching was wanted
    cut: bool = False


def cap_reply(reply: str, limit: int, *, attach: bool = True) -> CappedReply:
    """``reply`` as it is when it has at most ``limit`` characters, else its head + a notice.

    ``attach`` says whether the receiver can take a file: the notice then points to it,
    otherwise to the conversation history.
    """
    if len(reply) <= limit:
        return CappedReply(reply)
    head = _head(reply, limit)
    if attach:
        where = f"the whole reply is attached as {FILENAME}"
    else:
        where = "the whole reply is kept in this conversation's history (`mnemogate sessions show`)"
    notice = f"\n\n✂ Cut at {len(head):,} of {len(reply):,} characters — {where}."
    if not attach:
        return CappedReply(head + notice, cut=True)
    data = reply.encode("utf-8")
    if len(data) > MAX_DOCUMENT_BYTES:
        tail = f"\n\n✂ Cut at {MAX_DOCUMENT_BYTES:,} bytes of {len(data):,}.\n".encode()
        data = data[:MAX_DOCUMENT_BYTES].decode("utf-8", errors="ignore").encode() + tail
    return CappedReply(head + notice, (FILENAME, data), cut=True)


def _head(reply: str, limit: int) -> str:
    head = reply[:limit]
    for separator in ("\n\n", "\n", " "):
        at = head.rfind(separator)
        if at >= limit // 2:  # a boundary late enough not to waste most of the room
            head = head[:at]
            break
    head = head.rstrip()
    fences = sum(1 for line in head.split("\n") if line.strip().startswith(FENCE))
    return head + f"\n{FENCE}" if fences % 2 else head
