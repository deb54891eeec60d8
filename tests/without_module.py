"""Run Python code in a subprocess where some installed packages appear not to be installed.

A provider's optional extra may be absent on an operator's machine; its module must still
import, offer its tools and let ``memory setup`` name the extra. This hides the packages from
the import system (a meta-path finder that refuses them, and ``importlib.util.find_spec``
answering None for them) before running ``code`` from the repository root.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PRELUDE = """
import importlib.util, sys
HIDDEN = {hidden!r}
def hidden(name):
    return name.split(".")[0] in HIDDEN
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if hidden(name):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Refuse())
real_find_spec = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: None if hidden(name) else real_find_spec(name, *a)
"""


def run_without(hidden: tuple[str, ...], code: str) -> subprocess.CompletedProcess[str]:
    script = PRELUDE.format(hidden=set(hidden)) + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=60
    )
