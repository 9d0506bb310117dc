"""A small GPT trained here: next-token prediction on real English and Chinese text.

    python -m core.training --task lm --steps 4000 --threads 1 --half --out assets/gpt.pt
    python -m core.training --evaluate assets/gpt.pt

The model is one causal stack (``ModelConfig(encoder=False)``) reading windows of the fortune files
(core/training/text.py) through a byte-level BPE learned on the training part (core/tokenizers/bpe.py).
It is trained on the next-token loss  L = −(1/T) Σ_t log p(x_{t+1} | x_≤t)  and scored on the test part
by perplexity exp(L) and bits per byte, next to a unigram and a bigram model (:func:`ngram_baselines`,
:func:`stream_bytes`). In a fraction ``repeat`` of the training windows a passage of the window's own
text occurs ``copies`` times (:func:`with_repeats`), so that an induction head can form; the test
part has no repeats added.
How the scores count and why the repeats: docs/decisions.md, core/training/language.py.
"""

from __future__ import annotations

import math
from collections import Counter

import torch
import torch.nn.functional as F

from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.teaching import induction
from core.tokenizers.bpe import BPETokenizer, token_bytes
from core.tokenizers.vocab import EOS_ID, SPECIAL_TOKENS
from core.training.schedule import warmup_cosine
from core.training.settings import RECIPES, TrainingSettings
from core.training.text import corpus, token_stream, window_rows

# the induction test: random tokens repeated twice after an [EOS] (the model's "beginning of text")
PROBE = dict(length=40, batch=8, seed=0)


class LanguageTask:
    """What the loop needs of next-token prediction: a BPE learned on the training part, the parts as
    token streams, AdamW at a warm-up-and-cosine rate, windows with repeated passages, and the measures."""

    name = "lm"
    vocabs = None  # its text is read by ``tokenizer``

    def __init__(self, settings: TrainingSettings, parts: dict[str, list[str]] | None = None):
        self.settings = settings
        self.parts = parts or corpus()
        self.tokenizer = learn_tokenizer(self.parts["train"], settings.merges)
        self.streams = {name: token_stream(self.tokenizer, entries) for name, entries in self.parts.items()}
        self.generator = torch.Generator().manual_seed(settings.seed)

    def config(self, sizes: dict) -> ModelConfig:
        """One causal stack of the recipe's sizes with ``sizes`` over them, positions for a window."""
        s = self.settings
        return lm_config(len(self.tokenizer), **{**s.sizes, "max_len": max(s.context, s.sizes["max_len"]),
                                                 "seed": s.seed, **sizes})

    def optimizer(self, model: Transformer) -> torch.optim.Optimizer:
        decay = [p for p in model.parameters() if p.dim() >= 2]
        rest = [p for p in model.parameters() if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=self.settings.lr, betas=(0.9, 0.95))

    def rate(self, step: int, spent: float, d_model: int) -> float:
        return warmup_cosine(step, spent, self.settings.lr, self.settings.warmup)

    def loss(self, model: Transformer) -> tuple[torch.Tensor, int, None]:
        """The mean next-token loss of a batch of windows: (loss, tokens scored, None: no accuracy)."""
        s = self.settings
        rows = window_rows(self.streams["train"], s.context, s.batch_size, self.generator)  # (B, context + 1)
        rows = with_repeats(rows, s.repeat, self.generator, copies=s.copies)
        logits = model(rows[:, :-1])  # (B, context, V): position t predicts rows[:, t + 1]
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), rows[:, 1:].reshape(-1))
        return loss, rows[:, 1:].numel(), None

    def validate(self, model: Transformer) -> dict:
        """The loss on a slice of the valid part, and the induction probe's head scores."""
        val, _ = mean_loss(model, self.streams["valid"], self.settings.context, limit=64)
        heads = induction_probe(model)
        return {"val": {"loss": val, "perplexity": math.exp(val)},
                "heads": {k: heads[k] for k in ("prefix_matching", "previous_token", "best_pm")}}

    def describe(self, validation: dict) -> str:
        return (f"val ppl {validation['val']['perplexity']:.1f}  "
                f"best prefix-matching {validation['heads']['best_pm']:.2f}")

    def measure(self, model: Transformer) -> dict:
        return evaluate(model, self.tokenizer, self.parts, self.settings.context, self.streams)

    def facts(self, steps: int) -> dict:
        """The recipe the metrics were measured after, and the tokens read."""
        s = self.settings
        train = dict(merges=s.merges, context=s.context, batch_size=s.batch_size, lr=s.lr, warmup=s.warmup,
                     repeat=s.repeat, copies=s.copies, steps=s.steps)
        return dict(train=train, tokens_seen=steps * s.batch_size * s.context)


def learn_tokenizer(train_entries: list[str], merges: int) -> BPETokenizer:
    """A byte-level BPE with ``merges`` merges learned on the training part only."""
    return BPETokenizer.train("\n".join(train_entries), merges)


def lm_config(vocab_size: int, **overrides) -> ModelConfig:
    """The shipped small GPT's decoder-only configuration for a vocabulary of ``vocab_size``."""
    return ModelConfig(vocab_size, vocab_size, **{**RECIPES["lm"].sizes, **overrides})


def with_repeats(rows: torch.Tensor, probability: float, generator: torch.Generator,
                 shortest: int = 4, copies: int = 2) -> torch.Tensor:
    """Write, in a ``probability`` share of the rows (B, T), a passage of the row again later in the same
    row, so that it occurs ``copies`` times: length m from [shortest, T/copies], the copies at random
    places in order, not overlapping (so the distance between them varies and only the content says
    where to look). -> a new (B, T) tensor; the other rows are unchanged."""
    rows = rows.clone()
    B, T = rows.shape
    longest = max(shortest, T // copies)
    for b in torch.nonzero(torch.rand(B, generator=generator) < probability).flatten().tolist():
        m = int(torch.randint(shortest, longest + 1, (1,), generator=generator))
        # ``copies`` sorted cuts in the T - copies·m free places; the k-th copy starts after k passages
        cuts = torch.randint(0, T - copies * m + 1, (copies,), generator=generator).sort().values
        starts = [int(c) + k * m for k, c in enumerate(cuts)]
        for start in starts[1:]:
            rows[b, start : start + m] = rows[b, starts[0] : starts[0] + m]
    return rows


@torch.no_grad()
def mean_loss(model: Transformer, stream: torch.Tensor, context: int, limit: int | None = None,
              batch_size: int = 16) -> tuple[float, int]:
    """Mean next-token loss (nats) over ``stream`` cut into consecutive windows of ``context`` + 1 ids
    that overlap by one (each window's first token is only read), and how many tokens were scored:
    every token but the first, the last window holding what is left. ``limit``: at most that many
    windows (for a quick validation during training)."""
    model.eval()
    scored = max(stream.numel() - 1, 0)
    n_windows = math.ceil(scored / context)
    if limit is not None:
        n_windows = min(n_windows, limit)
    n_full = min(n_windows, scored // context)
    total, count = 0.0, 0
    for i in range(0, n_full, batch_size):
        starts = torch.arange(i, min(i + batch_size, n_full)) * context
        total, count = _add_loss(model, stream[starts[:, None] + torch.arange(context + 1)], total, count)
    if n_windows > n_full:  # the tail: fewer than ``context`` tokens left to score
        total, count = _add_loss(model, stream[n_full * context :][None], total, count)
    return total / max(count, 1), count


def _add_loss(model: Transformer, rows: torch.Tensor, total: float, count: int) -> tuple[float, int]:
    """``total`` and ``count`` grown by the summed next-token loss of ``rows`` (b, T + 1)."""
    logits = model(rows[:, :-1])  # (b, T, V): position t predicts rows[:, t + 1]
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), rows[:, 1:].reshape(-1), reduction="sum")
    return total + float(loss), count + rows[:, 1:].numel()


def ngram_baselines(train: torch.Tensor, test: torch.Tensor, vocab_size: int,
                    valid: torch.Tensor | None = None) -> dict:
    """Mean next-token loss (nats) on ``test`` of two counting models fitted on ``train`` ids:

        unigram   p(w) = (c(w) + 1) / (N + V)                          (add-one)
        bigram    p(w | v) = λ c(v w) / c(v) + (1 − λ) p_unigram(w)    (interpolated; p_unigram when
                  c(v) = 0), λ chosen on ``valid`` from 0.05 … 0.95

    -> {"unigram": nats, "bigram": nats, "bigram_lambda": λ}. Every test token but the first is scored,
    as the model scores them."""
    uni = torch.bincount(train, minlength=vocab_size).double()
    p_uni = (uni + 1) / (uni.sum() + vocab_size)  # (V,)
    pairs = Counter(zip(train[:-1].tolist(), train[1:].tolist(), strict=True))
    first = torch.bincount(train[:-1], minlength=vocab_size).double()

    def bigram_loss(ids: torch.Tensor, lam: float) -> float:
        prev, nxt = ids[:-1].tolist(), ids[1:].tolist()
        total = 0.0
        for v, w in zip(prev, nxt, strict=True):
            p = (1 - lam) * float(p_uni[w])
            if first[v] > 0:
                p += lam * pairs.get((v, w), 0) / float(first[v])
            total -= math.log(p)
        return total / max(len(nxt), 1)

    lambdas = [round(0.05 * k, 2) for k in range(1, 20)]
    tune = valid if valid is not None else test
    lam = min(lambdas, key=lambda x: bigram_loss(tune, x))
    return {"unigram": float(-torch.log(p_uni[test[1:]]).mean()), "bigram": bigram_loss(test, lam),
            "bigram_lambda": lam}


def bits_per_byte(nats_per_token: float, tokens: int, text_bytes: int) -> float:
    """Σ −log₂ p over the tokens, divided by the bytes of text they spell."""
    return nats_per_token * tokens / math.log(2) / max(text_bytes, 1)


def stream_bytes(tokenizer: BPETokenizer, ids: torch.Tensor) -> int:
    """The UTF-8 bytes ``ids`` spell: each token's bytes, one ("\\n") for each [EOS], the end of an
    entry (:func:`core.training.text.token_stream`)."""
    sizes = {i: 1 if i == EOS_ID else len(token_bytes(tok)) for i, tok in tokenizer.vocab.items()}
    return sum(sizes[i] for i in ids.tolist())


@torch.no_grad()
def induction_probe(model: Transformer, length: int = PROBE["length"], batch: int = PROBE["batch"],
                    seed: int = PROBE["seed"]) -> dict:
    """Every head's prefix-matching and previous-token score (core/teaching/induction.py) on ``batch`` random
    sequences of ``length`` tokens (not the special ones) repeated twice after an [EOS], the copying
    score of its OV circuit, and the loss on each copy. Lists of (layers × heads) floats."""
    model.eval()
    vocab = model.config.tgt_vocab_size
    ids = induction.repeated_tokens(vocab, length, seed=seed, low=len(SPECIAL_TOKENS), prefix=[EOS_ID],
                                    batch=batch)
    tr = model.trace(ids)
    pm = induction.prefix_matching(tr, length, offset=1)
    pt = induction.previous_token(tr)
    first, second = induction.loss_by_copy(tr, ids, length, offset=1)
    return {"prefix_matching": pm.tolist(), "previous_token": pt.tolist(),
            "copying": induction.copying(model).tolist(), "best_pm": float(pm.max()),
            "loss_first_copy": first, "loss_second_copy": second, "length": length, "batch": batch}


def evaluate(model: Transformer, tokenizer: BPETokenizer, parts: dict[str, list[str]], context: int,
                streams: dict[str, torch.Tensor] | None = None) -> dict:
    """Test and validation perplexity and bits per byte, the unigram and bigram baselines, and the
    induction probe. The model and both baselines score the same test tokens (every one but the
    first), and bits per byte divide by the bytes of those tokens (``"tokens"``, ``"bytes"``)."""
    streams = streams or {name: token_stream(tokenizer, entries) for name, entries in parts.items()}
    out: dict = {"vocab_size": len(tokenizer), "merges": len(tokenizer.merges), "context": context}
    for split in ("valid", "test"):
        loss, n = mean_loss(model, streams[split], context)
        text_bytes = stream_bytes(tokenizer, streams[split][1:])  # the first token is read, not scored
        out[split] = {"loss": loss, "perplexity": math.exp(loss), "tokens": n,
                      "bits_per_byte": bits_per_byte(loss, n, text_bytes), "bytes": text_bytes}
    test, n, text_bytes = streams["test"], out["test"]["tokens"], out["test"]["bytes"]
    base = ngram_baselines(streams["train"], test, len(tokenizer), valid=streams["valid"])
    out["baselines"] = {name: {"loss": base[name], "perplexity": math.exp(base[name]), "tokens": n,
                               "bits_per_byte": bits_per_byte(base[name], n, text_bytes), "bytes": text_bytes}
                        for name in ("unigram", "bigram")}
    out["baselines"]["bigram_lambda"] = base["bigram_lambda"]
    out["induction"] = induction_probe(model)
    return out


def report(m: dict) -> str:
    """The report printed after training and by ``--evaluate``."""
    test = m["test"]
    lines = [f"{'model':22} {'perplexity':>10} {'bits/byte':>10}   (test part: the same {test['tokens']:,} "
             f"tokens scored in every row, {test['bytes']:,} bytes; vocabulary {m['vocab_size']:,})"]
    rows = [("this GPT", m["test"])] + [(f"{k} baseline", m["baselines"][k]) for k in ("unigram", "bigram")]
    for name, r in rows:
        lines.append(f"{name:22} {r['perplexity']:10.1f} {r['bits_per_byte']:10.3f}")
    ind = m["induction"]
    lines.append(f"induction probe: {ind['batch']} random sequences of {ind['length']} tokens, repeated once")
    lines.append(f"  loss on the first copy {ind['loss_first_copy']:.2f} nats, on the second "
                 f"{ind['loss_second_copy']:.2f} nats")
    lines.append("  layer.head  prefix-matching  previous-token  copying   (numbered from 1, as in the app)")
    for i, (pm, pt, cp) in enumerate(zip(ind["prefix_matching"], ind["previous_token"], ind["copying"],
                                         strict=True)):
        for h in range(len(pm)):
            lines.append(f"  {i + 1}.{h + 1}        {pm[h]:15.3f} {pt[h]:15.3f} {cp[h]:8.3f}")
    return "\n".join(lines)
