"""Evaluate the shipped 汉字→拼音 model on the held-out test phrases, and time the reverse task.

    python benchmarks/pinyin_eval.py                      # assets/pinyin.pt: accuracies + alignment table
    python benchmarks/pinyin_eval.py --reverse-minutes 2  # also train "reverse" for 2 minutes

Alignment: with teacher forcing on the reference, the query that predicts syllable j (decoder
position j, which holds [BOS] or syllable j-1) should attend most to source character j.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.training.checkpoint import load_checkpoint  # noqa: E402
from core.training.loop import train  # noqa: E402
from core.training.pairs import load_task  # noqa: E402
from core.training.seq2seq import evaluate, report  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkpoint", nargs="?", default="assets/pinyin.pt")
    ap.add_argument("--reverse-minutes", type=float, default=0.0, help="also train reverse this long")
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()

    model, _, task, stored = load_checkpoint(args.checkpoint)
    data = load_task(task)
    t0 = time.perf_counter()
    metrics = {f"test_{k}": v for k, v in evaluate(model, data, "test").items()}
    print(f"{args.checkpoint}: task {task}, {sum(p.numel() for p in model.parameters()):,} parameters, "
          f"{Path(args.checkpoint).stat().st_size / 2**20:.2f} MB, trained {stored.get('steps')} steps "
          f"in {stored.get('seconds')} s")
    print(report(metrics))
    print(f"(evaluated in {time.perf_counter() - t0:.1f} s)")

    if args.reverse_minutes:
        first_99 = []

        def note(p):
            if p.val and p.val["exact_acc"] >= 0.99 and not first_99:
                first_99.append((p.step, p.elapsed))

        r = train("reverse", minutes=args.reverse_minutes, eval_every=200, num_threads=args.threads,
                  on_progress=note)
        m = r.metrics
        print(f"\nreverse, {args.reverse_minutes} min: {m['steps']} steps, test sequence accuracy "
              f"{m['test_exact_acc']:.2%}, token accuracy {m['test_token_acc']:.2%}")
        if first_99:
            step, seconds = first_99[0]
            print(f"validation sequence accuracy first >= 99% at step {step} ({seconds:.0f} s)")


if __name__ == "__main__":
    main()
