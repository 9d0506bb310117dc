"""figures.masks on a real padded batch: [PAD] cells, True = may attend, masked weights exactly 0."""

import numpy as np
import pytest

import figures.attention as fa
import figures.masks as fm
from core.batch import run_batch
from core.pipeline import PipelineSettings, load_pipeline


@pytest.fixture(scope="module", autouse=True)
def validated():
    fa.VALIDATE = True  # plotly validation on while testing: a misspelt property fails
    yield
    fa.VALIDATE = False


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
