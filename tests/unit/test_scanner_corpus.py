"""The scanner against its generalisation corpus (tests/data/scanner_corpus_*.jsonl).

The corpus was written per threat category from the threat descriptions and split into
``tune`` and ``heldout`` by a hash of each hand-written line before any rule was written;
the rules were tuned on ``tune`` only. ``heldout`` was scored once, then its misses informed a
second round of general changes; ``heldout2`` … ``heldout7`` are fresh batches, each written
before the next round and scored once before it (the first-look figures are in the README;
the later rounds used the earlier batches' misses). The targets (issue 9) are asserted on
every part as it stands: detection ≥ 95 %, false positives ≤ 2.5 %. Figures per category
and language are printed (``pytest -s``) and reported in the README.
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from gateway.security import cues_intent, cues_sink, cues_smuggle, cues_target
from gateway.security.cues import Cue, Text
from gateway.security.scanner import scan
from gateway.security.unicode import fold

DATA = Path(__file__).parent.parent / "data"
Row = dict[str, str]


def _load(name: str) -> list[Row]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


ATTACKS = _load("scanner_corpus_attacks.jsonl")
BENIGN = _load("scanner_corpus_benign.jsonl")


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build", DATA / "build_scanner_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_corpus_is_large_balanced_and_built_from_its_sources() -> None:
    assert len(ATTACKS) >= 600 and len(BENIGN) >= 400
    for rows in (ATTACKS, BENIGN):
        languages = Counter(r["language"] for r in rows)
        assert languages["zh"] >= 0.35 * len(rows) and languages["en"] >= 0.35 * len(rows)
        splits = Counter(r["split"] for r in rows)
        assert 0.5 <= splits["tune"] / (splits["tune"] + splits["heldout"]) <= 0.7
        assert sum(splits[f"heldout{n}"] for n in range(2, 6)) >= 200
    assert len({r["category"] for r in ATTACKS}) >= 10
    # The JSONL files are exactly what the builder makes of the hand-written sources, so
    # the split of every line is the hash rule's, not a later choice.
    attacks, benign = _builder().build()
    assert attacks == ATTACKS and benign == BENIGN


def _rates(split: str) -> tuple[list[Row], list[Row], list[Row], list[Row]]:
    attacks = [r for r in ATTACKS if r["split"] == split]
    benign = [r for r in BENIGN if r["split"] == split]
    missed = [r for r in attacks if not scan(r["text"]).blocked]
    flagged = [r for r in benign if scan(r["text"]).blocked]
    return attacks, benign, missed, flagged


def _report(
    split: str, attacks: list[Row], benign: list[Row], missed: list[Row], flagged: list[Row]
) -> str:
    lines = [
        f"{split}: detection {len(attacks) - len(missed)}/{len(attacks)}"
        f" = {1 - len(missed) / len(attacks):.3f}, false positives {len(flagged)}/{len(benign)}"
        f" = {len(flagged) / len(benign):.3f}"
    ]
    for key in ("category", "language"):
        total = Counter(r[key] for r in attacks)
        lost = Counter(r[key] for r in missed)
        lines.append(
            "  " + ", ".join(f"{k} {total[k] - lost[k]}/{total[k]}" for k in sorted(total))
        )
    total = Counter(r["language"] for r in benign)
    lost = Counter(r["language"] for r in flagged)
    lines.append(
        "  benign flagged: " + ", ".join(f"{k} {lost[k]}/{total[k]}" for k in sorted(total))
    )
    return "\n".join(lines)


SPLITS = ["tune", "heldout"] + [f"heldout{n}" for n in range(2, 8)]


@pytest.mark.parametrize("split", SPLITS)
def test_detection_and_false_positive_targets(split: str) -> None:
    started = time.perf_counter()
    attacks, benign, missed, flagged = _rates(split)
    per_scan = (time.perf_counter() - started) / (len(attacks) + len(benign))
    print("\n" + _report(split, attacks, benign, missed, flagged))
    print(f"  {per_scan * 1e6:.0f} µs per scan (printed, not asserted)")
    assert 1 - len(missed) / len(attacks) >= 0.95, [r["text"] for r in missed]
    assert len(flagged) / len(benign) <= 0.025, [
        (r["text"], scan(r["text"]).describe()) for r in flagged
    ]


def test_every_attack_category_is_caught_in_both_languages() -> None:
    for language in ("en", "zh"):
        caught = Counter(
            r["category"] for r in ATTACKS if r["language"] == language and scan(r["text"]).blocked
        )
        written = {r["category"] for r in ATTACKS if r["language"] == language}
        assert set(caught) == written, language


def _all_cues() -> list[tuple[str, Cue]]:
    return [
        (name, value)
        for module in (cues_target, cues_sink, cues_intent, cues_smuggle)
        for name, value in vars(module).items()
        if isinstance(value, Cue)
    ]


def test_cue_anchors_never_hide_a_match() -> None:
    # Anchors are a shortcut: a cue whose pattern matches must always pass its anchors.
    texts = [fold(r["text"]) for r in ATTACKS + BENIGN]
    for name, cue in _all_cues():
        for folded in texts:
            text = Text(folded)
            source = text.folded if cue.cased else text.lowered
            if cue.pattern.search(source):
                assert cue.possible(text), (name, folded)
