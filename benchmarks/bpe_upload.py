"""What one upload costs the Tokenization page: both kinds of BPE trained on 999 KB, before and after
the work bound (issue 25, finding 5).

    .venv/bin/python benchmarks/bpe_upload.py                 # 999 KB of Chinese without spaces
    .venv/bin/python benchmarks/bpe_upload.py --text mixed    # 1 MB of mixed English / Chinese text
    .venv/bin/python benchmarks/bpe_upload.py --skip-before   # the bounded training only

"Before": ``BPETokenizer.train`` on the whole text, byte-level and classic, as the page did. "After":
what the page does now: ``plan_training`` with the page's ``WORK_BUDGET`` for each kind, then the
training it plans. Printed per kind: the plan (cut, characters used, units of work), wall and CPU
seconds, and the nanoseconds per unit of the estimate (how ``WORK_BUDGET`` was calibrated).

The Chinese text: phrases of pypinyin's phrase dictionary (the same pool as benchmarks/bpe.py), drawn
with a fixed seed and glued without a space or a punctuation mark: one GPT-2 pre-token of 999,000
bytes, as a student's upload of a Chinese book with its punctuation stripped would be.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from core.tokenizers.bpe import BPETokenizer, plan_training, training_work  # noqa: E402
from ui.sections.tokenization import WORK_BUDGET  # noqa: E402  (the page's, where its sections live)


def cjk_text(n_bytes: int = 999_000, seed: int = 0) -> str:
    """``n_bytes`` of UTF-8 (n_bytes / 3 characters) of Chinese phrases without a space."""
    from pypinyin.phrases_dict import phrases_dict

    phrases = sorted(phrases_dict)
    rng = random.Random(seed)
    parts, size = [], 0
    while size < n_bytes:
        phrase = rng.choice(phrases)
        parts.append(phrase)
        size += len(phrase.encode("utf-8"))
    return "".join(parts)[: n_bytes // 3]


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--text", choices=("cjk", "mixed"), default="cjk")
    ap.add_argument("--merges", type=int, default=1000)
    ap.add_argument("--skip-before", action="store_true", help="do not time the unbounded training")
    args = ap.parse_args()
    if args.text == "cjk":
        text = cjk_text()
    else:
        from bpe import make_text

        text = make_text(1_000_000)
    m = args.merges
    print(f"{args.text}: {len(text):,} characters, {len(text.encode('utf-8')):,} bytes, {m} merges")
    totals = {"before": [0.0, 0.0], "after": [0.0, 0.0]}
    for byte_level in (True, False):
        kind = "byte-level" if byte_level else "classic"
        if not args.skip_before:
            whole = training_work(text, m, byte_level)
            _, wall, cpu = timed(lambda b=byte_level: BPETokenizer.train(text, m, byte_level=b))
            totals["before"][0] += wall
            totals["before"][1] += cpu
            print(f"  before {kind:10}: {whole.units:.3g} units, longest word {whole.longest:,} symbols: "
                  f"{wall:.1f} s wall, {cpu:.1f} s CPU ({cpu / whole.units * 1e9:.0f} ns/unit)")
        plan, wall_plan, cpu_plan = timed(lambda b=byte_level: plan_training(text, m, b, WORK_BUDGET))
        _, wall, cpu = timed(lambda b=byte_level, p=plan: BPETokenizer.train(
            text[: p.chars], m, byte_level=b, max_word=p.max_word))
        totals["after"][0] += wall_plan + wall
        totals["after"][1] += cpu_plan + cpu
        print(f"  after  {kind:10}: words cut at {plan.max_word} symbols, {plan.chars:,} of {len(text):,} "
              f"characters, {plan.units:.3g} units; plan {wall_plan:.2f} s, training {wall:.1f} s wall, "
              f"{cpu:.1f} s CPU ({cpu / max(plan.units, 1) * 1e9:.0f} ns/unit)")
    for when, (wall, cpu) in totals.items():
        if wall:
            print(f"{when}: both kinds {wall:.1f} s wall, {cpu:.1f} s CPU")


if __name__ == "__main__":
    main()
