"""Who does the work after a sidebar change: CPU seconds of the Streamlit server and of Chromium.

benchmarks/app.py times a change from key press to the last chart redrawn; on a 2-core machine that
wall time depends on how much CPU both sides burn. This script makes the same changes on one page
and reads each process's CPU time from /proc before and after (all of its threads):

    .venv/bin/python benchmarks/cpu_split.py attention          # 6 new models, 6 cached changes
    .venv/bin/python benchmarks/cpu_split.py masks --reps 10

"new model": a seed never used (a model is built and traced); "cached": seeds toggled among three
already built (model and run come from the caches; the page script and the browser still redraw).
Printed per kind: wall time (as benchmarks/app.py measures it) and CPU seconds of the server, the
Chromium renderer and its GPU process, median over the repetitions.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_app", ROOT / "benchmarks" / "app.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

TICKS = os.sysconf("SC_CLK_TCK")


def processes() -> dict[int, str]:
    """pid → role, for the server and every Chromium process now running."""
    roles = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "streamlit run" in cmd:
            roles[int(entry.name)] = "server"
        elif "chromium" in cmd:
            kind = "gpu" if "gpu-process" in cmd else "renderer" if "type=renderer" in cmd else "other"
            roles[int(entry.name)] = kind
    return roles


def cpu_seconds(pids) -> dict[int, float]:
    out = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[pid] = (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime, every thread
    return out


def measure(action, reps: int) -> dict[str, float]:
    rows = []
    for i in range(reps):
        roles = processes()
        before = cpu_seconds(roles)
        result = action(i)
        after = cpu_seconds(roles)
        row = {"wall": (result["last"] - result["t0"]) / 1000}
        for pid, role in roles.items():
            if pid in before and pid in after:
                row[role] = row.get(role, 0.0) + after[pid] - before[pid]
        rows.append(row)
    keys = ("wall", "server", "renderer", "gpu")
    return {k: statistics.median(r.get(k, 0.0) for r in rows) for k in keys}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("page", nargs="?", default="attention", help="page stem, e.g. attention, masks")
    ap.add_argument("--reps", type=int, default=6)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    print(bench.machine("start"))
    proc, base = bench.start_server()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=bench.CHROMIUM, args=bench.CHROMIUM_FLAGS)
            context = browser.new_context(viewport={"width": 1280, "height": 720})
            context.add_init_script(bench.RECORDER)
            bench.load(context, f"{base}/?seed=999")  # torch import and JS chunks, once
            page = context.new_page()
            path = "" if args.page == "overview" else args.page
            page.goto(f"{base}/{path}?{bench.BIG}", wait_until="commit")
            bench.wait_settled(page)
            for step in range(3):  # three models in the cache for the "cached" changes
                bench.change(page, "seed", step, 7000)
            # cached first: the new models below evict seeds 0-2 from st.cache_resource (8 entries),
            # and a "cached" change measured after them would rebuild half of its models
            kinds = {
                "cached": lambda i: bench.change(page, "seed", i % 3, 7000),
                "new model": lambda i: bench.change(page, "seed", 10 + i, 7000),
            }
            print(f"{args.page} at {bench.BIG}; medians of {args.reps}; CPU in seconds (all threads)")
            for name, action in kinds.items():
                m = measure(action, args.reps)
                print(f"  {name:<10} wall {m['wall']:.2f} s   server {m['server']:.2f}   "
                      f"renderer {m['renderer']:.2f}   gpu {m['gpu']:.2f}")
            browser.close()
    finally:
        proc.terminate()
    print(bench.machine("end"))


if __name__ == "__main__":
    main()
