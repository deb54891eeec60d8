"""Find encoded payloads (base64, hex, percent-encoding) in a text and decode them.

Only decodings that read as text are returned: valid UTF-8, at least 90 % printable, with
at least one letter. A PNG header or a SHA-256 digest decodes to binary and is ignored, so
ordinary hashes and image data never reach the rules. The number of candidates per text
is not capped (a cap would let junk payloads hide a real one), but decoded text is always
shorter than its encoding and the runs one pattern finds do not overlap, so a rescan of
everything returned costs about as much as the scan that found it.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from urllib.parse import unquote_to_bytes

MIN_DECODED_BYTES = 8

# Runs start only where the previous character cannot belong to them: without the
# lookbehind, each position inside a long word would be tried again.
_BASE64_RE = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX_RE = re.compile(r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{2}(?:[ :,]?[0-9A-Fa-f]{2}){7,}(?![0-9A-Fa-f])")
_HEX_ESCAPED_RE = re.compile(r"(?:\\x[0-9A-Fa-f]{2}){8,}")
_PERCENT_RE = re.compile(r"(?:%[0-9A-Fa-f]{2}){6,}")
_PIECE_SEPARATORS_RE = re.compile(r"[-_/]")
_URLSAFE = str.maketrans("-_", "+/")


def as_text(data: bytes) -> str | None:
    """``data`` as a string if it is mostly printable UTF-8 text, else None."""
    if len(data) < MIN_DECODED_BYTES:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(1 for c in text if c.isprintable() or c in "\t\n\r")
    if printable < 0.9 * len(text) or not any(c.isalpha() for c in text):
        return None
    return text


def _from_base64(run: str, *, urlsafe: bool) -> bytes | None:
    core = run.rstrip("=")
    if urlsafe:
        core = core.translate(_URLSAFE)
    if len(core) % 4 == 1:
        core = core[:-1]
    try:
        return base64.b64decode(core + "=" * (-len(core) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def _from_hex(digits: str) -> bytes | None:
    digits = re.sub(r"[^0-9A-Fa-f]", "", digits.replace("\\x", ""))
    try:
        return bytes.fromhex(digits[: len(digits) // 2 * 2])
    except ValueError:
        return None


def _candidates(text: str) -> Iterator[tuple[str, bytes | None]]:
    for match in _BASE64_RE.finditer(text):
        run = match.group()
        urlsafe = "-" in run or "_" in run
        if not (urlsafe and ("+" in run or "/" in run)):
            yield "base64", _from_base64(run, urlsafe=urlsafe)
        if urlsafe or "/" in run:  # a payload glued to a path, a flag or a word
            for piece in _PIECE_SEPARATORS_RE.split(run):
                if len(piece) >= 16:
                    yield "base64", _from_base64(piece, urlsafe=False)
    for match in _HEX_RE.finditer(text):
        yield "hex", _from_hex(match.group())
    if "\\x" in text:
        for match in _HEX_ESCAPED_RE.finditer(text):
            yield "hex", _from_hex(match.group())
    if "%" in text:
        for match in _PERCENT_RE.finditer(text):
            yield "url-encoded", unquote_to_bytes(match.group())


def encoded_payloads(text: str) -> dict[str, str]:
    """Decoded text per encoding (``base64``, ``hex``, ``url-encoded``), runs joined by
    newlines, for every encoded run in ``text`` that decodes to text."""
    found: dict[str, list[str]] = {}
    seen: set[str] = set()
    for kind, data in _candidates(text):
        decoded = as_text(data) if data else None
        if decoded is not None and decoded not in seen:
            seen.add(decoded)
            found.setdefault(kind, []).append(decoded)
    return {kind: "\n".join(texts) for kind, texts in found.items()}
