"""How each task is trained: one frozen dataclass of settings, and each task's recipe.

A recipe names the model's sizes (``ModelConfig`` fields), the budget, the optimiser's rate and
schedule, how often the run reports and validates, and the task's own data settings (the language
model's BPE merges, window and repeated passages). ``loop.train(task, **changes)`` starts from
``RECIPES[task]``; a caller changes any field with ``dataclasses.replace``.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class TrainingSettings:
    """Everything a run needs besides its data. Fields that one kind of task does not read say so."""

    sizes: dict = field(default_factory=dict)  # ModelConfig fields of the model trained
    steps: int | None = None  # the budget: steps or minutes, whichever runs out first
    minutes: float | None = None
    batch_size: int = 128
    lr: float | None = None  # seq2seq: None is the paper's schedule (noam_lr), a number constant Adam
    warmup: int = 200  # steps of rising rate
    factor: float = 1.0  # seq2seq: scales noam_lr
    cooldown: float = 0.0  # seq2seq: the rate falls linearly to 0 over this last fraction of the budget
    label_smoothing: float = 0.1  # seq2seq (the paper's ε_ls)
    merges: int = 2000  # language model: BPE merges learned on the training part
    context: int = 128  # language model: tokens per training window
    repeat: float = 1.0  # language model: share of windows with a passage written again
    copies: int = 3  # language model: how often that passage occurs in its window
    seed: int = 0  # batch order, and the weights unless ``sizes`` names a seed
    log_every: int = 50  # steps between progress reports
    eval_every: int = 1000  # steps between validations
    eval_limit: int = 500  # seq2seq: validation pairs decoded during training


# no dropout for the seq2seq tasks: reading a character is mostly memorisation, and the run is too
# short to overfit; the toy tasks warm up quickly so that a two-minute run is mostly spent at a
# useful learning rate
_SMALL = dict(d_model=64, num_heads=4, num_layers=2, d_ff=256, dropout=0.0, norm="post")
RECIPES = {
    "pinyin": TrainingSettings(dict(_SMALL, d_model=128, d_ff=512), steps=5000, warmup=1000),
    "copy": TrainingSettings(dict(_SMALL), steps=1500),
    "reverse": TrainingSettings(dict(_SMALL), steps=2000),
    # the shipped small GPT (assets/gpt.pt); every window holds a passage three times (see
    # language.with_repeats)
    "lm": TrainingSettings(
        dict(d_model=128, num_heads=4, num_layers=2, d_ff=512, dropout=0.0, max_len=256, norm="pre",
             positions="rope", activation="gelu", scale_embeddings=False, tie_embeddings=True, encoder=False),
        steps=4000, batch_size=32, lr=3e-3, warmup=200, merges=2000, context=128,
        repeat=1.0, copies=3, eval_every=250),
}
