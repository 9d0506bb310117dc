"""Load: N students on one server at once, each typing, moving sliders and switching pages.

    .venv/bin/python benchmarks/load.py                        # N = 10, 20, 40; 60 s each (~4 min)
    .venv/bin/python benchmarks/load.py --sessions 20 --duration 30 --think 0.5 2

One ``streamlit run app.py`` per N (headless, no file watcher, a free port). Each session is a
websocket client speaking Streamlit's protocol (benchmarks/stclient.py: why not Chromium), opened all
at once (the lecture: "open this URL now"). Each session has its own sentence (with a unique tag),
its own d_model (16/32/64/128 in turn) and seed, then loops until --duration: type a new sentence,
move the layers slider, switch page, change the seed, with a think time between actions.

Measured per N: first-load and interaction latency (BackMsg sent -> script_finished received), errors
(exception or st.error elements, timeouts, closed sockets: must be 0), isolation (a session must only
ever see its own tag, seed and d_model), server RSS and server CPU time per interaction.
Target: N = 20 with p95 <= 2 s and zero errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import secrets
import time
from pathlib import Path

from stclient import Server, Session, chart_text, percentile

D_MODELS = (16, 32, 64, 128)
PAGES = ["attention", "embeddings", "model", "masks", "positional", "tokenization", ""]
TAG = re.compile(r"ZQ\d{2}x[0-9a-f]{6}")


class Stats:
    def __init__(self):
        self.first: list[float] = []
        self.latency: dict[str, list[float]] = {}
        self.errors: list[str] = []
        self.leaks: list[str] = []

    def add(self, action: str, seconds: float) -> None:
        self.latency.setdefault(action, []).append(seconds)

    @property
    def all(self) -> list[float]:
        return [s for values in self.latency.values() for s in values]


def check(result, i: int, tag: str, seed: int, d_model: int, stats: Stats, action: str, page: str) -> None:
    if result.status != "ok":
        stats.errors.append(f"session {i} {action} on /{page}: {result.status} {result.errors[:1]}")
        return
    seen = {m for text in result.texts for m in TAG.findall(text)}
    if seen - {tag}:
        stats.leaks.append(f"session {i} ({tag}) saw {sorted(seen - {tag})} on /{page}")
    badge = [t for t in result.texts if "-badge[" in t]
    if badge and f"(seed {seed})" not in badge[0]:
        stats.leaks.append(f"session {i} expected seed {seed}, badge says {badge[0][:90]!r}")
    if page == "" and result.charts and f"d_model = {d_model}" not in chart_text(result):
        stats.leaks.append(f"session {i} expected d_model = {d_model} in the overview diagram")


async def student(i: int, url: str, duration: float, think: tuple[float, float], stats: Stats) -> None:
    rng = random.Random(i)
    tag = f"ZQ{i % 100:02d}x{secrets.token_hex(3)}"
    d_model, seed = D_MODELS[i % len(D_MODELS)], 100 + i
    # random weights: the default (trained) ones fix the sizes and show no seed, so nothing would vary
    session = Session(url, f"weights=random&d_model={d_model}&seed={seed}")
    page = ""
    try:
        first = await session.connect()
        stats.first.append(first.seconds)
        check(first, i, tag, seed, d_model, stats, "open", page)
        if first.status != "ok":
            return
        end = time.monotonic() + duration
        step = 0
        while time.monotonic() < end:
            await asyncio.sleep(rng.uniform(*think))
            kind = step % 4
            if kind == 0:
                action = "type"
                result = await session.type_text("sentence", f"{tag} says 注意力 attention step {step} 🙂")
            elif kind == 1:
                action = "slider"
                result = await session.set_slider("num_layers", 1 + step % 4)
            elif kind == 2:
                action = "page"
                page = PAGES[(step // 4 + i) % len(PAGES)]
                result = await session.switch_page(page)
            else:
                action = "seed"
                seed = 100 + i + 1000 * (step // 4 + 1)
                result = await session.set_number("seed", seed)
            stats.add(action, result.seconds)
            check(result, i, tag, seed, d_model, stats, action, page)
            if result.status != "ok":
                return
            if action == "type" and tag not in " ".join(result.texts):
                stats.leaks.append(f"session {i}: its sentence did not come back on /{page}")
            step += 1
    except Exception as exc:  # a client-side failure is an error of the run too
        stats.errors.append(f"session {i}: {type(exc).__name__}: {exc}")
    finally:
        await session.close()


async def sample_rss(server: Server, out: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        out.append(server.rss_mb())
        try:
            await asyncio.wait_for(stop.wait(), 1.0)
        except TimeoutError:
            pass


async def run_level(n: int, duration: float, think: tuple[float, float], cold: bool = False) -> dict:
    with Server() as server:
        rss_start = server.rss_mb()
        if not cold:
            # one warm-up session: the first run imports torch and builds the vocabulary (~3 s, once)
            warm = Session(server.url)
            await warm.connect()
            await warm.close()
        rss_warm = server.rss_mb()
        cpu0 = server.cpu_seconds()
        stats, rss, stop = Stats(), [], asyncio.Event()
        sampler = asyncio.create_task(sample_rss(server, rss, stop))
        t0 = time.monotonic()
        await asyncio.gather(*(student(i, server.url, duration, think, stats) for i in range(n)))
        wall = time.monotonic() - t0
        stop.set()
        await sampler
        cpu = server.cpu_seconds() - cpu0
        log_errors = server.log_errors()
    lat = stats.all
    return {
        "sessions": n,
        "wall_s": round(wall, 1),
        "interactions": len(lat),
        "first_load_p50_s": round(percentile(stats.first, 50), 3),
        "first_load_p95_s": round(percentile(stats.first, 95), 3),
        "p50_s": round(percentile(lat, 50), 3),
        "p95_s": round(percentile(lat, 95), 3),
        "max_s": round(max(lat, default=float("nan")), 3),
        "by_action_p95_s": {k: round(percentile(v, 95), 3) for k, v in sorted(stats.latency.items())},
        "errors": len(stats.errors) + len(log_errors),
        "error_samples": (stats.errors + log_errors)[:5],
        "isolation_violations": len(stats.leaks),
        "leak_samples": stats.leaks[:5],
        "rss_start_mb": round(rss_start),
        "rss_warm_mb": round(rss_warm),
        "rss_max_mb": round(max(rss, default=float("nan"))),
        "rss_end_mb": round(rss[-1]) if rss else None,
        "server_cpu_s": round(cpu, 1),
        "server_cpu_ms_per_interaction": round(1000 * cpu / max(1, len(lat) + len(stats.first))),
        "interactions_per_s": round(len(lat) / wall, 2),
    }


def machine() -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())  # fmt: skip
    mem = next(line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
               if line.startswith("MemTotal"))  # fmt: skip
    return {"nproc": os.cpu_count(), "cpu": cpu, "ram_gib": round(int(mem) / 2**20, 1),
            "loadavg_before": os.getloadavg()}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, nargs="+", default=[10, 20, 40])
    ap.add_argument("--duration", type=float, default=60, help="seconds of interactions per level")
    ap.add_argument("--think", type=float, nargs=2, default=(1.0, 3.0), metavar=("MIN", "MAX"),
                    help="seconds a student waits between two actions (uniform)")
    ap.add_argument("--cold", action="store_true",
                    help="no warm-up session: N sessions hit a fresh server at once")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    info = machine()
    print(json.dumps(info))
    results = []
    for n in args.sessions:
        res = asyncio.run(run_level(n, args.duration, tuple(args.think), args.cold))
        res["loadavg_after"] = os.getloadavg()
        results.append(res)
        print(json.dumps(res, ensure_ascii=False), flush=True)
    print("\n| N | interactions | p50 | p95 | max | first load p50/p95 | errors | isolation "
          "| RSS warm → max | server CPU / interaction |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['sessions']} | {r['interactions']} | {r['p50_s']:.2f} s | {r['p95_s']:.2f} s | "
              f"{r['max_s']:.2f} s | {r['first_load_p50_s']:.2f} / {r['first_load_p95_s']:.2f} s | "
              f"{r['errors']} | {r['isolation_violations']} | {r['rss_warm_mb']} → {r['rss_max_mb']} MB | "
              f"{r['server_cpu_ms_per_interaction']} ms |")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps({"machine": info, "results": results}, indent=1, ensure_ascii=False))
    failed = [r for r in results if r["errors"] or r["isolation_violations"]]
    target = [r for r in results if r["sessions"] == 20 and r["p95_s"] > 2.0]
    raise SystemExit(1 if failed or target else 0)


if __name__ == "__main__":
    main()
