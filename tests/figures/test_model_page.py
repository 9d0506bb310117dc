"""figures/model.py: every plotted number is the trace's number (small real models, no Streamlit)."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

import i18n
from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.tokenizers.vocab import BOS_ID, EOS_ID
from figures.model import (
    MAX_FFN_CELLS,
    MAX_GRID_CELLS,
    MAX_TICKS,
    block_mean,
    cross_attention,
    cross_attention_figure,
    decoded_ids,
    ffn_hidden_figure,
    ffn_units_shown,
    relu_zero_fraction,
    residual_figure,
    residual_stages,
    softmax_t,
    step_probs,
    stream_norms,
    stream_norms_figure,
    top_k,
    topk_figure,
    zero_fraction_figure,
)

SRC = ["中", "国", "<b>", "中", "🙂"]
VOCAB = [f"t{i}" for i in range(40)]
VOCAB[7] = "<b>x</b>"


def model(norm="post", num_layers=2):
    return Transformer(ModelConfig(40, 40, d_model=16, num_heads=4, num_layers=num_layers, d_ff=32,
                                   dropout=0.0, norm=norm, seed=3)).eval()


@pytest.fixture(scope="module")
def traces():
    src = torch.tensor([[5, 6, 7, 5, 9]])
    tgt = torch.tensor([[BOS_ID, 11, 12, 13]])
    return {norm: model(norm).trace(src, tgt) for norm in ("post", "pre")}


@pytest.fixture(scope="module")
def decoded():
    return model().greedy_decode(torch.tensor([[5, 6, 7, 5, 9]]), 4, bos_id=BOS_ID, eos_id=EOS_ID)


# -- residual + LayerNorm ---------------------------------------------------------------------------


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_residual_norms_are_the_trace_vectors_norms(traces, norm):
    layer = traces[norm].encoder[1]
    token = 2
    fig = residual_figure(layer, token, norm)
    bars = fig.data[0]
    if norm == "post":
        attn_sum, ffn_sum = layer.input + layer.self_attn.output, layer.after_attn + layer.ffn_output
        expected = [layer.input, layer.self_attn.output, attn_sum, layer.after_attn,
                    layer.ffn_output, ffn_sum, layer.output]
    else:
        expected = [layer.input, layer.self_attn.output, layer.after_attn, layer.ffn_output, layer.output]
    want = [float(torch.linalg.norm(t[0, token])) for t in expected]
    np.testing.assert_allclose(bars.x, want, rtol=1e-5)
    # The heatmap shows the first 16 dimensions of the same vectors.
    dims = np.stack([t[0, token, :16].numpy() for t in expected])
    np.testing.assert_allclose(np.array(fig.data[1].z), dims, rtol=1e-5, atol=1e-6)
    names = list(fig.layout.yaxis.ticktext)
    assert len(names) == len(expected)
    if norm == "post":
        assert names[3] == "x₁ = LayerNorm(x + MultiHead(x))"
        assert bars.x[3] == pytest.approx(4.0, rel=0.05)  # LayerNorm at init: length √d_model = 4
    else:
        assert not any("LayerNorm" in n for n in names)  # pre-norm: the stream itself is never normalised
        assert names[1] == "MultiHead(LN(x))"


def test_post_norm_sum_equals_after_attn_before_layernorm(traces):
    layer = traces["pre"].encoder[0]
    stages = residual_stages(layer, 0, "pre")
    # pre-norm: the stream after attention is exactly x + MultiHead(LN(x)) (no norm on the stream)
    np.testing.assert_allclose(stages[2].vector, stages[0].vector + stages[1].vector, rtol=1e-5, atol=1e-6)


def test_stream_norms_equal_torch_norms(traces):
    trace = traces["pre"]
    labels, norms = stream_norms(trace)
    assert labels == ["embedded", "L1 attn", "L1 FFN", "L2 attn", "L2 FFN", "memory"]
    tensors = [trace.encoder[0].input, trace.encoder[0].after_attn, trace.encoder[0].output,
               trace.encoder[1].after_attn, trace.encoder[1].output, trace.memory]
    want = np.stack([torch.linalg.norm(t[0], dim=-1).numpy() for t in tensors])
    np.testing.assert_allclose(norms, want, rtol=1e-5)
    fig = stream_norms_figure(traces, 16)
    assert [d.name for d in fig.data] == ["post-norm", "pre-norm", "√d_model = 4.0"]
    assert list(fig.data[2].y) == [4.0, 4.0]
    np.testing.assert_allclose(fig.data[1].y, want.mean(axis=1), rtol=1e-5)
    assert list(fig.layout.xaxis.ticktext) == labels


def test_pre_norm_stream_grows_post_norm_stays_at_sqrt_d_model():
    src = torch.tensor([[5, 6, 7, 8, 9, 10]])
    post = stream_norms(model("post", 6).trace(src))[1].mean(axis=1)
    pre = stream_norms(model("pre", 6).trace(src))[1].mean(axis=1)
    np.testing.assert_allclose(post[1:-1], 4.0, rtol=0.02)  # every LayerNorm output has length √16
    assert pre[-2] > 1.5 * post[-2]  # the un-normalised stream keeps growing


# -- feed-forward ------------------------------------------------------------------------------------


def test_ffn_heatmap_and_relu_fraction_are_the_trace(traces):
    hidden = traces["post"].encoder[0].ffn_hidden[0]  # (S, d_ff)
    fig = ffn_hidden_figure(hidden, SRC)
    np.testing.assert_allclose(np.array(fig.data[0].z), hidden.numpy(), atol=1e-4)
    assert list(fig.layout.yaxis.ticktext) == ["中", "国", "&lt;b&gt;", "中", "🙂"]
    overall, per_token = relu_zero_fraction(hidden)
    assert overall == pytest.approx(float((hidden == 0).float().mean()))
    np.testing.assert_allclose(per_token, (hidden == 0).float().mean(-1).numpy())
    assert 0.0 < overall < 1.0
    bars = zero_fraction_figure(hidden, SRC)
    np.testing.assert_allclose(bars.data[0].x, per_token)
    assert "<b>" not in str(bars.to_plotly_json())


# -- output probabilities ----------------------------------------------------------------------------


@pytest.mark.parametrize("temperature", [0.1, 0.5, 1.0, 3.0])
def test_topk_bars_are_the_true_topk_of_tempered_softmax(traces, temperature):
    logits = traces["post"].logits[0, 2]
    probs = softmax_t(logits, temperature)
    want = torch.softmax(logits.double() / temperature, -1)
    np.testing.assert_allclose(probs, want.numpy(), rtol=1e-9)
    fig = topk_figure(probs, VOCAB, 5)
    values, ids = torch.topk(want, 5)
    np.testing.assert_allclose(fig.data[0].x, values.numpy(), rtol=1e-9)
    escaped = [VOCAB[i].replace("<", "&lt;").replace(">", "&gt;") for i in ids]
    assert list(fig.layout.yaxis.ticktext) == escaped
    assert fig.layout.yaxis.autorange == "reversed" and list(fig.data[0].y) == [0, 1, 2, 3, 4]


def test_temperature_changes_probabilities_not_the_argmax(traces):
    logits = traces["post"].logits[0, 1]
    cold, hot = softmax_t(logits, 0.2), softmax_t(logits, 3.0)
    assert cold.argmax() == hot.argmax() == int(logits.argmax())
    assert cold.max() > softmax_t(logits, 1.0).max() > hot.max()


def test_topk_labels_are_escaped_and_reference_drawn():
    probs = np.zeros(40)
    probs[7], probs[3] = 0.7, 0.3
    fig = topk_figure(probs, VOCAB, 3, reference=np.full(40, 1 / 40), chosen=7)
    assert fig.layout.yaxis.ticktext[0] == "&lt;b&gt;x&lt;/b&gt;"
    assert fig.data[0].marker.color[0] != fig.data[0].marker.color[1]  # the chosen token stands out
    np.testing.assert_allclose(fig.data[1].x, [1 / 40] * 3)
    assert "<b>x" not in str(fig.to_plotly_json())
    ids, p = top_k(probs, 100)
    assert len(ids) == 40 and p[0] == 0.7


# -- greedy decoding ---------------------------------------------------------------------------------


def test_step_cross_attention_heatmap_is_the_step_trace(decoded):
    ids = decoded_ids(decoded)
    assert ids[0] == BOS_ID and len(ids) == len(decoded.steps) + 1
    for step, trace in enumerate(decoded.steps):
        prefix = [VOCAB[i] for i in ids[: step + 1]]
        weights = trace.decoder[-1].cross_attn.weights[0]  # (h, t, S)
        fig = cross_attention_figure(trace, SRC, prefix)
        np.testing.assert_allclose(np.array(fig.data[0].z), weights.mean(0).numpy(), rtol=1e-6)
        assert np.array(fig.data[0].z).shape == (step + 1, len(SRC))
        head = cross_attention_figure(trace, SRC, prefix, head=2)
        np.testing.assert_allclose(np.array(head.data[0].z), weights[2].numpy(), rtol=1e-6)
        assert list(fig.layout.xaxis.ticktext) == ["中", "国", "&lt;b&gt;", "中", "🙂"]
        assert len(fig.layout.yaxis.ticktext) == step + 1
        np.testing.assert_allclose(cross_attention(trace).sum(-1), 1.0, rtol=1e-5)
        # the step's distribution is the one the token was taken from
        assert int(step_probs(decoded, step).argmax()) == ids[step + 1] or ids[step + 1] == 0


# -- 中文: every title and axis title of the figures comes from i18n ---------------------------------


def zh(key, **values):
    return i18n.t(key, "zh", **values)


def test_figures_in_chinese(traces, decoded):
    layer = traces["post"].encoder[0]
    res = residual_figure(layer, 1, "post", lang="zh")
    assert [a.text for a in res.layout.annotations] == [zh("model.fig.residual.length"),
                                                        zh("model.fig.residual.dims", dims=16, d=16)]
    assert res.layout.xaxis2.title.text == zh("model.fig.dimension")
    assert res.data[1].colorbar.title.text == zh("model.fig.value")
    assert res.layout.yaxis.ticktext[0] == zh("model.fig.stage.input")
    assert res.layout.yaxis.ticktext[-1] == zh("model.fig.stage.output", formula="LayerNorm(x₁ + FFN(x₁))")
    kinds = [zh(f"model.fig.kind.{k}") for k in ("stream", "sublayer", "normed")]
    assert [d.name for d in res.data[2:]] == kinds

    stream = stream_norms_figure(traces, 16, lang="zh")
    assert stream.layout.xaxis.title.text == zh("model.fig.stream.x")
    assert stream.layout.yaxis.title.text == zh("model.fig.stream.y")
    stages = [zh(f"model.fig.stream.{part}", i=i) for i in (1, 2) for part in ("attn", "ffn")]
    want = [zh("model.fig.stream.embedded"), *stages, zh("model.fig.stream.memory")]
    assert list(stream.layout.xaxis.ticktext) == want
    assert want[1] == "第1层 注意力"
    assert "平均" in stream.data[0].hovertemplate

    hidden = layer.ffn_hidden[0]
    assert ffn_hidden_figure(hidden, SRC, lang="zh").layout.xaxis.title.text == zh("model.fig.ffn.x", d_ff=32)
    assert zero_fraction_figure(hidden, SRC, lang="zh").layout.xaxis.title.text == zh("model.fig.zero.x")
    probs = softmax_t(traces["post"].logits[0, 0], 1.0)
    bars = topk_figure(probs, VOCAB, 5, lang="zh", title=zh("model.greedy.bars_title", step=1))
    assert bars.layout.xaxis.title.text == zh("model.fig.probability")
    assert bars.layout.title.text == "第 1 步的下一个词元（T = 1）"

    ids = decoded_ids(decoded)
    cross = cross_attention_figure(decoded.steps[0], SRC, [VOCAB[ids[0]]], lang="zh")
    assert cross.layout.xaxis.title.text == zh("model.fig.cross.x")
    assert cross.layout.yaxis.title.text == zh("model.fig.cross.y")
    assert cross.data[0].colorbar.title.text == zh("model.fig.weight")
    assert cross.data[0].hovertemplate.startswith(zh("model.fig.cross.y") + ": ")


# -- up to 512 tokens: parts and overviews, never a 512 × 2048 grid -----------------------------------


def test_ffn_heatmap_of_512_tokens_shows_the_first_units_and_thinned_labels():
    hidden = torch.relu(torch.randn(512, 2048, generator=torch.Generator().manual_seed(0)))
    tokens = [f"w{i}" for i in range(512)]
    fig = ffn_hidden_figure(hidden, tokens)
    z = np.array(fig.data[0].z)
    assert z.shape == (512, 128) and 512 * 128 <= MAX_FFN_CELLS
    np.testing.assert_allclose(z, hidden[:, :128].numpy(), rtol=1e-6)  # float32: exact to 1e-7
    assert fig.layout.xaxis.title.text == "hidden unit (the first 128 of d_ff = 2048)"
    ticks = list(fig.layout.yaxis.ticktext)
    step = -(-512 // MAX_TICKS)  # every step-th token is labelled
    assert len(ticks) <= MAX_TICKS and ticks[:2] == ["w0", f"w{step}"]
    assert list(fig.layout.yaxis.tickvals)[:2] == [0, step]
    assert len(fig.to_json()) < 1_000_000
    # the small default stays whole
    assert ffn_units_shown(64, 1024) == 1024 and ffn_units_shown(6, 2048) == 2048


def _fake_step(weights):
    """A decoding step's trace as cross_attention_figure reads it: decoder[-1].cross_attn.weights."""
    return SimpleNamespace(decoder=[SimpleNamespace(cross_attn=SimpleNamespace(weights=weights))])


def test_cross_attention_of_hundreds_of_tokens_is_a_lean_exact_grid_then_a_block_mean():
    g = torch.Generator().manual_seed(1)
    w = torch.softmax(torch.randn(1, 2, 65, 512, generator=g), -1)  # 64 steps of a 512-token source
    fig = cross_attention_figure(_fake_step(w), [f"s{i}" for i in range(512)], [f"t{i}" for i in range(65)])
    np.testing.assert_allclose(np.array(fig.data[0].z), w[0].mean(0).numpy(), rtol=1e-6)
    assert fig.data[0].customdata is None  # no per-cell strings for 33,280 cells
    assert fig.layout.xaxis.title.text == "source token (memory)"
    assert len(fig.layout.xaxis.ticktext) <= MAX_TICKS and len(fig.to_json()) < 500_000

    w = torch.softmax(torch.randn(1, 2, 512, 511, generator=g), -1)  # 512 × 511: more than MAX_GRID_CELLS
    fig = cross_attention_figure(_fake_step(w), [f"s{i}" for i in range(511)], [f"t{i}" for i in range(512)],
                                 head=1)
    z = np.array(fig.data[0].z)
    assert z.shape == (256, 256) and z.size <= MAX_GRID_CELLS
    want = w[0, 1].numpy()
    assert z[0, 0] == pytest.approx(want[:2, :2].mean(), rel=1e-5)
    assert z[-1, -1] == pytest.approx(want[-2:, -1:].mean(), rel=1e-5)  # 511 columns: a last block of one
    assert fig.layout.xaxis.title.text == "source token (memory), mean over blocks of 2"
    assert list(fig.data[0].x[:3]) == [0, 2, 4]  # each block at its first position
    assert len(fig.to_json()) < 1_000_000


def test_block_mean_is_the_mean_of_each_block():
    z = np.arange(35, dtype=float).reshape(5, 7)
    got = block_mean(z, 2, 3)
    want = [[z[r:r + 2, c:c + 3].mean() for c in range(0, 7, 3)] for r in range(0, 5, 2)]
    np.testing.assert_allclose(got, want)


# -- GELU and an encoder without a final LayerNorm: the pretrained all-MiniLM-L6-v2 ----------------


@pytest.fixture(scope="module")
def minilm_trace():
    try:
        from core.loading.bert import load_minilm

        model, tok = load_minilm()
    except ImportError:
        pytest.fail("all-MiniLM-L6-v2 (optional extra) is not installed")
    ids = torch.tensor([tok.encode("Attention is all you need. 注意力")])
    return model, model.trace(ids)


def test_minilm_encoder_figures(minilm_trace):
    model, trace = minilm_trace
    layer = trace.encoder[2]
    # post-norm as drawn: the stage after attention really is LayerNorm(x + MultiHead(x)) with BERT's norm
    stages = residual_stages(layer, 1, "post")
    norm = model.encoder.layers[2].sublayer1.norm
    with torch.no_grad():
        want = norm(torch.tensor(stages[2].vector, dtype=torch.float32)).numpy()
    np.testing.assert_allclose(stages[3].vector, want, rtol=1e-4, atol=1e-5)
    fig = ffn_hidden_figure(layer.ffn_hidden[0], ["t"] * layer.ffn_hidden.shape[1], activation="gelu")
    assert fig.data[0].colorbar.title.text == "GELU(xW₁+b₁)"
    z = np.array(fig.data[0].z)
    assert z.min() < 0 and fig.data[0].zmin == -fig.data[0].zmax and 0 < fig.data[0].zmax <= np.abs(z).max()
    white = [c for c in fig.data[0].colorscale if c[1] == "#ffffff"][0][0]  # white exactly at 0
    assert fig.data[0].zmin + white * (fig.data[0].zmax - fig.data[0].zmin) == pytest.approx(0, abs=1e-9)
    assert float(layer.ffn_hidden.min()) < 0  # GELU lets small negative values through
    labels, norms = stream_norms(trace)
    last = torch.linalg.norm(trace.encoder[-1].output[0], dim=-1).numpy()
    np.testing.assert_allclose(norms[-1], last, rtol=1e-5)  # BERT: memory = last layer, no final norm
    assert len(labels) == 2 + 2 * 6
