"""figures.positional: the drawn numbers are sinusoidal_encoding's, offsets give constant diagonals."""

import math

import numpy as np
import pytest
import torch

from core.model.config import ModelConfig
from core.model.positional import alibi_bias, alibi_slopes, apply_rope, rope_angles, sinusoidal_encoding
from core.model.transformer import Transformer
from figures import positional as fp
from figures.embeddings import embedding_arrays
from figures.positional import (
    default_dims,
    dim_label,
    gram_heatmap,
    offset_dots,
    pe_curves,
    pe_gram,
    pe_heatmap,
    pe_table,
    period,
    rotation_error,
    rotation_matrix,
    sum_heatmaps,
    training_length,
)
from i18n import t


def test_heatmap_is_the_models_table():
    fig = pe_heatmap(pe_table(50, 32))
    z = np.array(fig.data[0].z)
    np.testing.assert_allclose(z, sinusoidal_encoding(50, 32).double().numpy())
    assert z.shape == (50, 32)
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-1.0, 1.0)
    assert fig.data[0].colorbar.title.text == "PE"


def test_curves_one_line_per_dimension_with_the_tables_values():
    fig = pe_curves(16, [0, 5, 15], 300, trained_len=9, sentence_len=4)
    assert [t.name for t in fig.data] == [dim_label(0, 16), dim_label(5, 16), dim_label(15, 16)]
    table = sinusoidal_encoding(300, 16).double().numpy()
    for trace, dim in zip(fig.data, [0, 5, 15], strict=True):
        assert list(trace.x) == list(range(300))
        np.testing.assert_allclose(trace.y, table[:, dim])
    texts = " ".join(a.text for a in fig.layout.annotations)
    assert "seen in training (0–8)" in texts and "4 tokens" in texts
    # the labels sit on the curves: each gets an opaque-enough box to stay legible
    assert all(a.bgcolor and a.bgcolor.startswith("rgba(255, 255, 255") for a in fig.layout.annotations)


def test_dimension_labels_name_sin_cos_and_period():
    assert dim_label(0, 64) == "dim 0 (sin, period 6.3)"
    assert dim_label(1, 64).startswith("dim 1 (cos")
    assert period(62, 64) == pytest.approx(2 * math.pi * 10000 ** (62 / 64))
    assert default_dims(16) == [0, 1, 2, 8] and default_dims(512) == [0, 1, 64, 256]


def test_gram_diagonals_are_constant():
    pe = pe_table(40, 64)
    gram = np.array(gram_heatmap(pe).data[0].z)
    np.testing.assert_allclose(gram, pe_gram(pe))
    np.testing.assert_allclose(np.diag(gram), 32.0, atol=1e-4)  # d/2 on the main diagonal
    for k in range(-39, 40):
        diagonal = np.diagonal(gram, offset=k)
        np.testing.assert_allclose(diagonal, diagonal[0], atol=1e-4)
    assert not np.allclose(gram[0, 1], gram[0, 5])  # but it does vary with the offset


def test_gram_is_not_toeplitz_for_odd_d_model():
    gram = pe_gram(pe_table(400, 3))
    d = np.diagonal(gram, offset=1)
    assert np.ptp(d) > 0.1  # the lone sine makes it depend on p


def test_offset_curves_overlap_exactly():
    dots = offset_dots(pe_table(200, 32), [0, 10, 50], 40)
    np.testing.assert_allclose(dots[10], dots[0], atol=1e-4)
    np.testing.assert_allclose(dots[50], dots[0], atol=1e-4)
    fig = fp.offset_curves(offset_dots(pe_table(25 + 30 + 1, 32), (0, 10, 25), 30), y_title="PE(p)·PE(p+k)")
    assert [t.name for t in fig.data] == ["p = 0", "p = 10", "p = 25"]
    for trace in fig.data[1:]:
        np.testing.assert_allclose(trace.y, fig.data[0].y, atol=1e-4)
    assert fig.data[0].y[0] == pytest.approx(16.0, abs=1e-4)


@pytest.mark.parametrize("k", [1, 5, 37])
def test_shift_is_a_rotation(k):
    m = rotation_matrix(16, k)
    np.testing.assert_allclose(m @ m.T, np.eye(16), atol=1e-12)  # orthogonal: a rotation
    assert rotation_error(16, k) < 1e-5


def test_sum_heatmaps_are_embedding_pe_and_model_input():
    config = ModelConfig(20, 20, d_model=16, num_heads=2, num_layers=1, d_ff=32, dropout=0.0)
    model = Transformer(config).eval()
    trace = model.trace(torch.tensor([[5, 6, 7]]), None)
    a = embedding_arrays(trace)
    tokens = ["中", "<b>", "🙂"]
    fig = sum_heatmaps(a.scaled, a.pe, a.embedded, tokens)
    assert len(fig.data) == 3
    np.testing.assert_allclose(fig.data[0].z, trace.src_token_embedding[0].double().numpy() * 4)
    np.testing.assert_allclose(fig.data[1].z, sinusoidal_encoding(3, 16).double().numpy())
    np.testing.assert_allclose(fig.data[2].z, trace.src_embedded[0].double().numpy())
    assert list(fig.layout.yaxis.ticktext) == ["中", "&lt;b&gt;", "🙂"]
    assert all(t.coloraxis == "coloraxis" for t in fig.data)  # one shared scale


def test_training_length():
    assert training_length("", {}) is None
    assert training_length("pinyin", {}) == 9  # 8 characters, [BOS] + 8 syllables
    assert training_length("pinyin", {"max_src_len": 12, "max_tgt_len": 13}) == 13


# -- the other schemes: what is drawn is core's numbers ---------------------------------------------



@pytest.mark.parametrize("causal", [False, True])
def test_alibi_heatmaps_are_cores_bias(causal):
    heads = fp.alibi_heads(8)
    assert heads == [0, 1, 3, 7]
    fig = fp.alibi_heatmaps(8, 10, heads, causal=causal)
    bias = alibi_bias(8, 10, 10, causal=causal).double().numpy()
    assert len(fig.data) == 4
    lower = np.tril(np.ones((10, 10), dtype=bool))
    for trace, h in zip(fig.data, heads, strict=True):
        z = np.array(trace.z, dtype=float)
        if causal:  # the cells the causal mask hides are empty; the others are core's bias
            np.testing.assert_array_equal(z[lower], bias[h][lower])
            assert np.isnan(z[~lower]).all()
        else:
            np.testing.assert_array_equal(z, bias[h])
    titles = [a.text for a in fig.layout.annotations]  # one per panel, then the x title under the row
    assert titles == ["head 1<br>m = 1/2", "head 2<br>m = 1/4", "head 4<br>m = 1/16", "head 8<br>m = 1/256",
                      "key position j"]
    assert all(axis.title.text is None for axis in (fig.layout.xaxis, fig.layout.xaxis4))
    assert fig.layout.coloraxis.cmax == 0.0 and fig.layout.coloraxis.cmin == pytest.approx(-4.5)


def test_alibi_heads_and_slope_names():
    assert fp.alibi_heads(3) == [0, 1, 2]
    assert fp.alibi_heads(12) == [0, 1, 5, 11]
    assert fp.slope_text(0.0625) == "1/16"
    assert fp.slope_text(float(alibi_slopes(12)[8])) == "0.707"  # 2^-0.5: 12 is not a power of two


def test_relative_curves_coincide_for_sinusoidal_rope_and_alibi_but_not_learned():
    sin = fp.offset_dots(pe_table(120, 32), (0, 10, 25, 50), 60)
    rope = fp.rope_offset_scores(16)
    alibi = fp.alibi_offset_bias(8, 2)
    learned = fp.offset_dots(fp.random_learned_table(120, 32), (0, 10, 25, 50), 60)
    assert fp.offset_spread(sin) < 1e-4
    assert fp.offset_spread(rope) < 1e-9
    assert fp.offset_spread(alibi) == 0.0
    assert fp.offset_spread(learned) > 0.1
    np.testing.assert_array_equal(alibi[25], -float(alibi_slopes(8)[2]) * np.arange(61))
    # the RoPE curve is the score of the rotated vectors, computed independently here
    x = torch.as_tensor(fp.rope_probe(16))
    q = apply_rope(x[None], [10])[0]
    k = apply_rope(x[None], [17])[0]
    assert rope[10][7] == pytest.approx(float(q @ k) / 4.0, abs=1e-12)
    assert rope[0][0] == pytest.approx(float(x @ x) / 4.0)  # k = 0: no rotation left


def test_offset_curves_figure_draws_one_line_per_start():
    curves = fp.rope_offset_scores(8, starts=(0, 7), max_offset=20)
    fig = fp.offset_curves(curves, y_title="score")
    assert [tr.name for tr in fig.data] == ["p = 0", "p = 7"]
    np.testing.assert_allclose(fig.data[1].y, curves[7])
    assert list(fig.data[0].x) == list(range(21))
    assert fig.layout.xaxis.title.text == "offset k"
    assert fp.offset_curves(curves, y_title="分数", lang="zh").layout.xaxis.title.text == "偏移 k"


def test_rope_rotation_panels_are_apply_rope_of_a_unit_vector():
    pairs = fp.rope_pairs(16)
    assert pairs == [0, 2, 7]
    fig = fp.rope_rotation_figure(16, pairs, 6)
    markers = [tr for tr in fig.data if tr.mode == "markers+text"]
    assert len(markers) == 3
    angles = rope_angles(6, 16).numpy()
    for trace, i in zip(markers, pairs, strict=True):
        np.testing.assert_allclose(trace.x, np.cos(angles[:, i]), atol=1e-12)
        np.testing.assert_allclose(trace.y, np.sin(angles[:, i]), atol=1e-12)
        np.testing.assert_array_equal(np.array(trace.customdata)[:, 0], np.arange(6))  # hover: the position
    # labels: every position where the points are apart, only the ends where they would overlap
    assert [list(tr.text) for tr in markers] == [["0", "1", "2", "3", "4", "5"], ["0", "", "", "", "", "5"],
                                                 ["0–5", "", "", "", "", ""]]
    assert [a.text for a in fig.layout.annotations][0] == "pair 0: θ = 1 rad per position"
    zh = fp.rope_rotation_figure(16, pairs, 6, lang="zh")
    assert zh.layout.annotations[0].text == "第 0 对：每个位置转 θ = 1 弧度"


def test_learned_table_heatmap_downsamples_rows_and_keeps_values():
    table = fp.random_learned_table(600, 8, seed=3)
    fig = fp.table_heatmap(table)
    z = np.array(fig.data[0].z, dtype=float)
    assert z.shape == (200, 8)  # every 3rd row: at most 256 drawn
    assert list(fig.data[0].y[:3]) == [0, 3, 6]
    np.testing.assert_allclose(z, table[::3], rtol=1e-6)  # float32 on the wire
    small = fp.table_heatmap(table[:40])
    np.testing.assert_allclose(np.array(small.data[0].z, dtype=float), table[:40], rtol=1e-6)
    bound = np.sqrt(6 / 608)
    assert np.abs(table).max() <= bound  # Glorot-uniform, as the model initialises tables


def test_beyond_figures_mark_the_training_length_and_learned_stops():
    fig = fp.beyond_learned(fp.random_learned_table(64, 16), 128)
    y = np.array(fig.data[0].y, dtype=float)
    assert len(y) == 128 and np.isfinite(y[:64]).all() and np.isnan(y[64:]).all()
    texts = " ".join(a.text for a in fig.layout.annotations)
    assert "seen in training (0–63)" in texts and "no row from position 64 on" in texts

    fig = fp.beyond_alibi(4, 32, 100, example=True)
    assert [tr.name for tr in fig.data] == [f"head {h} (m = 1/{4 ** h})" for h in range(1, 5)]
    np.testing.assert_allclose(fig.data[1].y, -np.arange(100) / 16)  # a straight line past 32 too
    assert "if trained on 32 positions (an example)" in " ".join(a.text for a in fig.layout.annotations)

    fig = fp.beyond_sinusoidal(32, 9, 40)
    np.testing.assert_allclose(fig.data[0].y, sinusoidal_encoding(40, 32).double().numpy()[:, 0])

    fig = fp.beyond_rope(16, 64, 128)
    pairs, slow = fp.rope_beyond_pairs(16, 64)
    assert pairs == [0, 2, 3] and slow == 3  # periods 6.3, 62.8 ≤ 64 < 198.7
    angles = rope_angles(128, 16).numpy()
    np.testing.assert_allclose(fig.data[2].y, np.mod(angles[:, 3], 2 * np.pi))
    assert fig.data[2].y[127] > fig.data[2].y[:64].max()  # past L: angles never seen in training
    assert fig.layout.shapes[-1].y0 == pytest.approx(63 * float(angles[1, 3]))


def test_chinese_figures_have_chinese_titles():
    fig = fp.pe_curves(16, [0], 50, trained_len=9, sentence_len=4, lang="zh")
    assert fig.data[0].name == "维度 0（sin，周期 6.3）"
    assert fig.layout.xaxis.title.text == "位置 pos"
    assert "训练中见过（0–8）" in " ".join(a.text for a in fig.layout.annotations)
    assert fp.alibi_heatmaps(4, 5, [0], lang="zh").layout.annotations[0].text == "第 1 个头<br>m = 1/4"
    assert fp.pe_heatmap(pe_table(4, 8), lang="zh").layout.xaxis.title.text == "维度"
    beyond = fp.beyond_learned(fp.random_learned_table(8, 4), 16, lang="zh")
    assert beyond.layout.xaxis.title.text == "位置 pos"
    assert t("positional.tab.learned", "zh") == "可学习"


def test_sum_heatmaps_label_every_nth_token_when_there_are_many():
    S = 512
    rng = np.random.default_rng(0)
    a = rng.normal(size=(S, 8))
    tokens = [f"t{i}" for i in range(S)]
    fig = fp.sum_heatmaps(a, a, a, tokens)
    ticks = list(fig.layout.yaxis.tickvals)  # rows are named "token ·position" (the hover shows it)
    assert ticks[:3] == ["t0 ·0", "t13 ·13", "t26 ·26"] and len(ticks) <= fp.MAX_TICKS
    assert list(fig.layout.yaxis.ticktext[:2]) == ["t0", "t13"]
    assert list(fig.data[0].y[:2]) == ["t0 ·0", "t1 ·1"] and fig.data[0].customdata is None
    assert "%{y}" in fig.data[0].hovertemplate
    assert fig.layout.height == 900
    fig = fp.sum_heatmaps(a, a, a, tokens, titles=["E", "P", "LN"])
    assert [x.text for x in fig.layout.annotations] == ["E", "P", "LN"]


def alibi_rule_slopes(rule: fp.AlibiRule) -> np.ndarray:
    """The slopes the stated rule gives (float64, (H,)): the formula on the page, evaluated here.

    For heads ``low`` + r (r = 1 … H − low) the rule's 2^(−8(2r − 1)/(2·low)) is the (2r − 1)-th slope
    of a 2·low-head model.
    """
    low = rule.low
    first = [2.0 ** (-8.0 * h / low) for h in range(1, low + 1)]
    rest = [2.0 ** (-8.0 * (2 * r - 1) / (2 * low)) for r in range(1, rule.heads - low + 1)]
    return np.array(first + rest)


@pytest.mark.parametrize("heads", list(range(1, 17)) + [24, 32])
def test_alibi_rule_states_the_rule_that_gives_cores_slopes(heads):
    """The formula shown for H heads, evaluated, gives core.alibi_slopes(H): 2^(−8h/H) for a power of
    two; otherwise the slopes of the power of two below, then every other slope of twice as many."""
    rule = fp.alibi_rule(heads)
    np.testing.assert_allclose(alibi_rule_slopes(rule), alibi_slopes(heads).double().numpy(), rtol=1e-6)
    power = heads & (heads - 1) == 0
    assert rule.power_of_two == power
    latex = fp.alibi_rule_latex(rule)
    text = fp.alibi_rule_text(rule)
    assert ", ".join(fp.slope_text(m) for m in alibi_slopes(heads).tolist()) in text
    if power:
        assert rf"2^{{-8h/{heads}}}" in latex and "cases" not in latex
    else:
        low = 2 ** int(math.log2(heads))
        assert rf"2^{{-8h/{low}}}" in latex and rf"/{2 * low}}}" in latex and "cases" in latex
        assert "2^(−8h/H)" not in text and f"{low}" in text and f"{2 * low}" in text
    assert f"{heads}" in fp.alibi_rule_text(rule, lang="zh")
