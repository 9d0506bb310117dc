"""figures.masks on a real padded batch: [PAD] cells, True = may attend, masked weights exactly 0."""

import numpy as np
import pytest

import figures.attention as fa
import figures.masks as fm
from core.tracing.batch import run_batch
from core.tracing.pipeline import PipelineSettings, load_pipeline
from i18n import t

pytestmark = pytest.mark.usefixtures("plotly_validation")


@pytest.fixture(scope="module")
def batch():
    pipe = load_pipeline(PipelineSettings(weights="random", d_model=16, num_heads=2, num_layers=1, d_ff=32))
    return run_batch(pipe, ["注意力就是一切", "<b>", "Hi 🙂"])


def test_ids_figure_shows_pad_cells(batch):
    fig = fm.ids_figure(batch.src_ids, batch.src_tokens, batch.pad_id, title="source ids")
    z = np.asarray(fig.data[0].z)
    ids = batch.src_ids.numpy()
    np.testing.assert_array_equal(z, (ids != 0).astype(float))
    assert fig.data[0].text[1][0] == str(ids[1, 0])
    hover = fig.data[0].customdata
    assert batch.src_tokens[1] == ["<", "b", ">"]  # byte-level BPE splits "<b>"
    assert hover[1][0].startswith("&lt; (id") and hover[1][-1].startswith("[PAD]")


def test_token_table_is_padded(batch):
    S = batch.src_ids.shape[1]
    table = fm.token_table(batch.src_tokens, S)
    assert table["row"] == ["sentence 1", "sentence 2", "sentence 3"]
    assert table["0"][1] == "<"  # plain text for st.dataframe, which never renders HTML
    assert table[str(S - 1)][1] == "[PAD]"


def test_padding_and_causal_figures(batch):
    pad = np.asarray(fm.padding_figure(batch.src_padding).data[0].z)
    np.testing.assert_array_equal(pad, batch.src_padding[:, 0, 0].numpy().astype(float))
    assert pad[1, -1] == 0 and pad[0, 0] == 1
    causal = np.asarray(fm.causal_figure(batch.causal).data[0].z)
    T = batch.tgt_ids.shape[1]
    np.testing.assert_array_equal(causal, np.tril(np.ones((T, T))))


def test_merged_figure_is_padding_and_causal_per_row(batch):
    attn = batch.trace.decoder[0].self_attn
    fig = fm.merged_figure(attn.mask, batch.tgt_tokens, batch.tgt_tokens)
    assert len(fig.data) == 3  # one heatmap per sentence
    expected = (batch.tgt_padding & batch.causal)[:, 0].numpy()
    for b in range(3):
        np.testing.assert_array_equal(np.asarray(fig.data[b].z), expected[b].astype(float))
    T = batch.tgt_ids.shape[1]
    ticks = list(fig.layout.xaxis2.ticktext)
    assert ticks[:3] == ["[BOS]", "&lt;", "b"] and ticks[-1] == "[PAD]" and len(ticks) == T


def test_masking_figure_before_and_after(batch):
    attn = batch.trace.decoder[0].self_attn
    s = fa.head_steps(attn, 1, row=1)  # the short sentence: padding and causal both matter
    fig = fm.masking_figure(s.scores, s.mask, s.weights, ["a"] * len(s.mask), ["b"] * len(s.mask))
    scores, before, after = (np.asarray(t.z) for t in fig.data)
    np.testing.assert_array_equal(scores, attn.scores[1, 1].numpy())
    np.testing.assert_array_equal(after, attn.weights[1, 1].numpy())
    assert (after[~s.mask] == 0).all() and (before[~s.mask] > 0).all()  # the mask is what zeroes them
    np.testing.assert_allclose(before.sum(-1), 1, atol=1e-6)
    np.testing.assert_allclose(after.sum(-1), 1, atol=1e-6)
    assert fig.data[0].text[0][1] == "×" and fig.data[0].text[0][0] == ""
    assert fm.mask_check(s.weights, s.mask)[0] == 0.0


def test_chinese_titles_axes_and_labels(batch):
    zh = "zh"
    pad = fm.padding_figure(batch.src_padding, lang=zh)
    assert pad.layout.title.text == t("masks.fig.padding_title", zh) == "键填充掩码 (B, 1, 1, S)"
    assert pad.layout.xaxis.title.text == t("masks.fig.key_position", zh)
    assert list(pad.data[0].y) == ["句子 1", "句子 2", "句子 3"]
    assert pad.data[0].colorbar.title.text == "可以关注"  # the ticks stay the code's words: 0 False, 1 True
    causal = fm.causal_figure(batch.causal, lang=zh)
    assert causal.layout.yaxis.title.text == t("masks.fig.query_position", zh)
    assert causal.layout.title.text == t("masks.fig.causal_title", zh)
    ids = fm.ids_figure(batch.src_ids, batch.src_tokens, batch.pad_id, title="源编号", lang=zh)
    assert ids.layout.xaxis.title.text == "位置" and ids.data[0].colorbar.title.text == "真实词元"
    assert ids.data[0].customdata[1][-1] == f"[PAD] (编号 {batch.pad_id})"
    attn = batch.trace.decoder[0].self_attn
    merged = fm.merged_figure(attn.mask, batch.tgt_tokens, batch.tgt_tokens, lang=zh)
    assert [a.text for a in merged.layout.annotations] == ["句子 1", "句子 2", "句子 3"]
    assert "查询: %{y}" in merged.data[0].hovertemplate
    s = fa.head_steps(attn, 0, row=0)
    effect = fm.masking_figure(s.scores, s.mask, s.weights, ["a"] * len(s.mask), ["b"] * len(s.mask), lang=zh)
    assert [a.text for a in effect.layout.annotations] == [
        t(f"masks.fig.panel.{p}", zh) for p in ("scores", "without", "with")
    ]
    assert effect.data[2].colorbar.title.text == "权重"
    assert list(fm.token_table(batch.src_tokens, 2, lang=zh)) == ["行", "0", "1"]
    assert fm.kind_label("decoder", zh) == "解码器带掩码的自注意力（填充 ∧ 因果）"
    # English as before
    assert fm.padding_figure(batch.src_padding).layout.title.text == "key-padding mask (B, 1, 1, S)"
    assert fm.kind_label("cross") == "Decoder cross-attention (source padding)"


def test_masking_figure_under_alibi_shows_the_bias_as_a_term_of_the_scores():
    """ALiBi: the scores panel says that the scores include the bias, and its hover gives both terms,
    q·k/√d_k and the bias, which add up to the score drawn."""
    from core.model.positional import alibi_bias

    pipe = load_pipeline(
        PipelineSettings(weights="random", d_model=16, num_heads=2, num_layers=1, d_ff=32, positions="alibi")
    )
    attn = run_batch(pipe, ["注意力就是一切", "Hi"]).trace.decoder[0].self_attn
    s = fa.head_steps(attn, 1)
    L = len(s.mask)
    fig = fm.masking_figure(s.scores, s.mask, s.weights, ["a"] * L, ["b"] * L, bias=s.bias)
    panel = fig.data[0]
    np.testing.assert_array_equal(np.asarray(panel.z), attn.scores[0, 1].numpy())
    terms = np.asarray(panel.customdata, dtype=np.float64)  # (L, L, 2): q·k/√d_k, bias
    np.testing.assert_array_equal(terms[..., 1], alibi_bias(2, L, L, causal=True)[1].numpy())
    np.testing.assert_allclose(terms[..., 0] + terms[..., 1], attn.scores[0, 1].numpy(), atol=1e-5)
    title = fig.layout.annotations[0].text
    assert "ALiBi" in title and "+" in title
    assert "ALiBi" in panel.hovertemplate and "customdata[1]" in panel.hovertemplate
    assert "ALiBi" in fm.masking_figure(s.scores, s.mask, s.weights, ["a"] * L, ["b"] * L, bias=s.bias,
                                        lang="zh").layout.annotations[0].text
    plain = fm.masking_figure(s.scores, s.mask, s.weights, ["a"] * L, ["b"] * L)
    assert "ALiBi" not in plain.layout.annotations[0].text and plain.data[0].customdata is None
