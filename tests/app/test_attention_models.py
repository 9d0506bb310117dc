"""The Attention page with a decoder-only model folder (hf:gpt2-tiny, hf:qwen2-tiny): the causal
self-attention of its one stack, every head equal to the trace, the tokens on the axes, the causal
mask, grouped-query attention said as it is (which query heads share a key/value head), and no word
about the weights being trained or random, in both languages (issue 29)."""

import apphelpers
import numpy as np
import pytest
from apphelpers import assert_clean, messages
from apphelpers import plotly_array as arr
from apphelpers import plotly_specs as specs
from streamlit.testing.v1 import AppTest
from test_page_attention import head_view, lines_of, meta, neuron_chart

import figures.attention as fa
from core.tracing.pipeline import run_pipeline
from figures.attention_views import plain_label
from figures.drawing.style import token_label
from i18n import t as tr
from ui.folders.hf_pipeline import load_model
from ui.page.settings import MAX_TOKENS

pytestmark = pytest.mark.usefixtures("model_folders")

SENTENCE = "注意力 is all you need 🙂"
MODELS = ("hf:gpt2-tiny", "hf:qwen2-tiny")
LANGS = ("en", "zh")
# words the page must not say of a model folder's weights: it cannot know whether they were trained
NOT_SAID = {"en": ("trained", "random", "pretrained", "noise"), "zh": ("训练好", "随机", "预训练", "噪声")}


def open_attention(weights: str, lang: str = "en", **query: str) -> AppTest:
    opened = {"lang": lang, "sentence": SENTENCE, "attn_steps": "true", **query}
    return apphelpers.open_page("pages/attention.py", opened, weights=weights)


def reference(weights: str):
    """The run the page shows, computed here from the same model folder."""
    return run_pipeline(load_model(weights), SENTENCE, "", max_tokens=MAX_TOKENS)


def page_texts(at: AppTest) -> list[str]:
    return [*messages(at), *(c.value for c in at.caption), *(m.value for m in at.markdown)]


def by_title(at: AppTest, title: str) -> dict:
    found = [s for s in specs(at) if s["layout"].get("title", {}).get("text") == title]
    assert len(found) == 1, [s["layout"].get("title", {}).get("text") for s in specs(at)]
    return found[0]


def heads_chart(at: AppTest) -> dict:
    found = [s for s in specs(at) if sum(t["type"] == "heatmap" for t in s["data"]) > 1]
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("weights", MODELS)
def test_every_head_is_the_causal_self_attention_of_the_one_stack(weights, lang):
    at = open_attention(weights, lang)
    assert_clean(at)
    run = reference(weights)
    assert run.trace.encoder == [] and run.trace.decoder[0].cross_attn is None
    tokens = run.tgt_tokens
    decoder = fa.kind_label("decoder", lang)
    for key in ("hv_kind", "attn_kind"):  # no encoder, no cross-attention to choose
        assert at.radio(key=key).options == [decoder] and at.radio(key=key).value == "decoder"
    chart = heads_chart(at)
    heads = [t for t in chart["data"] if t["type"] == "heatmap"]
    attn = run.trace.decoder[0].self_attn
    assert len(heads) == attn.weights.shape[1] == 4
    for j, trace in enumerate(heads):
        z = arr(trace["z"])
        np.testing.assert_array_equal(z, attn.weights[0, j].numpy())
        assert (np.triu(z, 1) == 0).all() and (np.diag(z) > 0).all()  # the future gets exactly 0
    for axis in ("xaxis", "yaxis"):
        assert chart["layout"][axis]["ticktext"] == [token_label(t) for t in tokens]
    one_stack = tr("attention.decoder_only", lang, model=weights.removeprefix("hf:"), n=2)
    assert one_stack in messages(at)
    assert any(tr("attention.where.causal", lang) in c.value for c in at.caption)
    loaded = tr("attention.loaded.compare", lang, name=weights.removeprefix("hf:"))
    assert loaded in [c.value for c in at.caption]
    said = " ".join(page_texts(at)).lower()
    assert not [w for w in NOT_SAID[lang] if w in said], said


@pytest.mark.parametrize("lang", LANGS)
def test_grouped_query_attention_says_which_heads_share_a_key_value_head(lang):
    qwen = page_texts(open_attention("hf:qwen2-tiny", lang))
    groups = [tr("attention.gqa.group", lang, first=1, last=2, kv=1),
              tr("attention.gqa.group", lang, first=3, last=4, kv=2)]  # fmt: skip
    sharing = [m for m in qwen if all(g in m for g in groups)]
    assert len(sharing) == 1
    assert ("heads 1–2 share key/value head 1" if lang == "en" else "头 1–2 共用键/值头 1") in sharing[0]
    gpt2 = " ".join(page_texts(open_attention("hf:gpt2-tiny", lang)))
    assert ("key/value head" if lang == "en" else "键/值头") not in gpt2  # every head has its own


def neuron(weights: str, lang: str, head: int, query: int = 4, key: int = 2, layer: int = 2) -> AppTest:
    at = open_attention(
        weights, lang, attn_explore="neuron_view",
        nv_layer=str(layer), nv_head=str(head), nv_query=str(query), nv_key=str(key),
    )  # fmt: skip
    assert_clean(at)
    return at


def row_titles(chart: dict) -> list[str]:
    return [a["text"] for a in chart["layout"]["annotations"]]


@pytest.mark.parametrize("lang", LANGS)
def test_neuron_view_shows_shared_keys_as_shared(lang):
    attn = reference("hf:qwen2-tiny").trace.decoder[1].self_attn
    charts = {head: neuron_chart(neuron("hf:qwen2-tiny", lang, head)) for head in (1, 2, 3)}
    for head, chart in charts.items():
        q, k = arr(chart["data"][0]["y"]), arr(chart["data"][1]["y"])
        np.testing.assert_array_equal(q, attn.q[0, head - 1, 4].numpy())
        np.testing.assert_array_equal(k, attn.k[0, head - 1, 2].numpy())
        assert meta(chart)["score"] == float(attn.scores[0, head - 1, 4, 2])
        assert meta(chart)["weight"] == float(attn.weights[0, head - 1, 4, 2])
        kv, first = (1, 1) if head < 3 else (2, 3)
        shared = tr("attention.nv.fig.k_shared", lang, token=plain_label(reference_tokens()[2]), pos=2,
                    kv=kv, first=first, last=first + 1)  # fmt: skip
        assert shared in row_titles(chart)
    same = [arr(charts[h]["data"][1]["y"]) for h in (1, 2)]
    np.testing.assert_array_equal(*same)  # heads 1 and 2 read one key/value head: the same k
    assert not np.array_equal(arr(charts[1]["data"][0]["y"]), arr(charts[2]["data"][0]["y"]))  # own q
    assert not np.array_equal(same[0], arr(charts[3]["data"][1]["y"]))  # another key/value head
    gpt2 = neuron_chart(neuron("hf:gpt2-tiny", lang, 2))
    assert not any(("key/value" if lang == "en" else "键/值") in title for title in row_titles(gpt2))


def reference_tokens() -> list[str]:
    return reference("hf:qwen2-tiny").tgt_tokens


@pytest.mark.parametrize("weights", MODELS)
def test_neuron_view_of_a_later_key_is_masked(weights):
    at = neuron(weights, "en", 1, query=1, key=3)
    assert meta(neuron_chart(at))["weight"] == 0.0
    assert any("causal mask" in m for m in messages(at))


@pytest.mark.parametrize("lang", LANGS)
def test_step_by_step_names_the_key_value_head_and_rope(lang):
    at = open_attention("hf:qwen2-tiny", lang, attn_head="3", attn_layer="1")
    assert_clean(at)
    run, pipe = reference("hf:qwen2-tiny"), load_model("hf:qwen2-tiny")
    attn, d_k = run.trace.decoder[0].self_attn, 8
    w_k = by_title(at, tr("attention.step.w_k_shared", lang, kv=2, first=3, last=4))
    rows = pipe.model.decoder.layers[0].self_attn.w_k.weight[d_k : 2 * d_k]  # key/value head 2's rows
    np.testing.assert_array_equal(arr(w_k["data"][0]["z"]), rows.detach().numpy().T)
    np.testing.assert_array_equal(
        arr(by_title(at, "K = R(X W_K + b_K)")["data"][0]["z"]), attn.k[0, 2].numpy()
    )
    np.testing.assert_array_equal(
        arr(by_title(at, "Q = R(X W_Q + b_Q)")["data"][0]["z"]), attn.q[0, 2].numpy()
    )
    mask = arr(by_title(at, tr("attention.step.mask", lang))["data"][0]["z"])
    np.testing.assert_array_equal(mask, np.tril(np.ones_like(mask)))  # 1 = may attend: the past only
    by_title(at, tr("attention.step.output_nobias", lang))  # Qwen2's W_O has no bias
    assert any(r"K = R\,(X W_K + b_K)" in x.value for x in at.latex)
    said = [c.value for c in at.caption]
    assert tr("attention.steps.shared", lang, head=3, kv=2, first=3, last=4) in said
    assert tr("attention.steps.rope", lang) in said


def test_step_by_step_of_gpt2_is_each_heads_own():
    at = open_attention("hf:gpt2-tiny", attn_head="3")
    assert_clean(at)
    attn = reference("hf:gpt2-tiny").trace.decoder[0].self_attn
    np.testing.assert_array_equal(arr(by_title(at, "K = X W_K + b_K")["data"][0]["z"]), attn.k[0, 2].numpy())
    by_title(at, "W_K, head 3")
    by_title(at, "output = Concat · W_O + b_O")
    assert not any("RoPE" in c.value for c in at.caption)


@pytest.mark.parametrize("weights", MODELS)
def test_head_view_lines_are_the_trace_and_never_look_ahead(weights):
    at = open_attention(weights, "zh")
    assert_clean(at)
    run = reference(weights)
    data, _ = head_view(at)
    assert data["left"] == data["right"] == [plain_label(t) for t in run.tgt_tokens]
    weights_ = run.trace.decoder[0].self_attn.weights[0]
    for head in range(4):
        lines = lines_of(data, head)
        assert lines and all(k <= q for q, k in lines)  # a query never reaches a later key
        for (q, k), w in lines.items():
            assert w == pytest.approx(float(weights_[head, q, k]), abs=5e-5)


@pytest.mark.parametrize("view", ("grid", "query"))
@pytest.mark.parametrize("weights", MODELS)
def test_the_other_views_draw_the_one_stack(weights, view):
    at = open_attention(weights, "zh", attn_view=view, attn_steps="false")
    assert_clean(at)
    run = reference(weights)
    if view == "grid":
        grid = [s for s in specs(at) if s["data"][0].get("hoverongaps") is False]
        z, n = arr(grid[0]["data"][0]["z"]), len(run.tgt_tokens)
        layer2_head4 = run.trace.decoder[1].self_attn.weights[0, 3].numpy()
        np.testing.assert_array_equal(z[fa.grid_block(1, n), fa.grid_block(3, n)], layer2_head4)
    else:
        assert tr("attention.query.causal", "zh") in [c.value for c in at.caption]


def test_kv_groups_follow_core():
    assert fa.kv_groups(4, 2) == [range(0, 2), range(2, 4)] and fa.kv_groups(4, 4) == []
    assert fa.kv_groups(14, 2) == [range(0, 7), range(7, 14)]  # Qwen2.5-0.5B
    assert fa.sharing_text(4, None) == "" and fa.sharing_text(12, 12, "zh") == ""
    assert "heads 8–14 share key/value head 2" in fa.sharing_text(14, 2)
    assert "头 8–14 共用键/值头 2" in fa.sharing_text(14, 2, "zh")
    pipe = load_model("hf:qwen2-tiny")
    mha = pipe.model.decoder.layers[0].self_attn
    for head in range(4):
        w = fa.head_weights(pipe.model, "decoder", 0, head)
        kv = head // 2
        assert (w.kv_head, w.shared) == (kv, range(2 * kv, 2 * kv + 2))
        np.testing.assert_array_equal(w.w_v, mha.w_v.weight[8 * kv : 8 * kv + 8].detach().numpy().T)
        assert w.b_o is None and w.b_k is not None
