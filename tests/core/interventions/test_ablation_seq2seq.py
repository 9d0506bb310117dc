"""Ablation in our encoder-decoder (the paper's model: post-norm, sinusoidal positions, ReLU) against a
forward pass written here from the paper's equations with the model's weights, not with our layers:

    x = E[src]·sqrt(d) + PE;   x = LN(x + MultiHead(x, x, x));  x = LN(x + FFN(x))    (N times, then LN)
    y = E[tgt]·sqrt(d) + PE;   y = LN(y + MaskedMultiHead(y, y, y));  y = LN(y + MultiHead(y, m, m))
                               y = LN(y + FFN(y))                                      (N times, then LN)
    logits = y W + b
    MultiHead(Q, K, V) = Concat(head_1 … head_h) W_O + b_O
    head_i = softmax(Q W_Q_i (K W_K_i)ᵀ / sqrt(d_k)) V W_V_i

Switching a head off puts 0 (or its mean) in head_i's place before W_O; "attn" replaces MultiHead(…)
itself, "ffn" FFN(x). The source has padding in one row (its keys masked in the encoder and the
cross-attention).
"""

from __future__ import annotations

import math

import pytest
import torch

from core.interventions.ablation import ablation_edits, parse_ablation, reference_means
from core.model.config import ModelConfig
from core.model.transformer import Transformer

ATOL = 1e-5
CONFIG = ModelConfig(
    src_vocab_size=53, tgt_vocab_size=61, d_model=32, num_heads=4, num_layers=2, d_ff=64, dropout=0.0, seed=3
)
H, D_K = CONFIG.num_heads, CONFIG.d_k
SRC = torch.tensor([[5, 9, 17, 3, 44, 21, 8], [12, 7, 30, 2, 52, 0, 0]])  # row 2: two pads (id 0)
TGT = torch.tensor([[1, 14, 33, 6, 59, 20], [1, 40, 3, 11, 27, 9]])
REFERENCE = [  # (src, tgt) pairs, one sentence each, no padding: the means are over their positions
    (torch.tensor([[4, 8, 15, 16, 23]]), torch.tensor([[1, 42, 7]])),
    (torch.tensor([[19, 2, 50, 31, 6, 11, 13, 29]]), torch.tensor([[1, 5, 18, 36, 2, 60]])),
    (torch.tensor([[33, 10, 3]]), torch.tensor([[1, 26, 47, 8]])),
]

# ablate= -> what the reference forward replaces: (stack, layer from 0, heads from 0 | "attn" | "ffn")
CASES = {
    "enc.1.2": [("enc", 0, [1])],
    "dec.2.1": [("dec", 1, [0])],
    "cross.1.3": [("cross", 0, [2])],
    "cross.2.attn": [("cross", 1, "attn")],
    "dec.1.ffn": [("dec", 0, "ffn")],
    "enc.2.ffn,enc.1.attn": [("enc", 1, "ffn"), ("enc", 0, "attn")],
    "enc.2.1,enc.2.4,cross.2.2,dec.1.attn,dec.2.ffn": [
        ("enc", 1, [0, 3]),
        ("cross", 1, [1]),
        ("dec", 0, "attn"),
        ("dec", 1, "ffn"),
    ],
}


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    m = Transformer(CONFIG).eval()
    with torch.no_grad():  # LayerNorm starts as (1, 0): draw it, so a wrong norm would show
        for name, p in m.named_parameters():
            if ".norm." in name:
                p.add_(torch.randn_like(p) * 0.2)
    return m


# -- the reference: the paper's equations, the model's weights ------------------------------------


def positional_encoding(length: int, d: int) -> torch.Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d))  (section 3.5)."""
    pos = torch.arange(length, dtype=torch.float64)[:, None]
    two_i = torch.arange(0, d, 2, dtype=torch.float64)[None, :]
    angle = pos / 10000 ** (two_i / d)
    pe = torch.zeros(length, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return pe.float()


class Reference:
    """One forward pass. ``off``: (stack, layer, heads | "attn" | "ffn") -> the value put in place
    (None: 0). ``seen``: every (stack, layer, part) output, as computed (for the means)."""

    def __init__(self, model: Transformer, off: dict | None = None) -> None:
        self.w = {k: v.detach() for k, v in model.state_dict().items()}
        self.off = off or {}
        self.seen: dict[tuple, torch.Tensor] = {}

    def linear(self, x, name):
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def layer_norm(self, x, name, eps=CONFIG.layer_norm_eps):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + eps) * self.w[f"{name}.weight"] + self.w[f"{name}.bias"]

    def embed(self, name, ids):
        return self.w[f"{name}.lookup.weight"][ids] * math.sqrt(CONFIG.d_model) + positional_encoding(
            ids.size(1), CONFIG.d_model
        )

    def _replaced(self, key, x):
        self.seen[key] = x
        if key not in self.off:
            return x
        value = self.off[key]
        return torch.zeros_like(x) if value is None else value.expand_as(x).clone()

    def multi_head(self, site, name, x_q, x_kv, allowed):
        """``allowed`` (B, L_q, L_k): True where query may read key."""
        B, L_q, _ = x_q.shape

        def split(t):  # (B, L, d) -> (B, h, L, d_k)
            return t.view(B, -1, H, D_K).transpose(1, 2)

        q = split(self.linear(x_q, f"{name}.w_q"))
        k = split(self.linear(x_kv, f"{name}.w_k"))
        v = split(self.linear(x_kv, f"{name}.w_v"))
        scores = (q @ k.transpose(-1, -2) / math.sqrt(D_K)).masked_fill(~allowed[:, None], float("-inf"))
        heads = scores.softmax(-1) @ v  # (B, h, L_q, d_k)
        self.seen[(*site, "heads")] = heads.clone()
        for (stack, layer, which), value in self.off.items():
            if (stack, layer) == site and isinstance(which, tuple):
                for i in which:
                    heads[:, i] = 0.0 if value is None else value[i]
        concat = heads.transpose(1, 2).reshape(B, L_q, H * D_K)
        return self._replaced((*site, "attn"), self.linear(concat, f"{name}.w_o"))

    def ffn(self, site, name, x):
        hidden = torch.relu(self.linear(x, f"{name}.linear1"))
        return self._replaced((*site, "ffn"), self.linear(hidden, f"{name}.linear2"))

    def __call__(self, src, tgt):
        src_keys = (src != CONFIG.pad_id)[:, None, :]  # (B, 1, S)
        x = self.embed("src_embed", src)
        for i in range(CONFIG.num_layers):
            p = f"encoder.layers.{i}"
            x = self.layer_norm(
                x + self.multi_head(("enc", i), f"{p}.self_attn", x, x, src_keys), f"{p}.sublayer1.norm"
            )
            x = self.layer_norm(x + self.ffn(("enc", i), f"{p}.ffn", x), f"{p}.sublayer2.norm")
        memory = self.layer_norm(x, "encoder.norm")
        T = tgt.size(1)
        causal = torch.ones(T, T, dtype=torch.bool).tril()[None]  # (1, T, T)
        y = self.embed("tgt_embed", tgt)
        for i in range(CONFIG.num_layers):
            p = f"decoder.layers.{i}"
            y = self.layer_norm(
                y + self.multi_head(("dec", i), f"{p}.self_attn", y, y, causal), f"{p}.sublayer1.norm"
            )
            y = self.layer_norm(
                y + self.multi_head(("cross", i), f"{p}.cross_attn", y, memory, src_keys),
                f"{p}.sublayer2.norm",
            )
            y = self.layer_norm(y + self.ffn(("dec", i), f"{p}.ffn", y), f"{p}.sublayer3.norm")
        return self.linear(self.layer_norm(y, "decoder.norm"), "generator")


def _off(spec, means=None) -> dict:
    """CASES' spec -> Reference's ``off``: heads as a tuple key part, whole sublayers by name."""
    off = {}
    for stack, layer, which in spec:
        if isinstance(which, list):
            key = (stack, layer, tuple(which))
            off[key] = None if means is None else means[(stack, layer, "heads")]
        else:
            off[(stack, layer, which)] = None if means is None else means[(stack, layer, which)]
    return off


def _reference_means(model) -> dict:
    """(stack, layer, part) -> the intact reference's mean over every position of REFERENCE."""
    rows: dict[tuple, list] = {}
    for src, tgt in REFERENCE:
        ref = Reference(model)
        ref(src, tgt)
        for key, value in ref.seen.items():
            if key[2] == "heads":  # (1, h, L, d_k) -> (L, h, d_k)
                value = value[0].transpose(0, 1)
            else:
                value = value[0]
            rows.setdefault(key, []).append(value)
    return {key: torch.cat(parts).mean(0) for key, parts in rows.items()}


# -- the tests -------------------------------------------------------------------------------------


def test_the_reference_is_the_model(model):
    torch.testing.assert_close(model.trace(SRC, TGT).logits, Reference(model)(SRC, TGT), atol=ATOL, rtol=0)


@pytest.mark.parametrize("text", sorted(CASES))
def test_zero_ablation_equals_the_reference(model, text):
    edits = ablation_edits(parse_ablation(text, CONFIG), "zero", CONFIG)
    expected = Reference(model, _off(CASES[text]))(SRC, TGT)
    torch.testing.assert_close(model.trace(SRC, TGT, edits=edits).logits, expected, atol=ATOL, rtol=0)
    torch.testing.assert_close(model.with_edits(edits)(SRC, TGT), expected, atol=ATOL, rtol=0)
    assert (expected - Reference(model)(SRC, TGT)).abs().max() > 1e-2  # the ablation did something


@pytest.fixture(scope="module")
def means(model):
    mine = reference_means([model.trace(src, tgt) for src, tgt in REFERENCE])
    return mine, _reference_means(model)


def test_reference_means_equal_the_references(means):
    mine, theirs = means
    assert sorted(mine) == sorted(theirs)
    for site, value in theirs.items():
        torch.testing.assert_close(mine[site], value, atol=ATOL, rtol=0)


@pytest.mark.parametrize("text", sorted(CASES))
def test_mean_ablation_equals_the_reference(model, means, text):
    mine, theirs = means
    edits = ablation_edits(parse_ablation(text, CONFIG), "mean", CONFIG, mine)
    expected = Reference(model, _off(CASES[text], theirs))(SRC, TGT)
    torch.testing.assert_close(model.trace(SRC, TGT, edits=edits).logits, expected, atol=ATOL, rtol=0)
    assert (expected - Reference(model, _off(CASES[text]))(SRC, TGT)).abs().max() > 1e-2
