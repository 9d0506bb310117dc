"""The Masks page through AppTest, opened cold: a padded batch, True = may attend, masked weights 0."""

import apphelpers
import numpy as np
import pytest
from apphelpers import ROOT, TEST_WEIGHTS, assert_clean, badges, messages
from apphelpers import plotly_array as arr
from apphelpers import plotly_specs as specs
from streamlit.testing.v1 import AppTest

from core.tracing.batch import run_batch
from core.tracing.pipeline import load_pipeline
from i18n import t
from ui.page.settings import DEFAULT_SENTENCE, Settings, default_sentence

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


def test_kind_in_the_url_as_option_or_label_in_either_language():
    for query in ({"mask_kind": "cross"}, {"mask_kind": "解码器交叉注意力（源句填充）"},
                  {"mask_kind": "Decoder cross-attention (source padding)", "lang": "zh"}):
        at = open_page(query)
        assert_clean(at)
        assert at.radio(key="mask_kind").value == "cross", query
        assert not at.warning, query


# -- 中文, trained and pretrained weights ---------------------------------------------------------


def test_chinese_page_has_chinese_titles_axes_and_texts():
    at = open_page({"lang": "zh"})
    assert_clean(at)
    assert at.title[0].value == t("nav.masks.title", "zh")
    batch = reference([DEFAULT_SENTENCE, "你好", "Hi there!"])
    B, S = batch.src_ids.shape
    T = batch.tgt_ids.shape[1]
    ids = titled(at, t("masks.fig.source_ids", "zh", B=B, S=S))
    assert ids["layout"]["xaxis"]["title"]["text"] == t("masks.fig.position", "zh")
    pad = titled(at, t("masks.fig.source_padding", "zh", B=B, S=S))
    assert pad["layout"]["xaxis"]["title"]["text"] == "键的位置"
    causal = titled(at, t("masks.fig.causal", "zh", T=T))
    assert causal["layout"]["yaxis"]["title"]["text"] == t("masks.fig.query_position", "zh")
    notes = [[a["text"] for a in s["layout"].get("annotations", [])] for s in specs(at)]
    assert sum("句子 1" in n for n in notes) == 1  # the merged masks, one picture per sentence
    assert at.radio(key="mask_kind").label == t("masks.kind.label", "zh")
    assert any(i.value.startswith("约定：") for i in at.info)
    assert any(t("masks.fig.panel.with", "zh") in n for n in notes)


def test_trained_weights_decoder_reads_the_greedy_output():
    from ui.page.settings import checkpoint_available

    if not checkpoint_available():
        pytest.fail("assets/pinyin.pt is not there")
    at = apphelpers.open_page("pages/masks.py", {"lang": "zh"}, weights="trained")
    assert_clean(at)
    at = apphelpers.open_page("pages/masks.py", None, weights="trained")
    assert_clean(at)
    assert any(t("masks.batch.decoder_trained", "en") in c.value for c in at.caption)
    batch = run_batch(load_pipeline(Settings(weights="trained").pipeline_settings()),
                      [default_sentence("trained"), "你好", "Hi there!"])  # what these weights open with
    m = merged(at)
    expected = (batch.tgt_padding & batch.causal)[:, 0].numpy().astype(float)
    for b in range(len(m["data"])):
        np.testing.assert_array_equal(arr(m["data"][b]["z"]), expected[b])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_pretrained_encoder_shows_padding_and_says_there_is_no_decoder(lang):
    from ui.page.settings import minilm_available

    if not minilm_available():
        pytest.fail("all-MiniLM-L6-v2 is an optional extra")
    at = apphelpers.open_page("pages/masks.py", {"lang": lang, "mask_row": "2"}, weights="minilm")
    assert_clean(at)
    name = "all-MiniLM-L6-v2"
    shown = [i.value for i in at.info]
    assert t("masks.encoder_only.batch", lang, model=name) in shown
    assert t("masks.encoder_only.causal", lang, model=name) in shown
    assert at.radio(key="mask_kind").options == [t("masks.kind.encoder", lang)]
    assert len(specs(at)) == 4  # source ids, key padding, merged, effect: no target ids, no causal mask
    # the reference: each sentence tokenized alone ([CLS] … [SEP]), padded with id 0
    pipe = load_pipeline(Settings(weights="minilm").pipeline_settings())
    rows = [pipe.src_encode(s)[1] for s in (default_sentence("minilm"), "你好", "Hi there!")]
    S = max(map(len, rows))
    ids = np.array([r + [0] * (S - len(r)) for r in rows])
    pad = arr(titled(at, t("masks.fig.source_padding", lang, B=3, S=S))["data"][0]["z"])
    np.testing.assert_array_equal(pad, (ids != 0).astype(float))
    m = [s for s in specs(at) if len(s["data"]) == 3 and s["data"][0].get("showscale")][0]
    for b in range(3):
        np.testing.assert_array_equal(arr(m["data"][b]["z"]), np.tile(ids[b] != 0, (S, 1)).astype(float))
    # sentence 2 ("你好") in the batch computes what it computes alone: the padding changes nothing
    import torch

    alone = pipe.model.trace(torch.tensor([rows[1]])).encoder[0].self_attn.weights[0, 0].numpy()
    after = arr(effect(at)["data"][2]["z"])
    n = len(rows[1])
    np.testing.assert_allclose(after[:n, :n], alone, atol=1e-5)
    assert (after[:, n:] == 0).all()


def test_a_sentence_without_tokens_for_the_encoder_says_so():
    from ui.page.settings import minilm_available

    if not minilm_available():
        pytest.fail("all-MiniLM-L6-v2 is an optional extra")
    # a zero-width space: WordPiece drops it, leaving only [CLS] [SEP]
    at = apphelpers.open_page("pages/masks.py", {"mask_extra_1": "\u200b", "lang": "zh"}, weights="minilm")
    assert_clean(at)
    assert t("masks.batch.cannot_run", "zh") in [i.value for i in at.info]
    assert not at.get("plotly_chart")


def test_a_sidebar_sentence_without_tokens_says_so_and_is_not_run_alone():
    from ui.page.settings import minilm_available

    if not minilm_available():
        pytest.fail("all-MiniLM-L6-v2 is an optional extra")
    at = apphelpers.open_page("pages/masks.py", {"sentence": "\u200b"}, weights="minilm")  # only [CLS] [SEP]
    assert_clean(at)
    assert t("run.no_tokens", "en") in [i.value for i in at.info]
    assert not at.get("plotly_chart")


def test_first_layer_kinds_draw_the_first_layer_first_and_cross_reads_the_whole_encoder(monkeypatch):
    from core.model.transformer import Transformer

    drawn = []  # per drawing: how many numbers
    init = Transformer._init_weights

    def counting(self, only=None):
        tensors = [*self.parameters(), *self.buffers()]
        drawn.append(sum(t.numel() for t in tensors if only is None or id(t) in only))
        return init(self, only)

    monkeypatch.setattr(Transformer, "_init_weights", counting)
    at = open_page({"seed": "4711", "num_layers": "3"})  # a new model: the default kind is the decoder's
    assert_clean(at)
    config = load_pipeline(Settings(weights=TEST_WEIGHTS, seed=4711, num_layers=3).pipeline_settings()).config
    model = Transformer.undrawn(config)  # shapes only: counts, draws nothing
    first = sum(p.numel() for p in model.first_layers(1).parameters())
    total = sum(p.numel() for p in model.parameters())
    # the batch reads the first layer alone (drawn first); the sentence's own run, for the model's answer
    # beside the decoder's rows, then draws the rest: every number once
    assert drawn[0] == first < total and sum(drawn) == total  # 61 % here, 20 % at 512/6
    drawn.clear()
    at.radio(key="mask_kind").set_value("cross").run()
    assert_clean(at)
    batch = reference([DEFAULT_SENTENCE, "你好", "Hi there!"], seed=4711, num_layers=3)
    after = arr(effect(at)["data"][2]["z"])
    np.testing.assert_array_equal(after, batch.trace.decoder[0].cross_attn.weights[0, 0].numpy())
