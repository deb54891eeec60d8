"""Convert the model's everyday Markdown into the HTML subset Telegram accepts.

Supported: ``**bold**``/``__bold__``, ``*italic*``/``_italic_``, ``***both***``,
``~~strike~~``, ```` `code` ````, fenced code blocks (with a language), ``[label](url)``
for http(s)/tg/mailto links, and ``#`` headings (shown bold). Everything else is text with
``<``, ``>`` and ``&`` escaped. A span is converted only when its closing marker is found, so
the output never holds an unbalanced tag; anything ambiguous stays literal text.
Telegram counts a message's length after entity parsing, see :func:`visible_length`.
"""

from __future__ import annotations

import html
import re

from gateway.platforms.chunking import utf16_len

_OPEN_FENCE = re.compile(r"^[ \t]{0,3}```[ \t]*([^`\n]*)$")
_CLOSE_FENCE = re.compile(r"^[ \t]{0,3}```[ \t]*$")
_LANGUAGE = re.compile(r"[A-Za-z0-9_+#.-]{1,32}")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$")
_SAFE_SCHEMES = ("http://", "https://", "tg://", "mailto:")
_TAG = re.compile(r"<[^>]*>")

# Earlier alternatives win at the same position: code spans hide everything inside them,
# and *** is tried before ** before *.
_INLINE = re.compile(
    r"`(?P<code>[^`\n]+)`"
    r"|\[(?P<label>[^\[\]\n]+)\]\((?P<url>(?:[^\s()]|\([^\s()]*\))+)\)"
    r"|\*\*\*(?P<bold_italic>[^*\s](?:[^\n]*?[^*\s])?)\*\*\*"
    r"|\*\*(?P<bold>[^*\s](?:[^\n]*?[^*\s])?)\*\*"
    r"|(?<!\w)__(?P<bold_u>[^_\s](?:[^\n]*?[^_\s])?)__(?!\w)"
    r"|~~(?P<strike>[^~\s](?:[^\n]*?[^~\s])?)~~"
    r"|\*(?P<italic>[^*\s](?:[^*\n]*?[^*\s])?)\*"
    r"|(?<!\w)_(?P<italic_u>[^_\s](?:[^_\n]*?[^_\s])?)_(?!\w)"
)
_WRAPPERS = {
    "bold_italic": ("<b><i>", "</i></b>"),
    "bold": ("<b>", "</b>"),
    "bold_u": ("<b>", "</b>"),
    "strike": ("<s>", "</s>"),
    "italic": ("<i>", "</i>"),
    "italic_u": ("<i>", "</i>"),
}


def escape_text(text: str) -> str:
    """Escape the three characters Telegram HTML reserves in text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _escape_attribute(value: str) -> str:
    return escape_text(value).replace('"', "&quot;")


def to_telegram_html(markdown: str) -> str:
    """Markdown as a model writes it → Telegram HTML (``parse_mode="HTML"``)."""
    out: list[str] = []
    prose: list[str] = []
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        opening = _OPEN_FENCE.match(lines[i])
        if opening is None:
            prose.append(_line(lines[i]))
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not _CLOSE_FENCE.match(lines[end]):
            end += 1
        if prose:
            out.append("\n".join(prose))
            prose = []
        out.append(_code_block(opening.group(1), lines[i + 1 : end]))
        i = end + 1  # an unclosed fence runs to the end of the text
    if prose:
        out.append("\n".join(prose))
    return "\n".join(out)


def visible_length(telegram_html: str) -> int:
    """UTF-16 length of the text Telegram shows for this HTML (what its 4096 limit counts)."""
    return utf16_len(html.unescape(_TAG.sub("", telegram_html)))


def _code_block(info: str, body: list[str]) -> str:
    words = info.split()
    language = words[0] if words and _LANGUAGE.fullmatch(words[0]) else None
    code = escape_text("\n".join(body))
    if language is None:
        return f"<pre>{code}</pre>"
    return f'<pre><code class="language-{language}">{code}</code></pre>'


def _line(line: str) -> str:
    heading = _HEADING.match(line)
    if heading is not None:
        return f"<b>{_inline(heading.group(1))}</b>"
    return _inline(line)


def _inline(text: str) -> str:
    out: list[str] = []
    pos = 0
    for match in _INLINE.finditer(text):
        out.append(escape_text(text[pos : match.start()]))
        out.append(_span(match))
        pos = match.end()
    out.append(escape_text(text[pos:]))
    return "".join(out)


def _span(match: re.Match[str]) -> str:
    kind = match.lastgroup
    if kind == "code":
        return f"<code>{escape_text(match.group('code'))}</code>"
    if kind == "url":
        url = match.group("url")
        if not url.lower().startswith(_SAFE_SCHEMES):
            return escape_text(match.group(0))
        return f'<a href="{_escape_attribute(url)}">{_inline(match.group("label"))}</a>'
    if kind is None or kind not in _WRAPPERS:  # pragma: no cover - every group is listed
        return escape_text(match.group(0))
    start, end = _WRAPPERS[kind]
    return f"{start}{_inline(match.group(kind))}{end}"
