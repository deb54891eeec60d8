"""No session_search call of one tenant ever returns another tenant's data (property test)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.errors import NotFound
from gateway.history.db import Database
from gateway.history.fts import tenant_token
from gateway.history.search import SessionSearch
from gateway.history.search_tool import SessionSearchTool
from gateway.history.store import NewMessage, SessionStore
from gateway.tenants import TenantId

pytestmark = pytest.mark.integration

TENANT_IDS = [
    "telegram:1",
    "telegram:11",
    "telegram:111",
    "discord:1",
    "discord:11",
    "console:a_b",
    "console:a-b",
    "console:a_2Db",
    "console:é",
    "console:e",
    "console:alice",
    "console:ALICE",
    "telegram:-100",
    "discord:99999999999",
]
SHARED = [
    "deploy script",
    "coffee beans",
    "部署脚本",
    "樱花公园",
    "weekly report",
    "python 部署",
    "the kraken",
    "release notes",
    "holiday plans",
    "会议记录",
]
CJK_CANARIES = [
    "鹦鹉",
    "骆驼",
    "企鹅",
    "熊猫",
    "孔雀",
    "海豚",
    "狐狸",
    "袋鼠",
    "斑马",
    "刺猬",
    "蜻蜓",
    "蝴蝶",
    "麋鹿",
    "犀牛",
]


@dataclass(repr=False)
class World:
    db: Database
    search: SessionSearch
    tenants: list[TenantId]
    canaries: dict[TenantId, tuple[str, str]]
    sessions: dict[str, TenantId] = field(default_factory=dict)
    messages: dict[int, TenantId] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"World({len(self.tenants)} tenants, {len(self.sessions)} sessions)"

    def group_scope(self, tenant: TenantId) -> str:
        return f"{tenant.namespace}.grp"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    db = Database(tmp_path_factory.mktemp("isolation") / "state.db")
    store = SessionStore(db)
    tenants = [TenantId.parse(t) for t in TENANT_IDS]
    canaries = {t: (f"canary{i}zq", CJK_CANARIES[i]) for i, t in enumerate(tenants)}
    w = World(db, SessionSearch(db), tenants, canaries)
    clock = 1_690_000_000.0
    for i, tenant in enumerate(tenants):
        neighbour = tenants[(i + 1) % len(tenants)]
        latin, cjk = canaries[tenant]
        parent = None
        for n, (chat_type, scope) in enumerate(
            [("dm", tenant.namespace), ("dm", tenant.namespace), ("group", w.group_scope(tenant))]
        ):
            clock += 10
            record = store.create_session(
                tenant,
                session_key=f"k{n}",
                source="telegram",
                system_prompt="",
                tools_json="[]",
                scope_key=scope,
                chat_type=chat_type,
                started_at=clock,
                parent_id=parent if n == 1 else None,
                title=f"{latin} {n}",
            )
            parent = record.id
            texts = [f"{SHARED[(i + n + k) % len(SHARED)]} {latin} {cjk}" for k in range(4)]
            # Text naming the neighbour (its token, namespace and id) belongs to *this* tenant.
            texts.append(f"{tenant_token(neighbour)} {neighbour.namespace} {neighbour}")
            ids = store.append_messages(
                tenant,
                record.id,
                [
                    NewMessage(
                        "user" if k % 2 == 0 else "assistant",
                        text,
                        name=f"{latin}-{cjk}" if k % 2 == 0 else None,
                    )
                    for k, text in enumerate(texts)
                ],
            )
            w.sessions[record.id] = tenant
            w.messages.update(dict.fromkeys(ids, tenant))
    yield w
    db.close()


def _foreign_markers(world: World, tenant: TenantId) -> list[str]:
    return [m for t, pair in world.canaries.items() if t != tenant for m in pair]


def _assert_only_own(world: World, tenant: TenantId, data: object) -> None:
    """No other tenant's canary in the answer (the echoed query text aside)."""
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k != "query"}
    text = json.dumps(data, ensure_ascii=False)
    for marker in _foreign_markers(world, tenant):
        assert marker not in text, (tenant, marker)


def _query_text(world: World) -> st.SearchStrategy[str]:
    words = (
        [m for pair in world.canaries.values() for m in pair]
        + [tenant_token(t) for t in world.tenants]
        + [t.namespace for t in world.tenants]
        + [str(t) for t in world.tenants]
        + SHARED
    )
    word = st.sampled_from(words)
    return st.one_of(
        word,
        st.lists(word, min_size=1, max_size=4).map(" OR ".join),
        st.lists(word, min_size=1, max_size=3).map(" ".join),
        word.map(lambda w: f'"{w}"'),
        word.map(lambda w: f"{w[:3]}*"),
        word.map(lambda w: f"tenant_tok:{w}"),
        st.text(max_size=60),
    )


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_search_returns_only_own_sessions(world: World, data: st.DataObject) -> None:
    tenant = data.draw(st.sampled_from(world.tenants))
    query = data.draw(_query_text(world))
    current = data.draw(st.sampled_from([None, *world.sessions]))
    for chat_type, scope in (("dm", tenant.namespace), ("group", world.group_scope(tenant))):
        result = world.search.search(
            tenant,
            query,
            scope_key=scope,
            chat_type=chat_type,
            current_session_id=current,
            limit=10,
        )
        for found in result.sessions:
            assert world.sessions[found.id] == tenant
            for message in found.ordered():
                assert world.messages[message.id] == tenant
        _assert_only_own(world, tenant, result.to_dict())


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_read_recent_and_tool_stay_inside_the_tenant(world: World, data: st.DataObject) -> None:
    tenant = data.draw(st.sampled_from(world.tenants))
    session_id = data.draw(st.sampled_from(list(world.sessions)))
    message_id = data.draw(st.sampled_from(list(world.messages)))
    own = world.sessions[session_id] == tenant
    if own:
        view = world.search.read(tenant, session_id, window=50)
        _assert_only_own(world, tenant, view.to_dict())
    else:
        with pytest.raises(NotFound):
            world.search.read(tenant, session_id)
    if own and world.messages[message_id] != tenant:
        with pytest.raises(NotFound):
            world.search.read(tenant, session_id, around_message_id=message_id)
    for chat_type, scope in (("dm", tenant.namespace), ("group", world.group_scope(tenant))):
        recent = world.search.recent(
            tenant, scope_key=scope, chat_type=chat_type, limit=50, exclude_lineage_of=session_id
        )
        assert all(world.sessions[s.session_id] == tenant for s in recent)
        _assert_only_own(world, tenant, [s.to_dict() for s in recent])
        tool = SessionSearchTool(
            world.search,
            tenant=tenant,
            scope_key=scope,
            chat_type=chat_type,
            current_session_id=session_id,
        )
        other = data.draw(st.sampled_from(world.tenants))
        for args in (
            {"session_id": session_id, "around_message_id": message_id},
            {"query": world.canaries[other][0], "tenant": str(other)},
            {},
        ):
            _assert_only_own(world, tenant, json.loads(tool.handle(args)))


def test_each_tenant_finds_its_own_canaries(world: World) -> None:
    for tenant in world.tenants:
        for canary in world.canaries[tenant]:
            result = world.search.search(
                tenant, canary, scope_key=tenant.namespace, chat_type="dm", limit=10
            )
            assert result.sessions, (tenant, canary)
            assert {world.sessions[h.id] for h in result.sessions} == {tenant}
        # The neighbour's token typed as text finds this tenant's own message, nothing else.
        neighbour_token = tenant_token(
            world.tenants[(world.tenants.index(tenant) + 1) % len(world.tenants)]
        )
        hits = world.search.search(
            tenant, neighbour_token, scope_key=tenant.namespace, chat_type="dm"
        ).sessions
        assert hits and all(world.sessions[h.id] == tenant for h in hits)
