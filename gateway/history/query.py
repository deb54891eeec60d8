"""The session_search query language, parsed into an FTS5 expression that is always safe.

What users and the model may write:

* keywords — ``deploy script`` (every word must occur: implicit AND; ``AND`` is accepted)
* ``"exact phrase"`` — an unclosed quote runs to the end of the text
* ``OR`` between two terms — ``deploy script OR makefile`` means deploy AND (script OR
  makefile)
* ``NOT term`` or ``-term`` — exclude messages containing the term
* ``deploy*`` — prefix
* a question in natural language — when the text uses none of the syntax above and reads
  like a sentence (a question mark or a stop-word), question words and stop-words are
  dropped (English and Chinese). The search first asks for messages with every remaining
  term (``expression``), then, if that finds too little, for any of them (``fallback``);
  ranking rewards messages that match more distinct terms.
* time expressions ("last week", "in May 2023", "昨天", "上个月", see
  :mod:`gateway.history.when`) are taken out of the text when ``now`` is given and become
  ``span``, which the search uses to boost messages of those dates.

Parentheses are ignored. The output quotes every term, uses only the operators above and
never a column filter or ``NEAR``: characters such as ``: ^ * - { }`` inside words only
separate tokens. Chinese/Japanese/Korean runs become bigram phrases (see
:mod:`gateway.history.fts`). Text with nothing searchable parses to an empty expression,
which callers answer with no results.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace

from gateway.history import lexicon, when
from gateway.history.fts import CJK_RUN, bigrams, cjk_phrase, is_cjk

MAX_QUERY_CHARS = 4000
MAX_FRAGMENTS = 32
MAX_RUN_CHARS = 64
MAX_CJK_RUN = 32
MAX_GROUP_RUNS = 16

_OPERATORS = frozenset({"AND", "OR", "NOT"})
_PIECE = re.compile(f"(?P<cjk>{CJK_RUN.pattern})|(?P<word>(?:(?!{CJK_RUN.pattern})[^\\W_])+)")
_LEXEME = re.compile(r'"(?P<phrase>[^"]*)"?(?P<star>\*?)|(?P<bare>[^\s"()]+)')
_TRAILING = re.compile(r"[^\w*]+$")
_QUOTED = re.compile(r'("[^"]*"?)')
_WRAPPED = re.compile(r'\s*["“]([^"“”]*)["”]?\s*')
_STEM_SUFFIXES = ("ments", "ment", "ings", "ing", "ies", "ed", "es", "s", "ly", "y", "e")


def _words(text: str) -> list[str]:
    return text.split()


EN_STOP = frozenset(
    _words(
        """a about above after again ago all also am an and any anything are as ask asked at be
    because been before being below between both but by can could d did didn discuss
    discussed do does doesn doing don done down during each earlier else ever few for from
    further get got had has have having he her here hers him his how i if in into is isn it
    its just know last let like ll m me mention mentioned more most my no nor not now of off
    on once only or other our ours out over own please previously re recall remember said
    same say she should so some something such t talk talked tell than that the their them
    then there these they thing things this those through time to told too under until up
    us ve very was wasn we were weren what when where which while who whom why will with
    would you your yours whose whats anyone somebody someone onto upon within without yet
    cannot couldn shouldn wouldn won isn aren hasn haven hadn ain may might must shall
    remind reminded remembered recalled forget forgot forgotten mentioning telling saying
    share shared sharing discussing talking chat chatted chatting conversation again back
    right correct true yes ok okay hey hi hello thanks thank name named called
    kind sort stuff happen happened one ones s"""
    )
)
#: Chinese (and a few Japanese) function words; longest first so greedy removal prefers them.
ZH_STOP = tuple(
    sorted(
        _words(
            """多长时间 记不记得 为什么 有没有 是不是 还记得 什么样 怎么样 之前 以前 曾经 上次 最近
        那个 这个 那些 这些 一个 一些 一下 一部 一本 一首 一种 一次 我们 你们 他们 她们 它们
        咱们 自己 什么 怎么 怎样 哪些 哪个 哪里 哪儿 多少 多久 是否 记得 说过 提到 提过 聊过
        讲过 告诉 请问 知道 可以 能够 或者 还是 因为 所以 但是 而且 然后 时候 当时 那时 对吗
        对不对 是吗 这天 那天 当天 名字 叫做 叫什么 内容 关于 有关 分享过 说到 谈到 聊到
        讨论过 跟你 和你 给你 给我 跟我 和我 对你 一起 现在 目前 哪种 哪家 哪位 哪一 干什么
        做什么 为啥 啥 でした ました ですか です ます 我 你 您 他 她 它 的 了 吗 呢 吧 啊 呀
        哦 嗯 过 着 是 在 和 与 跟 及 或 就 都 也 又 还 把 被 给 对 从 到 这 那 有 个 谁 几
        地 得 之 其 而 很 么 要 会 能 想 曾 哪 の は が を に で と も か ね よ"""
        ),
        key=len,
        reverse=True,
    )
)
ZH_STOP_RE = re.compile("|".join(re.escape(word) for word in ZH_STOP))
#: Multi-character stop-words and sentence-final particles that mark a question.
_ZH_QUESTION = re.compile(
    "|".join(re.escape(word) for word in ZH_STOP if len(word) > 1) + "|[吗呢吧]$"
)


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """A parsed query.

    ``expression`` goes inside ``{body sender} : (…)``; ``fallback`` (may be empty) is the
    broader expression to try when ``expression`` finds too little; ``terms`` are the
    positive parts (each a valid expression on its own) for ranking and coverage;
    ``needles`` are plain words for highlighting and trimming the original text; ``span``
    the dates a time expression named.
    """

    text: str
    expression: str
    terms: tuple[str, ...]
    needles: tuple[str, ...]
    natural: bool
    fallback: str = ""
    span: when.Span | None = None

    @property
    def empty(self) -> bool:
        return not self.expression

    def snippet(self, text: str, size: int = 200) -> str:
        """About ``size`` characters of ``text`` around the first needle, matches in ``**``.

        Works on the original text (not the pre-tokenised index text): English needles
        match by a rough stem so ``deploys`` finds ``deploying``; CJK needles literally.
        """
        pattern = self.needle_pattern()
        found = pattern.search(text) if pattern else None
        start = 0 if found is None else max(0, found.start() - size // 3)
        if found is not None and start > 0 and not is_cjk(text[start]):
            space = text.find(" ", start, found.start())
            start = space + 1 if space >= 0 else start
        end = min(len(text), start + size)
        piece = text[start:end]
        if pattern is not None:
            piece = pattern.sub(lambda m: f"**{m.group(0)}**", piece)
        return ("…" if start > 0 else "") + piece + ("…" if end < len(text) else "")

    def needle_pattern(self) -> re.Pattern[str] | None:
        """A regex finding the needles in original text (None when there are none).

        English needles match by a rough stem so ``deploys`` finds ``deploying``; CJK
        needles literally.
        """
        return _needle_regex(self.needles)


@functools.lru_cache(maxsize=256)
def _needle_regex(needles: tuple[str, ...]) -> re.Pattern[str] | None:
    parts = [
        re.escape(n) if is_cjk(n[0]) else rf"\b{re.escape(_rough_stem(n))}\w*"
        for n in sorted(needles, key=len, reverse=True)
        if n
    ]
    return re.compile("|".join(parts), re.IGNORECASE) if parts else None


@dataclass(frozen=True, slots=True)
class _Lexeme:
    kind: str  # "term" or an operator
    text: str = ""
    quoted: bool = False
    prefix: bool = False
    negated: bool = False


def parse_query(text: str, now: float | None = None) -> ParsedQuery:
    """Parse user or model input; never raises and never emits unsafe FTS5 syntax.

    With ``now`` (epoch seconds), time expressions outside quotes become ``span``.
    """
    original = text
    text = _unwrap(text[:MAX_QUERY_CHARS])
    span = None
    if now is not None:
        text, span = _take_dates(text, now)
    lexemes = _lex(text)
    if _is_natural(text, lexemes):
        parsed = _natural(original, lexemes)
    else:
        parsed = _keywords(original, lexemes)
    return replace(parsed, span=span) if span is not None else parsed


def _unwrap(text: str) -> str:
    """A whole question pasted in quotes is a question, not a phrase to match exactly."""
    wrapped = _WRAPPED.fullmatch(text)
    if wrapped is None:
        return text
    inner = wrapped.group(1)
    return inner if _is_natural(inner, _lex(inner)) else text


def _take_dates(text: str, now: float) -> tuple[str, when.Span | None]:
    """``text`` without the time expressions outside its quotes, and their span."""
    pieces: list[str] = []
    span: when.Span | None = None
    for part in _QUOTED.split(text):
        if part.startswith('"'):
            pieces.append(part)
            continue
        rest, found = when.extract(part, now)
        pieces.append(rest)
        if found is not None:
            span = found if span is None else span.union(found)
    return "".join(pieces), span


def _lex(text: str) -> list[_Lexeme]:
    out: list[_Lexeme] = []
    for match in _LEXEME.finditer(text.replace("(", " ").replace(")", " ")):
        if match.group("bare") is None:
            out.append(
                _Lexeme(
                    "term", match.group("phrase"), quoted=True, prefix=bool(match.group("star"))
                )
            )
            continue
        word = match.group("bare")
        if word in _OPERATORS:
            out.append(_Lexeme(word))
            continue
        negated = len(word) > 1 and word[0] == "-" and word[1].isalnum()
        core = _TRAILING.sub("", word[1:] if negated else word)
        stem = core.rstrip("*")
        prefix = stem != core and bool(stem) and stem[-1].isalnum() and not is_cjk(stem[-1])
        out.append(_Lexeme("term", core, prefix=prefix, negated=negated))
    return out


def _is_natural(text: str, lexemes: list[_Lexeme]) -> bool:
    """A sentence: no operators, and a question mark or a stop-word outside the quotes."""
    for lex in lexemes:
        if lex.kind != "term" or lex.prefix or lex.negated:
            return False
    outside = _QUOTED.sub(" ", text)
    if "?" in outside or "？" in outside:
        return True
    for lex in lexemes:
        if lex.quoted:
            continue
        for piece in _PIECE.finditer(lex.text):
            if piece.group("word") and piece.group("word").lower() in EN_STOP:
                return True
            if piece.group("cjk") and _ZH_QUESTION.search(piece.group("cjk")):
                return True
    return False


def _compile_term(text: str, prefix: bool) -> tuple[str | None, list[str]]:
    """One term → a quoted phrase (or an AND of phrases for mixed CJK/Latin) and needles."""
    fragments: list[str] = []
    needles: list[str] = []
    group: list[str] = []

    def flush(star: bool) -> None:
        if group:
            fragments.append('"' + " ".join(group[:MAX_GROUP_RUNS]) + '"' + ("*" if star else ""))
            needles.extend(group[:MAX_GROUP_RUNS])
            group.clear()

    for piece in _PIECE.finditer(text):
        if piece.group("cjk"):
            flush(False)
            run = piece.group("cjk")[:MAX_CJK_RUN]
            fragments.append(cjk_phrase(run))
            needles.append(run)
        else:
            group.append(piece.group("word")[:MAX_RUN_CHARS].lower())
    flush(prefix)
    if not fragments:
        return None, needles
    if len(fragments) == 1:
        return fragments[0], needles
    return "(" + " AND ".join(fragments) + ")", needles


def _keywords(text: str, lexemes: list[_Lexeme]) -> ParsedQuery:
    clauses: list[list[str]] = []
    negatives: list[str] = []
    needles: list[str] = []
    pending_or = pending_not = False
    count = 0
    for lex in lexemes:
        if lex.kind == "OR":
            pending_or = bool(clauses)
        elif lex.kind == "AND":
            pending_or = False
        elif lex.kind == "NOT":
            pending_not = True
        else:
            fragment, words = _compile_term(lex.text, lex.prefix)
            if fragment is None or count >= MAX_FRAGMENTS:
                continue
            count += 1
            if pending_not or lex.negated:
                negatives.append(fragment)
            else:
                needles.extend(words)
                if pending_or:
                    clauses[-1].append(fragment)
                else:
                    clauses.append([fragment])
            pending_or = pending_not = False
    if not clauses:
        return ParsedQuery(text, "", (), (), natural=False)
    expression = " AND ".join(c[0] if len(c) == 1 else "(" + " OR ".join(c) + ")" for c in clauses)
    if negatives:
        expression = f"({expression}) NOT ({' OR '.join(negatives)})"
    terms = _unique([fragment for clause in clauses for fragment in clause])
    # Plain keywords (no OR/NOT) that all have to match may be too strict: fall back to any.
    plain = not negatives and all(len(c) == 1 for c in clauses) and len(terms) > 1
    fallback = " OR ".join(terms) if plain else ""
    return ParsedQuery(text, expression, terms, _unique(needles), False, fallback)


def _natural(text: str, lexemes: list[_Lexeme]) -> ParsedQuery:
    terms: list[str] = []
    needles: list[str] = []
    singles: list[str] = []
    for lex in lexemes:
        if lex.quoted:  # a title or name in quotes inside a question: one exact term
            fragment, words = _compile_term(lex.text, False)
            if fragment is not None:
                terms.append(fragment)
                needles.extend(words)
            continue
        for piece in _PIECE.finditer(lex.text):
            word = piece.group("word")
            if word is not None:
                word = word[:MAX_RUN_CHARS].lower()
                if word not in EN_STOP:
                    variants = lexicon.forms(word)
                    alternatives = " OR ".join(f'"{form}"' for form in variants)
                    terms.append(alternatives if len(variants) == 1 else f"({alternatives})")
                    needles.extend(variants)
                continue
            for segment in ZH_STOP_RE.split(piece.group("cjk")[:MAX_CJK_RUN]):
                if len(segment) == 1:
                    singles.append(segment)
                elif segment:
                    needles.append(segment)
                    terms.extend(f'"{pair}"' for pair in bigrams(segment))
    # One-character Chinese words (书, 猫) count too; needles only when nothing longer is left,
    # so trimming centres on the more specific words.
    if not needles:
        needles = singles
    unique = _unique(terms + [f'"{char}"' for char in singles])[:MAX_FRAGMENTS]
    if not unique:
        return ParsedQuery(text, "", (), (), natural=True)
    strict = " AND ".join(unique)
    broad = " OR ".join(unique) if len(unique) > 1 else ""
    return ParsedQuery(text, strict, unique, _unique(needles), True, broad)


def _rough_stem(word: str) -> str:
    for suffix in _STEM_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
