"""Train a model or measure a checkpoint from the command line.

    python -m core.training --task pinyin --minutes 14 --out assets/pinyin.pt
    python -m core.training --task reverse --minutes 2 --out runs/reverse.pt
    python -m core.training --task lm --steps 4000 --threads 1 --half --out assets/gpt.pt
    python -m core.training --evaluate assets/pinyin.pt          (any task: the checkpoint names it)
"""

from __future__ import annotations

import argparse
import time

import torch

from core.training import language, seq2seq
from core.training.checkpoint import load_checkpoint, save_checkpoint
from core.training.loop import train
from core.training.pairs import load_task
from core.training.settings import RECIPES
from core.training.text import corpus


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m core.training", description=__doc__.split("\n")[0])
    ap.add_argument("--task", choices=tuple(RECIPES), default="pinyin",
                    help="lm: the small GPT on the fortune files (core/training/language.py)")
    ap.add_argument("--evaluate", metavar="CKPT", help="only evaluate a checkpoint on its task's test split")
    ap.add_argument("--d-model", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--layers", type=int)
    ap.add_argument("--d-ff", type=int)
    ap.add_argument("--dropout", type=float)
    ap.add_argument("--norm", choices=("post", "pre"))
    ap.add_argument("--positions", choices=("sinusoidal", "learned", "rope", "alibi"))
    ap.add_argument("--steps", type=int)
    ap.add_argument("--minutes", type=float)
    ap.add_argument("--batch-size", type=int)
    ap.add_argument("--lr", type=float, help="seq2seq: plain Adam at this rate, not the warm-up schedule")
    ap.add_argument("--factor", type=float, help="scales the warm-up schedule")
    ap.add_argument("--warmup", type=int)
    ap.add_argument("--cooldown", type=float,
                    help="lower the rate linearly to 0 over this last fraction of the budget (e.g. 0.3)")
    ap.add_argument("--label-smoothing", type=float)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    ap.add_argument("--eval-every", type=int, help="steps between validations (default 1000; lm: 250)")
    ap.add_argument("--half", action="store_true", help="store the weights as float16 (half the file size)")
    ap.add_argument("--out", help="where to write the checkpoint")
    lm = ap.add_argument_group("task lm")
    lm.add_argument("--merges", type=int, help="BPE merges learned on the training part")
    lm.add_argument("--context", type=int, help="tokens per training window")
    lm.add_argument("--repeat", type=float, help="share of training windows with a passage repeated")
    lm.add_argument("--copies", type=int, help="how many times that passage occurs in its window")
    args = ap.parse_args(argv)

    if args.evaluate:
        evaluate(args.evaluate)
        return
    names = {"d_model": args.d_model, "num_heads": args.heads, "num_layers": args.layers, "d_ff": args.d_ff,
             "dropout": args.dropout, "norm": args.norm, "positions": args.positions}
    result = train(args.task, {k: v for k, v in names.items() if v is not None}, steps=args.steps,
                   minutes=args.minutes, batch_size=args.batch_size, lr=args.lr, factor=args.factor,
                   warmup=args.warmup, cooldown=args.cooldown, label_smoothing=args.label_smoothing,
                   merges=args.merges, context=args.context, repeat=args.repeat, copies=args.copies,
                   seed=args.seed, eval_every=args.eval_every, num_threads=args.threads, verbose=True)
    m = result.metrics
    if args.half and args.task == "lm":  # the numbers recorded are those of the weights stored: rounded
        with torch.no_grad():
            for p in result.model.parameters():
                p.copy_(p.half().float())
        m.update(language.evaluate(result.model, result.tokenizer, corpus(), m["context"]))
    print(language.report(m) if args.task == "lm" else seq2seq.report(m))
    print(f"{m['steps']} steps in {m['seconds']} s wall, {m['cpu_seconds']} s CPU on {m['threads']} threads")
    if args.out:
        reader = result.tokenizer if args.task == "lm" else result.vocabs
        save_checkpoint(args.out, result.model, reader, args.task, m, half=args.half)
        print(f"wrote {args.out}")


def evaluate(path: str) -> None:
    """Measure a checkpoint on its task's test split, as training measured it, and print the report."""
    model, reader, task, stored = load_checkpoint(path)
    t0 = time.perf_counter()
    if task == "lm":
        report = language.report(language.evaluate(model, reader, corpus(), stored.get("context", 128)))
        print(f"{path}: trained {stored.get('steps')} steps in {stored.get('seconds')} s")
    else:
        metrics = {f"test_{k}": v for k, v in seq2seq.evaluate(model, load_task(task), "test").items()}
        report = seq2seq.report(metrics)
        print(f"{path}: task {task}, trained {stored.get('steps')} steps in {stored.get('seconds')} s")
    print(report)
    print(f"(evaluated in {time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
