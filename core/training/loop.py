"""The one training loop, for every task: the seq2seq tasks and the language model.

A task is data to the loop (:class:`Task`): it builds its model's config and optimiser, gives the
rate of each step, the loss of a batch, a validation, and the final measures. The loop owns what
they share: the step and time budget, gradient clipping, progress reports, stopping, and the result.
The app calls ``train(...)`` with an ``on_progress`` callback that draws live curves; the callback
returning False stops training (the model trained so far is still returned and measured).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Protocol

import torch

from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.tokenizers.bpe import BPETokenizer
from core.tokenizers.vocab import Vocab
from core.training.language import LanguageTask
from core.training.seq2seq import Seq2SeqTask
from core.training.settings import RECIPES, TrainingSettings


class Task(Protocol):
    """What the loop asks of a task (``Seq2SeqTask``, ``LanguageTask``)."""

    name: str
    vocabs: tuple[Vocab, Vocab] | None  # what reads the model's text: a seq2seq task's vocabularies,
    tokenizer: BPETokenizer | None  # or the language model's BPE

    def config(self, sizes: dict) -> ModelConfig: ...
    def optimizer(self, model: Transformer) -> torch.optim.Optimizer: ...
    def rate(self, step: int, spent: float, d_model: int) -> float: ...
    def loss(self, model: Transformer) -> tuple[torch.Tensor, int, float | None]: ...
    def validate(self, model: Transformer) -> dict: ...
    def describe(self, validation: dict) -> str: ...
    def measure(self, model: Transformer) -> dict: ...
    def facts(self, steps: int) -> dict: ...


@dataclass
class Progress:
    """What ``on_progress`` gets after every logged step (with a validation on the steps that ran one)."""

    step: int
    total_steps: int | None  # None when only a time budget was given
    fraction: float  # 0..1 of the step or time budget, whichever runs out first
    loss: float  # training loss per token (seq2seq: with label smoothing), mean since the last report
    lr: float
    tokens_per_s: float
    elapsed: float  # seconds
    acc: float | None = None  # seq2seq: token accuracy under teacher forcing, same window
    val: dict | None = None  # the task's validation (seq2seq: greedy accuracies; lm: loss, perplexity)
    heads: dict | None = None  # lm: the induction probe, (layers × heads) lists and "best_pm"


@dataclass
class TrainResult:
    """A trained model (in eval mode) with what reads its text: ``vocabs`` (source, target) for a
    seq2seq task, ``tokenizer`` for the language model."""

    model: Transformer
    task: str
    metrics: dict  # the task's final measures, plus run facts (steps, seconds, ...)
    history: list[dict] = field(default_factory=list)  # one asdict(Progress) per report
    vocabs: tuple[Vocab, Vocab] | None = None
    tokenizer: BPETokenizer | None = None


def train(
    task: str,
    sizes: dict | None = None,
    *,
    settings: TrainingSettings | None = None,
    data=None,
    num_threads: int | None = None,
    on_progress: Callable[[Progress], bool | None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    verbose: bool = False,
    **changes,
) -> TrainResult:
    """Train a fresh model on ``task`` until ``steps`` or ``minutes`` runs out (the first to do so).

    ``settings`` (default ``RECIPES[task]``) with ``changes`` over it: any TrainingSettings field, None
    meaning the recipe's value; ``minutes`` without ``steps`` is a time budget alone. ``sizes`` change
    the model's (ModelConfig fields). ``data`` replaces the task's data (tests): a ``TaskData`` for a
    seq2seq task, the parts ``{"train", "valid", "test"}`` of text for "lm".
    ``num_threads`` sets torch's intra-op threads for the run and restores the previous value
    afterwards. ``should_stop`` is asked after every step (``on_progress`` only every ``log_every``
    steps, which at the largest sizes is minutes apart): True ends the run there as ``on_progress``
    returning False does, that step logged and the model kept; an exception it raises ends the run
    without a model. ``verbose`` prints a progress line to stderr.
    """
    if task not in RECIPES:
        raise ValueError(f"task={task!r} must be one of {tuple(RECIPES)}")
    given = {k: v for k, v in changes.items() if v is not None}
    if "minutes" in given and "steps" not in given:
        given["steps"] = None
    s = replace(settings or RECIPES[task], **given)
    if not 0.0 <= s.cooldown < 1.0:
        raise ValueError(f"cooldown={s.cooldown!r} must be in [0, 1)")
    if s.steps is None and s.minutes is None:
        s = replace(s, steps=RECIPES[task].steps)
    previous_threads = torch.get_num_threads()
    if num_threads is not None:
        torch.set_num_threads(num_threads)
    try:
        job: Task = LanguageTask(s, data) if task == "lm" else Seq2SeqTask(task, s, data)
        model = Transformer(job.config(sizes or {}))
        cpu_start = time.process_time()  # CPU time too: wall time depends on who else uses the machine
        history = _fit(model, job, s, on_progress, should_stop, verbose)
        model.eval()
        metrics = job.measure(model)
        last = history[-1] if history else {}
        steps = last.get("step", 0)
        metrics.update(steps=steps, seconds=round(last.get("elapsed", 0.0), 1),
                       cpu_seconds=round(time.process_time() - cpu_start, 1), threads=torch.get_num_threads())
        metrics.update(job.facts(steps))
        return TrainResult(model, task, metrics, history, vocabs=job.vocabs, tokenizer=job.tokenizer)
    finally:
        torch.set_num_threads(previous_threads)


def _fit(model: Transformer, job: Task, s: TrainingSettings, on_progress, should_stop, verbose) -> list[dict]:
    opt = job.optimizer(model)
    history: list[dict] = []
    start = time.perf_counter()
    budget_s = s.minutes * 60 if s.minutes is not None else None

    def spent(step: int) -> float:
        """The share of the budget used after ``step`` steps, by steps or by time."""
        return max(step / s.steps if s.steps else 0.0,
                   (time.perf_counter() - start) / budget_s if budget_s else 0.0)

    loss_sum = right_sum = tokens = 0.0
    window_start, step = start, 0
    while True:
        step += 1
        rate = job.rate(step, spent(step - 1), model.config.d_model)
        for group in opt.param_groups:
            group["lr"] = rate
        model.train()
        loss, n, right = job.loss(model)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # cheap insurance against a bad step
        opt.step()
        loss_sum, tokens = loss_sum + loss.item() * n, tokens + n
        right_sum = None if right is None else right_sum + right

        elapsed = time.perf_counter() - start
        fraction = spent(step)
        done = fraction >= 1.0
        stop = not done and should_stop is not None and should_stop()
        validate = done or stop or step % s.eval_every == 0
        if validate or step % s.log_every == 0:
            now = time.perf_counter()
            p = Progress(step, s.steps, min(fraction, 1.0), loss_sum / max(tokens, 1), rate,
                         tokens / max(now - window_start, 1e-9), elapsed,
                         acc=None if right_sum is None else right_sum / max(tokens, 1))
            loss_sum, right_sum, tokens, window_start = 0.0, 0.0, 0.0, now
            validation = {}
            if validate:
                model.eval()
                validation = job.validate(model)
                p = replace(p, **validation)
            history.append(asdict(p))
            if verbose:
                _print_progress(p, job.describe(validation) if validation else "")
            if on_progress is not None and on_progress(p) is False:
                break
        if done or stop:
            break
    if verbose:
        print(file=sys.stderr)
    return history


def _print_progress(p: Progress, validation: str) -> None:
    """One self-overwriting line: [#####.....] step, loss, accuracy, speed; validation lines stay."""
    width = 24
    bar = "#" * int(p.fraction * width) + "." * (width - int(p.fraction * width))
    total = f"/{p.total_steps}" if p.total_steps else ""
    acc = f"  acc {p.acc:.3f}" if p.acc is not None else ""
    line = (f"\r[{bar}] step {p.step}{total}  loss {p.loss:.3f}{acc}  lr {p.lr:.2e}  "
            f"{p.tokens_per_s:,.0f} tok/s  {p.elapsed:,.0f}s")
    if validation:
        print(f"{line}  | {validation}", file=sys.stderr)
    else:
        print(line, end="", file=sys.stderr, flush=True)
