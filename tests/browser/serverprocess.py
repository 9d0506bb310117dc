"""A Streamlit server process of a test's own, and the CPU time it uses (browser tests that need a
server started differently from conftest.py's shared one, and stopped at the end of the test)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``cmd`` (a ``streamlit run app.py`` command line) started in the app folder; ``url`` answers
    once ``/_stcore/health`` says ok. Its output goes to ``log_path`` (a test's tmp_path: another
    pytest run's playwright plugin empties test-results/ when it starts)."""

    def __init__(self, cmd: list[str], port: int, log_path: Path):
        self.log_path = log_path
        self._log = open(self.log_path, "w")  # closed by stop()
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT,
                                     env={**os.environ})
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while not self._healthy():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                code = self.proc.poll()
                self.stop()
                why = f"exited with {code}" if code is not None else "did not answer /_stcore/health in 60 s"
                raise RuntimeError(f"streamlit {why}: {self.log()[-2000:]}")
            time.sleep(0.25)

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                return r.read().decode().strip() == "ok"
        except OSError:
            return False

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
