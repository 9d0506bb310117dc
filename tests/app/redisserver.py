"""A real ``redis-server`` (Debian's) on a free loopback port, for the tests of the shared room store.

Never the system's service: a server of our own, without a config file, saving nothing, stopped at
the end. Missing ``redis-server`` fails the test (``.ci/run`` installs it)."""

from __future__ import annotations

import ctypes
import shutil
import signal
import subprocess
import time

import redis
from serverprocess import free_port

REDIS_SERVER = "/usr/bin/redis-server"
PR_SET_PDEATHSIG = 1


def _dies_with_parent() -> None:
    """In the child: SIGTERM when the test process that started it dies (even killed), so a killed
    run leaves no redis-server behind."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class RedisServer:
    """``start()``ed on ``port`` (the same one again after ``stop()``: a restart)."""

    def __init__(self) -> None:
        assert shutil.which(REDIS_SERVER), f"{REDIS_SERVER} is missing: apt-get install redis-server"
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.client = redis.Redis.from_url(self.url, decode_responses=True)
        self.process: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        # --save "" and no AOF: nothing written to disk (a restart forgets every room)
        options = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            [REDIS_SERVER, *options], stdout=subprocess.DEVNULL, preexec_fn=_dies_with_parent
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                self.client.ping()
                return
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "redis-server did not start"
                assert self.process.poll() is None, "redis-server exited"
                time.sleep(0.05)

    def stop(self) -> None:
        self.client.close()
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None
