"""The Masks page through AppTest, opened cold: a padded batch, True = may attend, masked weights 0."""

import apphelpers
import numpy as np
from apphelpers import ROOT, TEST_WEIGHTS, assert_clean, badges, messages
from apphelpers import plotly_array as arr
from apphelpers import plotly_specs as specs
from streamlit.testing.v1 import AppTest

from core.batch import run_batch
from core.pipeline import load_pipeline
from ui.settings import DEFAULT_SENTENCE, Settings

PAGE = str(ROOT / "pages" / "masks.py")


def open_page(query: dict | None = None) -> AppTest:
    return apphelpers.open_page("pages/masks.py", query)


def titled(at: AppTest, start: str) -> dict:
    found = [s for s in specs(at) if s["layout"].get("title", {}).get("text", "").startswith(start)]
    assert len(found) == 1
    return found[0]


def merged(at: AppTest) -> dict:
    return [
        s for s in specs(at) if any(a["text"] == "sentence 1" for a in s["layout"].get("annotations", []))
    ][0]


def effect(at: AppTest) -> dict:
    return [s for s in specs(at) if len(s["data"]) == 3 and "softmax" in str(s["layout"].get("annotations"))][
        0
    ]


def reference(sentences, **sizes):
    return run_batch(load_pipeline(Settings(weights=TEST_WEIGHTS, **sizes).pipeline_settings()), sentences)


def test_default_batch_masks_and_weights():
    at = open_page()
    assert_clean(at)
    assert at.title[0].value == "Masks"
    assert any("random initialisation" in b for b in badges(at))
    assert any(
        "True (1, blue) = may attend" in i.value and "nn.MultiheadAttention" in i.value for i in at.info
    )
    batch = reference([DEFAULT_SENTENCE, "你好", "Hi there!"])
    B, S = batch.src_ids.shape
    ids = titled(at, "source ids")["data"][0]
    np.testing.assert_array_equal(arr(ids["z"]), (batch.src_ids.numpy() != 0).astype(float))
    assert ids["text"][1][-1] == "0"  # a [PAD] cell, id 0
    table = at.dataframe[0].value
    assert list(table.iloc[1])[-1] == "[PAD]" and list(table.iloc[0])[1] == batch.src_tokens[0][0]
    pad = arr(titled(at, "source key padding")["data"][0]["z"])
    np.testing.assert_array_equal(pad, batch.src_padding[:, 0, 0].numpy().astype(float))
    T = batch.tgt_ids.shape[1]
    np.testing.assert_array_equal(arr(titled(at, "causal")["data"][0]["z"]), np.tril(np.ones((T, T))))
    m = merged(at)  # default kind: decoder masked self-attention, padding ∧ causal
    expected = (batch.tgt_padding & batch.causal)[:, 0].numpy().astype(float)
    assert len(m["data"]) == B
    for b in range(B):
        np.testing.assert_array_equal(arr(m["data"][b]["z"]), expected[b])
    scores, before, after = (arr(t["z"]) for t in effect(at)["data"])
    attn = batch.trace.decoder[0].self_attn
    np.testing.assert_array_equal(after, attn.weights[0, 0].numpy())
    mask = attn.mask[0, 0].numpy()
    assert (after[~mask] == 0).all() and (before[~mask] > 0).all()
    np.testing.assert_allclose(after.sum(-1), 1, atol=1e-6)


def test_second_sentence_row_and_encoder_kind():
    at = open_page()
    at.radio(key="mask_kind").set_value("encoder").run()
    at.selectbox(key="mask_row").set_value(2).run()
    assert_clean(at)
    batch = reference([DEFAULT_SENTENCE, "你好", "Hi there!"])
    attn = batch.trace.encoder[0].self_attn
    m = merged(at)
    np.testing.assert_array_equal(arr(m["data"][1]["z"]), attn.mask[1, 0].numpy().astype(float))
    after = arr(effect(at)["data"][2]["z"])
    np.testing.assert_array_equal(after, attn.weights[1, 0].numpy())
    assert (after[:, 2:] == 0).all()  # "你好" has 2 tokens: every [PAD] key gets weight 0


def test_chinese_emoji_and_script_extras_are_text_only():
    at = open_page(
        {"sentence": "你好，世界 🙂", "mask_extra_1": "<script>alert(1)</script>", "mask_extra_2": "🙂👋"}
    )
    assert_clean(at)
    batch = reference(["你好，世界 🙂", "<script>alert(1)</script>", "🙂👋"])
    assert at.dataframe[0].value.shape[0] == 3
    ticks = merged(at)["layout"]["xaxis2"]["ticktext"]
    assert "&lt;" in ticks and "<" not in "".join(ticks)
    assert not any("<script" in m.value for m in at.markdown)
    assert arr(titled(at, "source ids")["data"][0]["z"]).shape == tuple(batch.src_ids.shape)


def test_empty_sentences():
    at = open_page({"mask_extra_1": "", "mask_extra_2": "  "})
    assert_clean(at)
    assert any("left out" in c.value for c in at.caption)
    assert len(merged(at)["data"]) == 1
    at = open_page({"sentence": ""})
    assert_clean(at)
    assert any("empty" in m for m in messages(at)) and not at.get("plotly_chart")


def test_tampered_params_fall_back():
    at = open_page({"mask_kind": "foo", "mask_row": "9", "mask_head": "-1"})
    assert_clean(at)
    shown = " ".join(messages(at))
    assert "mask_kind=`foo`" in shown and "mask_row=`9`" in shown and "mask_head=`-1`" in shown
    assert at.radio(key="mask_kind").value == "decoder"
    assert at.selectbox(key="mask_row").value == 3 and at.selectbox(key="mask_head").value == 1


def test_heads_follow_the_sidebar():
    at = open_page({"mask_head": "4"})
    at.select_slider(key="num_heads").set_value(2).run()
    assert_clean(at)
    assert at.selectbox(key="mask_head").options == ["1", "2"]
    assert at.selectbox(key="mask_head").value == 2  # clamped
    assert "(3, 2, " in " ".join(c.value for c in at.caption)  # the merged mask is (B, h, T, T)
