"""Evidence labels of the MemoryBank probing questions: English by hand, Chinese by alignment.

    .venv/bin/python -m tests.data.label_memorybank > tests/data/memorybank_evidence.jsonl

English: labelled by hand (``ENGLISH``): for every question the exchanges (a user query and
the assistant's response) that hold the answer, found by reading the question against the
dialogue, helped by :func:`propose`'s top candidates. Chinese: the Chinese file is a
translation of the English one, turn for turn on almost every day, so each Chinese question
takes the label of the English question at the same position (a sample of 25 was checked
by reading); on days whose turn counts differ the label is set by hand (``CHINESE``), else
:func:`propose` picks the exchange sharing the most distinctive character pairs with the
question. Both messages of a labelled exchange are evidence; questions the dialogue cannot
answer are left out.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter

from tests.benchmarks.memorybank import MEMORYBANK


def _words(text: str) -> list[str]:
    return text.split()


STOP = set(
    _words(
        """a about above after again all also am an and any are as at be been before being but
by can could did do does doing don for from had has have having he her here hers him his how i if in
into is it its me more most my myself no nor not now of off on once only or other our out over
own same she should so some such than that the their them then there these they this those
through to too under until up very was we were what when where which while who whom why will
with would you your yours remember recall mentioned mention told tell said say shared share
ever once before recommended recommend something ago days few what's name called"""
    )
)
MONTHS = {"april": 4, "may": 5}
# English labels, set by reading each question against the dialogue: person -> per question
# the (day in 2023, turn) of each exchange holding the answer; [] = the dialogue has none.
# Chinese questions about a day whose turns differ from the English day: person -> question
# index -> label, read from the Chinese dialogue.
CHINESE: dict[str, dict[int, list[tuple[str, int]]]] = {
    "陈阳": {0: [("04-30", 1)], 1: [("04-30", 2)], 2: [("04-30", 1), ("04-30", 2)]},
}
ENGLISH: dict[str, list[list[tuple[str, int]]]] = {
    "Emily": [
        [("04-30", 3)],
        [("05-01", 0)],
        [("05-03", 2)],
        [("04-28", 1)],
        [("04-30", 2)],
        [("05-02", 1)],
        [("05-04", 1)],
    ],
    "Frank": [
        [("04-27", 2)],
        [("04-28", 8)],
        [("04-29", 1)],
        [("05-05", 1)],
        [("05-06", 1)],
        [("04-30", 1)],
        [("04-28", 2)],
    ],
    "Lucy": [
        [("04-27", 3)],
        [("04-29", 1), ("04-29", 2)],
        [("04-28", 1)],
        [("04-30", 1)],
        [("05-03", 0)],
        [("05-02", 1)],
        [("04-28", 1)],
    ],
    "Sunny": [
        [("04-28", 1)],
        [("04-27", 4)],
        [("05-03", 1)],
        [("05-01", 1)],
        [("04-27", 2)],
        [("04-30", 1)],
        [("05-04", 0)],
    ],
    "Jason": [
        [("04-28", 2)],
        [("04-29", 3)],
        [("04-28", 2)],
        [("04-27", 4)],
        [("05-01", 2)],
        [("05-02", 3)],
        [("05-04", 1)],
    ],
    "Linda": [
        [("05-06", 1)],
        [("05-06", 1)],
        [("04-27", 2), ("04-27", 3)],
        [("04-28", 2)],
        [("05-02", 1)],
        [("05-01", 1)],
        [("05-04", 1)],
    ],
    "John Zhang": [
        [("04-28", 1)],
        [("04-29", 0), ("04-29", 1)],
        [("04-28", 2)],
        [("04-30", 0)],
        [],
        [("04-28", 2)],
        [("05-06", 0)],
    ],
    "Ivy": [
        [("04-27", 1), ("04-27", 2)],
        [("05-06", 1)],
        [("05-02", 0)],
        [("04-28", 2)],
        [("04-27", 3)],
        [("05-05", 0)],
        [("05-02", 0)],
    ],
    "Henry": [
        [("04-27", 1)],
        [("04-30", 0)],
        [("04-30", 1)],
        [("05-04", 1)],
        [("05-06", 1)],
        [("04-28", 2)],
        [("05-02", 0)],
    ],
    "Gary": [
        [("04-28", 2)],
        [("05-04", 0)],
        [("05-05", 1)],
        [("05-04", 1)],
        [("05-02", 0), ("05-02", 1)],
        [("04-30", 0)],
        [("05-03", 0)],
    ],
    "Jack": [
        [("04-27", 2)],
        [("04-27", 2)],
        [("05-05", 2)],
        [("04-30", 1)],
        [("05-03", 1)],
        [("05-02", 1)],
        [("05-04", 0)],
    ],
    "Roland": [
        [("04-30", 1)],
        [("04-30", 2)],
        [("04-30", 1), ("04-30", 2)],
        [("05-02", 1)],
        [("04-28", 1), ("04-28", 2)],
        [("04-27", 2)],
    ],
    "Susan": [
        [("04-27", 2)],
        [("04-27", 2)],
        [("04-30", 1)],
        [("04-29", 1)],
        [("05-04", 1)],
    ],
    "Luna": [
        [("04-28", 2)],
        [("04-30", 1)],
        [("05-04", 0)],
        [("05-03", 2)],
        [("04-28", 4)],
    ],
    "Leo": [
        [("04-27", 2)],
        [("05-02", 1)],
        [("05-02", 2)],
        [("05-03", 1)],
        [("05-03", 1)],
        [("05-04", 1)],
        [("05-06", 0)],
    ],
}


def fold(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def words(text: str, lang: str) -> list[str]:
    if lang == "zh":
        runs = re.findall(r"[\u4e00-\u9fff]+|[A-Za-z0-9]+", text)
        return [r[i : i + 2] for r in runs for i in range(max(1, len(r) - 1))]
    return [fold(w) for w in re.findall(r"[a-z0-9']+", text.lower()) if w not in STOP]


def named_day(question: str, lang: str) -> str | None:
    if lang == "en":
        m = re.search(r"(April|May)\s+(\d{1,2})", question)
        return f"2023-{MONTHS[m.group(1).lower()]:02d}-{int(m.group(2)):02d}" if m else None
    m = re.search(r"(\d{1,2})月(\d{1,2})[日号]", question)
    return f"2023-{int(m.group(1)):02d}-{int(m.group(2)):02d}" if m else None


def propose(history: dict[str, list[dict[str, str]]], question: str, lang: str) -> list:
    turns = [(d, i, t) for d in sorted(history) for i, t in enumerate(history[d])]
    df = Counter(w for _, _, t in turns for w in set(words(t["query"] + " " + t["response"], lang)))
    wanted = set(words(question, lang))
    day = named_day(question, lang)

    def score(item: tuple) -> float:
        d, _, t = item
        have = set(words(t["query"] + " " + t["response"], lang))
        s = sum(math.log(1 + len(turns) / df[w]) for w in wanted & have)
        return s * (3 if day and d == day else 1)

    if history.get(day or ""):  # a question that names its day is about that day
        turns = [item for item in turns if item[0] == day]
    elif re.search(r"first conversation|第一次", question):
        turns = [item for item in turns if item[0] == min(history)]
    best = max(turns, key=score)
    return [(best[0], best[1])]


def main() -> None:
    banks = {}
    for lang, name in (("en", "memory_bank_en.json"), ("zh", "memory_bank_cn.json")):
        with open(MEMORYBANK / name, encoding="utf-8") as handle:
            banks[lang] = list(json.load(handle).items())
    questions = {}
    for lang, name in (("en", "probing_questions_en.jsonl"), ("zh", "probing_questions_cn.jsonl")):
        lines = (MEMORYBANK / name).read_text(encoding="utf-8").splitlines()
        questions[lang] = [next(iter(json.loads(line).items())) for line in lines if line.strip()]
    english: dict[tuple[int, int], list] = {}
    for lang in ("en", "zh"):
        for p, (person, asked) in enumerate(questions[lang]):
            name, data = banks[lang][p]
            assert name.strip() == person.strip(), (name, person)
            history = data["history"]
            for q, question in enumerate(asked):
                label = None
                if lang == "en":
                    label = [(f"2023-{d}", t) for d, t in ENGLISH[person.strip()][q]]
                elif q in CHINESE.get(person.strip(), {}):
                    label = [(f"2023-{d}", t) for d, t in CHINESE[person.strip()][q]]
                if label is None:
                    en_history = banks["en"][p][1]["history"]
                    same = all(
                        len(en_history.get(d, [])) == len(history.get(d, []))
                        for d, _ in english[(p, q)]
                    )
                    label = english[(p, q)] if same else None
                if label is None:  # a Chinese day whose turns differ from the English one
                    label = propose(history, question, lang)
                if lang == "en":
                    english[(p, q)] = label
                if not label:
                    continue
                evidence = [[d, t, role] for d, t in label for role in ("user", "assistant")]
                row = {
                    "lang": lang,
                    "user": person.strip(),
                    "question": question,
                    "evidence": evidence,
                }
                print(json.dumps(row, ensure_ascii=False))


if __name__ == "__main__":
    main()
