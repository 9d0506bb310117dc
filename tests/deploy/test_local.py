"""deploy/local.py: Redis, two Streamlit replicas and HAProxy, real processes on loopback ports.

One cluster for the module (started once per test process: under ``pytest -n 2`` each worker that
runs a test of this file starts its own); a test that breaks it (kills a replica, restarts Redis)
puts it back. Which replica served a request is read from HAProxy's own log (one line per request,
``glassbox/appK``), found by a probe string in the request's query. A hall page's event stream
(``/r/CODE/events``) is read raw through the balancer: it outlives HAProxy's client and server
timeouts (each reset by the stream's keep-alive) and still hears the next step; a balancer whose
timeouts are shorter than the keep-alive cuts it, which is what the configurations' values prevent.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import re
import socket
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import redis
import serverprocess
import websockets
import yaml
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from deploy.local import (
    APP_START_SECONDS,
    COOKIE,
    DEPLOY,
    HAPROXY,
    Cluster,
    Process,
    free_ports,
    healthy,
    streamlit_command,
    wait_for,
)
from ui.classroom.rooms_redis import RedisStore
from ui.hall.broadcast import KEEPALIVE_SECONDS

DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with Cluster(replicas=2, redis=True, persist=True, log_dir=tmp_path_factory.mktemp("cluster")) as c:
        yield c


def get(url: str, cookie: str | None = None) -> tuple[int, str | None, str]:
    """GET ``url``/_stcore/health?probe=…: (status, the affinity cookie HAProxy set or None, probe)."""
    probe = uuid.uuid4().hex
    headers = {"Cookie": f"{COOKIE}={cookie}"} if cookie else {}
    request = urllib.request.Request(f"{url}/_stcore/health?probe={probe}", headers=headers)
    with DIRECT.open(request, timeout=10) as r:
        values = [h.split(";")[0].split("=", 1)[1] for h in r.headers.get_all("Set-Cookie") or []
                  if h.startswith(f"{COOKIE}=")]  # fmt: skip
        assert len(values) <= 1, values
        return r.status, (values[0] if values else None), probe


def log_line(c: Cluster, text: str) -> str:
    """The last line of HAProxy's log with ``text`` (written once the request or the tunnel ended)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        lines = [line for line in (c.dir / "haproxy.log").read_text().splitlines() if text in line]
        if lines:
            return lines[-1]
        time.sleep(0.05)
    raise AssertionError(f"no line with {text!r} in HAProxy's log")


def served_by(c: Cluster, probe: str) -> str:
    """The replica HAProxy's log names for the request with ``probe``."""
    return log_line(c, probe).split(" glassbox/", 1)[1].split()[0]


def port_free(port: int) -> bool:
    """Nothing listens on 127.0.0.1:``port`` (connections in TIME_WAIT do not count, as for a server)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


# -- the cluster -------------------------------------------------------------------------------------


def test_the_load_balancer_answers_with_both_replicas_up(cluster):
    assert cluster.backends_up() == ["app1", "app2"]
    assert healthy(cluster.url)
    assert all(healthy(url) for url in cluster.replica_urls)
    assert len({cluster.port, *(int(u.rsplit(":", 1)[1]) for u in cluster.replica_urls)}) == 3
    assert set(cluster.pids()) == {"app1", "app2", "redis", "haproxy"}


def test_the_replicas_run_the_tests_command_with_redis_and_one_cookie_secret(cluster):
    assert streamlit_command(8501) == serverprocess.streamlit_command(8501)
    envs = []
    for name, url in zip(["app1", "app2"], cluster.replica_urls, strict=True):
        pid = cluster.pids()[name]
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
        assert cmdline == serverprocess.streamlit_command(int(url.rsplit(":", 1)[1]))
        envs.append(environ(pid))
    assert [e["GLASSBOX_REDIS_URL"] for e in envs] == [cluster.redis_url] * 2
    secrets = {e["STREAMLIT_SERVER_COOKIE_SECRET"] for e in envs}
    assert len(secrets) == 1 and len(secrets.pop()) == 64


def test_without_a_cookie_requests_are_spread_over_both_replicas(cluster):
    seen = []
    for _ in range(6):
        status, cookie, probe = get(cluster.url)
        assert status == 200
        assert served_by(cluster, probe) == cookie  # the cookie names the replica that answered
        seen.append(cookie)
    assert sorted(set(seen)) == ["app1", "app2"]


@pytest.mark.parametrize("name", ["app1", "app2"])
def test_with_the_cookie_every_request_reaches_the_same_replica(cluster, name):
    for _ in range(5):
        status, cookie, probe = get(cluster.url, cookie=name)
        assert (status, cookie) == (200, None)  # a valid cookie is not set again (indirect)
        assert served_by(cluster, probe) == name


def test_a_killed_replicas_clients_move_to_the_live_one(cluster):
    try:
        cluster.kill_replica(0)
        killed = time.monotonic()
        # at once, before any health check noticed: the refused request is redispatched
        for _ in range(4):
            status, cookie, probe = get(cluster.url, cookie="app1")
            assert (status, cookie, served_by(cluster, probe)) == (200, "app2", "app2")
            assert get(cluster.url)[:2] == (200, "app2")
        assert time.monotonic() - killed < 2
        assert cluster.wait_backends(1, timeout=4) == ["app2"]
        assert "app1" not in cluster.pids()
    finally:
        if "app1" not in cluster.pids():
            cluster.start_replica(0)


def test_a_restarted_replica_is_up_again_and_gets_its_cookie_holders_back(cluster):
    old = cluster.pids()["app2"]
    cluster.kill_replica(1)
    cluster.wait_backends(1, timeout=4)
    cluster.start_replica(1)
    assert cluster.backends_up() == ["app1", "app2"]
    assert cluster.pids()["app2"] != old
    status, cookie, probe = get(cluster.url, cookie="app2")
    assert (status, cookie, served_by(cluster, probe)) == (200, None, "app2")
    with pytest.raises(RuntimeError, match="app2 is running"):
        cluster.start_replica(1)


async def run_app(url: str, cookie: str) -> str:
    """A Streamlit session over a websocket, as a browser tab with ``cookie``: how its first run ended."""
    headers = {"Cookie": f"{COOKIE}={cookie}"}
    async with websockets.connect(f"{url.replace('http', 'ws')}/_stcore/stream", subprotocols=["streamlit"],
                                  additional_headers=headers, max_size=2**26) as ws:  # fmt: skip
        msg = BackMsg()
        msg.rerun_script.query_string = ""
        await ws.send(msg.SerializeToString())
        async with asyncio.timeout(90):
            while True:
                fwd = ForwardMsg()
                fwd.ParseFromString(await ws.recv())
                if fwd.WhichOneof("type") == "script_finished":
                    return ForwardMsg.ScriptFinishedStatus.Name(fwd.script_finished)


def test_a_session_runs_through_the_load_balancer_on_its_replica(cluster):
    assert asyncio.run(run_app(cluster.url, "app2")) == "FINISHED_SUCCESSFULLY"
    line = log_line(cluster, "GET /_stcore/stream")
    assert " glassbox/app2 " in line and " 101 " in line, line  # upgraded to a websocket, on app2


# -- Redis -------------------------------------------------------------------------------------------


def test_redis_answers_bounded_and_on_loopback(cluster):
    r = redis.Redis.from_url(cluster.redis_url)
    assert r.ping()
    config = r.config_get("*")
    assert config["maxmemory"] == str(256 * 2**20)
    assert config["maxmemory-policy"] == "volatile-lru"
    assert (config["bind"], config["protected-mode"]) == ("127.0.0.1", "yes")
    assert config["appendonly"] == "yes"  # persist=True
    r.close()


def test_with_persist_a_key_and_its_expiry_survive_a_restart(cluster):
    r = redis.Redis.from_url(cluster.redis_url)
    r.set("glassbox:test:persist", "kept", ex=600)
    old = cluster.pids()["redis"]
    cluster.restart_redis()
    assert cluster.pids()["redis"] != old
    assert r.get("glassbox:test:persist") == b"kept"
    assert 0 < r.ttl("glassbox:test:persist") <= 600
    r.close()


def test_without_persist_a_restart_loses_the_keys(tmp_path):
    with Cluster(replicas=1, persist=False, log_dir=tmp_path) as c:
        r = redis.Redis.from_url(c.redis_url)
        r.set("glassbox:test:persist", "lost", ex=600)
        assert r.config_get("appendonly")["appendonly"] == "no"
        c.restart_redis()
        assert r.get("glassbox:test:persist") is None
        assert list((tmp_path / "redis-data").iterdir()) == []
        r.close()


def test_without_redis_each_replica_has_no_redis_url(tmp_path, monkeypatch):
    monkeypatch.setenv("GLASSBOX_REDIS_URL", "redis://127.0.0.1:1/0")  # not passed on
    with Cluster(replicas=1, redis=False, log_dir=tmp_path) as c:
        assert c.redis_url is None
        assert set(c.pids()) == {"app1", "haproxy"}
        assert "GLASSBOX_REDIS_URL" not in environ(c.pids()["app1"])
        assert healthy(c.url)
        with pytest.raises(RuntimeError, match="without Redis"):
            c.restart_redis()


def test_stop_after_an_exception_leaves_no_process_and_no_port(tmp_path):
    with pytest.raises(KeyError, match="boom"):
        with Cluster(replicas=2, log_dir=tmp_path) as c:
            pids = c.pids()
            ports = [c.port, c.redis_port, *(int(u.rsplit(":", 1)[1]) for u in c.replica_urls)]
            assert len(pids) == 4 and not any(port_free(p) for p in ports)
            raise KeyError("boom")
    assert c.pids() == {}
    for pid in pids.values():
        assert not Path(f"/proc/{pid}").exists()
    assert all(port_free(p) for p in ports)


# -- the configurations ------------------------------------------------------------------------------


def haproxy_check(path: Path) -> list[str]:
    """``haproxy -c``: the warnings; fails unless the configuration is valid."""
    done = subprocess.run([HAPROXY, "-c", "-f", str(path)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and "Configuration file is valid" in done.stdout, done.stdout + done.stderr
    return [line for line in done.stderr.splitlines() if "[WARNING]" in line]


def test_haproxy_accepts_both_configurations(cluster):
    assert haproxy_check(cluster.dir / "haproxy.cfg") == []
    # the compose replicas' names resolve only in Docker's network: HAProxy starts without them
    warnings = haproxy_check(DEPLOY / "haproxy.cfg")
    assert len(warnings) == 3 and all("could not resolve address 'app" in w for w in warnings), warnings


def sections(path: Path) -> dict[str, list[str]]:
    """An HAProxy configuration's sections ("defaults", "backend glassbox", ...) -> their settings."""
    out: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            out[current := line.strip()] = []
        else:
            out[current].append(" ".join(line.split()))
    return out


def test_local_and_compose_balancers_have_the_same_settings(cluster):
    local, compose = sections(cluster.dir / "haproxy.cfg"), sections(DEPLOY / "haproxy.cfg")
    assert local["defaults"] == compose["defaults"]
    settings = [s for s in compose["backend glassbox"] if not s.startswith("server ")]
    assert [s for s in local["backend glassbox"] if not s.startswith("server ")] == settings
    assert "option redispatch 1" in compose["defaults"] and "timeout tunnel 1h" in compose["defaults"]
    assert local["backend glassbox"][-2:] == [
        f"server app{i} 127.0.0.1:{url.rsplit(':', 1)[1]} cookie app{i}"
        for i, url in enumerate(cluster.replica_urls, 1)
    ]


def test_the_compose_file_wires_replicas_redis_and_haproxy():
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    services = compose["services"]
    apps = sorted(name for name in services if name.startswith("app"))
    assert apps == ["app1", "app2", "app3"]
    servers = [
        s.split() for s in sections(DEPLOY / "haproxy.cfg")["backend glassbox"] if s.startswith("server ")
    ]
    assert [(s[1], s[2], s[3], s[4]) for s in servers] == [(n, f"{n}:8501", "cookie", n) for n in apps]
    for name in apps:
        app = services[name]
        assert (Path(DEPLOY / app["build"]["context"]) / app["build"]["dockerfile"]).is_file()
        assert app["environment"]["GLASSBOX_REDIS_URL"].endswith("@redis:6379/0")
        assert "STREAMLIT_SERVER_COOKIE_SECRET" in app["environment"]
    assert services["redis"]["image"] == "redis:7" and services["haproxy"]["image"] == "haproxy:2.6"
    assert "./redis.conf:/usr/local/etc/redis/redis.conf:ro" in services["redis"]["volumes"]
    assert "--requirepass" in services["redis"]["command"]
    assert "./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in services["haproxy"]["volumes"]
    assert services["haproxy"]["ports"] == ["127.0.0.1:8080:8080"]
    assert compose["networks"]["back"]["internal"] is True and services["redis"]["networks"] == ["back"]


# -- a hall page's event stream through the balancer -------------------------------------------------


def seconds(value: str) -> float:
    """An HAProxy or compose duration ("30s", "1h", "500ms"; a bare number is milliseconds) in seconds."""
    number, unit = re.fullmatch(r"(\d+)(us|ms|s|m|h|d)?", value).groups()
    return int(number) * {"us": 1e-6, "ms": 1e-3, None: 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}[unit]


def timeouts(path: Path) -> dict[str, float]:
    """The `timeout` settings of a configuration's defaults, in seconds: {"client": 30.0, ...}."""
    settings = [s.split() for s in sections(path)["defaults"] if s.startswith("timeout ")]
    return {name: seconds(value) for _, name, value in settings}


def test_the_balancers_keep_a_hall_stream_open_and_a_stop_still_ends_it(cluster):
    hard = {}
    for path in (cluster.dir / "haproxy.cfg", DEPLOY / "haproxy.cfg"):
        limits, settings = timeouts(path), sections(path)
        # inactivity limits, reset by every keep-alive comment of the stream: one may come late
        assert min(limits["client"], limits["server"]) >= 2 * KEEPALIVE_SECONDS, limits
        assert limits["tunnel"] >= 3600, limits  # a lecture-long websocket
        assert not [s for lines in settings.values() for s in lines if s.startswith("compression")]
        assert "option http-no-delay" in settings["defaults"]  # an event's small writes are not held back
        (stop,) = [s.split()[1] for s in settings["global"] if s.startswith("hard-stop-after ")]
        hard[path.parent.name] = seconds(stop)
    assert len(set(hard.values())) == 1, hard  # the same in both
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())["services"]
    # a soft stop (the haproxy image's SIGUSR1) closes the streams itself before Docker kills it
    assert seconds(compose["haproxy"]["stop_grace_period"]) > hard["deploy"]


class EventStream:
    """``GET /r/CODE/events`` at ``url``, read raw as it arrives: its events, and the comments between."""

    def __init__(self, url: str, code: str, read_timeout: float) -> None:
        parts = urlsplit(url)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=read_timeout)
        # a browser's own header: the stream must come back uncompressed all the same
        headers = {"Accept": "text/event-stream", "Accept-Encoding": "gzip, deflate, br"}
        self.connection.request("GET", f"/r/{code}/events", headers=headers)
        self.response = self.connection.getresponse()
        self.comments = 0

    def wait_each_line(self, read_timeout: float) -> None:
        self.connection.sock.settimeout(read_timeout)

    def line(self) -> str | None:
        """The next line; None once the stream was cut (a socket timeout is raised: nothing came)."""
        try:
            raw = self.response.readline()
        except (http.client.IncompleteRead, ConnectionResetError):  # cut inside the chunked body
            return None
        if not raw:
            return None
        text = raw.decode().rstrip("\n")
        self.comments += text.startswith(":")
        return text

    def room(self) -> dict[str, str]:
        """The fields of the next ``room`` event ({"event": "room", "id": "7", "data": …})."""
        fields: dict[str, str] = {}
        while (text := self.line()) is not None:
            if text and not text.startswith(":"):
                name, _, value = text.partition(":")
                fields[name] = value.removeprefix(" ")
            elif not text and fields.get("event") == "room":
                return fields
            elif not text:
                fields = {}
        raise AssertionError("the stream ended before a room event")

    def close(self) -> None:
        self.connection.close()


def new_room(c: Cluster, step: int = 2):
    store = RedisStore(c.redis_url)
    return store, store.create(step=step, settings={"sentence": "the cat sat"})


def test_an_event_stream_through_the_balancer_outlives_its_timeouts_and_hears_the_next_step(cluster):
    limits = timeouts(cluster.dir / "haproxy.cfg")
    store, room = new_room(cluster)
    opened = time.monotonic()
    stream = EventStream(cluster.url, room.code, APP_START_SECONDS)  # a replica's first slide loads the model
    try:
        response = stream.response
        assert response.status == 200 and response.getheader("content-type").startswith("text/event-stream")
        assert response.getheader("content-encoding") is None and response.getheader("content-length") is None
        assert json.loads(stream.room()["data"])["room"]["step"] == 2
        stream.wait_each_line(KEEPALIVE_SECONDS + 5)
        # open past both timeouts, hearing nothing but the keep-alive comments
        while stream.comments < 2 or time.monotonic() - opened <= max(limits["client"], limits["server"]):
            text = stream.line()
            assert text is not None, f"the stream was cut after {time.monotonic() - opened:.0f} s"
            assert text == "" or text.startswith(":"), text
        version = store.update(room.code, room.secret, step=3)
        store.announce(room.code)  # what the lecturer's server does
        told = time.monotonic()
        event = stream.room()
        heard = time.monotonic()
        assert (event["id"], json.loads(event["data"])["room"]["step"]) == (str(version), 3)
        print(f"open {heard - opened:.0f} s, {stream.comments} keep-alives; the step in {heard - told:.2f} s")
        assert heard - told < 5
    finally:
        stream.close()


@contextlib.contextmanager
def balancer(c: Cluster, folder: Path, **changed: str) -> Iterator[str]:
    """Another HAProxy in front of ``c``'s replicas: ``c``'s configuration with the `timeout`s
    ``changed`` ({"server": "3s"}), on a port of its own, without a stats socket; its URL."""
    (port,) = free_ports(1)
    text = (c.dir / "haproxy.cfg").read_text().replace(f"bind 127.0.0.1:{c.port}", f"bind 127.0.0.1:{port}")
    text = re.sub(r"(?m)^\s+stats socket .*\n", "", text)
    for name, value in changed.items():
        text, n = re.subn(rf"(?m)^(\s+timeout {name}) \S+$", rf"\1 {value}", text)
        assert n == 1, name
    (folder / "haproxy.cfg").write_text(text)
    proc = Process("haproxy", [HAPROXY, "-db", "-f", str(folder / "haproxy.cfg")], folder / "haproxy.log")
    proc.start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: healthy(url), proc, 10, "/_stcore/health through it")
        yield url
    finally:
        proc.stop()


@pytest.mark.parametrize("side", ["server", "client"])
def test_under_the_keep_alive_the_server_timeout_cuts_a_quiet_stream_and_the_client_timeout_does_not(
    cluster, tmp_path, side
):
    """A balancer whose `timeout server` is shorter than the keep-alive cuts the stream once it has
    been quiet that long: the configurations' values are what keeps it open. `timeout client` does not
    count while the browser has nothing to send or to take (HAProxy 2.6): the keep-alive comes."""
    short = 3
    store, room = new_room(cluster)
    with balancer(cluster, tmp_path, **{side: f"{short}s"}) as url:
        stream = EventStream(url, room.code, APP_START_SECONDS)
        try:
            stream.room()
            quiet = time.monotonic()
            stream.wait_each_line(KEEPALIVE_SECONDS + 5)
            while (text := stream.line()) is not None and not text.startswith(":"):
                pass
            waited = time.monotonic() - quiet
        finally:
            stream.close()
    if side == "server":
        assert text is None and short - 0.5 < waited < KEEPALIVE_SECONDS, (text, waited)
    else:
        assert text == ": keep-alive" and waited > short + 0.5, (text, waited)
