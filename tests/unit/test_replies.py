"""The cap on one turn's reply: head within the limit, a notice, the whole reply as a file."""

from __future__ import annotations

from gateway.agent.replies import FILENAME, MAX_DOCUMENT_BYTES, cap_reply


def test_a_reply_within_the_cap_is_untouched() -> None:
    capped = cap_reply("short answer", 100)
    assert (capped.text, capped.document, capped.cut) == ("short answer", None, False)


def test_an_over_long_reply_is_cut_at_a_boundary_with_a_notice_and_attached() -> None:
    reply = "\n\n".join(f"paragraph {n} " + "word " * 40 for n in range(200))
    capped = cap_reply(reply, 1000)
    head, _, notice = capped.text.partition("\n\n✂ ")
    assert len(head) <= 1000 and reply.startswith(head) and head.endswith("word")
    assert f"of {len(reply):,} characters" in notice and FILENAME in notice
    assert capped.document == (FILENAME, reply.encode("utf-8"))


def test_an_open_code_fence_is_closed() -> None:
    reply = "```python\n" + "print('x')\n" * 500 + "```"
    head = cap_reply(reply, 600).text.partition("\n\n✂ ")[0]
    assert head.count("```") == 2 and head.endswith("```")


def test_without_a_file_the_notice_points_to_the_history() -> None:
    capped = cap_reply("x " * 2000, 500, attach=False)
    assert capped.cut and capped.document is None
    assert "sessions show" in capped.text and len(capped.text) < 700


def test_even_the_file_has_a_ceiling() -> None:
    capped = cap_reply("é" * (MAX_DOCUMENT_BYTES), 500)
    assert capped.document is not None
    data = capped.document[1]
    assert len(data) < MAX_DOCUMENT_BYTES + 100
    assert data.decode("utf-8").endswith(f"of {2 * MAX_DOCUMENT_BYTES:,}.\n")
