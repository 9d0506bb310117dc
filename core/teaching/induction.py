"""Induction heads, measured (Olsson et al., 2022, "In-context Learning and Induction Heads").

An induction head, at a token B, attends to the token that followed the previous occurrence of B and
copies it: on "… A B … A" it looks from the second A to the first B and raises B's logit. The
measures run a decoder-only model on a random token sequence repeated twice (x_0 … x_{L-1} x_0 …
x_{L-1}): prefix matching (from a token's second occurrence to the token after its first; 1 for a
perfect pattern), previous token, and copying (the eigenvalues of the head's OV circuit).

    seq = repeated_tokens(vocab_size=600, length=25, seed=0)        # (1, 50)
    tr = model.trace(seq)
    pm = prefix_matching(tr, length=25)                              # (layers, heads)

The formulas, and why no vocabulary-sized matrix is made: docs/decisions.md, core/teaching/induction.py.
"""

from __future__ import annotations

import torch

from core.model.trace import ModelTrace
from core.model.transformer import Transformer


def repeated_tokens(
    vocab_size: int, length: int, seed: int = 0, low: int = 0, prefix: list[int] | None = None, batch: int = 1
) -> torch.Tensor:
    """(batch, len(prefix) + 2·length) ids: ``prefix`` (e.g. a beginning-of-text id), then ``length``
    random ids from [low, vocab_size) drawn with ``seed``, then the same ``length`` ids again.

    Each row's ids are distinct (drawn without replacement) when the vocabulary allows, so every
    token of the second copy has exactly one earlier occurrence.
    """
    if length < 2 or vocab_size - low < 2:
        raise ValueError(f"length={length} and vocab_size - low={vocab_size - low} must be ≥ 2")
    generator = torch.Generator().manual_seed(seed)
    rows = []
    for _ in range(batch):
        if vocab_size - low >= length:
            first = torch.randperm(vocab_size - low, generator=generator)[:length] + low  # (L,) distinct
        else:
            first = torch.randint(low, vocab_size, (length,), generator=generator)
        head = torch.tensor(prefix or [], dtype=torch.long)
        rows.append(torch.cat([head, first, first]))
    return torch.stack(rows)  # (batch, P + 2L)


def prefix_matching_scores(weights: torch.Tensor, length: int, offset: int = 0) -> torch.Tensor:
    """PM for attention ``weights`` (..., T, T) of a sequence whose two copies of ``length`` tokens
    start at ``offset``: the mean, over queries i of the second copy, of the weight on key i - L + 1.
    -> (...,), e.g. (B, h) for one layer's (B, h, T, T)."""
    queries = torch.arange(offset + length, offset + 2 * length)  # (L,) the second copy
    if queries[-1] >= weights.size(-2):
        raise ValueError(f"weights of {weights.size(-2)} positions hold no second copy of {length} tokens")
    return weights[..., queries, queries - length + 1].mean(-1)


def previous_token_scores(weights: torch.Tensor) -> torch.Tensor:
    """PT for attention ``weights`` (..., T, T): the mean over queries i ≥ 1 of the weight on key i - 1."""
    queries = torch.arange(1, weights.size(-2))
    return weights[..., queries, queries - 1].mean(-1)


def _stack(trace: ModelTrace):
    """The layers whose self-attention is measured: a decoder-only model's one stack."""
    if not trace.decoder:
        raise ValueError("induction heads are measured in a decoder-only model's stack (trace.decoder)")
    return trace.decoder


def prefix_matching(trace: ModelTrace, length: int, offset: int = 0) -> torch.Tensor:
    """(layers, heads) PM of every head, averaged over the batch, from a trace of :func:`repeated_tokens`."""
    return torch.stack([prefix_matching_scores(layer.self_attn.weights, length, offset).mean(0)
                        for layer in _stack(trace)])  # fmt: skip


def previous_token(trace: ModelTrace) -> torch.Tensor:
    """(layers, heads) PT of every head, averaged over the batch."""
    return torch.stack([previous_token_scores(layer.self_attn.weights).mean(0) for layer in _stack(trace)])


def ov_copying_score(w_e: torch.Tensor, w_v: torch.Tensor, w_o: torch.Tensor, w_u: torch.Tensor) -> float:
    """C = Σ Re λ / Σ |λ| for the OV circuit E V O U (row vectors: a token's embedding row e gives the
    logits e V O U). ``w_e`` (vocab, d_model), ``w_v`` (d_model, d_k), ``w_o`` (d_k, d_model), ``w_u``
    (d_model, vocab). Its nonzero eigenvalues are those of O U E V (d_k × d_k)."""
    return _copying_score(w_u.double() @ w_e.double(), w_v, w_o)  # U E: (d_model, d_model)


def _copying_score(ue: torch.Tensor, w_v: torch.Tensor, w_o: torch.Tensor) -> float:
    """C from U E (d_model × d_model, float64; shared by every head of a model, so made once)."""
    small = w_o.double() @ ue @ w_v.double()  # (d_k, d_k): O U E V, in float64
    eigenvalues = torch.linalg.eigvals(small)
    total = eigenvalues.abs().sum()
    return float(eigenvalues.real.sum() / total) if total > 0 else 0.0


def copying(model: Transformer) -> torch.Tensor:
    """(layers, heads) copying score of every self-attention head of a decoder-only model, from its
    weights alone: W_E the token embedding, W_U the output matrix, per head its rows of W_V (shared by
    the query heads of one key/value head) and its columns of W_O."""
    c = model.config
    if c.stack != "decoder":
        raise ValueError("copying scores are for a decoder-only model")
    w_e = model.tgt_embed.lookup.weight  # (vocab, d_model)
    w_u = model.generator.weight.T  # (d_model, vocab): logits = h W_Uᵀ as nn.Linear stores it
    d_k, group = c.d_k, c.num_heads // (c.num_kv_heads or c.num_heads)
    scores = torch.zeros(c.num_layers, c.num_heads)
    with torch.no_grad():
        ue = w_u.double() @ w_e.double()  # (d_model, d_model): the vocabulary is crossed once per model
        for i, layer in enumerate(model.decoder.layers):
            attn = layer.self_attn
            for h in range(c.num_heads):
                kv = h // group  # the key/value head this query head reads
                w_v = attn.w_v.weight[kv * d_k : (kv + 1) * d_k].T  # (d_model, d_k)
                w_o = attn.w_o.weight[:, h * d_k : (h + 1) * d_k].T  # (d_k, d_model)
                scores[i, h] = _copying_score(ue, w_v, w_o)
    return scores


def loss_by_copy(trace: ModelTrace, ids: torch.Tensor, length: int, offset: int = 0) -> tuple[float, float]:
    """The in-context-learning effect: mean next-token loss (nats) predicting the first copy's tokens
    and the second copy's, from a trace of :func:`repeated_tokens` ids (B, T). The first copy's first
    token has nothing to be predicted from and is left out."""
    logp = torch.log_softmax(trace.logits[:, :-1].double(), dim=-1)  # (B, T-1, vocab): predicts ids[:, 1:]
    nll = -logp.gather(-1, ids[:, 1:, None])[..., 0]  # (B, T-1): position t predicts token t + 1
    first = nll[:, offset : offset + length - 1].mean()  # tokens offset+1 … offset+L-1
    second = nll[:, offset + length - 1 : offset + 2 * length - 1].mean()  # the second copy's L tokens
    return float(first), float(second)


# -- what each head does, and a text that shows it ------------------------------------------------------

# A head's role from its three scores (Olsson et al. call a head an induction head when it both
# prefix-matches and copies). 0.3 of a head's attention on one chosen key is far above what spreading
# it over the ~40 earlier keys of the probe gives (~0.02-0.05), and below a clean head's (PM ≥ 0.5).
INDUCTION_MIN_PM = 0.3  # prefix matching: share of attention on the token after the earlier occurrence
INDUCTION_MIN_COPYING = 0.0  # copying score above this: the head raises the logit of the token it reads
PREVIOUS_MIN_PT = 0.3  # previous token: share of attention on the token just before
ROLES = ("induction", "previous-token", "other")


def head_roles(prefix_matching: list[list[float]], previous_token: list[list[float]],
               copying: list[list[float]]) -> list[list[str]]:
    """The role of every head (layers × heads lists, as ``core.training.language.induction_probe``
    gives them):
    "induction" when PM ≥ INDUCTION_MIN_PM and the copying score > INDUCTION_MIN_COPYING, else
    "previous-token" when PT ≥ PREVIOUS_MIN_PT, else "other".

    >>> head_roles([[0.7, 0.0, 0.4]], [[0.1, 0.9, 0.0]], [[0.5, 0.2, -0.3]])
    [['induction', 'previous-token', 'other']]
    """
    shapes = [[len(row) for row in scores] for scores in (prefix_matching, previous_token, copying)]
    if shapes[0] != shapes[1] or shapes[0] != shapes[2]:
        raise ValueError(f"scores of different shapes (heads per layer): {shapes}")
    roles = []
    for pm_row, pt_row, c_row in zip(prefix_matching, previous_token, copying, strict=True):
        row = []
        for pm, pt, c in zip(pm_row, pt_row, c_row, strict=True):
            if pm >= INDUCTION_MIN_PM and c > INDUCTION_MIN_COPYING:
                row.append("induction")
            elif pt >= PREVIOUS_MIN_PT:
                row.append("previous-token")
            else:
                row.append("other")
        roles.append(row)
    return roles


def _is_cjk(label: str) -> bool:
    return len(label) == 1 and ("\u4e00" <= label <= "\u9fff" or "\u3400" <= label <= "\u4dbf")


def text_pieces(vocab_labels: list[str]) -> tuple[list[str], list[str]]:
    """(English words, 汉字) a repeated text can be made of: tokens whose display label is "␣word"
    (letters a-z, at least three) or one CJK character; as text: " word" and "字"."""
    words = [" " + label[1:] for label in vocab_labels
             if label.startswith("␣") and len(label) >= 4 and label[1:].isascii() and label[1:].isalpha()]
    return words, [label for label in vocab_labels if _is_cjk(label)]


def repeated_text(encode, vocab_labels: list[str], length: int = 16, seed: int = 0,
                  attempts: int = 20) -> str:
    """A text of at most ``length`` tokens, distinct whole English words and single 汉字 drawn with
    ``seed``, written twice: ``encode(text)`` -> (labels, ids) gives the same ids in both halves, so
    every token of the second copy has one earlier occurrence, the one an induction head finds.

    Each half starts with a 汉字 (the text's first token has no space before it, as the second copy's
    has none) and ends with a word; a piece is kept only if the half still has one token per piece
    (no merge with its neighbour). "" when the vocabulary has no such pieces.
    """
    import random

    words, chars = text_pieces(vocab_labels)
    if not words or not chars:
        return ""
    rng = random.Random(seed)
    for _ in range(attempts):
        half = _half(encode, words, chars, length, rng)
        ids = encode(half + half)[1]
        if half and ids[: len(ids) // 2] == ids[len(ids) // 2 :]:
            return half + half
    return ""


def _half(encode, words: list[str], chars: list[str], length: int, rng) -> str:
    """One copy: a 汉字 first, then mostly words (a third 汉字), a word last, one token per piece."""
    pool_w = rng.sample(words, min(len(words), length))
    pool_c = rng.sample(chars, min(len(chars), length))
    pieces = [pool_c.pop()]
    while len(pieces) < length and pool_w:
        take_char = pool_c and len(pieces) < length - 1 and rng.random() < 1 / 3
        piece = pool_c.pop() if take_char else pool_w.pop()
        if len(encode("".join(pieces) + piece)[1]) == len(pieces) + 1:
            pieces.append(piece)
    if not pieces[-1].startswith(" "):  # end on a word: the next half's 汉字 then starts a token of its own
        pieces.pop()
    return "".join(pieces) if len(pieces) >= 2 else ""
