"""A forward pass that keeps the full trace vs a plain torch.nn.Transformer forward of the same size.

Target (issue 3): trace ≤ 1.5× torch. Both are timed in the same run, interleaved, median of many
repetitions; ours also pays for the embeddings and the output projection, which torch's lacks.

    .venv/bin/python benchmarks/trace.py [THREADS]     # default 1 thread, as the app runs
"""

from __future__ import annotations

import platform
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from core.model.config import ModelConfig  # noqa: E402
from core.model.transformer import Transformer  # noqa: E402
from tests.torch_reference import load_torch_stack  # noqa: E402

SIZES = [  # d_model, heads, layers, d_ff, batch, length
    (64, 4, 2, 256, 1, 16),
    (128, 4, 2, 512, 1, 32),
    (256, 8, 4, 1024, 2, 48),
    (512, 8, 6, 2048, 1, 64),
]


def median_time(fn, reps):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    # One thread, as the app runs (ui/page/preload.py): with 2 threads on a shared 2-core machine OpenMP's
    # spinning threads make every figure noise. Both sides run with the same setting.
    torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
        f"{platform.processor() or platform.machine()}"
    )
    print(
        f"{'d_model':>7} {'h':>2} {'N':>2} {'d_ff':>5} {'B':>2} {'L':>3}  "
        f"{'torch ms':>9} {'trace ms':>9} {'ratio':>6}"
    )
    for d, h, n, d_ff, b, length in SIZES:
        torch.manual_seed(0)
        ref = nn.Transformer(d, h, n, n, d_ff, dropout=0.0, batch_first=True).eval()
        ours = Transformer(
            ModelConfig(1000, 1000, d_model=d, num_heads=h, num_layers=n, d_ff=d_ff, dropout=0.0)
        ).eval()
        load_torch_stack(ours, ref)
        src = torch.randint(5, 1000, (b, length))
        tgt = torch.randint(5, 1000, (b, length))
        x_src, x_tgt = ours.src_embed(src)[0], ours.tgt_embed(tgt)[0]
        causal = torch.ones(length, length, dtype=torch.bool).triu(1)

        def run_torch(ref=ref, x_src=x_src, x_tgt=x_tgt, causal=causal, src=src, tgt=tgt):
            with torch.no_grad():
                ref(
                    x_src,
                    x_tgt,
                    tgt_mask=causal,
                    src_key_padding_mask=src == 0,
                    tgt_key_padding_mask=tgt == 0,
                    memory_key_padding_mask=src == 0,
                )

        def run_trace(ours=ours, src=src, tgt=tgt):
            ours.trace(src, tgt)

        for fn in (run_torch, run_trace):  # warm-up
            for _ in range(5):
                fn()
        reps = 30 if d >= 256 else 100
        t_torch, t_trace = [], []
        for _ in range(5):  # interleave so drift on a noisy machine hits both alike
            t_torch.append(median_time(run_torch, reps // 5))
            t_trace.append(median_time(run_trace, reps // 5))
        a, c = statistics.median(t_torch), statistics.median(t_trace)
        print(
            f"{d:>7} {h:>2} {n:>2} {d_ff:>5} {b:>2} {length:>3}  "
            f"{a * 1e3:>9.2f} {c * 1e3:>9.2f} {c / a:>6.2f}"
        )


if __name__ == "__main__":
    main()
