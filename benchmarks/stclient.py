"""A minimal Streamlit websocket client and server launcher, for the load and soak benchmarks.

Speaks the browser's protocol (streamlit.proto): one websocket to ``/_stcore/stream`` per session;
a ``BackMsg.rerun_script`` carries the URL's query string, the page and the widget states; the
server answers with ``ForwardMsg`` deltas and ends every run with ``script_finished``. A run's
latency here is "widget changed → the server has sent the whole updated page": what a browser
waits for before it can draw, without the browser's own drawing time (plotly: ~50-200 ms).

Why not Chromium: 40 Chromium pages need ~40 renderer processes (~100-150 MB and a share of a core
each while plotly draws); on a 2-core machine the browsers, not the server, would be measured.
A websocket session costs the server exactly what a browser session costs it.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))  # serverprocess: the tests' own server command line
from serverprocess import free_port, streamlit_command, wait_healthy  # noqa: E402

LOG_DIR = Path(os.environ.get("TMPDIR", "/tmp")) / "glassbox-bench"


# -- the server --------------------------------------------------------------------------------------


class Server:
    """``streamlit run app.py`` on a free port, headless, no file watcher; ``rss_mb()`` reads /proc."""

    def __init__(self, port: int | None = None, log: Path | None = None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # not in test-results/: test runs clean that folder, and the log is read at the end
        self.log_path = log or LOG_DIR / f"server-{self.port}.log"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 60) -> Server:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "w")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(streamlit_command(self.port), cwd=ROOT, stdout=self._log,
                                     stderr=subprocess.STDOUT)
        try:
            wait_healthy(self.proc, self.url, timeout)
        except RuntimeError as e:
            raise RuntimeError(f"{e}; see {self.log_path}") from None
        return self

    def rss_mb(self) -> float:
        """Resident memory of the server process (VmRSS), in MB."""
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def cpu_seconds(self) -> float:
        """user + system CPU time of the server so far."""
        assert self.proc is not None
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def log_errors(self) -> list[str]:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return [line for line in text.splitlines() if "Traceback" in line or "Uncaught" in line]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        if hasattr(self, "_log"):
            self._log.close()

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# -- one browser session -----------------------------------------------------------------------------


@dataclass
class RunResult:
    seconds: float
    status: str  # "ok", or what went wrong
    texts: list[str] = field(default_factory=list)  # every text the run sent (code, markdown, values…)
    charts: list[str] = field(default_factory=list)  # plotly specs (JSON text)
    errors: list[str] = field(default_factory=list)  # exception elements and st.error bodies


class Session:
    """One websocket = one Streamlit session (its own st.session_state), like one browser tab."""

    def __init__(self, base_url: str, query: str = ""):
        self.ws_url = base_url.replace("http://", "ws://") + "/_stcore/stream"
        self.query = query
        self.ws = None
        self.widgets: dict[str, object] = {}  # widget key -> latest element proto (from the deltas)
        self.pages: dict[str, str] = {}  # url path ("" = overview) -> page_script_hash
        self.page_hash = ""
        self.page_name = ""
        self.sent: dict[str, WidgetState] = {}  # widget id -> the state we last set

    async def connect(self) -> RunResult:
        await self.open()
        return await self.rerun()

    async def open(self) -> None:
        """The websocket alone: no run is asked for yet."""
        self.ws = await websockets.connect(self.ws_url, subprotocols=["streamlit"], max_size=2**26,
                                           open_timeout=60, ping_interval=None)  # fmt: skip

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    async def rerun(self, states: list[WidgetState] | None = None, timeout: float = 120) -> RunResult:
        """Send a rerun (as a browser does after a widget change) and read until the run finishes."""
        for state in states or []:
            self.sent[state.id] = state
        msg = self.rerun_msg()
        start = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        result = RunResult(0.0, "ok")
        try:
            async with asyncio.timeout(timeout):
                while True:
                    fwd = ForwardMsg()
                    fwd.ParseFromString(await self.ws.recv())
                    kind = fwd.WhichOneof("type")
                    if kind == "delta":
                        self._read_delta(fwd.delta, result)
                    elif self.follow_page(fwd):
                        continue
                    elif kind == "script_finished":
                        status = fwd.script_finished
                        if status == ForwardMsg.FINISHED_SUCCESSFULLY:
                            break
                        if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                            continue  # an auto-rerun (st.rerun) follows
                        if status == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:
                            continue
                        result.status = f"script_finished={status}"
                        break
        except TimeoutError:
            result.status = "timeout"
        except websockets.ConnectionClosed as exc:
            result.status = f"closed: {exc}"
        result.seconds = time.perf_counter() - start
        if result.errors and result.status == "ok":
            result.status = "error element"
        return result

    def follow_page(self, fwd: ForwardMsg) -> bool:
        """Keep the page and URL the server says this tab is on (navigation, page_info_changed), as the
        browser does; False for any other message."""
        kind = fwd.WhichOneof("type")
        if kind == "navigation":
            self.pages = {p.url_pathname: p.page_script_hash for p in fwd.navigation.app_pages}
            self.page_hash = fwd.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query = fwd.page_info_changed.query_string
        else:
            return False
        return True

    def rerun_msg(self, once: tuple[WidgetState, ...] = (), fragment_id: str = "") -> BackMsg:
        """A rerun as the browser asks for it: the URL's query, the page, every widget state set so far,
        and ``once`` (a button's trigger: sent in this message only). ``fragment_id``: only that
        fragment runs, as the browser's timer asks every ``run_every`` seconds."""
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query
        cs.page_script_hash = self.page_hash
        cs.page_name = self.page_name
        cs.widget_states.widgets.extend([*self.sent.values(), *once])
        if fragment_id:
            cs.fragment_id = fragment_id
            cs.is_auto_rerun = True
        return msg

    def _read_delta(self, delta, result: RunResult) -> None:
        if delta.WhichOneof("type") != "new_element":
            return
        el = delta.new_element
        kind = el.WhichOneof("type")
        body = getattr(el, kind)
        if kind == "exception":
            result.errors.append(f"{body.type}: {body.message}")
        elif kind == "alert":
            if body.format == 1:  # ERROR
                result.errors.append(body.body)
            result.texts.append(body.body)
        elif kind == "code":
            result.texts.append(body.code_text)
        elif kind in ("markdown", "heading"):
            result.texts.append(body.body)
        elif kind == "plotly_chart":
            result.charts.append(body.spec)
        if kind in ("text_area", "text_input"):
            result.texts.append(body.value if body.set_value else body.default)
        widget_id = getattr(body, "id", "") if kind not in ("code", "markdown", "alert") else ""
        if isinstance(widget_id, str) and widget_id.startswith("$$ID-") and "-" in widget_id[5:]:
            user_key = widget_id.split("-", 2)[2]  # "$$ID-<hash>-<key>"
            if user_key and user_key != "None":
                self.widgets[user_key] = body

    # -- the widgets of the sidebar (ids read from the last run) --

    def _id(self, key: str) -> str:
        if key not in self.widgets:
            raise KeyError(f"widget {key!r} not on the page (have: {sorted(self.widgets)})")
        return self.widgets[key].id

    async def type_text(self, key: str, text: str) -> RunResult:
        ws = WidgetState(id=self._id(key), string_value=text)
        return await self.rerun([ws])

    async def set_slider(self, key: str, value: float) -> RunResult:
        ws = WidgetState(id=self._id(key))
        ws.double_array_value.data[:] = [value]
        return await self.rerun([ws])

    async def set_number(self, key: str, value: int) -> RunResult:
        return await self.rerun([WidgetState(id=self._id(key), int_value=value)])

    async def set_choice(self, key: str, label: str) -> RunResult:
        """A selectbox or radio: its (formatted) option label."""
        return await self.rerun([WidgetState(id=self._id(key), string_value=label)])

    async def switch_page(self, path: str) -> RunResult:
        """Like clicking a sidebar link: the page's hash; widget states of the old page are dropped."""
        self.page_hash = self.pages[path]
        self.page_name = path
        self.sent = {i: s for i, s in self.sent.items() if any(w.id == i for w in self.widgets.values())}
        self.widgets = {}
        return await self.rerun()


def chart_text(result: RunResult) -> str:
    """All annotation and tick texts of the run's charts, for checks."""
    out = []
    for spec in result.charts:
        layout = json.loads(spec).get("layout", {})
        out += [a.get("text", "") for a in layout.get("annotations", [])]
        for name, axis in layout.items():
            if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
                out += [str(t) for t in axis.get("ticktext", [])]
    return " ".join(out)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]
