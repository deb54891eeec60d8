"""The base of the fake JSON services itself: route table, recording, faults, restart."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from tests.fakes.http_fake import Answer, FakeHTTPServer, Request

pytestmark = pytest.mark.integration


class Counter(FakeHTTPServer):
    """A write (``POST /items/<name>``) and a read (``GET /items``), the smallest stateful API."""

    name = "fake-counter"
    invalid_status = 400

    def __init__(self, port: int = 0) -> None:
        super().__init__(port)
        self.items: list[str] = []

    def add(self, match: re.Match[str], r: Request) -> Answer:
        self.items.append(f"{match['name']}×{r.body['times']}")
        return 201, {"count": len(self.items)}

    def list_items(self, match: re.Match[str], r: Request) -> Answer:
        return 200, {"items": self.items, "sort": r.arg("sort")}

    routes = (
        ("POST", re.compile(r"/items/(?P<name>\w+)"), add),
        ("GET", re.compile(r"/items"), list_items),
    )


@pytest.fixture
def fake() -> Iterator[Counter]:
    with Counter() as server:
        yield server


@pytest.fixture
def http(fake: Counter) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fake.base_url, timeout=5) as client:
        yield client


def test_routes_answer_and_every_request_is_recorded_with_headers(
    fake: Counter, http: httpx.Client
) -> None:
    assert http.post("/items/tea", json={"times": 2}, headers={"X-Who": "al"}).status_code == 201
    listed = http.get("/items", params={"sort": "asc"})
    assert listed.json() == {"items": ["tea×2"], "sort": "asc"}
    assert http.get("/nothing").status_code == 404
    assert http.post("/items/tea", json={}).status_code == 400  # the route could not read it
    write = fake.calls("POST", "/items/tea")[0]
    assert (write.header("x-who"), write.body, write.status) == ("al", {"times": 2}, 201)
    assert [r.status for r in fake.requests] == [201, 200, 404, 400]
    assert fake.calls("GET", "/items")[0].query == {"sort": ["asc"]}


def test_a_fault_changes_nothing_and_names_its_status(fake: Counter, http: httpx.Client) -> None:
    fake.fail(1, status=503, method="POST", path_suffix="/tea", skip=1)
    assert http.post("/items/tea", json={"times": 1}).status_code == 201  # skipped
    assert http.get("/items").status_code == 200  # another method: not matched
    failed = http.post("/items/tea", json={"times": 2})
    assert failed.status_code == 503 and "503" in failed.json()["detail"]
    assert http.post("/items/tea", json={"times": 3}).status_code == 201  # used up
    assert fake.items == ["tea×1", "tea×3"]


def test_a_dropped_request_is_handled_but_never_answered(fake: Counter, http: httpx.Client) -> None:
    fake.drop(1, path_suffix="/tea")
    with pytest.raises(httpx.RemoteProtocolError):
        http.post("/items/tea", json={"times": 1})
    assert fake.items == ["tea×1"] and fake.requests[0].status == 0


def test_a_restart_comes_back_on_the_same_port() -> None:
    fake = Counter()
    with fake:
        url = fake.base_url
    with pytest.raises(httpx.ConnectError), httpx.Client(base_url=url, timeout=5) as http:
        http.get("/items")
    with fake, httpx.Client(base_url=fake.base_url, timeout=5) as http:
        assert fake.base_url == url and http.get("/items").status_code == 200
