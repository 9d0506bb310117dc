"""The app in a real browser: first-load time of every page, and slider change → every chart redrawn.

Target (issue): after a slider change every chart on the page is updated within 1 s, for the default
sentence and sizes up to d_model=512, 8 heads, 6 layers. One ``streamlit run app.py`` server, Debian's
Chromium through Playwright, every page of ``ui/nav.py``.

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
from ui.nav import PAGES  # noqa: E402

logging.disable(logging.NOTSET)

TARGET_MS = 1000
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
      && now - B.countAt >= quiet && now - B.lastChange >= quiet;
  };
  B.result = () => {
    const t0 = since();
    const run = B.events.find(([t, s]) => t >= t0 && s === 'running');
    const fin = B.events.find(([t, s]) => run && t >= run[0] && s === 'notRunning');
    const out = {t0, running: run ? run[0] : null, finished: fin ? fin[0] : null, charts: 0,
                 redrawn: 0, unchanged: 0, stale: 0, lastChart: null};
    const count = (el, changed) => {
      out.charts += 1;
      const fresh = !el.__old || el.__drawn > t0;
      if (fresh) { out.redrawn += 1; out.lastChart = Math.max(out.lastChart ?? 0, el.__drawn); }
      else if (changed) out.stale += 1;
      else out.unchanged += 1;
    };
    for (const gd of charts()) count(gd, !gd.__old || hash(gd) !== gd.__hash);
    for (const f of frames()) count(f, !f.__old || source(f) !== f.__source);
    // the page is up to date when the script has finished and the last chart is redrawn
    out.last = Math.max(out.finished ?? 0, out.lastChart ?? 0);
    return out;
  };
})();
"""


def start_server() -> tuple[subprocess.Popen, str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(streamlit_command(port), cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
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


def wait_settled(page) -> dict:
    page.wait_for_function(f"window.__bench.done({QUIET_MS})", timeout=TIMEOUT_MS, polling=50)
    return page.evaluate("window.__bench.result()")


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
    args = ap.parse_args()
    reps = args.reps or (2 if args.quick else 5)
    pages = list(PAGES)
    if args.pages or args.quick:
        wanted = (args.pages or "overview,attention,model").split(",")
        pages = [p for p in PAGES if Path(p[0]).stem in wanted]

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


if __name__ == "__main__":
    main()
