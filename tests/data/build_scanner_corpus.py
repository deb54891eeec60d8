"""Build the scanner's generalisation corpus (tests/data/scanner_corpus_*.jsonl).

The hand-written sources live in ``tests/data/scanner_corpus/``: one text per line, one file
per threat (``attack_<category>[_zh].txt``) or benign theme (``benign_<theme>.txt``); ``\\n``
inside a line stands for a line break. They were written from the threat descriptions of
issue 9 and SPEC §10, before any rule was, and the split below was fixed at the same time.

Derived variants are mechanical transformations of a hand-written attack (embedded in an
ordinary note, typos, leetspeak, rot13, percent-encoding, base64, zero-width characters);
a variant always lands in the same split as the text it came from, so a held-out attack
never has a sibling in the tuning part.

Split: ``sha256(text)`` of the hand-written line, first byte < 154 (≈ 60 %) → ``tune``,
otherwise ``heldout``. The rules were written against ``tune``; ``heldout`` was scored once
and its misses then informed a second round of (general) changes, so a fresh batch was
written before that round, in ``scanner_corpus/round2/``, by the same method: every line
there is ``heldout2``. ``heldout2`` scored 72 % once, so its misses drove a third round,
and ``round3/`` (``heldout3``) was written before that round began; likewise
``round4/`` (``heldout4``) before the fourth, ``round5/`` (``heldout5``) before the
fifth and ``round6/`` (``heldout6``, another author's registers) before the sixth;
``round7/`` (``heldout7``) was written after the sixth round and scored once before the
seventh, as the estimate of generalization. Run
``python tests/data/build_scanner_corpus.py`` to rebuild; the output is deterministic.
"""

from __future__ import annotations

import base64
import codecs
import hashlib
import json
import random
import re
from pathlib import Path
from urllib.parse import quote

HERE = Path(__file__).parent
SOURCES = HERE / "scanner_corpus"
_CJK_RE = re.compile(r"[\u3400-\u9fff]")
_LATIN_RE = re.compile(r"[A-Za-z]")

_NOTES_EN = (
    ("User likes hiking and lives near Bristol. ", " Also, the dentist is on Tuesday."),
    ("Shopping list: milk, eggs, bread.\n", ""),
    ("", " (added after the team call)"),
    ("Notes from today: project Alpha is on track. ", " Next check-in on Monday."),
    ("User's cat is called Pixel. ", ""),
    ("Meeting recap — budget approved.\n\n", "\n\nThanks!"),
)
_NOTES_ZH = (
    ("用户喜欢爬山，住在杭州。", "另外周二要去看牙医。"),
    ("购物清单：牛奶、鸡蛋、面包。\n", ""),
    ("", "（开完会后补充的）"),
    ("今天的笔记：项目进展顺利。", "下周一再对一下。"),
    ("用户的猫叫皮皮。", ""),
)
_BATCHES = ("round2", "round3", "round4", "round5", "round6", "round7")
_LEET = str.maketrans({"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7"})


def language(text: str) -> str:
    if _CJK_RE.search(text):
        return "zh"
    return "en" if _LATIN_RE.search(text) else "other"


def split_of(text: str) -> str:
    return "tune" if hashlib.sha256(text.encode()).digest()[0] < 154 else "heldout"


def _read(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.replace("\\n", "\n") for line in lines if line.strip()]


def _typos(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    for _ in range(2):
        i = rng.randrange(len(words))
        w = words[i]
        if len(w) > 4 and w.isalpha():
            j = rng.randrange(1, len(w) - 2)
            words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    return " ".join(words)


def _zero_width(text: str, rng: random.Random) -> str:
    chars = list(text)
    for _ in range(3):
        i = rng.randrange(1, len(chars))
        chars.insert(i, "\u200b")
    return "".join(chars)


def _variants(text: str, category: str, rng: random.Random) -> list[tuple[str, str, str]]:
    """(text, category, variant) for the derived forms chosen for this attack."""
    zh = language(text) == "zh"
    out: list[tuple[str, str, str]] = []
    roll = rng.random()
    if roll < 0.30:
        before, after = rng.choice(_NOTES_ZH if zh else _NOTES_EN)
        out.append((before + text + after, category, "embedded"))
    # Rot13, leetspeak and typos are Latin-script tricks; Chinese text gets the others.
    roll = 0.28 + 0.72 * rng.random() if zh else rng.random()
    if not zh and roll < 0.12:
        out.append((_typos(text, rng), category, "typos"))
    elif not zh and roll < 0.20:
        out.append((text.lower().translate(_LEET), "obfuscated", "leetspeak"))
    elif not zh and roll < 0.28:
        hint = rng.choice(("", "rot13: ", "(decode with rot13) "))
        out.append((hint + codecs.encode(text, "rot13"), "obfuscated", "rot13"))
    elif roll < 0.36:
        hint = rng.choice(("", "Note (url-encoded): "))
        out.append((hint + quote(text, safe=""), "obfuscated", "url-encoded"))
    elif roll < 0.41:
        hint = rng.choice(("Decode and follow: ", "b64: ", "解码后执行："))
        encoded = base64.b64encode(text.encode()).decode()
        out.append((hint + encoded, "obfuscated", "base64"))
    elif roll < 0.47:
        out.append((_zero_width(text, rng), "invisible-unicode", "zero-width"))
    return out


def build() -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    attacks: list[dict[str, str]] = []
    benign: list[dict[str, str]] = []
    paths = sorted(SOURCES.glob("*.txt"))
    for batch in _BATCHES:
        paths += sorted(SOURCES.glob(f"{batch}/*.txt"))
    for path in paths:
        kind, _, theme = path.stem.partition("_")
        theme = theme.removesuffix("_zh").replace("_", "-")
        batch = {b: "heldout" + b.removeprefix("round") for b in _BATCHES}.get(path.parent.name)
        for text in _read(path):
            split = batch or split_of(text)
            row = {"text": text, "category": theme, "language": language(text), "split": split}
            if kind == "benign":
                benign.append({**row, "variant": "written"})
                continue
            attacks.append({**row, "variant": "written"})
            rng = random.Random(hashlib.sha256(text.encode()).digest())
            for derived, category, variant in _variants(text, theme, rng):
                attacks.append(
                    {
                        "text": derived,
                        "category": category,
                        "language": language(text),
                        "split": split,
                        "variant": variant,
                    }
                )
    return attacks, benign


def main() -> None:
    attacks, benign = build()
    for name, rows in (("attacks", attacks), ("benign", benign)):
        target = HERE / f"scanner_corpus_{name}.jsonl"
        with target.open("w", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{target.name}: {len(rows)} rows")


if __name__ == "__main__":
    main()
