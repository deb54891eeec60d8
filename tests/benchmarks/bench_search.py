"""Benchmark of session_search: ingest rate, tenant-scoped query latency and DB size.

    .venv/bin/python -m tests.benchmarks.bench_search [--messages 1000000 --tenants 10000]

Builds a state.db in a temporary folder with ``--messages`` messages spread over
``--tenants`` tenants (English, Chinese and mixed text, several sessions per tenant, some
continuations and group sessions). Turns arrive interleaved across tenants, as they would
in production, and are written in batches with the same INSERT statements and the same
:func:`gateway.history.fts.index_messages` call as :class:`SessionStore`, so the rows are
identical; the per-turn SessionStore path is timed separately on a small sample. Then it
runs ``--queries`` searches (one to three words, some natural-language questions) for
random tenants and prints p50/p95/p99 latency. Target (SPEC §13): p50 ≤ 5 ms, p95 ≤ 20 ms.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from gateway.history.db import Database
from gateway.history.fts import IndexRow, index_messages
from gateway.history.search import SessionSearch
from gateway.history.store import NewMessage, SessionStore, new_session_id
from gateway.tenants import TenantId


def _words(text: str) -> list[str]:
    return text.split()


EN_WORDS = _words("""deploy script server database backup migration release branch merge review test
pipeline docker kubernetes cluster node memory cache redis queue worker latency budget invoice
meeting agenda calendar flight hotel passport visa train ticket museum concert guitar piano
painting novel poem recipe dinner lunch breakfast coffee tea garden plant tomato basil
running marathon yoga swimming bicycle hiking mountain lake river beach camera photo
birthday gift wedding holiday vacation weekend project deadline report slide spreadsheet
contract lawyer doctor dentist medicine allergy vitamin sleep dream anxiety stress therapy
budget salary mortgage rent apartment landlord neighbour kitchen bathroom window door
printer laptop keyboard monitor battery charger phone router wifi password account login
python rust golang javascript typescript compiler debugger profiler benchmark index query
search vector embedding model prompt token context summary title session history archive
invoice receipt refund discount coupon order delivery package warehouse shipping tracking
football basketball tennis chess puzzle game movie series episode actor director festival
language grammar vocabulary lesson teacher student exam homework library bookshelf
""")
EN_FILLER = _words("""the a to and of in that is for it with on was we you this be are have not at
but as our they so if can will just what about there would me my your do""")
ZH_WORDS = _words(
    """
部署 脚本 服务器 数据库 备份 迁移 发布 分支 合并 测试 流水线 集群 内存 缓存 队列 延迟
预算 发票 会议 日程 航班 酒店 护照 签证 火车 门票 博物馆 演唱会 吉他 钢琴 绘画 小说 诗歌
菜谱 晚饭 午饭 早餐 咖啡 茶 花园 植物 番茄 跑步 马拉松 瑜伽 游泳 自行车 徒步 山 湖 河
海滩 相机 照片 生日 礼物 婚礼 假期 周末 项目 截止 报告 合同 律师 医生 牙医 药 过敏 维生素
睡眠 梦 焦虑 压力 工资 房租 公寓 房东 邻居 厨房 窗户 打印机 电脑 键盘 显示器 电池 手机
密码 账号 搜索 向量 模型 总结 标题 历史 退款 快递 包裹 足球 篮球 网球 象棋 电影 演员 导演
语法 词汇 老师 学生 考试 作业 图书馆 科幻 清蒸鲈鱼 辣子鸡 公园 樱花 松鼠
"""
)
ZH_FILLER = _words("我 你 我们 的 了 是 在 和 也 很 想 今天 明天 昨天 一起 可以 因为 所以")
QUESTIONS_EN = ("what did we say about {}?", "do you remember the {} thing?")
QUESTIONS_ZH = ("我们之前聊过{}吗？", "你还记得{}吗")


def _zipf(words: list[str], s: float = 1.05) -> list[float]:
    total, weights = 0.0, []
    for rank in range(1, len(words) + 1):
        total += 1.0 / rank**s
        weights.append(total)
    return weights


@dataclass
class Tenant:
    tenant: TenantId
    chinese: bool
    name: str
    words: list[str] = field(default_factory=list)


class Corpus:
    """Deterministic text: Zipf-distributed words, per-tenant language, sampled query words."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.en_cum = _zipf(EN_WORDS)
        self.zh_cum = _zipf(ZH_WORDS)

    def text(self, who: Tenant) -> str:
        rng = self.rng
        if who.chinese:
            words = rng.choices(ZH_WORDS, cum_weights=self.zh_cum, k=rng.randint(2, 6))
            parts = [f"{rng.choice(ZH_FILLER)}{w}" for w in words]
            if rng.random() < 0.2:
                parts.append(rng.choice(EN_WORDS))
            text = "，".join(parts) + "。"
        else:
            words = rng.choices(EN_WORDS, cum_weights=self.en_cum, k=rng.randint(3, 10))
            fill = rng.choices(EN_FILLER, k=rng.randint(3, 10))
            mixed = words + fill
            rng.shuffle(mixed)
            text = " ".join(mixed).capitalize() + "."
        if len(who.words) < 12 and rng.random() < 0.3:
            who.words.append(rng.choice(words))
        return text

    def query(self, who: Tenant) -> str:
        rng = self.rng
        own = who.words or ["nothing"]
        pool = ZH_WORDS if who.chinese else EN_WORDS
        picks = [
            rng.choice(own) if rng.random() < 0.7 else rng.choice(pool)
            for _ in range(rng.choice((1, 1, 2, 2, 3)))
        ]
        if rng.random() < 0.1:
            template = rng.choice(QUESTIONS_ZH if who.chinese else QUESTIONS_EN)
            return template.format(picks[0])
        return " ".join(dict.fromkeys(picks))


def _turns(n_tenants: int, n_messages: int, rng: random.Random) -> Iterator[tuple[int, int]]:
    """(tenant index, turn number) in interleaved rounds: every tenant speaks each round."""
    per_tenant = max(1, n_messages // (2 * n_tenants))
    order = list(range(n_tenants))
    for turn in range(per_tenant):
        rng.shuffle(order)
        for index in order:
            yield index, turn


def ingest(
    db: Database, tenants: list[Tenant], corpus: Corpus, n_messages: int, batch_turns: int = 4000
) -> int:
    """Write the corpus; returns the number of messages stored."""
    conn = db.connection()
    live: dict[int, tuple[str, str, str]] = {}
    stored = 0
    clock = 1_600_000_000.0
    turns = _turns(len(tenants), n_messages, corpus.rng)
    done = False
    while not done:
        conn.execute("BEGIN IMMEDIATE")
        for _ in range(batch_turns):
            step = next(turns, None)
            if step is None:
                done = True
                break
            index, turn = step
            who = tenants[index]
            clock += 0.01
            if turn % 10 == 0:
                live[index] = _new_session(conn, who, live.get(index), clock, corpus.rng)
            session_id, _chat_type, _scope = live[index]
            stored += _insert_turn(conn, who, session_id, corpus, clock)
        conn.execute("COMMIT")
    return stored


def _new_session(
    conn: sqlite3.Connection,
    who: Tenant,
    previous: tuple[str, str, str] | None,
    clock: float,
    rng: random.Random,
) -> tuple[str, str, str]:
    tenant = str(who.tenant)
    if previous is None:
        conn.execute(
            "INSERT INTO tenants (id, namespace, created_at) VALUES (?, ?, ?)",
            (tenant, who.tenant.namespace, clock),
        )
    continuation = previous is not None and rng.random() < 0.3
    group = not continuation and rng.random() < 0.2
    chat_type = previous[1] if previous and continuation else ("group" if group else "dm")
    scope = (
        f"{who.tenant.namespace}.grp-{rng.randint(1, 3)}"
        if chat_type == "group"
        else (who.tenant.namespace)
    )
    parent = previous[0] if previous and continuation else None
    session_id = new_session_id(clock)
    conn.execute(
        "INSERT INTO sessions (id, tenant_id, session_key, source, chat_id, chat_type, "
        "scope_key, title, parent_id, started_at, system_prompt, tools_json, model, "
        "incognito) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            session_id,
            tenant,
            f"telegram:{chat_type}:{scope}",
            "telegram",
            scope,
            chat_type,
            scope,
            None,
            parent,
            clock,
            "",
            "[]",
            "bench",
            0,
        ),
    )
    return session_id, chat_type, scope


def _insert_turn(
    conn: sqlite3.Connection, who: Tenant, session_id: str, corpus: Corpus, clock: float
) -> int:
    rows = []
    for role, name in (("user", who.name), ("assistant", None)):
        content = corpus.text(who)
        cur = conn.execute(
            "INSERT INTO messages (session_id, tenant_id, role, content, name, tool_calls, "
            "tool_call_id, timestamp, platform_message_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (session_id, str(who.tenant), role, content, name, None, None, clock, None),
        )
        assert cur.lastrowid is not None
        rows.append(IndexRow(cur.lastrowid, role, content, name))
    index_messages(conn, who.tenant, rows)
    return len(rows)


def store_path_rate(db: Database, tenants: list[Tenant], corpus: Corpus, turns: int) -> float:
    """Messages/s through SessionStore.record_turn (one transaction per turn)."""
    store = SessionStore(db)
    sample = tenants[: max(1, min(len(tenants), 50))]
    sessions = [
        store.create_session(
            t.tenant,
            session_key="bench",
            source="console",
            system_prompt="",
            tools_json="[]",
            scope_key=t.tenant.namespace,
        )
        for t in sample
    ]
    start = time.perf_counter()
    for i in range(turns):
        who, session = sample[i % len(sample)], sessions[i % len(sample)]
        store.record_turn(
            who.tenant,
            session.id,
            [
                NewMessage("user", corpus.text(who), name=who.name),
                NewMessage("assistant", corpus.text(who)),
            ],
        )
    return 2 * turns / (time.perf_counter() - start)


def run_queries(
    search: SessionSearch, tenants: list[Tenant], corpus: Corpus, n_queries: int
) -> tuple[list[float], int]:
    latencies: list[float] = []
    found = 0
    for _ in range(n_queries):
        who = corpus.rng.choice(tenants)
        query = corpus.query(who)
        start = time.perf_counter()
        result = search.search(
            who.tenant, query, scope_key=who.tenant.namespace, chat_type="dm", limit=3
        )
        latencies.append((time.perf_counter() - start) * 1000)
        found += bool(result.sessions)
    return latencies, found


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--tenants", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--store-turns", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dir", type=Path, help="keep state.db here instead of a temp dir")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        path = (args.dir or Path(tmp)) / "state.db"
        db = Database(path)
        corpus = Corpus(args.seed)
        tenants = [
            Tenant(TenantId.of("telegram", 10_000_000 + i), i % 10 < 3, f"User{i}")
            for i in range(args.tenants)
        ]
        start = time.perf_counter()
        stored = ingest(db, tenants, corpus, args.messages)
        elapsed = time.perf_counter() - start
        print(
            f"ingest: {stored:,} messages, {args.tenants:,} tenants in {elapsed:.1f} s "
            f"= {stored / elapsed:,.0f} messages/s (batched, 4000 turns per transaction)"
        )
        rate = store_path_rate(db, tenants, corpus, args.store_turns)
        print(
            f"ingest via SessionStore.record_turn (1 transaction per turn): {rate:,.0f} messages/s"
        )
        db.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        print(f"database size: {_size(path) / 1e6:,.1f} MB")
        search = SessionSearch(db)
        run_queries(search, tenants, corpus, min(200, args.queries))  # warm the page cache
        latencies, found = run_queries(search, tenants, corpus, args.queries)
        print(
            f"session_search: {len(latencies)} queries, {found} with results; "
            f"p50 {_percentile(latencies, 50):.2f} ms, p95 {_percentile(latencies, 95):.2f} ms, "
            f"p99 {_percentile(latencies, 99):.2f} ms, mean {statistics.fmean(latencies):.2f} ms"
        )
        db.close()


if __name__ == "__main__":
    main()
