"""The fake Honcho answers like the real one: recorded 3.0.12 pairs replayed, OpenAPI checked.

Every request of ``real_honcho_3.0.12.jsonl`` is sent, in order, to a fresh fake. Ids the
real server generated (messages, conclusions) are mapped to the fake's as they first
appear, so later requests (a DELETE by id) address the same object. Each answer must have
the recorded status and the recorded field set, recursively (values are data and may
differ; a field that is null on one side is not compared further). Each answer must also
fit the OpenAPI document: every required field present, no field the schema lacks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fakes.honcho_server import FakeHoncho

pytestmark = pytest.mark.integration

# ``shared/honcho`` next to the checkout (found from any worktree depth).
SHARED = next(
    (
        parent / "shared" / "honcho"
        for parent in Path(__file__).resolve().parents
        if (parent / "shared" / "honcho").is_dir()
    ),
    Path(__file__).resolve().parents[3] / "shared" / "honcho",
)
PAIRS = SHARED / "real_honcho_3.0.12.jsonl"
OPENAPI = SHARED / "openapi-3.0.12.json"
# Objects whose keys are data (OpenAPI ``additionalProperties`` maps), not fields.
MAP_FIELDS = frozenset({"sessions", "metadata", "configuration"})

if not PAIRS.is_file() or not OPENAPI.is_file():
    pytest.skip(f"recorded Honcho pairs not found under {SHARED}", allow_module_level=True)


def load_pairs() -> list[dict[str, Any]]:
    return [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line]


def shape_problems(real: Any, fake: Any, where: str = "$") -> list[str]:
    """Where ``fake`` has another field set (or list length) than ``real``."""
    real_empty, fake_empty = real is None or real == "", fake is None or fake == ""
    if real_empty or fake_empty:
        # A nullable field may be null on one side; the whole answer may not.
        if where == "$" and real_empty != fake_empty:
            return [f"$: recorded {real!r:.40}, fake {fake!r:.40}"]
        return []
    if isinstance(real, dict) and isinstance(fake, dict):
        if where.rsplit(".", 1)[-1] in MAP_FIELDS:
            values = zip(real.values(), fake.values(), strict=False)
            return [p for r, f in values for p in shape_problems(r, f, where + "[*]")]
        problems = []
        if set(real) != set(fake):
            problems.append(f"{where}: fields {sorted(real)} != fake {sorted(fake)}")
        for key in set(real) & set(fake):
            problems += shape_problems(real[key], fake[key], f"{where}.{key}")
        return problems
    if isinstance(real, list) and isinstance(fake, list):
        problems = [] if len(real) == len(fake) else [f"{where}: {len(real)} items != {len(fake)}"]
        for index, (r, f) in enumerate(zip(real, fake, strict=False)):
            problems += shape_problems(r, f, f"{where}[{index}]")
        return problems
    if type(real) is not type(fake) and not {type(real), type(fake)} <= {int, float}:
        return [f"{where}: {type(real).__name__} != fake {type(fake).__name__}"]
    return []


def learn_ids(real: Any, fake: Any, ids: dict[str, str]) -> None:
    """Map ids the real server generated to the fake's, walking both answers in step."""
    if isinstance(real, dict) and isinstance(fake, dict):
        if isinstance(real.get("id"), str) and isinstance(fake.get("id"), str):
            ids.setdefault(real["id"], fake["id"])
        for key in set(real) & set(fake):
            learn_ids(real[key], fake[key], ids)
    elif isinstance(real, list) and isinstance(fake, list):
        for r, f in zip(real, fake, strict=False):
            learn_ids(r, f, ids)


def mapped(text: str, ids: dict[str, str]) -> str:
    for real_id, fake_id in ids.items():
        text = text.replace(real_id, fake_id)
    return text


class OpenAPI:
    """Just enough of the OpenAPI document to find a route's success schema and walk it."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.schemas: dict[str, Any] = document["components"]["schemas"]
        self.routes: list[tuple[str, re.Pattern[str], dict[str, Any]]] = []
        for template, operations in document["paths"].items():
            pattern = re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$")
            for method, operation in operations.items():
                self.routes.append((method.upper(), pattern, operation))
        self.routes.sort(key=lambda route: route[1].pattern.count("[^/]+"))

    def response_schema(self, method: str, path: str) -> dict[str, Any] | None:
        for verb, pattern, operation in self.routes:
            if verb == method and pattern.match(path):
                for status, response in operation["responses"].items():
                    if status.startswith("2"):
                        content = response.get("content", {}).get("application/json", {})
                        return content.get("schema") or None
                return None
        raise AssertionError(f"{method} {path} is not in the OpenAPI document")

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            schema = self.schemas[schema["$ref"].rsplit("/", 1)[-1]]
        return schema

    def problems(self, schema: dict[str, Any], value: Any, where: str = "$") -> Iterator[str]:
        schema = self.resolve(schema)
        if value is None:
            return
        options = schema.get("anyOf")
        if options:
            fitting = [o for o in options if self.resolve(o).get("type") != "null"]
            if len(fitting) == 1:
                yield from self.problems(fitting[0], value, where)
            return
        if schema.get("type") == "array" and isinstance(value, list):
            for index, item in enumerate(value):
                yield from self.problems(schema.get("items", {}), item, f"{where}[{index}]")
        properties = schema.get("properties")
        if schema.get("type") == "object" and properties and isinstance(value, dict):
            missing = set(schema.get("required", [])) - set(value)
            extra = set(value) - set(properties)
            if missing or extra:
                yield f"{where}: missing {sorted(missing)}, not in schema {sorted(extra)}"
            for key in set(value) & set(properties):
                yield from self.problems(properties[key], value[key], f"{where}.{key}")


@pytest.fixture(scope="module")
def replay() -> Iterator[list[tuple[dict[str, Any], int, Any]]]:
    """(recorded pair, fake status, fake answer) for every recorded request, in order."""
    ids: dict[str, str] = {}
    results = []
    with FakeHoncho() as fake, httpx.Client(base_url=fake.base_url, timeout=10) as http:
        for pair in load_pairs():
            body = pair["request"]
            response = http.request(
                pair["method"],
                mapped(pair["path"], ids),
                params={key: mapped(str(value), ids) for key, value in pair["query"].items()},
                content=mapped(json.dumps(body), ids).encode() if body is not None else None,
                headers={"Content-Type": "application/json"},
            )
            answer = response.json() if response.content else ""
            learn_ids(pair["response"], answer, ids)
            results.append((pair, response.status_code, answer))
    yield results


def test_every_recorded_pair_is_replayed(replay: list[tuple[dict[str, Any], int, Any]]) -> None:
    assert len(replay) == len(load_pairs()) >= 30


@pytest.mark.parametrize("index", range(len(load_pairs())))
def test_fake_answers_like_the_recorded_server(
    replay: list[tuple[dict[str, Any], int, Any]], index: int
) -> None:
    pair, status, answer = replay[index]
    route = f"#{index} {pair['method']} {pair['path']}"
    assert status == pair["status"], f"{route}: status {status}, recorded {pair['status']}"
    assert shape_problems(pair["response"], answer) == [], route


@pytest.mark.parametrize("index", range(len(load_pairs())))
def test_fake_answers_fit_the_openapi_document(
    replay: list[tuple[dict[str, Any], int, Any]], index: int
) -> None:
    api = OpenAPI(json.loads(OPENAPI.read_text(encoding="utf-8")))
    pair, _, answer = replay[index]
    schema = api.response_schema(pair["method"], pair["path"])
    if schema is None:
        assert answer == "", "a route without a response body answered one"
        return
    assert list(api.problems(schema, answer)) == []


def test_the_comparison_catches_a_missing_field() -> None:
    real = {"id": "a", "items": [{"id": "m", "content": "x", "token_count": 3}]}
    fake = {"id": "b", "items": [{"id": "n", "content": "y"}]}
    assert shape_problems(real, fake) == [
        "$.items[0]: fields ['content', 'id', 'token_count'] != fake ['content', 'id']"
    ]


def test_the_fake_rejects_what_the_real_server_rejects() -> None:
    with FakeHoncho() as fake, httpx.Client(base_url=fake.base_url, timeout=10) as http:
        assert http.post("/v3/workspaces", json={"id": "bad id!"}).status_code == 422
        assert http.post("/v3/workspaces", json={"id": "w"}).status_code == 201
        assert http.post("/v3/workspaces", json={"id": "w"}).status_code == 200
        assert http.get("/v3/workspaces/w/peers/nobody/card").status_code == 404
        assert http.post("/v3/workspaces/w/sessions/none/messages", json={}).status_code == 404


def test_the_fakes_dialectic_searches_every_session_of_the_asking_peer() -> None:
    """As Honcho's dialectic agent: the asker's sessions, unless an allowlist confines it."""
    with FakeHoncho() as fake, httpx.Client(base_url=fake.base_url, timeout=10) as http:
        http.post("/v3/workspaces", json={"id": "w"})
        for user, text in (("carol", "my code word is ZEBRA42"), ("bob", "I like tea")):
            http.post("/v3/workspaces/w/sessions", json={"id": f"s-{user}"})
            http.post(
                f"/v3/workspaces/w/sessions/s-{user}/messages",
                json={"messages": [{"peer_id": user, "content": text}]},
            )
            http.post(f"/v3/workspaces/w/sessions/s-{user}/peers", json={"ai": {}})

        def ask(**confine: Any) -> str:
            body = {"query": "what is my code word?", "target": "bob", **confine}
            return str(http.post("/v3/workspaces/w/peers/ai/chat", json=body).json()["content"])

        assert "ZEBRA42" in ask()  # the shared asker is in carol's session too
        assert "ZEBRA42" not in ask(filters={"session_id": {"in": ["s-bob"]}})
        assert "ZEBRA42" not in ask(session_id="s-bob")
        alone = http.post("/v3/workspaces/w/peers/bob/chat", json={"query": "code word?"})
        assert "ZEBRA42" not in str(alone.json()["content"])  # bob is only in his own session
