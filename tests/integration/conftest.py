"""Integration fixtures: a clean Redis database per test and private throw-away Redis servers.

Shared Redis: ``redis://127.0.0.1:6379/9`` flushed before and after each test, plus a unique
``redis_prefix`` per test. When nothing answers on 6379, one private ``redis-server`` is
started for the session instead. Tests that stop and restart Redis get their own server.
``TEST_REDIS_PORT`` names another shared port; ``TEST_REDIS_PORT=0`` always starts a private
server, so several test runs on one machine never flush each other's database.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

SHARED_HOST = "127.0.0.1"
SHARED_PORT = int(os.environ.get("TEST_REDIS_PORT", "6379"))
TEST_DB = 9


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((SHARED_HOST, 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """A private ``redis-server`` on a free loopback port, without persistence."""

    def __init__(self, directory: Path, port: int | None = None) -> None:
        self.directory = directory
        self.port = port or free_port()
        self.process: subprocess.Popen[str] | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://{SHARED_HOST}:{self.port}/{db}"

    def start(self) -> None:
        if shutil.which("redis-server") is None:
            pytest.skip("redis-server is not installed")
        self.directory.mkdir(parents=True, exist_ok=True)
        process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                SHARED_HOST,
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert process.stdout is not None
        # The server says when it listens: read its log instead of polling the port.
        for line in process.stdout:
            if "Ready to accept connections" in line:
                break
        else:
            process.wait(timeout=10)
            raise RuntimeError(f"redis-server on port {self.port} did not start")
        threading.Thread(target=process.stdout.read, daemon=True).start()  # keep draining
        self.process = process

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def _answers(url: str) -> bool:
    client = redis.Redis.from_url(url, socket_connect_timeout=1)
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


@pytest.fixture(scope="session")
def redis_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``redis://host:port`` of the shared server (6379, or a private one started here)."""
    if SHARED_PORT and _answers(f"redis://{SHARED_HOST}:{SHARED_PORT}/0"):
        yield f"redis://{SHARED_HOST}:{SHARED_PORT}"
        return
    server = RedisServer(tmp_path_factory.mktemp("redis-shared"))
    server.start()
    try:
        yield f"redis://{SHARED_HOST}:{server.port}"
    finally:
        server.stop()


def _flush(url: str) -> None:
    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()


@pytest.fixture
def redis_url(redis_base: str) -> Iterator[str]:
    """A Redis database emptied before and after the test."""
    url = f"{redis_base}/{TEST_DB}"
    _flush(url)
    yield url
    _flush(url)


@pytest.fixture
def redis_prefix() -> str:
    return f"t{secrets.token_hex(4)}"


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A throw-away Redis the test may stop and start again (same port)."""
    server = RedisServer(tmp_path / "redis-private")
    server.start()
    yield server
    server.stop()
