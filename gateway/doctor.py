"""Health checks behind ``mnemogate doctor``: each says what is wrong and how to fix it."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import httpx
import redis

from gateway.errors import LLMError, MnemogateError
from gateway.fsutil import ensure_private_dir
from gateway.history.db import Database
from gateway.llm.client import LLMClient
from gateway.memory.store import MemoryStore
from gateway.provider_scopes import provider_services
from gateway.redaction import safe_url
from gateway.settings import LLMSettings, Settings
from providers.registry import load_provider

Status = Literal["ok", "warn", "fail"]


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""

    def line(self) -> str:
        mark = {"ok": "✓", "warn": "!", "fail": "✗"}[self.status]
        text = f"{mark} {self.name}: {self.detail}"
        return f"{text}\n    fix: {self.fix}" if self.fix else text


def check_home(settings: Settings) -> Check:
    try:
        ensure_private_dir(settings.home)
    except OSError as exc:
        return Check(
            "data directory",
            "fail",
            f"{settings.home}: {exc}",
            "set MNEMOGATE_HOME to a directory you can write",
        )
    if not os.access(settings.home, os.W_OK):
        return Check(
            "data directory",
            "fail",
            f"{settings.home} is not writable",
            "fix its permissions or set MNEMOGATE_HOME elsewhere",
        )
    return Check("data directory", "ok", str(settings.home))


def check_sqlite() -> Check:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE p USING fts5(x, tokenize='porter unicode61')")
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
    except sqlite3.Error as exc:
        return Check(
            "sqlite",
            "fail",
            f"SQLite {sqlite3.sqlite_version}: {exc}",
            "use a Python built against SQLite ≥ 3.34 with FTS5 enabled",
        )
    finally:
        conn.close()
    return Check("sqlite", "ok", f"SQLite {sqlite3.sqlite_version} with FTS5 and trigram")


def check_state_db(settings: Settings) -> Check:
    try:
        db = Database(settings.state_db)
    except MnemogateError as exc:
        return Check("state.db", "fail", str(exc), "check the file and disk space")
    try:
        version = db.schema_version
        problems = db.quick_check()
    finally:
        db.close()
    if problems:
        shown = "; ".join(problems[:3]) + (
            f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
        )
        return Check(
            "state.db",
            "fail",
            f"{settings.state_db} is damaged: {shown}",
            "stop the gateway and workers, keep a copy of the file, then recover it "
            "(`sqlite3 state.db .recover | sqlite3 state-recovered.db`) or restore a backup",
        )
    return Check("state.db", "ok", f"{settings.state_db} (schema v{version}, quick_check ok)")


def check_memory_files(settings: Settings) -> Check:
    problems = MemoryStore(settings.home, settings.memory).audit()
    if not problems:
        return Check("memory files", "ok", "every MEMORY.md/USER.md readable and within its limit")
    shown = "; ".join(problems[:3]) + (f" (+{len(problems) - 3} more)" if len(problems) > 3 else "")
    return Check(
        "memory files",
        "warn",
        shown,
        "re-save a file as UTF-8 or empty it (`mnemogate memory reset`); trim one over its "
        "limit with `mnemogate memory show|remove` — only entries within the limit reach the "
        "prompt meanwhile",
    )


def check_redis(settings: Settings) -> Check:
    client = redis.Redis.from_url(settings.redis_url, socket_connect_timeout=2, socket_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        return Check(
            "redis",
            "warn",
            f"{safe_url(settings.redis_url)} did not answer ({exc})",
            "start Redis or set MNEMOGATE_REDIS_URL; turns still work without "
            "it, background jobs wait in the outbox",
        )
    finally:
        client.close()
    return Check("redis", "ok", safe_url(settings.redis_url))


async def check_llm(name: str, llm: LLMSettings, env: str) -> Check:
    if not llm.configured:
        return Check(
            name,
            "fail",
            "not configured",
            f"set {env}__BASE_URL (e.g. http://127.0.0.1:11434/v1 for Ollama) and {env}__MODEL",
        )
    async with LLMClient(llm, role=name) as client:
        try:
            detail = await client.ping()
        except LLMError as exc:
            return Check(
                name,
                "fail",
                str(exc),
                "start the model server or fix the URL / API key",
            )
    return Check(name, "ok", f"{llm.base_url} model {llm.model}: {detail}")


TELEGRAM_API = "https://api.telegram.org/bot"
DISCORD_API = "https://discord.com/api/v10"


def check_telegram(settings: Settings) -> Check | None:
    token = settings.telegram.bot_token
    if token is None:
        return None
    base = settings.telegram.base_url or TELEGRAM_API
    try:
        response = httpx.get(f"{base}{token.get_secret_value()}/getMe", timeout=10)
        data = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        return Check(
            "telegram",
            "fail",
            f"{base}…/getMe: {type(exc).__name__}",
            "check network access or MNEMOGATE_TELEGRAM__BASE_URL",
        )
    if not data.get("ok"):
        return Check(
            "telegram",
            "fail",
            str(data.get("description", "token refused")),
            "check TELEGRAM_BOT_TOKEN (from @BotFather)",
        )
    return Check("telegram", "ok", f"bot @{data['result'].get('username')}")


def check_discord(settings: Settings) -> Check | None:
    token = settings.discord.bot_token
    if token is None:
        return None
    base = settings.discord.api_base_url or DISCORD_API
    try:
        response = httpx.get(
            f"{base}/users/@me",
            timeout=10,
            headers={"Authorization": f"Bot {token.get_secret_value()}"},
        )
    except httpx.HTTPError as exc:
        return Check(
            "discord",
            "fail",
            f"{base}/users/@me: {type(exc).__name__}",
            "check network access or MNEMOGATE_DISCORD__API_BASE_URL",
        )
    if response.status_code != 200:
        return Check(
            "discord",
            "fail",
            f"HTTP {response.status_code} from /users/@me",
            "check DISCORD_BOT_TOKEN and that the bot has the message-content intent",
        )
    return Check("discord", "ok", f"bot {response.json().get('username')}")


def check_provider(settings: Settings) -> Check | None:
    name = settings.memory.provider
    if name is None:
        return None
    try:
        provider = load_provider(name, settings)
    except MnemogateError as exc:
        return Check("provider", "fail", str(exc), "fix memory.provider or install the plugin")
    db: Database | None = None
    try:
        # The provider gets what the gateway lends it (a fact store on state.db, the scope
        # registry), so its health check reaches the same storage a turn would.
        db = Database(settings.state_db)
        provider.attach(provider_services(db))
        if not provider.is_available():
            return Check(
                "provider",
                "fail",
                f"{name} is not available (missing settings?)",
                f"run `mnemogate memory setup {name}`",
            )
        detail = provider.health()
    except Exception as exc:
        return Check(
            "provider",
            "fail",
            f"{name}: {type(exc).__name__}: {exc}",
            "check the provider's server and credentials",
        )
    finally:
        provider.shutdown()
        if db is not None:
            db.close()
    return Check("provider", "ok", f"{name}: {detail}")


def run_checks(settings: Settings) -> list[Check]:
    sync_checks: list[Callable[[], Check]] = [
        lambda: check_home(settings),
        check_sqlite,
        lambda: check_state_db(settings),
        lambda: check_memory_files(settings),
        lambda: check_redis(settings),
    ]
    optional: list[Callable[[], Check | None]] = [
        lambda: check_telegram(settings),
        lambda: check_discord(settings),
        lambda: check_provider(settings),
    ]
    checks = [Check("config", "ok", "loaded and valid")]
    checks.extend(check() for check in sync_checks)
    checks.append(asyncio.run(check_llm("llm", settings.llm, "MNEMOGATE_LLM")))
    if settings.aux is not settings.llm:
        checks.append(asyncio.run(check_llm("aux_llm", settings.aux, "MNEMOGATE_AUX_LLM")))
    checks.extend(c for c in (check() for check in optional) if c is not None)
    return checks
