"""Running ``brv`` for one scope: argv only, own cwd and HOME, a timeout, a killed group.

The child gets a small environment (PATH, HOME, locale and ``BRV_API_KEY`` when set), not
the gateway's: the gateway's secrets are none of the CLI's business.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from providers.service import ServiceError

_PASSED_ENV = ("PATH", "LANG", "LC_ALL", "TZ", "NODE_OPTIONS")


@dataclass(frozen=True, slots=True)
class ScopeDirs:
    """Where one scope's ``brv`` lives: ``root/work`` (cwd), ``root/home``, ``root/pending``."""

    root: Path

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def pending(self) -> Path:
        return self.root / "pending"

    def create(self) -> None:
        for path in (self.root, self.work, self.home, self.pending):
            path.mkdir(mode=0o700, parents=True, exist_ok=True)


class Brv:
    """The ``brv`` executable; every run names the scope's directories explicitly."""

    def __init__(self, command: str, api_key: str | None = None) -> None:
        self.command = command
        self.api_key = api_key

    def executable(self) -> str | None:
        return shutil.which(self.command)

    def run(self, args: list[str], dirs: ScopeDirs, timeout_s: float) -> str:
        """``brv <args>``'s stdout; ServiceError on a missing CLI, a timeout or a failure."""
        exe = self.executable()
        if exe is None:
            raise ServiceError(
                f"{self.command!r} not found; install it: npm install -g byterover-cli"
            )
        dirs.create()
        env = {key: os.environ[key] for key in _PASSED_ENV if key in os.environ}
        env["HOME"] = str(dirs.home)
        if self.api_key:
            env["BRV_API_KEY"] = self.api_key
        try:
            child = subprocess.Popen(
                [exe, *args],
                cwd=dirs.work,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group, so a timeout kills it all
            )
        except OSError as exc:
            raise ServiceError(f"cannot start {self.command}: {exc}") from exc
        try:
            out, err = child.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(child)
            raise ServiceError(f"brv {args[0]} timed out after {timeout_s:g} s") from None
        except BaseException:
            _kill_group(child)
            raise
        stdout = out.decode("utf-8", "replace").strip()
        stderr = err.decode("utf-8", "replace").strip()
        if child.returncode != 0:
            detail = (stderr or stdout or "no output")[:300]
            raise ServiceError(f"brv {args[0]} exited {child.returncode}: {detail}")
        return stdout


def _kill_group(child: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)
    child.communicate()
