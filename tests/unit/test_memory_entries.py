"""The memory file format: parsing, rendering and character accounting."""

from __future__ import annotations

import pytest

from gateway.memory.entries import (
    DELIMITER,
    char_count,
    format_usage,
    is_canonical,
    parse_entries,
    percent,
    preview,
    render_file,
    splits_into_several,
)


def test_entries_are_split_on_a_line_holding_only_the_section_sign() -> None:
    assert parse_entries("alpha\n§\nbeta\n§\ngamma\n") == ["alpha", "beta", "gamma"]


def test_section_sign_inside_a_line_does_not_split() -> None:
    text = "see § 4.2 of the contract\n§\nprice: 5 §"
    assert parse_entries(text) == ["see § 4.2 of the contract", "price: 5 §"]


def test_multi_line_entries_keep_their_inner_lines() -> None:
    text = "Project api:\n  - Go 1.22\n  - chi router\n§\nsecond"
    assert parse_entries(text) == ["Project api:\n  - Go 1.22\n  - chi router", "second"]


def test_entries_are_stripped_and_empty_ones_dropped() -> None:
    assert parse_entries("\n\n  one  \n§\n\n§\n   \n§\ntwo\n\n") == ["one", "two"]


def test_duplicates_are_dropped_keeping_the_first() -> None:
    assert parse_entries("a\n§\nb\n§\na\n§\nc\n§\nb") == ["a", "b", "c"]


def test_padded_delimiter_and_crlf_still_split() -> None:
    assert parse_entries("a\r\n  §\t\r\nb") == ["a", "b"]


def test_empty_text_has_no_entries() -> None:
    assert parse_entries("") == []
    assert render_file([]) == ""


def test_render_joins_with_the_delimiter_and_ends_with_a_newline() -> None:
    assert render_file(["a", "b\nc"]) == "a\n§\nb\nc\n"
    assert parse_entries(render_file(["a", "b\nc"])) == ["a", "b\nc"]


def test_char_count_includes_delimiters() -> None:
    assert char_count(["abc"]) == 3
    assert char_count(["abc", "de"]) == 3 + len(DELIMITER) + 2 == 8
    assert char_count([]) == 0


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("a\n§\nb\n", True),
        ("a\n§\nb\n\n  \n", True),
        ("", True),
        ("a\n§\na\n", False),
        ("a\n§\n\n§\nb\n", False),
        ("a\n § \nb\n", False),
        ("a\r\n§\r\nb\r\n", False),
        ("\n\na\n", False),
    ],
)
def test_is_canonical(text: str, canonical: bool) -> None:
    assert is_canonical(text) is canonical


def test_splits_into_several_detects_a_delimiter_line_only() -> None:
    assert splits_into_several("a\n§\nb")
    assert splits_into_several("a\n  § \nb")
    assert not splits_into_several("§ 3 applies")
    assert not splits_into_several("x §\ny")


def test_usage_uses_thousands_separators() -> None:
    assert format_usage(1474, 2200) == "1,474/2,200"
    assert format_usage(0, 1375) == "0/1,375"


def test_percent_rounds_down() -> None:
    assert percent(1474, 2200) == 67
    assert percent(165, 1375) == 12
    assert percent(2199, 2200) == 99
    assert percent(2200, 2200) == 100


def test_preview_is_one_line_and_at_most_60_characters() -> None:
    long = "word " * 40
    shown = preview(long)
    assert len(shown) <= 60
    assert shown.endswith("…")
    assert preview("two\nlines") == "two lines"


def test_leading_byte_order_mark_is_not_content() -> None:
    from gateway.memory.entries import parse_entries

    assert parse_entries("\ufeffUser likes tea\n§\nUses vim\n") == ["User likes tea", "Uses vim"]
