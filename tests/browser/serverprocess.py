"""A Streamlit server process of a test's (or a benchmark's) own, and the CPU time it uses.

The one ``streamlit run app.py`` command line of the browser tests, the benchmarks and deploy/
(:func:`streamlit_command`, deploy/local.py's): headless, on loopback, no usage statistics, no file
watcher.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # a benchmark run as a script (pytest has the root on its path)
    sys.path.insert(0, str(ROOT))
from deploy.local import streamlit_command  # noqa: E402, F401 (one command line: tests, deploy/, benchmarks)

CHROMIUM = "/usr/bin/chromium"  # Debian's package: browsers are never downloaded
CHROMIUM_FLAGS = [
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(proc: subprocess.Popen, url: str, timeout: float = 60) -> None:
    """Return once ``url``'s ``/_stcore/health`` says ok; RuntimeError if ``proc`` exits or time runs out."""
    deadline = time.monotonic() + timeout
    while not healthy(url):
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"streamlit did not answer /_stcore/health in {timeout:.0f} s")
        time.sleep(0.25)


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
            return r.read().decode().strip() == "ok"
    except OSError:
        return False


class Server:
    """``cmd`` (a ``streamlit run app.py`` command line) started in the app folder, with ``env`` added
    to this process's environment; ``url`` answers once ``/_stcore/health`` says ok. Its output goes to
    ``log_path`` (a test's tmp_path: another pytest run's playwright plugin empties test-results/ when
    it starts)."""

    def __init__(self, cmd: list[str], port: int, log_path: Path, env: dict[str, str] | None = None):
        self.log_path = log_path
        self._log = open(self.log_path, "w")  # closed by stop()
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT,
                                     env={**os.environ, **(env or {})})
        self.url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(self.proc, self.url)
        except RuntimeError as e:
            self.stop()
            raise RuntimeError(f"{e}: {self.log()[-2000:]}") from None

    def log(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def cpu_seconds(self) -> float:
        """CPU time (user + system) of the server and its children, living and reaped, from /proc."""
        total = 0.0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()  # after "pid (name)"
            except OSError:  # ended while we looked
                continue
            me, parent = int(stat.parent.name), int(fields[1])
            if me == self.proc.pid:
                total += sum(int(f) for f in fields[11:15]) / TICKS  # utime stime cutime cstime
            elif parent == self.proc.pid:
                total += sum(int(f) for f in fields[11:13]) / TICKS
        return total

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def models_env(root: Path) -> dict[str, str]:
    """The environment of a server whose model folders are those under ``root`` (never the machine's
    own hub cache)."""
    return {"GLASSBOX_MODELS": str(root), "HF_HUB_CACHE": str(root / "no-hub-cache")}
