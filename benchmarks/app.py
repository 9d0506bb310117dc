"""The app in a real browser: first-load time of every page, and slider change → every chart redrawn.

Target (issue): after a slider change every chart on the page is updated within 1 s, for the default
sentence and sizes up to d_model=512, 8 heads, 6 layers. One ``streamlit run app.py`` server, Debian's
Chromium through Playwright, every page of ``ui/page/nav.py``.

    .venv/bin/python benchmarks/app.py            # full run (5 repetitions), under ~10 minutes
    .venv/bin/python benchmarks/app.py --quick    # 2 repetitions, a few pages

How "done" is detected, in the page itself (an init script, timestamps from ``performance.now()``):
- script state: the ``data-test-script-state`` attribute of ``[data-testid="stApp"]`` (``running`` →
  ``notRunning``), which the frontend sets when the server's ``script_finished`` message arrives;
  the status widget lags it by its 200 ms fade-out, so it is only checked, not timed;
- a chart is (re)drawn when its plotly div is new or its ``_fullLayout`` object changed (plotly makes
  a new one on every ``react``/``newPlot``), polled every animation frame; an HTML view (the head
  view: an iframe in the page's main area) is redrawn when its new document has loaded, its scripts
  run, and counts as a chart (a changed ``srcdoc`` that never loaded is a stale chart);
- the page is settled when the script is ``notRunning`` (after a ``running`` seen since the key press
  or navigation), no chart placeholder (``stSkeleton``: plotly is a lazily loaded chunk) is left, no
  status widget, and neither the chart count nor any chart changed for 300 ms.
Tabbed pages draw only their open tab: the default one is measured with both widgets, every other
tab (``TABS``, opened by its URL parameter) with seed changes.
The time reported is the later of "script finished" and the last chart redraw (not the settle time,
which adds the 300 ms of quiet); a change that leaves every figure as it was (the seed, for the
overview diagram) is done when the script finishes.
After a key press every chart whose figure data changed must have been redrawn after the key press
(else the run fails: a stale chart); a chart whose figure is identical may keep its old drawing.

Split of the time: "script" = key press → script finished (server, plus the widget's debounce and
the websocket); "browser" = script finished → last chart redrawn (plotly, layout, paint), 0 when
the charts were all redrawn while the script was still running.

Model folders (issue 29, part 6: every page usable at the sizes real courses use):

    .venv/bin/python benchmarks/app.py --models gpt2-small,qwen2.5-0.5b --reps 2
    .venv/bin/python benchmarks/app.py --models gpt2-tiny,qwen2-tiny --reps 1   # tests' tiny folders

Per model a fresh server with ``GLASSBOX_MODELS`` = the models' root (benchmarks/models.py makes the
random-weight folders there, once) and ``GLASSBOX_CACHE_MB`` = ``--cache-mb`` (0.5B in float32 is
~2 GB: the default budget refuses it, as it should). Every page of ``ui/page/nav.py`` is opened with
``weights=hf:<name>`` ("first load"; the first page of the fresh server also imports torch and loads
the model), then a new sentence is typed into the sidebar's text area and submitted (Control+Enter),
timed from the key press until every chart is redrawn, as above ("new sentence"). A page that shows
an exception or an error, or never settles, is reported as a failure and not timed. After each
model's pages: the server's resident memory (VmRSS, and its peak VmHWM). Targets: a new sentence
≤ 2 s on every page at GPT-2 small's size, ≤ 5 s at Qwen2.5-0.5B's.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "browser"))  # serverprocess: the tests' own server command line
logging.disable(logging.WARNING)  # importing ui outside `streamlit run` warns "No runtime found"
from serverprocess import CHROMIUM, CHROMIUM_FLAGS, free_port, streamlit_command, wait_healthy  # noqa: E402

from i18n import t  # noqa: E402
from ui.page.nav import PAGES  # noqa: E402

logging.disable(logging.NOTSET)

TARGET_MS = 1000
# --models: a new sentence → every chart redrawn, per model (tiny folders: development runs only)
MODEL_TARGET_MS = {"gpt2-small": 2000, "qwen2.5-0.5b": 5000}
LOAD_TIMEOUT_MS = 600_000  # a fresh server's first page loads the model: 2 GB for 0.5B, on a loaded machine
CACHE_MB = 6144  # the whole budget (model + caches): 0.5B float32 weights alone are ~1.9 GB
# the largest sizes the target covers; random weights: the default (trained) ones fix the sizes
BIG = "weights=random&d_model=512&num_heads=8&num_layers=6"
QUIET_MS = 300
TIMEOUT_MS = 120_000
LABELS = {"num_layers": "num_layers 6↔5 (cached after 1st)", "seed": "seed (new model each time)"}
# Pages that draw one tab at a time: the default tab is measured with both widgets, each other tab
# (opened by its URL parameter) with seed changes, the slowest kind. (URL parameter, label's i18n key.)
TABS = {
    "pages/positional.py": [("pe_tab", "positional.tab.learned"), ("pe_tab", "positional.tab.rope"),
                            ("pe_tab", "positional.tab.alibi")],
    "pages/attention.py": [("attn_view", "attention.tab.grid"), ("attn_view", "attention.tab.query"),
                           ("attn_explore", "attention.tab.neuron_view")],
    "pages/model.py": [("model_view", "model.tab.stream"), ("model_view", "model.tab.output"),
                       ("model_view", "model.tab.decoding")],
}  # fmt: skip

RECORDER = """
(() => {
  const B = window.__bench = {events: [], state: undefined, count: -1, countAt: 0, lastChange: 0,
                              key: null, armed: false};
  const seen = new WeakMap();  // chart div -> the _fullLayout last seen
  window.addEventListener('keydown', () => {
    if (B.armed && B.key === null) B.key = performance.now();
  }, true);
  const charts = () => document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot');
  // HTML views (the head view) are iframes: redrawn when a new document has loaded (its scripts ran)
  const frames = () => document.querySelectorAll('[data-testid="stMain"] iframe');
  const source = (f) => f.getAttribute('srcdoc') || f.getAttribute('src') || '';
  document.addEventListener('load', (e) => {
    if (e.target.tagName !== 'IFRAME') return;
    e.target.__drawn = B.lastChange = performance.now();
  }, true);
  function tick() {
    const now = performance.now();
    const app = document.querySelector('[data-testid="stApp"]');
    const st = app ? app.getAttribute('data-test-script-state') : null;
    if (st !== B.state) { B.events.push([now, st]); B.state = st; }
    const gds = charts();
    if (gds.length !== B.count) { B.count = gds.length; B.countAt = now; }
    for (const gd of gds) {
      const f = gd._fullLayout;
      if (f && seen.get(gd) !== f) { seen.set(gd, f); gd.__drawn = now; B.lastChange = now; }
    }
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);
  // a short run (running → notRunning) can fall between two frames of a busy machine: every change of
  // the script state is also taken from the mutation records (state after change i = old value of i+1)
  new MutationObserver((recs) => {
    const now = performance.now();
    const last = recs.at(-1).target.getAttribute('data-test-script-state');
    const after = [...recs.slice(1).map((r) => r.oldValue), last];
    for (const st of after) if (st !== B.state) { B.events.push([now, st]); B.state = st; }
  }).observe(document, {subtree: true, attributes: true, attributeOldValue: true,
                        attributeFilter: ['data-test-script-state']});
  const hash = (gd) => {
    const s = JSON.stringify(gd.data || null);
    let h = 0;
    for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
    return s.length + ':' + h;
  };
  B.arm = () => {
    for (const gd of charts()) { gd.__old = true; gd.__hash = hash(gd); }
    for (const f of frames()) { f.__old = true; f.__source = source(f); }
    B.events = [[performance.now(), B.state]];
    B.key = null;
    B.armed = true;
  };
  const since = () => (B.armed ? B.key : 0);
  B.done = (quiet) => {
    const t0 = since();
    if (t0 === null) return false;
    const now = performance.now();
    const ran = B.events.some(([t, s]) => t >= t0 && s === 'running');
    return ran && B.state === 'notRunning'
      && !document.querySelector('[data-testid="stStatusWidget"]')
      && !document.querySelector('[data-testid="stMain"] [data-testid="stSkeleton"]')
      && [...charts()].every((gd) => gd._fullLayout)
      && [...frames()].every((f) => f.__drawn !== undefined)
      // a frame given a new document is done when that document has loaded (it can take longer than
      // the quiet time on a busy machine); one that never loads times out
      && [...frames()].every((f) => !f.__old || f.__drawn > t0 || source(f) === f.__source)
      && now - B.countAt >= quiet && now - B.lastChange >= quiet;
  };
  B.why = () => {  // what keeps a page from settling (reported with a timeout)
    const now = performance.now();
    return {state: B.state, sinceKey: B.key === null ? null : Math.round(now - B.key),
            status: !!document.querySelector('[data-testid="stStatusWidget"]'),
            skeletons: document.querySelectorAll('[data-testid="stMain"] [data-testid="stSkeleton"]').length,
            charts: charts().length, undrawn: [...charts()].filter((gd) => !gd._fullLayout).length,
            frames: frames().length,
            framesUnloaded: [...frames()].filter((f) => f.__drawn === undefined).length,
            msSinceCountChange: Math.round(now - B.countAt), msSinceRedraw: Math.round(now - B.lastChange),
            states: B.events.map(([at, st]) => [Math.round(at - (B.key ?? 0)), st])};
  };
  B.result = () => {
    const t0 = since();
    const run = B.events.find(([t, s]) => t >= t0 && s === 'running');
    const fin = B.events.find(([t, s]) => run && t >= run[0] && s === 'notRunning');
    const out = {t0, running: run ? run[0] : null, finished: fin ? fin[0] : null, charts: 0,
                 redrawn: 0, unchanged: 0, stale: 0, lastChart: null};
    out.staleKinds = [];
    const count = (el, changed, kind) => {
      out.charts += 1;
      const fresh = !el.__old || el.__drawn > t0;
      if (fresh) { out.redrawn += 1; out.lastChart = Math.max(out.lastChart ?? 0, el.__drawn); }
      else if (changed) { out.stale += 1; out.staleKinds.push(kind); }
      else out.unchanged += 1;
    };
    for (const gd of charts()) count(gd, !gd.__old || hash(gd) !== gd.__hash, 'plotly chart');
    for (const f of frames()) count(f, !f.__old || source(f) !== f.__source, 'HTML view');
    // the page is up to date when the script has finished and the last chart is redrawn
    out.last = Math.max(out.finished ?? 0, out.lastChart ?? 0);
    return out;
  };
})();
"""


def start_server(env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(streamlit_command(port), cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    try:
        wait_healthy(proc, url)
    except RuntimeError as e:
        proc.kill()
        sys.exit(str(e))
    return proc, url


def machine(label: str) -> str:
    model = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    load = Path("/proc/loadavg").read_text().split()[:3]
    return f"{label}: nproc {os.cpu_count()}, {model}, load average {' '.join(load)}"


def url_path(script: str) -> str:
    return "" if script == PAGES[0][0] else Path(script).stem


def wait_settled(page, timeout_ms: int = TIMEOUT_MS) -> dict:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(f"window.__bench.done({QUIET_MS})", timeout=timeout_ms, polling=50)
    except PlaywrightTimeout:
        raise NotSettled(f"not settled in {timeout_ms} ms: {page.evaluate('window.__bench.why()')}") from None
    return page.evaluate("window.__bench.result()")


class NotSettled(RuntimeError):
    pass


def load(context, url: str) -> dict:
    """Open ``url`` in a new page; times from navigation start (performance.now() = 0)."""
    page = context.new_page()
    try:
        page.goto(url, wait_until="commit")
        r = wait_settled(page)
        if page.get_by_test_id("stException").count():
            raise RuntimeError(f"exception on {url}")
        return r
    finally:
        page.close()


class Stale(RuntimeError):
    pass


def change(page, widget: str, step: int, fresh_seed: int = 1000) -> dict:
    """One sidebar change; times from the key press. ``fresh_seed``: a seed no page has used yet
    (seed changes must build a new model, not find one another page left in the cache)."""
    page.evaluate("window.__bench.arm()")
    if widget == "num_layers":
        slider = page.locator(".st-key-num_layers input[type=range]")
        slider.focus()
        slider.press("ArrowLeft" if step % 2 == 0 else "ArrowRight")  # 6 → 5 → 6 → …
    else:  # seed: a new model every time (never cached)
        box = page.locator(".st-key-seed input")
        box.fill(str(fresh_seed + step))
        box.press("Enter")
    r = wait_settled(page)
    if r["stale"]:
        raise Stale(f"{r['stale']} chart(s) with new data were not redrawn")
    return r


def fmt(values: list[float]) -> str:
    if not values:
        return "—"
    return f"{statistics.median(values):6.0f} / {max(values):6.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 repetitions; Overview, Attention, Full model")
    ap.add_argument("--reps", type=int, default=None, help="repetitions per measurement (default 5, quick 2)")
    ap.add_argument("--pages", default=None, help="comma-separated page stems, e.g. attention,model")
    ap.add_argument("--no-tabs", action="store_true", help="only the default tab of a tabbed page")
    ap.add_argument("--models", default=None,
                    help="model folders instead of the sizes above, e.g. gpt2-small,qwen2.5-0.5b")
    ap.add_argument("--models-root", type=Path, default=None, help="where the model folders are made")
    ap.add_argument("--cache-mb", type=int, default=CACHE_MB, help="GLASSBOX_CACHE_MB for --models")
    args = ap.parse_args()
    reps = args.reps or (2 if args.quick else 5)
    pages = list(PAGES)
    if args.pages or args.quick:
        wanted = (args.pages or "overview,attention,model").split(",")
        pages = [p for p in PAGES if Path(p[0]).stem in wanted]
    if args.models:
        return run_models(args.models.split(","), args.models_root, args.cache_mb, pages, reps,
                          tabs=not args.no_tabs)

    from playwright.sync_api import sync_playwright

    print(machine("start"))
    print(f"{reps} repetitions; times in ms, median / max; target: every chart redrawn ≤ {TARGET_MS} ms\n")
    started = time.monotonic()
    proc, base = start_server()
    rows = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            context = browser.new_context(viewport={"width": 1280, "height": 720})
            context.add_init_script(RECORDER)
            first = load(context, f"{base}/?seed=999")  # imports torch, loads every JS chunk once
            print(f"first page of a fresh server and browser (torch import, JS): {first['last']:.0f} ms\n")
            for i, (script, title, *_) in enumerate(pages):
                path = url_path(script)
                cold, warm = [], []
                for r in range(reps):  # a seed never seen: this page builds its model
                    url = f"{base}/{path}?{BIG}&seed={100 * (i + 1) + r}"
                    cold.append(load(context, url))
                    warm.append(load(context, url))
                page = context.new_page()
                page.goto(f"{base}/{path}?{BIG}", wait_until="commit")
                wait_settled(page)
                changes = {}
                # the lecture page folds the sidebar away: its loads are measured, not slider changes
                for widget in ("num_layers", "seed") if script != "pages/lecture.py" else ():
                    changes[widget] = [change(page, widget, step, 1000 * (i + 1)) for step in range(reps)]
                page.close()
                for j, (param, label_key) in enumerate(() if args.no_tabs else TABS.get(script, ())):
                    label = t(label_key, "en")
                    page = context.new_page()
                    page.goto(f"{base}/{path}?{BIG}&{urlencode({param: label})}", wait_until="commit")
                    wait_settled(page)
                    fresh = 1000 * (i + 1) + 100 * (j + 1)
                    changes[f"seed, tab {label}"] = [change(page, "seed", s, fresh) for s in range(reps)]
                    page.close()
                rows.append((title, cold, warm, changes))
                report_page(title, cold, warm, changes)
            browser.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()

    print("\nSummary (slider change → every chart redrawn, max over repetitions):")
    for title, _cold, _warm, changes in rows:
        verdicts = []
        for widget, rs in changes.items():
            totals = [r["last"] - r["t0"] for r in rs]
            if not rs[0]["charts"]:
                verdicts.append(f"{widget}: no charts")
                continue
            worst = max(totals)
            verdicts.append(f"{widget}: {'meets' if worst <= TARGET_MS else 'MISSES'} ({worst:.0f} ms)")
        print(f"  {title:<20} " + "; ".join(verdicts))
    print(f"\n{machine('end')}; wall time {time.monotonic() - started:.0f} s")


def report_page(title: str, cold: list[dict], warm: list[dict], changes: dict) -> None:
    def loads(rs):
        return fmt([r["last"] for r in rs])

    n = cold[0]["charts"]
    print(f"{title} ({n} charts at {BIG.replace('&', ', ')})")
    for label, rs in (("load cold (new seed: model built)", cold), ("load warm (same URL, new tab)", warm)):
        print(f"  {label:<34} {loads(rs)}   script done {fmt([r['finished'] for r in rs])}")
    for widget, rs in changes.items():
        total = [r["last"] - r["t0"] for r in rs]
        script = [r["finished"] - r["t0"] for r in rs]
        browser = [r["last"] - r["finished"] for r in rs]
        redrawn = statistics.median(r["redrawn"] for r in rs)
        label = LABELS.get(widget, widget)
        print(
            f"  {label:<34} {fmt(total)}   script {fmt(script)}   browser {fmt(browser)}"
            f"   ({redrawn:.0f} of {rs[0]['charts']} charts redrawn)"
        )


# -- --models: model folders at real sizes (issue 29, part 6) ----------------------------------------------


def model_folder(kind: str, root: Path | None) -> Path:
    """The folder of ``kind``: benchmarks/models.py's real sizes, or the tests' tiny folders."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import models as bench_models

    root = root or bench_models.DEFAULT_ROOT
    if kind in bench_models.KINDS:
        return bench_models.make(kind, root)
    from tests.modelfolders import NAMES, make_model_folders

    if kind not in NAMES:
        sys.exit(f"unknown model {kind!r}: one of {', '.join(bench_models.KINDS + NAMES)}")
    return make_model_folders(root, [kind]) / kind


def memory(pid: int) -> dict[str, int]:
    """The server's resident memory now and at its peak, in MB (/proc/<pid>/status: VmRSS, VmHWM)."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) // 1024  # kB
    return out


class PageFailed(RuntimeError):
    pass


def check_page(page) -> None:
    """PageFailed when the page shows an exception (a traceback) or an error box."""
    for test_id in ("stException", "stAlertContentError"):
        found = page.get_by_test_id(test_id)
        if found.count():
            text = " ".join(found.first.inner_text().split())
            raise PageFailed(f"{test_id}: {text[:200]}")


def open_settled(context, url: str):
    """A new tab at ``url``, settled and checked; (the tab, the load's timings from navigation start)."""
    page = context.new_page()
    try:
        page.goto(url, wait_until="commit")
        r = wait_settled(page, LOAD_TIMEOUT_MS)
        check_page(page)
    except Exception:
        page.close()
        raise
    return page, r


def new_sentence(page, text: str) -> dict:
    """Type ``text`` into the sidebar's sentence and submit it; times from the key press (Control)."""
    box = page.locator(".st-key-sentence textarea")
    unfold = page.get_by_test_id("stExpandSidebarButton")  # the lecture page folds the sidebar away
    if not box.is_visible() and unfold.is_visible():
        unfold.click()
    box.fill(text)  # no key event: the clock starts at the submitting key press
    page.evaluate("window.__bench.arm()")
    box.press("Control+Enter")
    r = wait_settled(page)
    check_page(page)
    if r["stale"]:
        raise Stale(f"not redrawn with the new data: {', '.join(r['staleKinds'])}")
    return r


SENTENCES = (
    "The students ask which words the model looks at {n} times.",
    "老师用新的句子第{n}次讲解注意力。",
    "Attention is all you need, said the paper in {n} pages 🙂",
)


def sentence(n: int) -> str:
    """A sentence no page has seen yet (nothing cached), English, Chinese or mixed in turn."""
    return SENTENCES[n % len(SENTENCES)].format(n=n)


def run_models(kinds: list[str], root: Path | None, cache_mb: int, pages: list, reps: int,
               tabs: bool) -> None:
    """Every page with each model folder of ``kinds``, one fresh server per model; prints as it goes."""
    from playwright.sync_api import sync_playwright

    folders = {kind: model_folder(kind, root) for kind in kinds}  # made before any timing starts
    print(machine("start"))
    print(f"GLASSBOX_CACHE_MB={cache_mb}; {reps} repetitions; times in ms, median / max")
    started = time.monotonic()
    results = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        for kind, folder in folders.items():
            results[kind] = bench_model(browser, kind, folder, cache_mb, pages, reps, tabs)
        browser.close()
    print_model_summary(results)
    print(f"\n{machine('end')}; wall time {time.monotonic() - started:.0f} s")


def bench_model(browser, kind: str, folder: Path, cache_mb: int, pages: list, reps: int, tabs: bool):
    """(rows, memory, target) of one model: each page (and tab) opened, then new sentences."""
    env = {"GLASSBOX_MODELS": str(folder.parent), "GLASSBOX_CACHE_MB": str(cache_mb)}
    target = MODEL_TARGET_MS.get(kind, 2000)
    print(f"\n{kind}: weights=hf:{kind}, GLASSBOX_MODELS={folder.parent}; target: new sentence ≤ {target} ms")
    proc, base = start_server(env)
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.add_init_script(RECORDER)
    rows = []
    try:
        for script, title, *_ in pages:
            for tab in [None, *(TABS.get(script, ()) if tabs else ())]:
                rows.append(bench_view(context, base, kind, (script, title, tab), reps))
                print_model_row(rows[-1], target, first=len(rows) == 1)
        mem = memory(proc.pid)
    finally:
        context.close()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    print(f"  server memory after every page: VmRSS {mem['VmRSS']:,} MB, peak VmHWM {mem['VmHWM']:,} MB")
    return rows, mem, target


_SENTENCE_NO = iter(range(1, 10**6))  # one count for the whole run: no sentence is ever typed twice


def bench_view(context, base: str, kind: str, view: tuple, reps: int) -> dict:
    """One page (or one tab of it): its first load, then ``reps`` new sentences; a failure instead of
    the times when the page shows an exception or an error, has a stale chart or never settles."""
    from playwright.sync_api import Error as PlaywrightError

    script, title, tab = view
    query = {"weights": f"hf:{kind}"}
    if tab:
        query[tab[0]] = t(tab[1], "en")
        title = f"{title}, tab {t(tab[1], 'en')}"
    row = {"title": title, "load": None, "charts": 0, "sentence": [], "failure": None}
    page = None
    try:
        page, r = open_settled(context, f"{base}/{url_path(script)}?{urlencode(query)}")
        row["load"], row["charts"] = r["last"], r["charts"]
        row["sentence"] = [new_sentence(page, sentence(next(_SENTENCE_NO))) for _ in range(reps)]
    except (PageFailed, Stale, NotSettled, PlaywrightError) as e:
        row["failure"] = f"{type(e).__name__}: {str(e).splitlines()[0][:240]}"
        row["sentence"] = []  # a failed page is not timed
    finally:
        if page is not None:
            page.close()
    return row


def print_model_row(row: dict, target: int, first: bool = False) -> None:
    load = "" if row["load"] is None else f"{row['load']:6.0f}"
    what = "first load (fresh server: torch import + model load)" if first else "first load"
    if row["failure"]:
        print(f"  {row['title']:<40} FAILED ({what} {load or '—'}): {row['failure']}")
        return
    totals = [r["last"] - r["t0"] for r in row["sentence"]]
    script = [r["finished"] - r["t0"] for r in row["sentence"]]
    verdict = "meets" if max(totals) <= target else "MISSES"
    print(
        f"  {row['title']:<40} {what} {load}; new sentence {fmt(totals)} (script {fmt(script)})"
        f"  {verdict} ≤ {target}  ({row['charts']} charts)"
    )


def print_model_summary(results: dict) -> None:
    print("\nSummary (ms; new sentence = median of the repetitions; RSS after each model's pages):")
    print(f"  {'page':<40} " + "".join(f"{kind + ': load / sentence':>38}" for kind in results))
    titles = [row["title"] for row in next(iter(results.values()))[0]]
    for i, title in enumerate(titles):
        cells = []
        for rows, _mem, target in results.values():
            row = rows[i]
            if row["failure"]:
                cells.append(f"{'FAILED':>38}")
                continue
            med = statistics.median(r["last"] - r["t0"] for r in row["sentence"])
            mark = "" if med <= target else " MISSES"
            cells.append(f"{row['load']:>14.0f} / {med:6.0f} (≤ {target}){mark:>7}")
        print(f"  {title:<40} " + "".join(cells))
    for kind, (_rows, mem, _target) in results.items():
        print(f"  {kind}: VmRSS {mem['VmRSS']:,} MB, peak {mem['VmHWM']:,} MB")


if __name__ == "__main__":
    main()
