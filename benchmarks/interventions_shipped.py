"""What the shipped models show with parts switched off (issue 41, part 7): every number, reproduced.

    .venv/bin/python benchmarks/interventions_shipped.py        # ~45 s: the pinyin model in zero mode only
    .venv/bin/python benchmarks/interventions_shipped.py --all  # ~2 min: and in mean mode, one head left on

1. The small GPT (weights "gpt", assets/gpt.pt): the induction probe's loss on the first and the
   second copy of a repeated random sequence (``core.training.language.induction_probe``, the very
   probe the checkpoint's ``induction`` metrics were measured with), intact, with each head of layer 2
   off and with both induction heads (dec.2.1, dec.2.3) off.
2. The pinyin model (weights "trained", assets/pinyin.pt): test syllable accuracy, the function and
   split the checkpoint's ``test_token_acc`` was measured with (``core.training.seq2seq.evaluate`` on
   ``load_task("pinyin")``'s test split, greedy decoding; its alignment table, which the accuracy does
   not depend on, is skipped), intact, with each cross-attention head of layer 2 off and with all four;
   with ``--all`` also in mean mode, and with three of the four off (one head left on).

Parts are switched off as the app switches them off (``core.interventions.runs.ablated``: the same
weights, ``zero``: the part's output is 0; ``mean``: its mean over the reference sentences). The
intact rows must equal the checkpoints' recorded metrics: the script says so, and exits 1 when not.
Prints markdown tables ready for the README.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from interventions import machine  # noqa: E402  (benchmarks/interventions.py: one description of the machine)

from core.interventions.runs import ablated  # noqa: E402
from core.tracing.pipeline import PipelineSettings, load_pipeline  # noqa: E402
from core.training.language import induction_probe  # noqa: E402
from core.training.pairs import load_task  # noqa: E402
from core.training.seq2seq import evaluate  # noqa: E402

GPT_PARTS = ["", "dec.2.1", "dec.2.2", "dec.2.3", "dec.2.4", "dec.2.1,dec.2.3"]
PINYIN_HEADS = ["cross.2.1", "cross.2.2", "cross.2.3", "cross.2.4"]
PINYIN_PARTS = ["", *PINYIN_HEADS, ",".join(PINYIN_HEADS)]
ONE_LEFT = [",".join(h for h in PINYIN_HEADS if h != on) for on in PINYIN_HEADS]  # three of four off


def gpt_rows(modes: list[str]) -> tuple[list[str], bool]:
    pipe = load_pipeline(PipelineSettings(weights="gpt"))
    recorded = pipe.metrics["induction"]["loss_second_copy"]
    probe = induction_probe(pipe.model)
    pm = probe["prefix_matching"][1]  # layer 2's heads: which ones are induction heads
    vocab = pipe.model.config.tgt_vocab_size
    lines = [
        f"The small GPT ({pipe.model.config.num_layers} layers × {pipe.model.config.num_heads} heads, "
        f"vocabulary {vocab:,}): induction probe, {probe['batch']} random sequences of {probe['length']} "
        f"tokens repeated once; a uniform guess would lose ln {vocab} = {math.log(vocab):.2f} nats.",
        "Layer 2's prefix-matching scores (intact): "
        + ", ".join(f"2.{h + 1} {s:.2f}" for h, s in enumerate(pm)),
        "",
        "| switched off | mode | loss, first copy (nats) | loss, second copy (nats) | second copy Δ |",
        "|---|---|---|---|---|",
    ]
    intact = probe["loss_second_copy"]
    for mode in modes:
        for parts in GPT_PARTS:
            if not parts and mode != modes[0]:
                continue
            r = probe if not parts else induction_probe(ablated(pipe, parts, mode).model)
            delta = "—" if not parts else f"{r['loss_second_copy'] - intact:+.2f}"
            lines.append(
                f"| {parts.replace(',', ', ') or 'nothing (intact)'} | {mode if parts else '—'} | "
                f"{r['loss_first_copy']:.2f} | {r['loss_second_copy']:.2f} | {delta} |"
            )
    same = round(intact, 6) == round(recorded, 6)
    lines.append(
        f"\nintact second-copy loss {intact:.4f} nats; the checkpoint's recorded "
        f"{recorded:.4f}: {'equal' if same else 'DIFFERENT'}"
    )
    return lines, same


def pinyin_rows(modes: list[str], one_left: bool) -> tuple[list[str], bool]:
    pipe = load_pipeline(PipelineSettings(weights="trained"))
    data = load_task(pipe.task)
    recorded = pipe.metrics["test_token_acc"]

    def measure(model) -> dict:
        return evaluate(model, data, "test", alignment=False)

    intact = measure(pipe.model)
    c = pipe.model.config
    lines = [
        f"The pinyin model ({c.num_layers} + {c.num_layers} layers × {c.num_heads} heads): the test "
        f"split, {intact['n']:,} phrases, greedy decoding.",
        "",
        "| switched off | mode | syllable accuracy | Δ (points) | phrase accuracy |",
        "|---|---|---|---|---|",
    ]
    for mode in modes:
        for parts in PINYIN_PARTS:
            if not parts and mode != modes[0]:
                continue
            m = intact if not parts else measure(ablated(pipe, parts, mode).model)
            delta = "—" if not parts else f"{100 * (m['token_acc'] - intact['token_acc']):+.2f}"
            name = "all four (cross.2.1–2.4)" if parts.count(",") == 3 else parts or "nothing (intact)"
            acc, exact = f"{m['token_acc']:.2%}", f"{m['exact_acc']:.2%}"
            lines.append(f"| {name} | {mode if parts else '—'} | {acc} | {delta} | {exact} |")
    for parts in ONE_LEFT if one_left else []:
        m = measure(ablated(pipe, parts, "zero").model)
        on = next(h for h in PINYIN_HEADS if h not in parts.split(","))
        delta = f"{100 * (m['token_acc'] - intact['token_acc']):+.2f}"
        acc, exact = f"{m['token_acc']:.2%}", f"{m['exact_acc']:.2%}"
        lines.append(f"| three, {on} left on | zero | {acc} | {delta} | {exact} |")
    same = intact["token_acc"] == recorded
    lines.append(
        f"\nintact test syllable accuracy {intact['token_acc']!r}; the checkpoint's recorded "
        f"test_token_acc {recorded!r}: {'equal' if same else 'DIFFERENT'}"
    )
    return lines, same


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--all", action="store_true", help="the pinyin model in mean mode, one head left on too")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1, as the app runs)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(machine() + "\n")
    started = time.perf_counter()
    gpt, gpt_ok = gpt_rows(["zero", "mean"])
    print("\n".join(gpt), end="\n\n")
    pinyin, pinyin_ok = pinyin_rows(["zero", "mean"] if args.all else ["zero"], args.all)
    print("\n".join(pinyin))
    print(f"\n(measured in {time.perf_counter() - started:.0f} s)")
    sys.exit(0 if gpt_ok and pinyin_ok else 1)


if __name__ == "__main__":
    main()
