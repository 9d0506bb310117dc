"""Several Glassbox servers behind HAProxy, sharing rooms through Redis, on one machine without Docker.

The topology of ``deploy/docker-compose.yml``, from Debian's packages (``/usr/sbin/haproxy``,
``/usr/bin/redis-server``) and the Python that runs this script (the project's venv), every process
on a free 127.0.0.1 port, their logs and configuration in one folder:

    .venv/bin/python deploy/local.py --replicas 2 [--port 8600] [--persist] [--no-redis]

runs in the foreground and stops everything on Ctrl-C or SIGTERM. Tests and benchmarks use
:class:`Cluster`::

    from deploy.local import Cluster
    with Cluster(replicas=2, log_dir=tmp_path) as c:
        c.url             # the load balancer, "http://127.0.0.1:PORT"
        c.replica_urls    # each replica, directly
        c.redis_url       # "redis://127.0.0.1:PORT/0", None with redis=False
        c.kill_replica(0) # a crash (SIGKILL); c.start_replica(0) brings it back on the same port
        c.restart_redis() # rooms survive it with persist=True
        c.backends_up()   # ["app1", "app2"]: the replicas HAProxy sends traffic to

- **Redis** (``deploy/redis.conf``, no system configuration read): loopback, protected mode,
  ``maxmemory`` with eviction of expiring keys only. ``persist=True``: the append-only file in the
  cluster's folder, so a restarted Redis (or a new cluster on the same folder) has the rooms back;
  ``persist=False``: nothing written, a restart empties it. ``redis=False``: no Redis, and no
  ``GLASSBOX_REDIS_URL`` for the replicas (even if this process has one): each keeps its own
  embedded store, the single-server mode.
- **Replicas** ``app1``..``appN``: ``streamlit run app.py`` with the tests' headless options
  (``tests/browser/serverprocess.streamlit_command``), ``GLASSBOX_REDIS_URL`` and one cookie secret
  per cluster (``STREAMLIT_SERVER_COOKIE_SECRET``: in the environment, which only the owner can
  read, not on a command line every user's ``ps`` shows), so that whatever Streamlit signs on one
  replica is valid on the others when a client is moved. Started together; each is waited for on
  ``/_stcore/health``.
- **HAProxy** (``deploy/haproxy-local.cfg``, the settings of ``deploy/haproxy.cfg``): cookie
  affinity (``glassbox_server=appK``), a dead replica's clients redispatched to a live one, health
  checks on ``/_stcore/health`` every second, websockets kept open for an hour. Its stats socket in
  the cluster's folder tells :meth:`Cluster.backends_up`.

Every process is its own process group (a Ctrl-C in the terminal reaches this script, which stops
them in order: HAProxy, the replicas, Redis) and is stopped with SIGTERM, then SIGKILL after a
timeout; :meth:`Cluster.stop` also runs at interpreter exit, should a caller forget it.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import csv
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from string import Template

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
HAPROXY = "/usr/sbin/haproxy"  # Debian's haproxy package
REDIS_SERVER = "/usr/bin/redis-server"  # Debian's redis-server package
HAPROXY_TEMPLATE = DEPLOY / "haproxy-local.cfg"
REDIS_CONF = DEPLOY / "redis.conf"
BACKEND = "glassbox"  # the backend's name in both HAProxy configurations
COOKIE = "glassbox_server"  # HAProxy's affinity cookie; its value is the replica's name
STOP_SECONDS = 10  # SIGTERM, then SIGKILL after this long
APP_START_SECONDS = 120  # a replica's /_stcore/health, on a loaded machine


def streamlit_command(port: int, *options: str) -> list[str]:
    """``streamlit run app.py`` on 127.0.0.1:``port``, headless; ``options`` are added (the tests'
    servers are started with this command too: tests/browser/serverprocess.py)."""
    return [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.headless", "true",
        "--server.port", str(port),
        "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
        *options,
    ]  # fmt: skip


def free_ports(n: int) -> list[int]:
    """``n`` distinct free ports on 127.0.0.1 (all held open together, so none is given twice)."""
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]


_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never via a proxy


def healthy(url: str) -> bool:
    """Streamlit's ``/_stcore/health`` at ``url`` says ok."""
    try:
        with _DIRECT.open(f"{url}/_stcore/health", timeout=2) as r:
            return r.read().decode().strip() == "ok"
    except OSError:
        return False


def redis_ping(port: int) -> bool:
    """Redis on 127.0.0.1:``port`` answers PING (not while it is still loading its data)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class Process:
    """One program of the cluster, in its own process group, its output appended to ``log``."""

    def __init__(self, name: str, cmd: list[str], log: Path, env: dict[str, str] | None = None):
        self.name, self.cmd, self.log, self.env = name, cmd, log, env
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        with open(self.log, "a") as out:  # the child keeps its own copy of the descriptor
            self.proc = subprocess.Popen(self.cmd, cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)  # fmt: skip

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.alive else None

    def signal(self, sig: int) -> None:
        if self.alive:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)

    def wait(self, timeout: float = STOP_SECONDS) -> None:
        """Wait for the exit; SIGKILL the group once ``timeout`` is over."""
        if self.proc is None:
            return
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        self.signal(signal.SIGTERM)
        self.wait()

    def kill(self) -> None:
        self.signal(signal.SIGKILL)
        self.wait()

    def tail(self, chars: int = 2000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""


def wait_for(ready: Callable[[], bool], proc: Process, timeout: float, what: str) -> None:
    """Poll ``ready`` until true; RuntimeError (with the end of ``proc``'s log) if it exits or time is up."""
    deadline = time.monotonic() + timeout
    while not ready():
        if not proc.alive:
            raise RuntimeError(f"{proc.name} exited ({what}); {proc.log}:\n{proc.tail()}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{proc.name}: no {what} in {timeout:.0f} s; {proc.log}:\n{proc.tail()}")
        time.sleep(0.1)


def haproxy_show_stat(socket_path: Path) -> list[dict[str, str]]:
    """HAProxy's ``show stat`` through its stats socket: one dict per frontend, backend and server."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(2)
        s.connect(str(socket_path))
        s.sendall(b"show stat\n")
        chunks = []
        while data := s.recv(65536):
            chunks.append(data)
    text = b"".join(chunks).decode().removeprefix("# ")
    return list(csv.DictReader(line for line in text.splitlines() if line))


class Cluster:
    """Redis, ``replicas`` Streamlit servers and HAProxy in front, on free loopback ports.

    ``log_dir``: the cluster's folder (logs, haproxy.cfg, the stats socket, Redis's data); a new
    temporary folder when None. ``env``: added to the replicas' environment. ``port``: the load
    balancer's port (a free one when None).
    """

    def __init__(self, replicas: int = 2, redis: bool = True, persist: bool = False,
                 log_dir: Path | str | None = None, env: dict[str, str] | None = None,
                 port: int | None = None):  # fmt: skip
        if replicas < 1:
            raise ValueError("a cluster needs at least one replica")
        for program in [HAPROXY, *([REDIS_SERVER] if redis else [])]:
            if not os.access(program, os.X_OK):
                raise FileNotFoundError(f"{program} is missing: apt-get install haproxy redis-server")
        self.dir = Path(log_dir) if log_dir else Path(tempfile.mkdtemp(prefix="glassbox-cluster-"))
        self.dir.mkdir(parents=True, exist_ok=True)
        self.persist = persist
        ports = free_ports(replicas + 2)
        self.port = port or ports[0]
        self.replica_ports = ports[1 : replicas + 1]
        self.redis_port = ports[-1] if redis else None
        self.url = f"http://127.0.0.1:{self.port}"
        self.replica_urls = [f"http://127.0.0.1:{p}" for p in self.replica_ports]
        self.redis_url = f"redis://127.0.0.1:{self.redis_port}/0" if redis else None
        self.names = [f"app{i + 1}" for i in range(replicas)]
        self.stats_socket = self.dir / "haproxy.sock"
        self.cookie_secret = secrets.token_hex(32)
        self.redis = self._redis_process() if redis else None
        self.apps = [
            self._app_process(name, p, env or {})
            for name, p in zip(self.names, self.replica_ports, strict=True)
        ]
        self.haproxy = Process("haproxy", [HAPROXY, "-db", "-f", str(self._write_haproxy_config())],
                               self.dir / "haproxy.log")  # fmt: skip

    # -- building the processes ----------------------------------------------------------------------

    def _redis_process(self) -> Process:
        data = self.dir / "redis-data"
        data.mkdir(exist_ok=True)
        cmd = [REDIS_SERVER, str(REDIS_CONF), "--port", str(self.redis_port), "--dir", str(data)]
        if not self.persist:
            cmd += ["--save", "", "--appendonly", "no"]
        return Process("redis", cmd, self.dir / "redis.log")

    def _app_process(self, name: str, port: int, extra: dict[str, str]) -> Process:
        # HAProxy reaches the replicas from loopback: its X-Forwarded-For names each browser
        # (ui/classroom/clients.py), whose floods the room store then bounds one browser's address at a time.
        env = {**os.environ, "GLASSBOX_TRUSTED_PROXIES": "127.0.0.1", **extra,
               "STREAMLIT_SERVER_COOKIE_SECRET": self.cookie_secret}
        env.pop("GLASSBOX_REDIS_URL", None)
        if self.redis_url:
            env["GLASSBOX_REDIS_URL"] = self.redis_url
        return Process(name, streamlit_command(port), self.dir / f"{name}.log", env)

    def _write_haproxy_config(self) -> Path:
        if len(str(self.stats_socket)) > 100:  # a unix socket's path has at most 107 bytes
            raise ValueError(f"log_dir too long for HAProxy's stats socket: {self.dir}")
        servers = [f"    server {name} 127.0.0.1:{port} cookie {name}"
                   for name, port in zip(self.names, self.replica_ports, strict=True)]  # fmt: skip
        text = Template(HAPROXY_TEMPLATE.read_text()).substitute(
            bind=f"127.0.0.1:{self.port}", stats_socket=self.stats_socket, servers="\n".join(servers)
        )
        path = self.dir / "haproxy.cfg"
        path.write_text(text)
        return path

    # -- the whole cluster -----------------------------------------------------------------------------

    def start(self) -> Cluster:
        """Redis, then every replica at once, then HAProxy; returns once HAProxy sees all replicas UP."""
        atexit.register(self.stop)
        try:
            if self.redis:
                self.start_redis()
            for app in self.apps:
                app.start()
            for app, url in zip(self.apps, self.replica_urls, strict=True):
                wait_for(lambda url=url: healthy(url), app, APP_START_SECONDS, "/_stcore/health")
            self.haproxy.start()
            wait_for(self._stats_answer, self.haproxy, 10, "stats socket")
            self.wait_backends(len(self.apps))
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """HAProxy first (no new traffic), then the replicas together, then Redis; SIGKILL after a timeout."""
        self.haproxy.stop()
        for app in self.apps:
            app.signal(signal.SIGTERM)
        for app in self.apps:
            app.wait()
        if self.redis:
            self.redis.stop()
        atexit.unregister(self.stop)

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def pids(self) -> dict[str, int]:
        """The living processes: {"app1": pid, ..., "redis": pid, "haproxy": pid}."""
        procs = [*self.apps, *([self.redis] if self.redis else []), self.haproxy]
        return {p.name: p.pid for p in procs if p.alive}

    # -- faults --------------------------------------------------------------------------------------

    def kill_replica(self, i: int) -> None:
        """Replica ``i`` (0-based) crashes: SIGKILL, no goodbye to its clients."""
        self.apps[i].kill()

    def start_replica(self, i: int, timeout: float = APP_START_SECONDS) -> None:
        """Replica ``i`` again, on its port; returns once it is healthy and HAProxy sends it traffic."""
        app = self.apps[i]
        if app.alive:
            raise RuntimeError(f"{app.name} is running")
        app.start()
        wait_for(lambda: healthy(self.replica_urls[i]), app, timeout, "/_stcore/health")
        wait_for(lambda: app.name in self.backends_up(), self.haproxy, 10, f"{app.name} UP in HAProxy")

    def stop_redis(self) -> None:
        """SIGTERM: with persist=True Redis writes its append-only file before it exits."""
        self._need_redis().stop()

    def start_redis(self, timeout: float = 10) -> None:
        redis = self._need_redis()
        redis.start()
        wait_for(lambda: redis_ping(self.redis_port), redis, timeout, "PONG")

    def restart_redis(self) -> None:
        self.stop_redis()
        self.start_redis()

    def _need_redis(self) -> Process:
        if self.redis is None:
            raise RuntimeError("this cluster runs without Redis (redis=False)")
        return self.redis

    # -- what HAProxy sees ---------------------------------------------------------------------------

    def _stats_answer(self) -> bool:
        try:
            return bool(haproxy_show_stat(self.stats_socket))
        except OSError:
            return False

    def backend_status(self) -> dict[str, str]:
        """Each replica's status in HAProxy: "UP", "DOWN", "UP 1/2" (one check failed), ..."""
        rows = haproxy_show_stat(self.stats_socket)
        return {
            r["svname"]: r["status"] for r in rows if r["pxname"] == BACKEND and r["svname"] in self.names
        }

    def backends_up(self) -> list[str]:
        """The replicas HAProxy sends traffic to (UP, also UP with a failed check it is not yet sure of)."""
        return sorted(name for name, status in self.backend_status().items() if status.startswith("UP"))

    def wait_backends(self, n: int, timeout: float = 10) -> list[str]:
        """Wait until exactly ``n`` replicas are UP in HAProxy; their names."""
        deadline = time.monotonic() + timeout
        while len(up := self.backends_up()) != n:
            if time.monotonic() > deadline:
                raise TimeoutError(f"HAProxy: {self.backend_status()} after {timeout:.0f} s, wanted {n} UP")
            time.sleep(0.1)
        return up

    def describe(self) -> str:
        lines = [f"load balancer  {self.url}"]
        lines += [f"{name:<14} {url}" for name, url in zip(self.names, self.replica_urls, strict=True)]
        lines.append(f"{'redis':<14} {self.redis_url or 'none: each replica keeps its own rooms'}")
        lines.append(f"{'logs':<14} {self.dir}")
        return "\n".join(lines)


# -- the command line ---------------------------------------------------------------------------------


def _interrupt(signum, frame) -> None:
    """The first Ctrl-C or SIGTERM ends the wait; more of them must not cut the clean stop short."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", type=int, default=2, help="Streamlit servers (default 2)")
    parser.add_argument("--port", type=int, help="the load balancer's port (default: a free one)")
    parser.add_argument("--persist", action="store_true", help="Redis keeps the rooms across restarts")
    parser.add_argument("--no-redis", action="store_true", help="no Redis: each replica its own rooms")
    parser.add_argument("--log-dir", type=Path, help="logs, configs, Redis data (default: a temp dir)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    cluster = Cluster(args.replicas, redis=not args.no_redis, persist=args.persist, log_dir=args.log_dir,
                      port=args.port)  # fmt: skip
    try:
        started = time.monotonic()
        with cluster:
            print(cluster.describe(), f"\nup in {time.monotonic() - started:.1f} s; Ctrl-C stops", flush=True)
            while True:
                time.sleep(1)
    except KeyboardInterrupt:
        print("stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
