"""The seq2seq tasks in the training loop: 汉字→拼音 and the toy digit tasks, trained as the paper trains.

Teacher forcing: the decoder reads tgt[:, :-1] = [BOS] y and is scored on tgt[:, 1:] = y [EOS], with
label smoothing, Adam (β = 0.9, 0.98, ε = 1e-9) and the paper's warm-up schedule (or a constant rate),
lowered to 0 over the budget's last ``cooldown``. A trained model is measured by greedy decoding
(:func:`evaluate`): syllable and phrase accuracy, and how often cross-attention peaks on the source
character a syllable reads.
"""

from __future__ import annotations

import random

import torch
import torch.nn.functional as F

from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.tokenizers.vocab import BOS_ID, EOS_ID, PAD_ID, Vocab
from core.training.pairs import TaskData, load_task, make_batch
from core.training.schedule import cooled, noam_lr
from core.training.settings import TrainingSettings


class Seq2SeqTask:
    """What the loop needs of a seq2seq task: its model, optimiser, rate, loss and measures."""

    tokenizer = None  # its text is read by ``vocabs``

    def __init__(self, name: str, settings: TrainingSettings, data: TaskData | None = None):
        self.name, self.settings = name, settings
        self.data = data or load_task(name)
        self.rng = random.Random(settings.seed)  # batch order; the weights are seeded by config.seed

    @property
    def vocabs(self) -> tuple[Vocab, Vocab]:
        return self.data.src_vocab, self.data.tgt_vocab

    def config(self, sizes: dict) -> ModelConfig:
        """The recipe's sizes with ``sizes`` over them, seeded by the settings unless they name a seed."""
        return ModelConfig(len(self.data.src_vocab), len(self.data.tgt_vocab),
                           **{"seed": self.settings.seed, **self.settings.sizes, **sizes})

    def optimizer(self, model: Transformer) -> torch.optim.Optimizer:
        # betas and eps as in the paper (section 5.3)
        return torch.optim.Adam(model.parameters(), lr=self.settings.lr or 1.0, betas=(0.9, 0.98), eps=1e-9)

    def rate(self, step: int, spent: float, d_model: int) -> float:
        """noam_lr (or a constant ``lr``), lowered over the cooldown."""
        s = self.settings
        rate = s.lr if s.lr is not None else noam_lr(step, d_model, s.warmup, s.factor)
        return cooled(rate, spent, s.cooldown)

    def loss(self, model: Transformer) -> tuple[torch.Tensor, int, float]:
        """One batch under teacher forcing: the decoder reads [BOS] y and is scored on y [EOS].
        -> (loss, how many target tokens were not [PAD], how many of them the model got right)."""
        src, tgt = self.data.train_batch(self.settings.batch_size, self.rng)
        logits = model(src, tgt[:, :-1])  # (B, T, V)
        target = tgt[:, 1:]  # (B, T)
        real = target != PAD_ID
        right = float(((logits.argmax(-1) == target) & real).sum())
        return label_smoothed_loss(logits, target, self.settings.label_smoothing), int(real.sum()), right

    def validate(self, model: Transformer) -> dict:
        """Greedy decoding of the first ``eval_limit`` valid pairs (no alignment: it needs a trace)."""
        return {"val": evaluate(model, self.data, "valid", limit=self.settings.eval_limit, alignment=False)}

    def describe(self, validation: dict) -> str:
        val = validation["val"]
        return f"val token {val['token_acc']:.3f} exact {val['exact_acc']:.3f}"

    def measure(self, model: Transformer) -> dict:
        """Valid and test metrics of the trained model, each prefixed with its split."""
        metrics = {f"valid_{k}": v for k, v in evaluate(model, self.data, "valid").items()}
        metrics.update({f"test_{k}": v for k, v in evaluate(model, self.data, "test").items()})
        return metrics

    def facts(self, steps: int) -> dict:
        """The recipe the metrics were measured after."""
        s = self.settings
        return dict(batch_size=s.batch_size, label_smoothing=s.label_smoothing,
                    schedule=_schedule_name(s.lr, s.warmup, s.factor, s.cooldown))


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


@torch.no_grad()
def greedy_predict(model: Transformer, src: torch.Tensor, max_new_tokens: int) -> list[list[int]]:
    """Greedy decoding of a padded batch; each row's ids after BOS, cut at its first EOS."""
    res = model.greedy_decode(src, max_new_tokens, bos_id=BOS_ID, eos_id=EOS_ID)
    out = []
    for row in res.tokens[:, 1:].tolist():
        out.append(row[: row.index(EOS_ID)] if EOS_ID in row else row)
    return out


@torch.no_grad()
def evaluate(model: Transformer, data: TaskData, split: str = "test", limit: int | None = None,
             batch_size: int = 256, alignment: bool = True) -> dict:
    """Greedy-decoding metrics on a split (the model must be in eval mode).

    token_acc: position-wise accuracy over the reference length (for pinyin: syllable accuracy);
    exact_acc: whole sequence right (phrase accuracy, or sequence accuracy for copy/reverse);
    alignment (1:1 tasks only): see ``_alignment_hits``.
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


def report(metrics: dict, prefix: str = "test_") -> str:
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
