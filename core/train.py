"""Train the Transformer on 汉字→拼音 or a toy digit task, from the command line or from the app.

    python -m core.train --task pinyin --minutes 14 --out assets/pinyin.pt
    python -m core.train --task reverse --minutes 2 --out runs/reverse.pt
    python -m core.train --evaluate assets/pinyin.pt
    python -m core.train --task lm --minutes 28 --threads 1 --half --out assets/gpt.pt   (core/lm.py)

Teacher forcing: the decoder reads tgt[:, :-1] = [BOS] y and is scored on tgt[:, 1:] = y [EOS].
The app calls ``train(...)`` with an ``on_progress`` callback that draws live curves; the callback
returning False stops training (the model trained so far is still returned and evaluated).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import torch
import torch.nn.functional as F

from core.config import ModelConfig
from core.data import TASKS, TaskData, load_task, make_batch
from core.model import Transformer
from core.tokenizers.vocab import BOS_ID, EOS_ID, PAD_ID, Vocab

# Sizes that reach the targets on a 2-core CPU; anything here can be overridden.
DEFAULT_CONFIG = {
    # no dropout: reading a character is mostly memorisation, and the run is too short to overfit
    "pinyin": dict(d_model=128, num_heads=4, num_layers=2, d_ff=512, dropout=0.0, norm="post"),
    "copy": dict(d_model=64, num_heads=4, num_layers=2, d_ff=256, dropout=0.0, norm="post"),
    "reverse": dict(d_model=64, num_heads=4, num_layers=2, d_ff=256, dropout=0.0, norm="post"),
}
# Training defaults per task (each can be overridden). The toy tasks warm up quickly so that a
# two-minute run is mostly spent at a useful learning rate.
DEFAULT_TRAIN = {
    "pinyin": dict(steps=5000, batch_size=128, warmup=1000, factor=1.0),  # factor 2 diverged at ~4e-3
    "copy": dict(steps=1500, batch_size=128, warmup=200, factor=1.0),
    "reverse": dict(steps=2000, batch_size=128, warmup=200, factor=1.0),
}


def noam_lr(step: int, d_model: int, warmup: int, factor: float = 1.0) -> float:
    """The paper's schedule: lr = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5).

    It rises linearly for ``warmup`` steps, then decays as 1/sqrt(step).
    """
    step = max(step, 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


@dataclass
class Progress:
    """What ``on_progress`` gets after every logged step (and after each validation)."""

    step: int
    total_steps: int | None  # None when only a time budget was given
    fraction: float  # 0..1 of the step or time budget, whichever runs out first
    loss: float  # training loss (with label smoothing), mean since the last report
    acc: float  # training token accuracy under teacher forcing, same window
    lr: float
    tokens_per_s: float
    elapsed: float  # seconds
    val: dict | None = None  # validation metrics, on the steps that ran one


@dataclass
class TrainResult:
    model: Transformer  # in eval mode
    vocabs: tuple[Vocab, Vocab]  # (source, target)
    metrics: dict  # final validation and test metrics, plus run facts (steps, seconds, ...)
    history: list[dict] = field(default_factory=list)  # one asdict(Progress) per report
    task: str = ""


def train(
    task: str,
    config_overrides: dict | None = None,
    *,
    steps: int | None = None,
    minutes: float | None = None,
    batch_size: int | None = None,
    lr: float | None = None,
    factor: float | None = None,
    warmup: int | None = None,
    cooldown: float = 0.0,
    label_smoothing: float = 0.1,
    seed: int = 0,
    num_threads: int | None = None,
    log_every: int = 50,
    eval_every: int = 1000,
    eval_limit: int = 500,
    on_progress: Callable[[Progress], bool | None] | None = None,
    verbose: bool = False,
    data: TaskData | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> TrainResult:
    """Train a fresh model on ``task`` until ``steps`` or ``minutes`` runs out (the first to do so).

    ``lr=None`` uses the warm-up schedule ``noam_lr`` (times ``factor``); a number means plain Adam at
    that constant rate. ``cooldown`` (0..1) lowers the rate linearly to 0 over that last fraction of
    the step or time budget: with a fixed budget the schedule would otherwise stop mid-descent.
    ``num_threads`` sets torch's intra-op threads for the run (the app may pass 1)
    and restores the previous value afterwards. ``verbose`` prints a progress line to stderr.
    ``should_stop`` is asked after every step (``on_progress`` only every ``log_every`` steps, which at
    the largest sizes is minutes apart): True ends the run there as ``on_progress`` returning False
    does, that step logged and the model kept; an exception it raises ends the run without a model.
    Arguments left as None take the task's value in ``DEFAULT_TRAIN``.
    """
    if task not in TASKS:
        raise ValueError(f"task={task!r} must be one of {TASKS}")
    if not 0.0 <= cooldown < 1.0:
        raise ValueError(f"cooldown={cooldown!r} must be in [0, 1)")
    defaults = DEFAULT_TRAIN[task]
    if steps is None and minutes is None:
        steps = defaults["steps"]
    batch_size = batch_size or defaults["batch_size"]
    warmup = warmup or defaults["warmup"]
    factor = factor or defaults["factor"]
    previous_threads = torch.get_num_threads()
    if num_threads is not None:
        torch.set_num_threads(num_threads)
    try:
        data = data or load_task(task)
        overrides = {**DEFAULT_CONFIG[task], **(config_overrides or {})}
        overrides.setdefault("seed", seed)
        config = ModelConfig(len(data.src_vocab), len(data.tgt_vocab), **overrides)
        model = Transformer(config)
        cpu_start = time.process_time()  # CPU time too: wall time depends on who else uses the machine
        history = _fit(model, data, config, steps, minutes, batch_size, lr, factor, warmup, cooldown,
                       label_smoothing, seed, log_every, eval_every, eval_limit, on_progress, verbose,
                       should_stop)
        model.eval()
        metrics = _final_metrics(model, data, history, time.process_time() - cpu_start)
        metrics.update(batch_size=batch_size, label_smoothing=label_smoothing,
                       schedule=_schedule_name(lr, warmup, factor, cooldown))
        return TrainResult(model, (data.src_vocab, data.tgt_vocab), metrics, history, task)
    finally:
        torch.set_num_threads(previous_threads)


def _final_metrics(model, data, history: list[dict], cpu_seconds: float) -> dict:
    """Validation and test metrics of the trained model, and the run's facts (steps, seconds, threads)."""
    metrics = {f"val_{k}": v for k, v in evaluate(model, data, "val").items()}
    metrics.update({f"test_{k}": v for k, v in evaluate(model, data, "test").items()})
    last = history[-1] if history else {}
    metrics.update(steps=last.get("step", 0), seconds=round(last.get("elapsed", 0.0), 1),
                   cpu_seconds=round(cpu_seconds, 1), threads=torch.get_num_threads())
    return metrics


def _schedule_name(lr, warmup, factor, cooldown) -> str:
    name = f"noam(warmup={warmup}, factor={factor})" if lr is None else f"adam(lr={lr})"
    return name + (f", linear cooldown over the last {cooldown:.0%}" if cooldown else "")


def label_smoothed_loss(logits: torch.Tensor, target: torch.Tensor, epsilon: float) -> torch.Tensor:
    """Label smoothing (paper, section 5.4: ε_ls = 0.1). The model is scored against a target that puts
    1 − ε on the right token y and spreads ε evenly over the whole vocabulary of V tokens:

        q(w) = (1 − ε)·[w = y] + ε / V,        loss = − Σ_w q(w) · log p(w)

    averaged over the target positions that are not [PAD]. "This hurts perplexity, as the model learns
    to be more unsure, but improves accuracy and BLEU score." (torch's ``label_smoothing`` is this q.)

    logits: (B, T, V); target: (B, T) token ids.
    """
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), target.reshape(-1),  # (B·T, V), (B·T,)
                           ignore_index=PAD_ID, label_smoothing=epsilon)


def _rate(step, steps, budget_s, start, lr, d_model, warmup, factor, cooldown) -> float:
    """The learning rate of ``step``: noam_lr (or a constant ``lr``), lowered over the cooldown."""
    rate = lr if lr is not None else noam_lr(step, d_model, warmup, factor)
    if cooldown:
        spent = max((step - 1) / steps if steps else 0.0,
                    (time.perf_counter() - start) / budget_s if budget_s else 0.0)
        rate *= min(1.0, max(0.0, 1.0 - spent) / cooldown)
    return rate


def _train_step(model, opt, data, batch_size, rng, rate, label_smoothing):
    """One step of teacher forcing: the decoder reads [BOS] y and is scored on y [EOS].
    -> (loss, how many target tokens were not [PAD], how many of them the model got right)."""
    for group in opt.param_groups:
        group["lr"] = rate
    model.train()
    src, tgt = data.train_batch(batch_size, rng)
    logits = model(src, tgt[:, :-1])  # (B, T, V)
    target = tgt[:, 1:]  # (B, T)
    loss = label_smoothed_loss(logits, target, label_smoothing)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # cheap insurance against a bad step
    opt.step()
    real = target != PAD_ID
    return loss.item(), int(real.sum()), float(((logits.argmax(-1) == target) & real).sum())


def _fit(model, data, config, steps, minutes, batch_size, lr, factor, warmup, cooldown, label_smoothing,
         seed, log_every, eval_every, eval_limit, on_progress, verbose, should_stop=None) -> list[dict]:
    rng = random.Random(seed)  # batch order; the weights are seeded by config.seed
    # betas and eps as in the paper (section 5.3)
    opt = torch.optim.Adam(model.parameters(), lr=lr or 1.0, betas=(0.9, 0.98), eps=1e-9)
    history: list[dict] = []
    start = time.perf_counter()
    budget_s = minutes * 60 if minutes is not None else None
    loss_sum = acc_sum = tokens = 0.0
    window_start = start
    step = 0
    while True:
        step += 1
        rate = _rate(step, steps, budget_s, start, lr, config.d_model, warmup, factor, cooldown)
        loss, n, right = _train_step(model, opt, data, batch_size, rng, rate, label_smoothing)
        loss_sum, acc_sum, tokens = loss_sum + loss * n, acc_sum + right, tokens + n

        elapsed = time.perf_counter() - start
        fraction = max(step / steps if steps else 0.0, elapsed / budget_s if budget_s else 0.0)
        done = fraction >= 1.0
        stop = not done and should_stop is not None and should_stop()
        validate = done or step % eval_every == 0
        if done or stop or validate or step % log_every == 0:
            now = time.perf_counter()
            p = Progress(step, steps, min(fraction, 1.0), loss_sum / max(tokens, 1), acc_sum / max(tokens, 1),
                         rate, tokens / max(now - window_start, 1e-9), elapsed)
            loss_sum = acc_sum = tokens = 0.0
            window_start = now
            if validate:
                model.eval()
                p.val = evaluate(model, data, "val", limit=eval_limit, alignment=False)
            history.append(asdict(p))
            if verbose:
                _print_progress(p)
            if on_progress is not None and on_progress(p) is False:
                break
        if done or stop:
            break
    if verbose:
        print(file=sys.stderr)
    return history


def _print_progress(p: Progress) -> None:
    """One self-overwriting line: [#####.....] step, loss, accuracy, speed."""
    width = 24
    bar = "#" * int(p.fraction * width) + "." * (width - int(p.fraction * width))
    total = f"/{p.total_steps}" if p.total_steps else ""
    line = (f"\r[{bar}] step {p.step}{total}  loss {p.loss:.3f}  acc {p.acc:.3f}  lr {p.lr:.2e}  "
            f"{p.tokens_per_s:,.0f} tok/s  {p.elapsed:,.0f}s")
    if p.val:
        line += f"  | val token {p.val['token_acc']:.3f} exact {p.val['exact_acc']:.3f}"
        print(line, file=sys.stderr)  # keep validation lines, overwrite the others
    else:
        print(line, end="", file=sys.stderr, flush=True)


@torch.no_grad()
def greedy_predict(model: Transformer, src: torch.Tensor, max_new_tokens: int) -> list[list[int]]:
    """Greedy decoding of a padded batch; each row's ids after BOS, cut at its first EOS."""
    res = model.greedy_decode(src, max_new_tokens, bos_id=BOS_ID, eos_id=EOS_ID)
    out = []
    for row in res.tokens[:, 1:].tolist():
        out.append(row[: row.index(EOS_ID)] if EOS_ID in row else row)
    return out


def predict(model: Transformer, tgt_vocab: Vocab, src_ids: list[int]) -> list[str]:
    """Target tokens for one encoded source (e.g. ``encode_source(text, src_vocab).ids``)."""
    if not src_ids:
        return []
    model.eval()
    return tgt_vocab.decode(greedy_predict(model, torch.tensor([src_ids]), len(src_ids) + 2)[0])


@torch.no_grad()
def evaluate(model: Transformer, data: TaskData, split: str = "test", limit: int | None = None,
             batch_size: int = 256, alignment: bool = True) -> dict:
    """Greedy-decoding metrics on a split (the model must be in eval mode).

    token_acc: position-wise accuracy over the reference length (for pinyin: syllable accuracy);
    exact_acc: whole sequence right (phrase accuracy, or sequence accuracy for copy/reverse);
    alignment (1:1 tasks only): see ``alignment_scores``.
    """
    pairs = data.splits[split][:limit]
    right = total = exact = 0
    hits = None
    for i in range(0, len(pairs), batch_size):
        chunk = pairs[i : i + batch_size]
        src, tgt = make_batch(chunk, data.src_vocab, data.tgt_vocab)
        preds = greedy_predict(model, src, src.size(1) + 2)
        for pred, ref in zip(preds, tgt[:, 1:].tolist(), strict=True):
            ref = ref[: ref.index(EOS_ID)]
            right += sum(p == r for p, r in zip(pred, ref, strict=False))  # pred may be short or long
            total += len(ref)
            exact += pred == ref
        if alignment and data.name != "reverse":
            h = _alignment_hits(model, src, tgt)
            hits = h if hits is None else [[a + b for a, b in zip(x, y, strict=True)]
                                          for x, y in zip(hits, h, strict=True)]
    metrics = {"token_acc": right / max(total, 1), "exact_acc": exact / max(len(pairs), 1), "n": len(pairs)}
    if hits is not None:
        # hits[layer][head], with the head average of each layer appended as the last column
        table = [[h / max(total, 1) for h in row] for row in hits]
        metrics["alignment"] = table[-1][-1]
        metrics["alignment_per_head"] = [row[:-1] for row in table]
        metrics["alignment_head_mean"] = [row[-1] for row in table]
    return metrics


def _alignment_hits(model: Transformer, src: torch.Tensor, tgt: torch.Tensor) -> list[list[int]]:
    """Counts, per decoder layer and head (+ the head average last), of target syllables whose
    cross-attention peaks on their own source character.

    Teacher forcing on the reference: decoder position j holds [BOS] or syllable j-1 and is the query
    that PREDICTS syllable j, so its aligned source position is j (the source has no BOS). The query
    predicting [EOS] (j = len) has no character and is not counted.
    """
    tr = model.trace(src, tgt[:, :-1])
    lengths = (src != PAD_ID).sum(1)  # = number of syllables, 1:1
    T = tgt.size(1) - 1
    j = torch.arange(T)
    counted = j[None, :] < lengths[:, None]  # (B, T)
    counts = []
    for layer in tr.decoder:
        w = layer.cross_attn.weights  # (B, h, T, S)
        per_head = (w.argmax(-1) == j) & counted[:, None, :]
        mean = (w.mean(1).argmax(-1) == j) & counted
        counts.append([int(x) for x in per_head.sum((0, 2))] + [int(mean.sum())])
    return counts


def format_metrics(metrics: dict, prefix: str = "test_") -> str:
    """A small text report: accuracies and the alignment table (layers x heads)."""
    m = {k[len(prefix):]: v for k, v in metrics.items() if k.startswith(prefix)}
    lines = [f"token (syllable) accuracy  {m['token_acc']:.2%}",
             f"exact sequence accuracy    {m['exact_acc']:.2%}   (n={m['n']})"]
    if "alignment" in m:
        lines.append(f"alignment, last decoder layer, head average: {m['alignment']:.2%}")
        heads = len(m["alignment_per_head"][0])
        head_names = " ".join(f"head {h}" for h in range(heads))
        lines.append(f"cross-attn argmax = aligned char | {head_names} | mean")
        for i, (row, mean) in enumerate(zip(m["alignment_per_head"], m["alignment_head_mean"], strict=True)):
            lines.append(f"decoder layer {i}                  | " + " ".join(f"{x:6.1%}" for x in row)
                         + f" | {mean:.1%}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m core.train", description=__doc__.split("\n")[0])
    ap.add_argument("--task", choices=(*TASKS, "lm"), default="pinyin",
                    help="lm: the small GPT on the fortune files (core/lm.py)")
    ap.add_argument("--evaluate", metavar="CKPT", help="only evaluate a checkpoint on its task's test split")
    ap.add_argument("--d-model", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--layers", type=int)
    ap.add_argument("--d-ff", type=int)
    ap.add_argument("--dropout", type=float)
    ap.add_argument("--norm", choices=("post", "pre"))
    ap.add_argument("--steps", type=int)
    ap.add_argument("--minutes", type=float)
    ap.add_argument("--batch-size", type=int)
    ap.add_argument("--lr", type=float, help="plain Adam at this rate instead of the warm-up schedule")
    ap.add_argument("--factor", type=float, help="scales the warm-up schedule")
    ap.add_argument("--warmup", type=int)
    ap.add_argument("--cooldown", type=float, default=0.0,
                    help="lower the rate linearly to 0 over this last fraction of the budget (e.g. 0.3)")
    ap.add_argument("--label-smoothing", type=float, default=0.1)
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
    lm.add_argument("--positions", choices=("sinusoidal", "learned", "rope", "alibi"))
    args = ap.parse_args(argv)

    from core.checkpoint import load_checkpoint, save_checkpoint, task_of

    if args.evaluate and task_of(args.evaluate) == "lm" or not args.evaluate and args.task == "lm":
        _main_lm(args)
        return
    if args.evaluate:
        model, _, task, stored = load_checkpoint(args.evaluate)
        data = load_task(task)
        t0 = time.perf_counter()
        metrics = {f"test_{k}": v for k, v in evaluate(model, data, "test").items()}
        print(f"{args.evaluate}: task {task}, trained {stored.get('steps')} steps "
              f"in {stored.get('seconds')} s")
        print(format_metrics(metrics))
        print(f"(evaluated in {time.perf_counter() - t0:.1f} s)")
        return

    names = {"d_model": args.d_model, "num_heads": args.heads, "num_layers": args.layers, "d_ff": args.d_ff,
             "dropout": args.dropout, "norm": args.norm}
    overrides = {k: v for k, v in names.items() if v is not None}
    result = train(args.task, overrides, steps=args.steps, minutes=args.minutes, batch_size=args.batch_size,
                   lr=args.lr, factor=args.factor, warmup=args.warmup, cooldown=args.cooldown,
                   label_smoothing=args.label_smoothing,
                   seed=args.seed, num_threads=args.threads, eval_every=args.eval_every or 1000, verbose=True)
    print(format_metrics(result.metrics))
    m = result.metrics
    print(f"{m['steps']} steps in {m['seconds']} s wall, {m['cpu_seconds']} s CPU on {m['threads']} threads")
    if args.out:
        save_checkpoint(args.out, result.model, result.vocabs, args.task, result.metrics, half=args.half)
        print(f"wrote {args.out}")


def _main_lm(args) -> None:
    """``--task lm`` and ``--evaluate`` of a language model: core/lm.py."""
    from core.checkpoint import load_lm_checkpoint, save_lm_checkpoint
    from core.lm import evaluate_lm, format_lm_metrics, train_lm
    from core.lm_data import corpus

    if args.evaluate:
        model, tokenizer, stored = load_lm_checkpoint(args.evaluate)
        t0 = time.perf_counter()
        metrics = evaluate_lm(model, tokenizer, corpus(), stored.get("context", 128))
        print(f"{args.evaluate}: trained {stored.get('steps')} steps in {stored.get('seconds')} s")
        print(format_lm_metrics(metrics))
        print(f"(evaluated in {time.perf_counter() - t0:.1f} s)")
        return
    names = {"d_model": args.d_model, "num_heads": args.heads, "num_layers": args.layers, "d_ff": args.d_ff,
             "dropout": args.dropout, "norm": args.norm, "positions": args.positions}
    overrides = {k: v for k, v in names.items() if v is not None}
    result = train_lm(overrides, steps=args.steps, minutes=args.minutes,
                      merges=args.merges, context=args.context, batch_size=args.batch_size, lr=args.lr,
                      warmup=args.warmup, repeat=args.repeat, copies=args.copies, seed=args.seed,
                      num_threads=args.threads, eval_every=args.eval_every or 250, verbose=True)
    m = result.metrics
    if args.half:  # the numbers recorded are those of the weights stored: rounded to float16
        with torch.no_grad():
            for p in result.model.parameters():
                p.copy_(p.half().float())
        m.update(evaluate_lm(result.model, result.tokenizer, corpus(), m["context"]))
    print(format_lm_metrics(m))
    print(f"{m['steps']} steps in {m['seconds']} s wall, {m['cpu_seconds']} s CPU on {m['threads']} threads")
    if args.out:
        save_lm_checkpoint(args.out, result.model, result.tokenizer, m, half=args.half)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
