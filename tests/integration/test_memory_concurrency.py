"""Concurrent writers on one memory file: threads and spawned processes, no lost update."""

from __future__ import annotations

import functools
import multiprocessing
import threading
from collections.abc import Callable
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

from gateway.memory.entries import is_canonical, parse_entries
from gateway.memory.operations import Operation
from gateway.memory.store import MemoryStore
from gateway.settings import MemorySettings
from gateway.tenants import MemoryScope, TenantId

pytestmark = pytest.mark.integration

SCOPE = MemoryScope.private(TenantId.parse("console:shared"))
LIMITS = MemorySettings(memory_char_limit=100_000)
THREADS = 6
PROCESSES = 3
PER_WRITER = 12


def _write_all(home: Path, name: str, removes: list[str]) -> None:
    """Add ``PER_WRITER`` entries named after the writer, removing one of ``removes`` each
    time while they last; every write must succeed."""
    store = MemoryStore(home, LIMITS)
    for index in range(PER_WRITER):
        operations = [Operation("add", content=f"{name} fact {index}")]
        if index < len(removes):
            operations.append(Operation("remove", old_text=removes[index]))
        result = store.apply(SCOPE, "memory", operations, origin="user-chat")
        if not result.success:
            raise AssertionError(f"{name}: {result.error}")


def _process_writer(home: str, name: str, removes: list[str], start: Barrier) -> None:
    start.wait(timeout=60)
    _write_all(Path(home), name, removes)


class FileWatcher:
    """Reads the memory file in a loop while writers run; records any torn or bad read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.stop = threading.Event()
        self.reads = 0
        self.bad: list[str] = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                text = self.path.read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            self.reads += 1
            if not is_canonical(text):
                self.bad.append(text)

    def __enter__(self) -> FileWatcher:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=30)


def _run_writers(home: Path, plan: dict[str, list[str]], processes: set[str]) -> None:
    """Start every writer in ``plan`` at once: names in ``processes`` as spawned processes,
    the others as threads of this process."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(len(processes) + 1)
    children = [
        context.Process(target=_process_writer, args=(str(home), name, plan[name], barrier))
        for name in sorted(processes)
    ]
    for child in children:
        child.start()
    errors: list[BaseException] = []

    def guarded(target: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                target()
            except BaseException as exc:
                errors.append(exc)

        return run

    threads = [
        threading.Thread(target=guarded(functools.partial(_write_all, home, name, plan[name])))
        for name in plan
        if name not in processes
    ]
    barrier.wait(timeout=120)
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for child in children:
        child.join(timeout=120)
    assert errors == []
    assert [child.exitcode for child in children] == [0] * len(children)


def test_threads_and_processes_lose_no_update(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, LIMITS)
    names = [f"thread{i}" for i in range(THREADS)] + [f"proc{i}" for i in range(PROCESSES)]
    processes = {name for name in names if name.startswith("proc")}
    with FileWatcher(store.path(SCOPE, "memory")) as watcher:
        _run_writers(tmp_path, {name: [] for name in names}, processes)
    expected = {f"{name} fact {i}" for name in names for i in range(PER_WRITER)}
    final = store.path(SCOPE, "memory").read_text(encoding="utf-8")
    assert set(parse_entries(final)) == expected
    assert len(parse_entries(final)) == len(expected)
    assert is_canonical(final)
    assert watcher.reads > 0 and watcher.bad == []
    assert {entry.origin for entry in store.read(SCOPE, "memory")} == {"user-chat"}


def test_concurrent_adds_and_removes_keep_every_effect(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, LIMITS)
    names = ["thread0", "thread1", "thread2", "proc0", "proc1"]
    seeds = {name: [f"seed {name} #{i}" for i in range(PER_WRITER // 2)] for name in names}
    initial = [Operation("add", content=s) for group in seeds.values() for s in group]
    assert store.apply(SCOPE, "memory", initial, origin="import").success
    with FileWatcher(store.path(SCOPE, "memory")) as watcher:
        _run_writers(tmp_path, seeds, {"proc0", "proc1"})
    remaining = [entry.text for entry in store.read(SCOPE, "memory")]
    assert not [text for text in remaining if text.startswith("seed")]
    assert sorted(remaining) == sorted(
        f"{name} fact {i}" for name in names for i in range(PER_WRITER)
    )
    assert watcher.bad == []
