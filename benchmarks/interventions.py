"""Interventions at GPT-2 small's size (issue 41, part 6): ablated reruns, the patching grids, the lens.

    .venv/bin/python benchmarks/interventions.py                # ~3 min (the folder made once, ~0.5 GB)
    .venv/bin/python benchmarks/interventions.py --separate 144  # all 144 unbatched patched runs timed
    .venv/bin/python benchmarks/interventions.py --threads 2     # default 1 thread, as the app runs

A random-weight GPT-2 small folder (benchmarks/models.py: ``GPT2Config()``'s sizes, n_embd 768,
12 layers × 12 heads, 50,257 vocabulary rows, saved with transformers' ``save_pretrained`` in the
system temp dir, made once and reused; nothing is downloaded) is loaded as the app loads a folder
(``ui.folders.hf_pipeline.load_model("hf:gpt2-small")``). On one 20-token sentence, each figure is the
median of ``--reps`` repetitions, every one measured in the same run beside the intact run (``model.trace``
of the same 20 tokens), interleaved so drift on a shared machine hits all alike:

- one ablated rerun: the twin of ``core.interventions.runs.ablated`` (head 6.1 off, zero and mean
  mode) traced on the same tokens; target ≤ 1 s. The twin is made once (and mean mode's reference
  means computed once): that first cost is reported apart.
- activation patching, ``core.interventions.patching.patch``: the 12 × 12 head grid and the 12 × 20
  residual grid, batched (both runs' traces included); target ≤ 5 s. The head grid alone and the
  residual grid alone are timed through the private ``_head_grid`` / ``_resid_grid`` on the same two
  traces. For comparison: separate unbatched patched runs, one ``model.trace(corrupted, edits=...)``
  per head (``--separate`` of them timed, extrapolated to 144 when fewer, and said so).
- the logit lens, ``core.interventions.lens.logit_lens`` on the intact trace; target ≤ 0.5 s.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is imported: never ask the Hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
logging.disable(logging.WARNING)  # importing ui outside `streamlit run` warns "No runtime found"
import models as bench_models  # noqa: E402

from core.interventions.lens import logit_lens  # noqa: E402
from core.interventions.patching import Inputs, _head_grid, _resid_grid, patch  # noqa: E402
from core.interventions.runs import ablated, reference_sentences  # noqa: E402
from core.model.edits import Edits, Replace  # noqa: E402
from core.model.transformer import _eval_mode  # noqa: E402
from core.tracing.pipeline import run_pipeline  # noqa: E402

KIND = "gpt2-small"
TOKENS = 20
SENTENCE = (
    "When Mary and John went to the store, John gave a drink to Mary because she had asked him for "
    "one and the shop was about to close"
)
HEAD = "dec.6.1"  # the head switched off (layer 6 of 12, head 1)
CHANGED = 3  # the corrupted sentence differs from the clean one in this token


def machine() -> str:
    """The CPU, its cores, torch's threads and versions."""
    cpu = platform.processor() or platform.machine()
    try:
        info = Path("/proc/cpuinfo").read_text().splitlines()
        names = [line.split(":", 1)[1].strip() for line in info if line.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores; torch {torch.__version__}, {torch.get_num_threads()} thread(s); "
        f"Python {platform.python_version()}"
    )


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def load(root: Path):
    """The app's pipeline of the random GPT-2 small folder under ``root`` (made first when missing)."""
    folder = bench_models.make(KIND, root)
    os.environ["GLASSBOX_MODELS"] = str(folder.parent)
    from ui.folders.hf_pipeline import load_model

    start = time.perf_counter()
    pipe = load_model(f"hf:{KIND}")
    took = time.perf_counter() - start
    print(f"loaded as the app loads a folder (ui.folders.hf_pipeline.load_model) in {took:.1f} s")
    return pipe


def profile(figures: dict) -> None:
    """torch's profiler on patch() and the lens: the operators that take the time."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    for name in ("patch(): head grid + residual grid", "logit lens (logit_lens)"):
        with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
            figures[name]()
        print(f"\n{name}, torch profiler, by operator (self time):")
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=8))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1, as the app runs)")
    ap.add_argument("--reps", type=int, default=3, help="rounds of repetitions (median)")
    ap.add_argument("--profile", action="store_true", help="then where patch() and the lens spend their time")
    ap.add_argument("--separate", type=int, default=12, help="unbatched patched runs timed (144: all)")
    ap.add_argument("--root", type=Path, default=bench_models.DEFAULT_ROOT, help="where the folder is made")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    pipe = load(args.root)
    model = pipe.model
    c = model.config
    ids = torch.tensor([pipe.src_encode(SENTENCE)[1][:TOKENS]])
    if ids.size(1) != TOKENS:
        sys.exit(f"the sentence has {ids.size(1)} tokens, not {TOKENS}")
    corrupted = ids.clone()
    corrupted[0, CHANGED] = int(ids[0, CHANGED]) + 1 if int(ids[0, CHANGED]) + 1 < c.tgt_vocab_size else 0
    h, n = c.num_heads, c.num_layers
    print(
        f"{KIND}: d_model {c.d_model}, {n} layers × {h} heads, vocabulary {c.tgt_vocab_size:,}, "
        f"{sum(p.numel() for p in model.parameters()):,} parameters; {TOKENS} tokens\n{machine()}\n"
    )

    # first costs, once: each twin (weights shared), mean mode's reference means
    first = {}
    for mode in ("zero", "mean"):
        first[mode] = timed(lambda mode=mode: ablated(pipe, HEAD, mode))
    twins = {mode: ablated(pipe, HEAD, mode).model for mode in ("zero", "mean")}

    clean_tr, corr_tr = model.trace(ids), model.trace(corrupted)
    position = TOKENS - 1

    def head_grid():
        with torch.no_grad(), _eval_mode(model):
            _head_grid(model, clean_tr, corr_tr, position)

    def resid_grid():
        with torch.no_grad(), _eval_mode(model):
            _resid_grid(model, clean_tr, corr_tr, position)

    def separate(count: int):
        """``count`` unbatched patched runs, each one head of one layer from the clean run."""
        for k in range(count):
            layer, head = k % n, (k // n) % h
            keep = torch.ones(1, h, 1, 1, dtype=torch.bool)
            keep[0, head] = False
            edits = Edits({("dec", layer, "heads"): Replace(keep, clean_tr.decoder[layer].self_attn.heads)})
            model.trace(corrupted, edits=edits)

    figures = {
        "intact run (model.trace)": lambda: model.trace(ids),
        f"ablated rerun, {HEAD} zero": lambda: twins["zero"].trace(ids),
        f"ablated rerun, {HEAD} mean": lambda: twins["mean"].trace(ids),
        "intact, as the app runs it (run_pipeline)": lambda: run_pipeline(pipe, SENTENCE, max_tokens=TOKENS),
        f"ablated {HEAD} zero, as the app runs it": lambda: run_pipeline(
            ablated(pipe, HEAD, "zero"), SENTENCE, max_tokens=TOKENS
        ),
        "patch(): head grid + residual grid": lambda: patch(model, Inputs(ids), Inputs(corrupted), position),
        "head grid alone (_head_grid)": head_grid,
        "residual grid alone (_resid_grid)": resid_grid,
        f"{args.separate} separate patched runs": lambda: separate(args.separate),
        "logit lens (logit_lens)": lambda: logit_lens(model, clean_tr),
    }
    heavy = {
        "patch(): head grid + residual grid",
        "head grid alone (_head_grid)",
        "residual grid alone (_resid_grid)",
        f"{args.separate} separate patched runs",
    }
    for name, fn in figures.items():  # warm-up (the grids' first run costs what the others do)
        if name not in heavy:
            fn()
    times: dict[str, list[float]] = {name: [] for name in figures}
    load_before = os.getloadavg()[0]
    for _ in range(args.reps):  # interleaved: every figure in every round, the cheap ones 3 times
        for name, fn in figures.items():
            for _ in range(1 if name in heavy else 3):
                times[name].append(timed(fn))
    load_after = os.getloadavg()[0]
    med = {name: statistics.median(t) for name, t in times.items()}
    spread = {name: (min(t), max(t)) for name, t in times.items()}

    sep = med[f"{args.separate} separate patched runs"]
    sep_144 = sep * (h * n) / args.separate
    targets = {
        f"ablated rerun, {HEAD} zero": 1.0,
        f"ablated rerun, {HEAD} mean": 1.0,
        f"ablated {HEAD} zero, as the app runs it": 1.0,
        "patch(): head grid + residual grid": 5.0,
        "logit lens (logit_lens)": 0.5,
    }
    print(
        f"median of {args.reps} rounds, interleaved (the grids once a round, the rest 3 times), "
        f"load average {load_before:.1f} before, {load_after:.1f} after:\n"
    )
    print("| what | median | min – max | target | met |")
    print("|---|---|---|---|---|")
    for name in figures:
        target = targets.get(name)
        lo, hi = spread[name]
        met = "—" if target is None else ("yes" if med[name] <= target else "**no**")
        limit = "—" if target is None else f"≤ {target:g} s"
        print(f"| {name} | {med[name]:.3f} s | {lo:.3f} – {hi:.3f} s | {limit} | {met} |")
    said = "measured" if args.separate == h * n else f"extrapolated from {args.separate}"
    print(f"| {h * n} separate patched runs ({said}) | {sep_144:.2f} s | — | — | — |")
    print(
        f"\nfirst time a part is switched off (once per part and mode, then kept in pipe.twins): "
        f"zero {first['zero']:.3f} s (the twin), mean {first['mean']:.3f} s (the twin and the "
        f"reference means: {len(reference_sentences())} "
        f"sentences through the intact model)"
    )
    grid = med["patch(): head grid + residual grid"]
    print(
        f"patch() is {sep_144 / grid:.1f}× faster than {h * n} separate runs "
        f"(the head grid alone: {sep_144 / med['head grid alone (_head_grid)']:.1f}×); "
        f"one separate run {sep / args.separate * 1e3:.0f} ms, the intact trace "
        f"{med['intact run (model.trace)'] * 1e3:.0f} ms"
    )
    if args.profile:
        profile(figures)
    missed = [name for name, target in targets.items() if med[name] > target]
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
