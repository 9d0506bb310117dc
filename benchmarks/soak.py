"""Soak: does one server's memory stay bounded over a lecture? (a real server, websocket sessions)

    .venv/bin/python benchmarks/soak.py                    # 500 reruns + 200 sessions, ~4-6 min
    .venv/bin/python benchmarks/soak.py --reruns 100 --sessions 40
    .venv/bin/python benchmarks/soak.py --big 10             # issue 25's case, ~5 min
    GLASSBOX_CACHE_MB=1024 .venv/bin/python benchmarks/soak.py --big 10

1. Footprint: RSS after the first session (default model), then with d_model=512 / 6 layers cached.
2. One session, ``--reruns`` reruns with changing inputs: a new sentence every time, the seed cycling
   through 24 values and d_model through 16…128, pages in turn. Every rerun misses the trace cache
   and most miss the model cache, so the caches churn at their bounds (models: 8 entries, runs: 16,
   all of them within one budget in bytes, ui/caches/budget.py).
3. ``--sessions`` sessions opened and closed, 10 at a time, each with its own sentence and seed.

4. Worst case for the bounds: 8 different d_model=512 / 6-layer models (the model cache's max_entries),
   each on several pages and sentences: what the caches can hold at most.

5. ``--big N`` (phase 1, then this alone): one tab opened by its URL on Lecture with a sentence of 512
   tokens and a random d_model=512 / 6-layer model; N times a new seed in the sidebar (on Lecture),
   then Attention, then Lecture again: the RSS after each model, then after 90 idle seconds. Before
   issue 25 (caches bounded by entries) this went from 0.4 to 8.1 GB, +0.8 GB a model. The caches now
   share one budget in bytes (``GLASSBOX_CACHE_MB``, ui/caches/budget.py), and the RSS must level off: the
   last model's RSS at most 300 MB above the RSS after the third, and every sample under the budget
   plus ``BIG_OVERHEAD_MB``.

RSS is noisy (the allocator returns memory in steps), so a level is the mean of 5 samples. Target:
the level at the end is at most 100 MB above the level after warm-up (20 % into phase 2 / 3).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from pathlib import Path

from stclient import Server, Session, percentile


def level(samples: list[tuple[int, int]], at: int) -> float:
    """Mean RSS of the 5 samples from index ``at`` (negative: from the end)."""
    window = samples[at : at + 5] if at >= 0 else samples[at:]
    return round(sum(v for _, v in window) / len(window))


def growth(samples: list[tuple[int, int]]) -> dict:
    warm = level(samples, len(samples) // 5)
    end = level(samples, -5)
    return {"rss_after_warmup_mb": warm, "rss_end_mb": end, "growth_mb": end - warm,
            "rss_min_mb": min(v for _, v in samples), "rss_max_mb": max(v for _, v in samples),
            "rss_trail": samples[:: max(1, len(samples) // 12)]}  # fmt: skip

PAGES = ["", "attention", "embeddings", "model", "masks", "positional", "tokenization"]
D_MODELS = (16, 32, 64, 128)
BIG_MODEL = "weights=random&d_model=512&num_heads=8&num_layers=6&d_ff=2048&max_tokens=512"
# 15 copies: 543 tokens of the random model's byte-level BPE (844 characters), cut at 510 (+ BOS, EOS)
BIG_SENTENCE = " ".join(f"注意力就是一切 Attention is all you need. 变压器模型把每个词元看作查询、键和值。{i}"
                        for i in range(15))
# What the server holds beside its caches: code and libraries (~0.5 GB with every page visited), the
# spare model memory of core.model.weight_init.SLABS (up to 0.4 GB) and the run being computed (up to ~0.5
# GB).
BIG_OVERHEAD_MB = 1500


async def footprint(server: Server) -> dict:
    s = Session(server.url)
    await s.connect()
    for page in PAGES[1:]:
        await s.switch_page(page)
    await s.close()
    default = server.rss_mb()
    big = Session(server.url, "weights=random&d_model=512&num_heads=8&num_layers=6&d_ff=2048")
    r = await big.connect()
    for page in PAGES[1:]:
        r = await big.switch_page(page)
    await big.close()
    return {"rss_default_all_pages_mb": round(default), "rss_with_512x6_mb": round(server.rss_mb()),
            "big_model_status": r.status}  # fmt: skip


async def reruns(server: Server, n: int) -> dict:
    s = Session(server.url, "weights=random")  # the default (trained) weights fix the sizes
    await s.connect()
    rss, lat, errors = [], [], []
    for k in range(n):
        kind = k % 5
        if kind == 0:
            r = await s.switch_page(PAGES[(k // 5) % len(PAGES)])
        elif kind == 1:
            r = await s.set_number("seed", k % 24)
        elif kind == 2:
            r = await s.set_choice("d_model", str(D_MODELS[(k // 5) % len(D_MODELS)]))
        else:
            r = await s.type_text("sentence", f"soak {k}: 注意力就是一切 attention is all you need {k * 79}")
        lat.append(r.seconds)
        if r.status != "ok":
            errors.append(f"rerun {k}: {r.status} {r.errors[:1]}")
        if (k + 1) % 10 == 0:
            rss.append((k + 1, round(server.rss_mb())))
    await s.close()
    return {"reruns": n, **growth(rss), "errors": len(errors), "error_samples": errors[:5],
            "p50_s": round(percentile(lat, 50), 3), "p95_s": round(percentile(lat, 95), 3)}  # fmt: skip


async def one_visit(server: Server, i: int) -> str | None:
    s = Session(server.url, f"weights=random&seed={1000 + i}&d_model={D_MODELS[i % 4]}")
    try:
        r = await s.connect()
        if r.status == "ok":
            r = await s.type_text("sentence", f"visitor {i} 你好 hello")
        if r.status == "ok":
            r = await s.switch_page(PAGES[i % len(PAGES)])
        return None if r.status == "ok" else f"session {i}: {r.status} {r.errors[:1]}"
    finally:
        await s.close()


async def sessions(server: Server, n: int, batch: int = 10) -> dict:
    rss, errors = [], []
    for start in range(0, n, batch):
        found = await asyncio.gather(*(one_visit(server, i) for i in range(start, min(n, start + batch))))
        errors += [e for e in found if e]
        rss.append((min(n, start + batch), round(server.rss_mb())))
    await asyncio.sleep(2)  # let the server drop the closed sessions
    rss.append((n, round(server.rss_mb())))
    return {"sessions": n, **growth(rss), "errors": len(errors), "error_samples": errors[:5]}


async def worst_case(server: Server, models: int = 8) -> dict:
    """Fill the model cache with big models: what can one replica be made to hold?"""
    s = Session(server.url, "weights=random&d_model=512&num_heads=8&num_layers=6&d_ff=2048")
    await s.connect()
    peak, errors = server.rss_mb(), []
    for seed in range(models):
        r = await s.set_number("seed", 500 + seed)
        for page in ("attention", "model", ""):
            r = await s.switch_page(page)
            r = await s.type_text("sentence", f"worst case {seed} 注意力就是一切 attention is all you need")
            if r.status != "ok":
                errors.append(f"seed {seed} /{page}: {r.status}")
            peak = max(peak, server.rss_mb())
    await s.close()
    return {"models_512x6": models, "rss_peak_mb": round(peak), "rss_end_mb": round(server.rss_mb()),
            "errors": len(errors), "error_samples": errors[:5]}


async def big_models(server: Server, models: int, idle: float = 90) -> dict:
    """Issue 25's case: one tab opened by its URL on Lecture with a 512-token sentence; for each model
    a new seed in the sidebar (on Lecture), then Attention, then back to Lecture; RSS after each."""
    from urllib.parse import quote

    rss, errors, seconds = [], [], []
    s = Session(server.url, f"{BIG_MODEL}&seed=700&sentence={quote(BIG_SENTENCE)}")
    s.page_name = "lecture"  # the tab opens on /lecture?...
    r = await s.connect()
    start_rss = server.rss_mb()
    print(json.dumps({"big": "start", "rss_mb": round(start_rss), "status": r.status}), flush=True)
    for i in range(models):
        t0 = time.monotonic()
        for step in ("seed", "attention", "lecture"):
            r = await (s.set_number("seed", 700 + i) if step == "seed" else s.switch_page(step))
            if r.status != "ok":
                errors.append(f"model {i} {step}: {r.status} {r.errors[:1]}")
        rss.append(round(server.rss_mb()))
        seconds.append(round(time.monotonic() - t0, 1))
        print(json.dumps({"model": i + 1, "rss_mb": rss[-1], "seconds": seconds[-1], "status": r.status}),
              flush=True)
    await s.close()
    await asyncio.sleep(idle)
    idle_rss = round(server.rss_mb())
    print(json.dumps({"after_idle_s": idle, "rss_mb": idle_rss}), flush=True)
    return {"models": models, "rss_start_mb": round(start_rss), "rss_after_each_model_mb": rss,
            "rss_after_idle_mb": idle_rss, "seconds_per_model": seconds, "rss_max_mb": max(rss),
            "growth_after_third_mb": rss[-1] - rss[min(2, len(rss) - 1)],
            "errors": len(errors), "error_samples": errors[:5]}  # fmt: skip


def cache_budget_mb() -> int:
    """The cache budget the server will read (ui.caches.budget.limit_from_env: the same environment)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from ui.caches.budget import MB, limit_from_env

    return limit_from_env() // MB


async def main_async(args) -> dict:
    if args.big:
        budget = cache_budget_mb()
        with Server() as server:
            out = {"cache_budget_mb": budget, "rss_fresh_server_mb": round(server.rss_mb())}
            out["footprint"] = await footprint(server)
            print(json.dumps(out), flush=True)
            out["big"] = await big_models(server, args.big, args.idle)
            out["server_log_errors"] = server.log_errors()[:5]
        return out
    with Server() as server:
        out = {"rss_fresh_server_mb": round(server.rss_mb())}
        t0 = time.monotonic()
        out["footprint"] = await footprint(server)
        out["reruns"] = await reruns(server, args.reruns)
        out["sessions"] = await sessions(server, args.sessions)
        if not args.no_worst:
            out["worst_case"] = await worst_case(server)
        out["wall_s"] = round(time.monotonic() - t0)
        out["server_log_errors"] = server.log_errors()[:5]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reruns", type=int, default=500)
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--no-worst", action="store_true", help="skip phase 4 (8 big models)")
    ap.add_argument("--big", type=int, default=0, metavar="N",
                    help="only issue 25's case: N random 512/6 models, 512 tokens, Lecture + Attention")
    ap.add_argument("--idle", type=float, default=90, help="--big: seconds idle before the last sample")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    print(json.dumps({"nproc": os.cpu_count(), "loadavg_before": os.getloadavg()}))
    out = asyncio.run(main_async(args))
    out["loadavg_after"] = os.getloadavg()
    print(json.dumps(out, ensure_ascii=False, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, ensure_ascii=False, indent=1))
    if args.big:
        big = out["big"]
        ceiling = out["cache_budget_mb"] + BIG_OVERHEAD_MB
        ok = (big["growth_after_third_mb"] <= 300 and big["rss_max_mb"] <= ceiling
              and big["rss_after_idle_mb"] <= ceiling and not big["errors"] and not out["server_log_errors"])
        raise SystemExit(0 if ok else 1)
    ok = (out["reruns"]["growth_mb"] <= 100 and out["sessions"]["growth_mb"] <= 100
          and not out["reruns"]["errors"] and not out["sessions"]["errors"] and not out["server_log_errors"])
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
