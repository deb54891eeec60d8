"""Unicode hygiene for the threat scanner: hidden-character checks and folding for matching.

Two views of a text are needed:

* the **raw** text, where :func:`hidden_characters` looks for characters a reader cannot see
  (zero-width and other format characters, bidi overrides, Unicode tag characters, runs of
  variation selectors, control characters), while letting through what real writing uses:
  ZWJ emoji sequences, regional-indicator and tag-sequence flags, LRM/RLM/ALM direction
  marks, ZWNJ inside Persian words, one variation selector per base character;
* the **folded** text the pattern rules match against (:func:`fold`): NFKC-style
  compatibility mapping, look-alike letters folded to Latin (Cyrillic, Greek, Armenian,
  Cherokee, Lisu, small capitals, regional indicators), a few traditional Chinese
  characters folded to simplified ones, invisible characters and combining marks dropped,
  whitespace collapsed.

:func:`fold_char` is the per-character version the context fence uses to map each
character of a recalled text back to its position.
"""

from __future__ import annotations

import functools
import re
import unicodedata

# --- look-alike table --------------------------------------------------------------------
# Each key is the Latin (or ASCII punctuation) character the characters in its value are
# folded to. Only look-alikes that NFKC leaves alone need to be listed: NFKC already maps
# fullwidth forms, mathematical alphanumerics, circled and super/subscript letters.
_LOOKALIKES: dict[str, str] = {
    "a": "аɑαꭺᴀ",
    "b": "ЬьƅᏏʙ",
    "c": "сϲᴄⅽ",
    "d": "ԁᏧⅾᴅ",
    "e": "еёεᥱᴇ",
    "f": "ꜰ",
    "g": "ɡɢԍց",
    "h": "һнհʜ",
    "i": "іїιɩıɪӏ",
    "j": "јϳȷᴊ",
    "k": "кκᴋ",
    "l": "ʟⅼ",
    "m": "мᴍⅿ",
    "n": "пηոɴ",
    "o": "оοօᴏσ",
    "p": "рρᴘ",
    "q": "ԛզꞯ",
    "r": "гʀ",
    "s": "ѕꜱ",
    "t": "тτᴛ",
    "u": "υսᴜ",
    "v": "νѵᴠ",
    "w": "ԝωᴡ",
    "x": "хχ",
    "y": "уγʏ",
    "z": "ᴢ",
    "A": "АΑᎪꓮ",
    "B": "ВΒᏴꓐ",
    "C": "СϹᏟꓚ",
    "D": "ᎠꓓⅮ",
    "E": "ЕΕᎬꓰ",
    "F": "ꓝϜ",
    "G": "ᏀꓖԌ",
    "H": "НΗᎻꓧ",
    "I": "ІΙӀꓲⅠ",
    "J": "ЈᎫꓙ",
    "K": "КΚᏦꓗ",
    "L": "ᏞꓡⅬ",
    "M": "МΜᎷꓟⅯ",
    "N": "Νꓠ",
    "O": "ОΟꓳ",
    "P": "РΡᏢꓑ",
    "Q": "Ԛ",
    "R": "ᎡꓣƦ",
    "S": "ЅᏚꓢ",
    "T": "ТΤᎢꓔ",
    "U": "ꓴՍ",
    "V": "ᏙꓦⅤ",
    "W": "ԜᎳꓪ",
    "X": "ХΧꓫⅩ",
    "Y": "УΥҮꓬ",
    "Z": "ΖᏃꓜ",
    "-": "‐‑‒–—―−﹘",
    "'": "‘’‚‛′ʹʼ",
    '"': "“”„‟″",
    "<": "‹〈⟨˂ᐸ❮",
    ">": "›〉⟩˃ᐳ❯",
    "/": "∕⁄⧸",
}

# Traditional → simplified, only for characters that appear in the Chinese rules.
_TRADITIONAL = (
    "無无 視视 規规 則则 憶忆 統统 詞词 鑰钥 戶户 憑凭 證证 據据 發发 傳传 轉转 給给 開开 啟启 "
    "設设 說说 讀读 檔档 寫写 後后 門门 從从 現现 這这 為为 們们 記记 錄录 訊讯 顯显 輸输 隱隐 "
    "瞞瞒 讓让 應应 權权 號号 碼码 將将 條条 約约 脫脱 獄狱 擬拟 進进 執执 運运 載载 網网 鏈链 "
    "結结 圖图 數数 對对 話话 歷历 個个 資资 電电 郵邮 變变 當当 沒没 惡恶 彈弹 計计 劃划 時时 "
    "務务 環环 題题 訴诉 別别 洩泄 動动 擺摆 準准 導导 過过 濾滤 審审 護护 蓋盖 於于 裡里 級级 "
    "態态 誤误 廢废 銷销 棄弃 竊窃 獲获 複复 製制 貼贴 選选 項项 盜盗 帳账 範范 違违 該该 組组 "
    "織织 隨随 麼么 樣样 請请 還还 處处 僅仅 勿勿 憑凭 攔拦 暫暂 腳脚 實实 際际 紀纪 錄录 備备 "
    "點点 擊击 鍵键 屬属 談谈 聽听 覆覆 據据 遞递 測测 試试 關关 閉闭 啓启 輸输 隱隐"
)

_ZERO_WIDTH = "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
_ZERO_WIDTH += "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
_ZERO_WIDTH += (
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef"
)
_COMBINING = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"


def _ranges(spec: str) -> list[int]:
    """Code points of a character-class body such as ``"a-z\\u00ad"``."""
    points: list[int] = []
    i = 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            points.extend(range(ord(spec[i]), ord(spec[i + 2]) + 1))
            i += 3
        else:
            points.append(ord(spec[i]))
            i += 1
    return points


def _build_table() -> dict[int, str | None]:
    table: dict[int, str | None] = {}
    for target, sources in _LOOKALIKES.items():
        for source in sources:
            table[ord(source)] = target
    for pair in _TRADITIONAL.split():
        if pair[0] != pair[1]:
            table[ord(pair[0])] = pair[1]
    for offset in range(26):  # regional indicators 🇦…🇿 read as letters
        table[0x1F1E6 + offset] = chr(ord("a") + offset)
    for point in _ranges(_ZERO_WIDTH) + _ranges(_COMBINING):
        table[point] = None
    return table


def _char_class(points: list[int]) -> str:
    """A regex character class covering ``points``, written as ranges."""
    spans: list[tuple[int, int]] = []
    for point in sorted(set(points)):
        if spans and point == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], point)
        else:
            spans.append((point, point))
    body = "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in spans
    )
    return f"[{body}]"


_TABLE = _build_table()
# Substituting through a regex is several times faster than str.translate with a large
# table when, as usual, few characters need changing.
_TABLE_RE = re.compile(_char_class(list(_TABLE)))
_WHITESPACE_RE = re.compile(r"\s+")


def _replace(match: re.Match[str]) -> str:
    return _TABLE[ord(match.group())] or ""


def _map_lookalikes(text: str) -> str:
    return _TABLE_RE.sub(_replace, unicodedata.normalize("NFKD", text))


def fold(text: str) -> str:
    """Text as the pattern rules see it: compatibility-mapped, look-alikes folded, invisible
    characters and combining marks removed, whitespace runs collapsed to one space.

    Case is kept (secret formats are case-sensitive); phrase rules match case-insensitively.
    """
    if not text.isascii():
        text = unicodedata.normalize("NFC", _map_lookalikes(text))
    return _WHITESPACE_RE.sub(" ", text).strip()


@functools.lru_cache(maxsize=8192)
def fold_char(char: str) -> str:
    """One character (or entity expansion) folded and case-folded, marks and format
    characters removed. May return "" or several characters."""
    folded = _map_lookalikes(char).casefold()
    return "".join(c for c in folded if unicodedata.category(c) not in ("Mn", "Me", "Cf"))


def fold_loose(text: str) -> str:
    """Whole-text counterpart of :func:`fold_char` (same mapping, no position tracking)."""
    return _map_lookalikes(text).casefold()


# --- hidden characters ---------------------------------------------------------------------
_EMOJI = (
    "\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u21aa\u231a-\u23ff\u24c2\u25aa-\u27bf"
    "\u2934\u2935\u2b05-\u2b55\u3030\u303d\u3297\u3299\U0001f000-\U0001faff"
)
# Scripts in which ZWJ/ZWNJ are part of ordinary spelling (Arabic, Persian, Indic, ...).
_JOINING_SCRIPTS = "\u0600-\u08ff\u0900-\u0dff\u0f00-\u0fff\u1000-\u109f\u1780-\u17ff"
_JOINING_SCRIPTS += "\ufb50-\ufdff\ufe70-\ufefc"
_IDEOGRAPHS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_MONGOLIAN = "\u1820-\u18aa"
_VS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
_FVS = "\u180b-\u180d\u180f"

# Every character any check below is about; text without one of them is clean.
_SUSPICIOUS_RE = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_ZERO_WIDTH}\u2066-\u2069]")
# Each check starts with a character class, which lets the regex engine skip quickly to
# the next candidate; the context of the candidate is then checked by looking back.
_ALWAYS_INVISIBLE = (
    "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u200b\u2060-\u2064\u206a-\u206f\u3164\ufeff"
    "\uffa0\ufff9-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
)
_MARKS = "\u200e\u200f\u061c"
_INVISIBLE_RE = re.compile(
    f"[{_ALWAYS_INVISIBLE}\u180e\u200c\u200d{_MARKS}](?:"
    + "|".join(
        (
            f"(?<=[{_ALWAYS_INVISIBLE}])",
            f"(?<=\u180e)(?<![{_MONGOLIAN}]\u180e)",
            f"(?<=\u200d)(?<![{_EMOJI}\ufe0f{_JOINING_SCRIPTS}]\u200d)",
            f"(?<=\u200d)(?![{_EMOJI}{_JOINING_SCRIPTS}])",
            f"(?<=\u200c)(?<![{_JOINING_SCRIPTS}]\u200c)",
            f"(?<=\u200c)(?![{_JOINING_SCRIPTS}])",
            f"(?<=[{_MARKS}])[{_MARKS}]{{3}}",  # a run of direction marks carries no meaning
        )
    )
    + ")"
)
_BIDI_RE = re.compile("[\u202a-\u202e\u2066-\u2069]")
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_BAD_VS_RE = re.compile(
    f"[{_VS}{_FVS}](?:"
    + "|".join(
        (
            f"(?=[{_VS}{_FVS}])",  # a run of selectors
            "(?<![\\s\\S].)",  # at the very start
            "(?<=[\\s\\x00-\\x1f].)",  # after a space or a control
            "(?<=[A-Za-z][\ufe00-\ufe0d])",
            f"(?<=[^{_IDEOGRAPHS}][\U000e0100-\U000e01ef])",
            f"(?<=[^{_MONGOLIAN}][{_FVS}])",
        )
    )
    + ")"
)
_TAG_CHAR_RE = re.compile("[\U000e0000-\U000e007f]")
# A flag such as England's: black flag, 2-7 lowercase/digit tags, CANCEL TAG.
_TAG_RE = re.compile(
    "\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,7}\U000e007f|[\U000e0000-\U000e007f]+"
)
_VS_RUN_RE = re.compile(f"[{_VS}]{{2,}}")

INVISIBLE_CHARACTER = "invisible-character"
BIDI_CONTROL = "bidi-control"
CONTROL_CHARACTER = "control-character"
VARIATION_SELECTOR = "variation-selector"
TAG_CHARACTERS = "tag-characters"

_SIMPLE_CHECKS = (
    (INVISIBLE_CHARACTER, _INVISIBLE_RE),
    (BIDI_CONTROL, _BIDI_RE),
    (CONTROL_CHARACTER, _CONTROL_RE),
    (VARIATION_SELECTOR, _BAD_VS_RE),
)


def hidden_characters(text: str) -> dict[str, int]:
    """Map each hidden-character rule that fires on ``text`` to the index of its first hit.

    Rules: ``invisible-character``, ``bidi-control``, ``control-character``,
    ``variation-selector`` and ``tag-characters`` (tags outside an emoji flag sequence).
    """
    if _SUSPICIOUS_RE.search(text) is None:
        return {}
    found: dict[str, int] = {}
    for rule, pattern in _SIMPLE_CHECKS:
        hit = pattern.search(text)
        if hit:
            found[rule] = hit.start()
    if _TAG_CHAR_RE.search(text):
        for tags in _TAG_RE.finditer(text):
            if not tags.group().startswith("\U0001f3f4"):
                found[TAG_CHARACTERS] = tags.start()
                break
    return found


def smuggled_text(text: str, limit: int = 8192) -> list[str]:
    """Text hidden in tag characters or in runs of variation selectors, decoded.

    Tag characters U+E0020-E007E mirror ASCII; variation-selector runs carry one byte each
    (VS1-16 → 0-15, VS17-256 → 16-255). Only decodings that read as UTF-8 are returned.
    """
    if text.isascii():
        return []
    found: list[str] = []
    if _TAG_CHAR_RE.search(text):
        hidden = "".join(
            chr(ord(c) - 0xE0000)
            for run in _TAG_RE.findall(text)
            if not run.startswith("\U0001f3f4")
            for c in run
            if 0xE0020 <= ord(c) <= 0xE007E
        )
        if hidden:
            found.append(hidden[:limit])
    for run in _VS_RUN_RE.findall(text):
        data = bytes(
            ord(c) - 0xFE00 if ord(c) <= 0xFE0F else ord(c) - 0xE0100 + 16 for c in run[:limit]
        )
        decoded = data.decode("utf-8", errors="ignore")
        if decoded.strip():
            found.append(decoded)
    return found


# --- display ---------------------------------------------------------------------------------
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(char: str) -> str:
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    point = ord(char)
    hidden = not char.isprintable() or 0xFE00 <= point <= 0xFE0F or 0xE0100 <= point <= 0xE01EF
    if not hidden:
        return char
    return f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}"


def printable_excerpt(text: str, limit: int = 80) -> str:
    """``text`` with invisible characters escaped (``\\u200b``), cut to ``limit`` chars."""
    out: list[str] = []
    size = 0
    for char in text:
        piece = _escape_char(char)
        if size + len(piece) > limit - 1:
            out.append("…")
            break
        out.append(piece)
        size += len(piece)
    return "".join(out)
