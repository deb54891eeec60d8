"""The checks of ``deploy/test-image.sh``: the built image, run for real with podman.

``python -m tests.image.drive --image IMAGE [--compose]`` (the script calls it after the
build). On the host: a password-protected redis-server, the fake Telegram Bot API and the
fake LLM. In containers (uid 10001, read-only root, all capabilities dropped, host
network): ``mnemogate doctor``, a worker and the gateway, then a scripted Telegram
conversation whose background jobs the worker runs; the HEALTHCHECK; a clean SIGTERM stop.
With ``--compose``, ``deploy/compose.yaml`` under podman-compose on its own bridge network
(the fakes reached through a relay on the host), with a conversation and ``status``.
Prints what it checked; exits non-zero at the first failure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from tests.fakes.llm_server import FakeLLM
from tests.fakes.script import Script, tool_call
from tests.fakes.telegram_server import TOKEN, FakeTelegram

REPO = Path(__file__).resolve().parents[2]
ANA = 7001
HARDENED = ["--read-only", "--cap-drop=ALL", "--security-opt=no-new-privileges"]


def say(text: str) -> None:
    print(f"[image] {text}", flush=True)


def sh(*args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(args, capture_output=True, text=True, check=False, env=env)
    if check and done.returncode != 0:
        raise SystemExit(
            f"failed ({done.returncode}): {' '.join(args)}\n{done.stdout}{done.stderr}"
        )
    return done.stdout + done.stderr


def wait(check: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out: {what}")
        time.sleep(0.2)
    say(f"ok: {what}")


def http_status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=3) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Relay:
    """Forwards 0.0.0.0:<port> to 127.0.0.1:<target> so bridge-networked containers reach
    the fakes, which listen on loopback only."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.server = socket.create_server(("0.0.0.0", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            client, _ = self.server.accept()
            upstream = socket.create_connection(("127.0.0.1", self.target))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)


def start_redis(password: str, directory: Path) -> tuple[subprocess.Popen[str], int]:
    port = free_port()
    process = subprocess.Popen(
        [
            *("redis-server", "--port", str(port), "--bind", "127.0.0.1"),
            *("--requirepass", password, "--save", "", "--appendonly", "no"),
            *("--dir", str(directory)),
        ],
        stdout=subprocess.DEVNULL,
        text=True,
    )
    wait(lambda: sh("redis-cli", "-p", str(port), "ping", check=False).strip() != "", "redis")
    return process, port


def conversation_script() -> Script:
    """Turn 1 saves a memory entry via the tool, then answers; everything else says "ok"."""
    return Script(
        [
            tool_call("memory", {"action": "add", "target": "user", "content": "Ana loves tea"}),
            "Nice to meet you, Ana — noted that you love tea.",
        ],
        fallback=lambda body: "ok",
    )


def podman_run(image: str, name: str, env: dict[str, str], *args: str, detach: bool) -> str:
    flags = ["--rm"] if not detach else ["-d", "--name", name]
    env_flags = [f"--env={k}={v}" for k, v in env.items()]
    return sh(
        "podman", "run", *flags, "--network=host", *HARDENED, "--tmpfs=/tmp",
        f"--volume={name.split('-')[0]}-data:/data", *env_flags, image, *args,
    )  # fmt: skip


def run_containers(image: str, tg: FakeTelegram, llm: FakeLLM, redis_url: str) -> None:
    common = {
        "MNEMOGATE_REDIS_URL": redis_url,
        "MNEMOGATE_LLM__BASE_URL": llm.base_url,
        "MNEMOGATE_LLM__MODEL": "fake-model",
        "MNEMOGATE_MEMORY__PROVIDER": "",  # what compose passes when unset
        "MNEMOGATE_MEMORY__NUDGE_INTERVAL": "1",
        "MNEMOGATE_LOG__FORMAT": "json",
    }
    gateway_env = {
        **common,
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "MNEMOGATE_TELEGRAM__BASE_URL": tg.base_url,
        "MNEMOGATE_ACCESS__ALLOWED_USERS": f"telegram:{ANA}",
    }
    out = podman_run(image, "mgimg-doctor", gateway_env, "doctor", detach=False)
    say("ok: mnemogate doctor inside the image\n" + out.strip())
    gport, wport = free_port(), free_port()
    podman_run(
        image,
        "mgimg-worker",
        {**common, "MNEMOGATE_METRICS__LISTEN": f"127.0.0.1:{wport}"},
        "worker",
        "--name",
        "image-worker",
        detach=True,
    )
    podman_run(
        image,
        "mgimg-gateway",
        {**gateway_env, "MNEMOGATE_METRICS__LISTEN": f"127.0.0.1:{gport}"},
        "run",
        detach=True,
    )
    wait(lambda: http_status(f"http://127.0.0.1:{gport}/readyz") == 200, "gateway ready")
    wait(lambda: http_status(f"http://127.0.0.1:{wport}/readyz") == 200, "worker ready")
    assert sh("podman", "exec", "mgimg-gateway", "id", "-u").strip() == "10001"
    assert "TELEGRAM_BOT_TOKEN" not in sh("podman", "exec", "mgimg-worker", "env")
    tg.push_message(ANA, ANA, "hi, I'm Ana and I love tea")
    reply = tg.wait_for_sent(1, timeout=60)[-1].params["text"]
    assert "Ana" in reply, reply
    say(f"ok: Telegram conversation, reply {reply!r}")
    tg.push_message(ANA, ANA, "/memory")
    shown = tg.wait_for_sent(2, timeout=60)[-1].params["text"]
    assert "Ana loves tea" in shown, shown
    say("ok: the memory the model wrote is shown by /memory")

    def title_job_done() -> bool:
        with urllib.request.urlopen(f"http://127.0.0.1:{wport}/metrics", timeout=3) as r:
            text = r.read().decode()
        return 'mnemogate_jobs_total{kind="title",outcome="ok"} 1.0' in text

    wait(title_job_done, "the worker ran the title job (forked work horse)")
    sh("podman", "healthcheck", "run", "mgimg-gateway")
    say("ok: HEALTHCHECK passes")
    for name in ("mgimg-gateway", "mgimg-worker"):
        sh("podman", "stop", "--time", "60", name)
        code = sh("podman", "inspect", "--format", "{{.State.ExitCode}}", name).strip()
        assert code == "0", f"{name} exited {code}: {sh('podman', 'logs', name)}"
        sh("podman", "rm", name)
    say("ok: SIGTERM through tini: both exited 0")


def run_compose(tg: FakeTelegram, llm: FakeLLM) -> None:
    tg_relay, llm_relay = Relay(_port(tg.base_url)), Relay(_port(llm.base_url))
    host = "host.containers.internal"
    with tempfile.TemporaryDirectory() as tmp:
        env_file = Path(tmp) / ".env"
        env_file.write_text(
            f"REDIS_PASSWORD={secrets.token_hex(12)}\n"
            f"MNEMOGATE_LLM__BASE_URL=http://{host}:{llm_relay.port}/v1\n"
            "MNEMOGATE_LLM__MODEL=fake-model\n"
            f"TELEGRAM_BOT_TOKEN={TOKEN}\n"
            f"MNEMOGATE_ACCESS__ALLOWED_USERS=telegram:{ANA}\n"
        )
        environ = {**os.environ, **_read_env(env_file)}
        # the compose file has no Telegram URL override: add it for the gateway only
        override = Path(tmp) / "override.yaml"
        override.write_text(
            "services:\n  gateway:\n    environment:\n"
            f"      MNEMOGATE_TELEGRAM__BASE_URL: http://{host}:{tg_relay.port}/bot\n"
        )
        compose = ["podman-compose", "-p", "mgimgtest", "-f", str(REPO / "deploy/compose.yaml")]
        compose += ["-f", str(override)]
        try:
            say(sh(*compose, "up", "-d", env=environ)[-2000:])
            gateway = "mgimgtest_gateway_1"
            probe = (
                "import urllib.request as u; u.urlopen('http://127.0.0.1:9464/readyz', timeout=3)"
            )

            def ready() -> bool:
                done = subprocess.run(
                    ["podman", "exec", gateway, "python3", "-c", probe], capture_output=True
                )
                return done.returncode == 0

            wait(ready, "compose gateway ready", timeout=120)
            before = len(tg.calls("sendMessage"))
            tg.push_message(ANA, ANA, "hello from compose")
            reply = tg.wait_for_sent(before + 1, timeout=60)[-1].params["text"]
            say(f"ok: conversation through the compose stack, reply {reply!r}")
            doctor = sh("podman", "exec", gateway, "mnemogate", "doctor", check=False)
            assert "unknown memory provider" not in doctor, doctor
            say("ok: doctor in compose (provider unset):\n" + doctor.strip())
            status = sh("podman", "exec", gateway, "mnemogate", "status", "--json", check=False)
            report = json.loads(status[status.index("{") :])
            assert report["redis"] == "ok" and report["workers"], status
            say(f"ok: status --json in compose: healthy={report['healthy']} {report['problems']}")
            restarts = sh("podman", "inspect", "--format", "{{.RestartCount}}", gateway).strip()
            assert restarts == "0", restarts
        finally:
            print(sh(*compose, "logs", check=False, env=environ)[-3000:])
            sh(*compose, "down", "-v", check=False, env=environ)


def _port(url: str) -> int:
    return int(url.split(":")[2].split("/")[0])


def _read_env(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", required=True)
    parser.add_argument("--compose", action="store_true")
    args = parser.parse_args()
    if shutil.which("podman") is None:
        raise SystemExit("podman is not installed")
    password = secrets.token_hex(12)
    with tempfile.TemporaryDirectory() as tmp, FakeTelegram() as tg, FakeLLM() as llm:
        llm.handler = conversation_script()
        redis, port = start_redis(password, Path(tmp))
        try:
            sh("podman", "volume", "rm", "--force", "mgimg-data", check=False)
            run_containers(args.image, tg, llm, f"redis://:{password}@127.0.0.1:{port}/0")
            if args.compose:
                llm.handler = Script(fallback=lambda body: "hello from the stack")
                run_compose(tg, llm)
        finally:
            for name in ("mgimg-gateway", "mgimg-worker"):
                sh("podman", "rm", "--force", name, check=False)
            sh("podman", "volume", "rm", "--force", "mgimg-data", check=False)
            redis.terminate()
            redis.wait(timeout=10)
    say("all checks passed")


if __name__ == "__main__":
    sys.exit(main())
