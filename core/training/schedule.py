"""The learning rate of every step: the paper's warm-up schedule for the seq2seq tasks, a warm-up and
cosine for the language model, and the cooldown that ends a fixed budget at a rate of zero.

Each takes ``spent``, the share (0..1) of the step or time budget used before the step, so the
Training page can draw the same curve a run follows.
"""

from __future__ import annotations

import math


def noam_lr(step: int, d_model: int, warmup: int, factor: float = 1.0) -> float:
    """The paper's schedule: lr = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5).

    It rises linearly for ``warmup`` steps, then decays as 1/sqrt(step).
    """
    step = max(step, 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def cooled(rate: float, spent: float, cooldown: float) -> float:
    """``rate`` lowered linearly to 0 over the last ``cooldown`` of the budget: with a fixed budget the
    schedule would otherwise stop mid-descent."""
    if not cooldown:
        return rate
    return rate * min(1.0, max(0.0, 1.0 - spent) / cooldown)


def warmup_cosine(step: int, spent: float, lr: float, warmup: int) -> float:
    """Linear warm-up to ``lr`` over ``warmup`` steps, then a cosine from lr to lr/10 over the rest of
    the budget."""
    if step <= warmup:
        return lr * step / warmup
    return lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(spent, 1.0))))
