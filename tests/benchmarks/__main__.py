"""Run every benchmark with its documented defaults: ``python -m tests.benchmarks``."""

from __future__ import annotations

import subprocess
import sys

BENCHMARKS = ("bench_search", "bench_recall", "bench_turns", "bench_workers")


def main() -> None:
    failed = []
    for name in BENCHMARKS:
        print(f"== {name} ==", flush=True)
        code = subprocess.call([sys.executable, "-m", f"tests.benchmarks.{name}", *sys.argv[1:]])
        if code:
            failed.append(name)
    if failed:
        raise SystemExit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
