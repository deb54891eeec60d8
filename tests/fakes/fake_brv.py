"""A fake ``brv`` executable for tests: records argv, cwd and HOME; canned behaviour.

:func:`install_fake_brv` writes a small Python script named ``brv`` into a directory (put it
on PATH). Each run appends ``{"argv", "cwd", "home", "env_keys"}`` as one JSON line to the
log file and then behaves as the JSON control file says, read at each run:

* ``{"mode": "ok"}`` (default) — ``curate -- TEXT`` appends TEXT to ``$PWD/tree.txt`` (the
  scope's "context tree"); ``query -- Q`` prints the tree's lines sharing a word with Q;
  ``status`` prints a status line with the tree's size;
* ``{"mode": "hang"}`` — sleeps far longer than any test timeout (and so must be killed);
* ``{"mode": "fail", "code": N, "stderr": "…"}`` — exits N with that message.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SCRIPT = r"""#!__PYTHON__
import json, os, re, sys, time
log, control = __LOG__, __CONTROL__
with open(log, "a", encoding="utf-8") as out:
    out.write(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(), "home": os.environ.get("HOME"),
                          "env_keys": sorted(os.environ)}) + "\n")
try:
    with open(control, encoding="utf-8") as f:
        behaviour = json.load(f)
except FileNotFoundError:
    behaviour = {}
mode = behaviour.get("mode", "ok")
if mode == "hang":
    time.sleep(600)
if mode == "fail":
    sys.stderr.write(behaviour.get("stderr", "brv failed"))
    sys.exit(behaviour.get("code", 1))
args = sys.argv[1:]
tree = os.path.join(os.getcwd(), "tree.txt")
words = lambda text: set(re.findall(r"\w{3,}", text.lower()))
if args[:2] == ["curate", "--"]:
    with open(tree, "a", encoding="utf-8") as f:
        f.write(" ".join(args[2].split()) + "\n")
    print("Curated 1 item")
elif args[:2] == ["query", "--"]:
    lines = open(tree, encoding="utf-8").read().splitlines() if os.path.exists(tree) else []
    found = [line for line in lines if words(line) & words(args[2])]
    print("\n".join("- " + line for line in found) if found else "No results")
elif args == ["status"]:
    size = len(open(tree).read().splitlines()) if os.path.exists(tree) else 0
    print(f"brv 9.9.9 (fake); context tree: {size} entries; cloud sync: off")
else:
    sys.stderr.write("unknown command: " + " ".join(args))
    sys.exit(2)
"""


class FakeBrv:
    """The installed fake: its directory (for PATH), its log and its control file."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.log = directory / "brv-calls.jsonl"
        self.control = directory / "brv-control.json"

    def set(self, **behaviour: Any) -> None:
        self.control.write_text(json.dumps(behaviour), encoding="utf-8")

    def calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]


def install_fake_brv(directory: Path) -> FakeBrv:
    directory.mkdir(parents=True, exist_ok=True)
    fake = FakeBrv(directory)
    text = (
        SCRIPT.replace("__PYTHON__", sys.executable)
        .replace("__LOG__", repr(str(fake.log)))
        .replace("__CONTROL__", repr(str(fake.control)))
    )
    path = directory / "brv"
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return fake
