"""The ``fact_store`` and ``fact_feedback`` tools: schemas and one handler per action.

Names and parameters follow the reference plugin so prompts written for it keep working.
No parameter names a tenant or a bank: every action works on the bank of the caller's
context, and an id from anywhere else is "not found". Answers are JSON with sanitized
fact text, bounded by ``max_tool_result_chars``; bad arguments get an error answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gateway.settings import HolographicSettings
from providers.base import tool_error
from providers.holographic.facts import (
    CATEGORIES,
    HELPFUL_DELTA,
    UNHELPFUL_DELTA,
    Bank,
    Fact,
    FactChange,
    extract_entities,
    parse_tags,
)
from providers.toolresults import bounded_answer, clean

if TYPE_CHECKING:  # numpy-backed: the schemas below must load without the extra
    from providers.holographic.retrieval import Retriever
    from providers.holographic.writer import FactWriter

ACTIONS = ("add", "search", "probe", "related", "reason", "contradict", "update", "remove", "list")
MAX_LIMIT = 50
Handler = Callable[[Bank, dict[str, Any]], dict[str, Any]]


class BadArguments(ValueError):
    """A tool argument is missing or malformed; the message tells the model what to send."""


def tool_schemas() -> list[dict[str, Any]]:
    text = {"type": "string"}
    return [
        {
            "type": "function",
            "function": {
                "name": "fact_store",
                "description": (
                    "Durable facts about this user, with trust scores. add: store a fact "
                    "(content; optional category, tags). search: keyword search (query). "
                    "probe: facts about one entity (entity). related: facts mentioning an "
                    "entity in any way (entity). reason: facts about ALL given entities "
                    "(entities). contradict: facts that may contradict each other, or a new "
                    "statement (optional content). update: change a fact (fact_id; content, "
                    "category, tags, trust_delta). remove: delete a fact (fact_id). list: "
                    "facts by category and minimum trust."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": list(ACTIONS)},
                        "content": {**text, "description": "The fact, one statement."},
                        "query": {**text, "description": "Keywords to search for."},
                        "entity": {**text, "description": "A person, place, project or thing."},
                        "entities": {"type": "array", "items": text},
                        "fact_id": {"type": "integer"},
                        "category": {"type": "string", "enum": list(CATEGORIES)},
                        "tags": {**text, "description": "Comma-separated tags."},
                        "trust_delta": {"type": "number", "description": "update: −1 … 1."},
                        "min_trust": {"type": "number", "description": "0 … 1."},
                        "limit": {"type": "integer", "description": f"1 … {MAX_LIMIT}."},
                    },
                    "required": ["action"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "fact_feedback",
                "description": (
                    "Say whether a recalled fact helped: helpful raises its trust by "
                    f"{HELPFUL_DELTA}, unhelpful lowers it by {-UNHELPFUL_DELTA}."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": ["helpful", "unhelpful"]},
                        "fact_id": {"type": "integer"},
                    },
                    "required": ["action", "fact_id"],
                },
            },
        },
    ]


class FactTools:
    """Answers the two tools for one bank at a time (see the module docstring)."""

    def __init__(
        self, settings: HolographicSettings, retriever: Retriever, writer: FactWriter
    ) -> None:
        self.settings = settings
        self.retriever = retriever
        self.writer = writer
        self.store = retriever.store
        self._actions: dict[str, Handler] = {
            "add": self._add,
            "search": self._search,
            "probe": self._probe,
            "related": self._related,
            "reason": self._reason,
            "contradict": self._contradict,
            "update": self._update,
            "remove": self._remove,
            "list": self._list,
        }

    def call(self, bank: Bank, name: str, args: dict[str, Any]) -> str:
        try:
            if name == "fact_feedback":
                payload = self._feedback(bank, args)
            else:
                action = args.get("action")
                if action not in self._actions:
                    raise BadArguments(f"'action' must be one of {', '.join(ACTIONS)}")
                payload = self._actions[str(action)](bank, args)
        except BadArguments as exc:
            return tool_error(str(exc))
        return bounded_answer(
            {"success": True, **payload}, "facts", self.settings.max_tool_result_chars
        )

    # -- actions ------------------------------------------------------------------------------

    def _add(self, bank: Bank, args: dict[str, Any]) -> dict[str, Any]:
        content = _text(args, "content")
        try:
            fact, created = self.writer.add(
                bank, content, _category(args) or "general", parse_tags(args.get("tags")), "tool"
            )
        except ValueError as exc:
            raise BadArguments(str(exc)) from None
        return {"fact_id": fact.id, "created": created, "entities": list(fact.entities)}

    def _search(self, bank: Bank, args: dict[str, Any]) -> dict[str, Any]:
        hits = self.retriever.search(bank, _text(args, "query"), _limit(args), _trust(args))
        return self._facts(bank, hits)

    def _probe(self, bank: Bank, args: dict[str, Any]) -> dict[str, Any]:
        return self._facts(bank, self.retriever.probe(bank, _text(args, "entity"), _limit(args)))

    def _related(self, bank: Bank, args: dict[str, Any]) -> dict[str, Any]:
        return self._facts(bank, self.retriever.related(bank, _text(args, "entity"), _limit(args)))

    def _reason(self, bank: Bank, args: dict[str, Any]) -> dict[str, Any]:
        entities = args.get("entities")
        if not isinstance(entities, list) or not entities:
            raise BadArguments("'entities' must be a non-empty list of names")
        if not all(isinstance(e, str) and e.strip() for e in entities):
            raise BadArguments("'entities' must be a non-empty list of names")
        return self._facts(bank, self.retriever.reason(bank, entities, _limit(args)))

    def _contradict(self, bank: Bank, args: dict[str, Any]) -> dict[str, Any]:
        claim = args.get("content")
        if claim is not None and (not isinstance(claim, str) or not claim.strip()):
            raise BadArguments("'content' must be a non-empty string when given")
        found = self.retriever.contradictions(
            bank, _limit(args), claim, extract_entities(claim) if claim else ()
        )
        limit = self.settings.max_fact_chars
        pairs = [
            {
                "first": _shown(first, limit) if first else None,
                "second": _shown(second, limit),
                "score": round(score, 3),
            }
            for first, second, score in found
        ]
        note = "Candidates only: check them, then fix with update or remove."
        return {"facts": pairs, "note": note}

    def _update(self, bank: Bank, args: dict[str, Any]) -> dict[str, Any]:
        fact_id = _fact_id(args)
        content = args.get("content")
        if content is not None and not isinstance(content, str):
            raise BadArguments("'content' must be a string")
        delta = args.get("trust_delta", 0.0)
        if not isinstance(delta, int | float) or not -1.0 <= float(delta) <= 1.0:
            raise BadArguments("'trust_delta' must be a number between -1 and 1")
        tags = parse_tags(args["tags"]) if "tags" in args else None
        try:
            fact = self.writer.update(
                bank, fact_id, content, _category(args), tags, float(delta), None
            )
        except ValueError as exc:
            raise BadArguments(str(exc)) from None
        if fact is None:
            raise BadArguments(f"no fact {fact_id} in this memory")
        return {"fact": _shown(fact, self.settings.max_fact_chars)}

    def _remove(self, bank: Bank, args: dict[str, Any]) -> dict[str, Any]:
        fact_id = _fact_id(args)
        if not self.store.remove(bank.tenant, bank.key, fact_id):
            raise BadArguments(f"no fact {fact_id} in this memory")
        return {"removed": fact_id}

    def _list(self, bank: Bank, args: dict[str, Any]) -> dict[str, Any]:
        facts = self.store.facts(
            bank.tenant,
            bank.key,
            category=_category(args),
            min_trust=_trust(args),
            limit=_limit(args),
        )
        return self._facts(bank, [(f, f.trust) for f in facts])

    def _feedback(self, bank: Bank, args: dict[str, Any]) -> dict[str, Any]:
        action = args.get("action")
        if action not in ("helpful", "unhelpful"):
            raise BadArguments("'action' must be 'helpful' or 'unhelpful'")
        fact_id = _fact_id(args)
        helpful = action == "helpful"
        delta = HELPFUL_DELTA if helpful else UNHELPFUL_DELTA
        change = FactChange(trust_delta=delta, helpful=helpful)
        fact = self.store.update(bank.tenant, bank.key, fact_id, change)
        if fact is None:
            raise BadArguments(f"no fact {fact_id} in this memory")
        return {"fact_id": fact.id, "trust": round(fact.trust, 3)}

    def _facts(self, bank: Bank, scored: list[tuple[Fact, float]]) -> dict[str, Any]:
        limit = self.settings.max_fact_chars
        shown = [{**_shown(f, limit), "score": round(s, 3)} for f, s in scored]
        answer: dict[str, Any] = {"facts": shown, "count": len(shown)}
        reencoded = self.retriever.reencoded.pop(bank.key, 0)
        if reencoded:
            answer["note"] = f"{reencoded} facts stored at another dimension were re-encoded"

        return answer


def _shown(fact: Fact, limit: int) -> dict[str, object]:
    return {**fact.summary(), "content": clean(fact.content, limit)}


def _text(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise BadArguments(f"'{key}' must be a non-empty string")
    return value.strip()


def _fact_id(args: dict[str, Any]) -> int:
    value = args.get("fact_id")
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise BadArguments("'fact_id' must be a positive integer")
    return value


def _category(args: dict[str, Any]) -> str | None:
    value = args.get("category")
    if value in (None, ""):
        return None
    if value not in CATEGORIES:
        raise BadArguments(f"'category' must be one of {', '.join(CATEGORIES)}")
    return str(value)


def _limit(args: dict[str, Any]) -> int:
    value = args.get("limit", 10)
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadArguments(f"'limit' must be an integer from 1 to {MAX_LIMIT}")
    return min(MAX_LIMIT, max(1, value))


def _trust(args: dict[str, Any]) -> float:
    value = args.get("min_trust", 0.0)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise BadArguments("'min_trust' must be a number from 0 to 1")
    return min(1.0, max(0.0, float(value)))
