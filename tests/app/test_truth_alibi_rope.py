"""What the pages say about ALiBi and RoPE is true for the model on screen (issue 23, findings 1, 2, 4).

1. Under ALiBi a self-attention score is q·k/√d_k + b (the bias −m_h·|i − j|): every equation that
   shows a score next to its numbers has the bias as a term of its own (neuron view, the step-by-step
   view, the Masks page's scores panel, the lecture's attention slides), and the terms add up.
2. ALiBi's slopes: the rule shown is the one that produced the numbers, for a head count that is a
   power of two (2^(−8h/H)) and for one that is not (MiniLM's 12 heads).
3. RoPE with d_k = 1 rotates nothing: the pages say so, and what they say holds for the model.
"""

import json

import apphelpers
import numpy as np
import pytest
import torch
from apphelpers import assert_clean, messages
from apphelpers import plotly_array as arr
from apphelpers import plotly_specs as specs

from core.model.positional import alibi_bias, alibi_slopes
from core.tracing.pipeline import load_pipeline, run_pipeline
from figures import positional as fp
from i18n import t
from ui.page.settings import Settings, minilm_available

SENTENCE = "The cat sat on the mat and looked at the dog"
ALIBI = {"positions": "alibi", "d_model": "64", "num_heads": "8", "sentence": SENTENCE}  # d_k = 8


def reference(query: dict):
    """The run the page shows, computed here: the same settings, the same numbers."""
    sizes = {k: int(v) for k, v in query.items() if k in ("d_model", "num_heads")}
    settings = Settings(sentence=query["sentence"], weights="random", positions=query["positions"], **sizes)
    pipe = load_pipeline(settings.pipeline_settings())
    return run_pipeline(pipe, settings.sentence, "", max_tokens=settings.max_tokens), pipe


def meta(spec: dict) -> dict:
    found = spec["layout"].get("meta") or {}
    return found[0] if isinstance(found, list) and len(found) == 1 else found


def latex_numbers(text: str) -> list[float]:
    import re

    return [float(x) for x in re.findall(r"-?\d+\.\d{4}", text)]


# -- 1. the ALiBi bias, a term of its own ------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_neuron_view_under_alibi_shows_the_bias_as_its_own_term_and_the_equation_holds(lang):
    query = {**ALIBI, "lang": lang, "attn_explore": t("attention.tab.neuron_view", lang)}
    at = apphelpers.open_page("pages/attention.py", query)
    at.selectbox(key="nv_query").set_value(7).run()
    at.selectbox(key="nv_key").set_value(1).run()  # 6 positions apart
    assert_clean(at)
    run, _ = reference(ALIBI)
    attn = run.trace.encoder[0].self_attn
    chart = [s for s in specs(at) if "dot" in meta(s)]
    assert len(chart) == 1
    dot, scaled = meta(chart[0])["dot"], meta(chart[0])["scaled"]
    assert dot == pytest.approx(float(attn.q[0, 0, 7] @ attn.k[0, 0, 1]), abs=1e-5)
    assert scaled == pytest.approx(dot / np.sqrt(8), abs=1e-9)
    bias, score = float(attn.bias[0, 0, 7, 1]), float(attn.scores[0, 0, 7, 1])
    assert bias == pytest.approx(-6 * float(alibi_slopes(8)[0]))  # −m_1·|7 − 1| = −6/2 = −3
    # the equation with the numbers: q·k, q·k/√d_k, the bias, the score, and they add up
    shown = [x.value for x in at.latex if f"{score:.4f}" in x.value and f"{bias:.4f}" in x.value]
    assert len(shown) == 1, [x.value for x in at.latex]
    numbers = latex_numbers(shown[0])
    for value in (dot, scaled, bias, score):
        assert round(value, 4) in numbers, (value, shown[0])
    assert round(scaled, 4) + round(bias, 4) == pytest.approx(round(score, 4), abs=1.5e-4)
    assert r"\tfrac{1}{2}" in shown[0] and r"\cdot 6" in shown[0]  # b = −m·|i − j| = −½·6
    # the general formula and the explanation name the bias too; the chart's title holds the same terms
    assert any("b_{ij}" in x.value and "|i-j|" in x.value for x in at.latex)
    assert any("ALiBi" in m.value for m in at.markdown), [m.value for m in at.markdown]
    assert meta(chart[0])["bias"] == bias and meta(chart[0])["score"] == score
    assert f"{bias:.4f}" in chart[0]["layout"]["title"]["text"]
    # a model without ALiBi: the paper's equation, no bias anywhere
    at = apphelpers.open_page("pages/attention.py", {**query, "positions": "sinusoidal"})
    assert_clean(at)
    assert not any("b_{ij}" in x.value for x in at.latex)
    assert not any("ALiBi" in m.value for m in at.markdown)


def test_step_by_step_under_alibi_draws_the_bias_between_qk_and_the_scores():
    at = apphelpers.open_page("pages/attention.py", {**ALIBI, "attn_steps": "true", "attn_head": "2"})
    assert_clean(at)
    run, _ = reference(ALIBI)
    attn = run.trace.encoder[0].self_attn
    L = attn.scores.shape[-1]
    by_title = {s["layout"].get("title", {}).get("text", ""): s for s in specs(at)}
    bias_chart = [s for title, s in by_title.items() if title.startswith("B ")]
    assert len(bias_chart) == 1, list(by_title)
    np.testing.assert_array_equal(arr(bias_chart[0]["data"][0]["z"]).reshape(L, L), alibi_bias(8, L, L)[1])
    qk = arr(by_title["Q Kᵀ"]["data"][0]["z"]).reshape(L, L).astype(float)
    scores = [s for title, s in by_title.items() if title.startswith("Q Kᵀ / √8 +")]
    assert len(scores) == 1
    z = arr(scores[0]["data"][0]["z"]).reshape(L, L).astype(float)
    np.testing.assert_allclose(qk / np.sqrt(8) + alibi_bias(8, L, L)[1].numpy(), z, atol=1e-4)
    formulas = " ".join(x.value for x in at.latex)
    assert r"\sqrt{8}} + B" in formulas and "B_{ij} = -m_h" in formulas and r"\tfrac{1}{4}" in formulas
    assert r"\sqrt{d_k} + B" in formulas  # the softmax's argument: masked scores including the bias
    assert any("ALiBi" in m.value for m in at.markdown)
    assert any("ALiBi" in e.label for e in at.expander)


def test_masks_scores_panel_under_alibi_says_the_scores_include_the_bias():
    at = apphelpers.open_page("pages/masks.py", {**ALIBI, "mask_head": "3"})
    assert_clean(at)
    effect = [s for s in specs(at) if len(s["data"]) == 3 and "customdata" in s["data"][0]]
    assert len(effect) == 1
    panel = effect[0]["data"][0]
    z = arr(panel["z"]).astype(float)
    T = z.shape[-1]
    terms = arr(panel["customdata"]).astype(float).reshape(T, T, 2)  # q·k/√d_k and the bias
    np.testing.assert_array_equal(terms[..., 1], alibi_bias(8, T, T, causal=True)[2].numpy())
    np.testing.assert_allclose(terms[..., 0] + terms[..., 1], z.reshape(T, T), atol=1e-5)
    assert "ALiBi" in effect[0]["layout"]["annotations"][0]["text"]
    assert any(r"\frac{QK^\top}{\sqrt{d_k}} + B" in x.value and "m_h" in x.value for x in at.latex)
    # the encoder's symmetric form when that attention is chosen
    at.radio(key="mask_kind").set_value("encoder").run()
    assert any(r"|q-k|" in x.value for x in at.latex)
    at.radio(key="mask_kind").set_value("cross").run()  # cross-attention gets no bias
    assert not any("+ B" in x.value for x in at.latex)
    effect = [s for s in specs(at) if len(s["data"]) == 3 and s["layout"]["annotations"][0]["text"]]
    assert not any("ALiBi" in s["layout"]["annotations"][0]["text"] for s in effect)


def test_lecture_attention_equations_have_the_bias_exactly_when_the_model_adds_one():
    for positions in ("alibi", "sinusoidal"):
        lecture_slides_say_the_bias(positions)


def lecture_slides_say_the_bias(positions: str) -> None:
    query = {**ALIBI, "positions": positions}
    encoder = apphelpers.open_page("pages/lecture.py", {**query, "step": "5"})
    decoder = apphelpers.open_page("pages/lecture.py", {**query, "step": "6"})
    masks = apphelpers.open_page("pages/lecture.py", {**query, "step": "8"})
    for at in (encoder, decoder, masks):
        assert_clean(at)
    enc = " ".join(x.value for x in encoder.latex)
    dec = " ".join(x.value for x in decoder.latex)
    title = [s for s in specs(masks) if len(s["data"]) == 3][0]["layout"]["annotations"][0]["text"]
    if positions == "alibi":
        assert r"\sqrt{d_k}} + B" in enc and r"B_{ij} = -m_h\,|i-j|" in enc
        assert r"+ B + M" in dec and r"B_{tj} = -m_h\,(t-j)" in dec
        assert "ALiBi" in title
    else:
        assert "B" not in enc.replace(r"\Big", "") and "B_{tj}" not in dec and "ALiBi" not in title


# -- 2. the slope rule that produced the numbers ---------------------------------------------------------


def alibi_tab(query: dict, weights: str):
    label = t("positional.tab.alibi", query.get("lang", "en"))
    labels = [tab.label for tab in apphelpers.open_page("pages/positional.py", query, weights=weights).tabs]
    label = next(x for x in labels if x.startswith(label))
    at = apphelpers.open_page("pages/positional.py", {**query, "pe_tab": label}, weights=weights)
    assert_clean(at)
    return at


def shown_slopes(at) -> list[float]:
    """The slopes the page lists after "m = " (or "m ="), as numbers: 1/4 or 0.707."""
    text = [m.value for m in at.markdown if "m_h" in m.value or "m =" in m.value]
    listed = [x for x in text if "1/2" in x]
    assert len(listed) == 1, text
    values = listed[0].rsplit("m = ", 1)[-1].rstrip(".。").split(", ")
    return [1 / float(v[2:]) if v.startswith("1/") else float(v) for v in values]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_alibi_tab_with_12_heads_shows_the_rule_for_a_head_count_that_is_not_a_power_of_two(lang):
    if not minilm_available():
        pytest.fail("all-MiniLM-L6-v2 is not installed")
    at = alibi_tab({"sentence": "Attention is all you need", "lang": lang}, weights="minilm")
    core = alibi_slopes(12).double().numpy()  # 1/2 … 1/256, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5
    np.testing.assert_allclose(shown_slopes(at), core, rtol=2e-3)
    formulas = " ".join(x.value for x in at.latex)
    assert "2^{-8h/8}" in formulas and "/16}" in formulas and "cases" in formulas
    assert "2^{-8h/H}" not in formulas and "2^(−8h/H)" not in " ".join(m.value for m in at.markdown)
    # the panels' slopes are the same numbers
    charts = at.get("plotly_chart")
    bias = [json.loads(c.proto.spec) for c in charts if c.proto.id.endswith("pe_alibi_bias_chart")][0]
    titles = [a["text"] for a in bias["layout"]["annotations"] if "m = " in a["text"]]
    assert titles == [t("positional.fig.alibi.head_title", lang, h=h + 1, m=fp.slope_text(core[h]))
                      for h in fp.alibi_heads(12)]


def test_alibi_tab_with_a_power_of_two_shows_the_geometric_series_of_this_head_count():
    at = alibi_tab({"num_heads": "4", "d_model": "32", "positions": "alibi"}, weights="random")
    np.testing.assert_allclose(shown_slopes(at), alibi_slopes(4).double().numpy())  # 1/4, 1/16, 1/64, 1/256
    formulas = " ".join(x.value for x in at.latex)
    assert "2^{-8h/4}" in formulas and "cases" not in formulas


# -- 3. RoPE with d_k = 1 -----------------------------------------------------------------------------


DK1 = {"d_model": "16", "num_heads": "16", "sentence": "注意力就是一切 dog bites man"}


def test_rope_with_one_dimension_per_head_says_it_cannot_tell_positions_apart_and_it_cannot():
    query = {**DK1, "positions": "rope"}
    at = apphelpers.open_page("pages/positional.py", query)
    assert_clean(at)
    said = t("positional.rope.no_pair.model", "en", d_model=16, h=16)
    assert said in messages(at)
    assert any(said in c.value or "d_k = 1" in c.value for c in at.sidebar.caption)
    rope_label = next(tab.label for tab in at.tabs if tab.label.startswith("RoPE"))
    tab = apphelpers.open_page("pages/positional.py", {**query, "pe_tab": rope_label})
    assert_clean(tab)  # the rotation panels need a pair of dimensions: none is drawn, the page says why
    assert said in messages(tab)
    assert not any("rope_rotation" in c.proto.id for c in tab.get("plotly_chart"))
    zh = apphelpers.open_page("pages/positional.py", {**query, "lang": "zh"})
    assert t("positional.rope.no_pair.model", "zh", d_model=16, h=16) in messages(zh)
    # ... and it is true: reorder the source tokens and the memory is reordered the same way, and the
    # decoder's output does not change
    run, pipe = reference({**query, "sentence": DK1["sentence"]})
    model = pipe.model
    src = run.trace.src_ids
    perm = torch.randperm(src.shape[1], generator=torch.Generator().manual_seed(0))
    assert not torch.equal(perm, torch.arange(src.shape[1]))
    tgt = run.trace.tgt_ids
    a, b = model.trace(src, tgt), model.trace(src[:, perm], tgt)
    torch.testing.assert_close(b.memory, a.memory[:, perm], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(b.logits, a.logits, atol=1e-5, rtol=1e-5)


def test_rope_tab_at_one_dimension_per_head_of_another_model_draws_and_says_rope_would_rotate_nothing():
    query = {**DK1, "positions": "sinusoidal"}
    at = apphelpers.open_page("pages/positional.py", query)
    rope_label = next(tab.label for tab in at.tabs if tab.label.startswith("RoPE"))
    tab = apphelpers.open_page("pages/positional.py", {**query, "pe_tab": rope_label})
    assert_clean(tab)
    assert t("positional.rope.no_pair.other", "en") in messages(tab)
    assert t("positional.rope.no_pair.model", "en", d_model=16, h=16) not in messages(tab)
    assert not any("d_k = 1" in c.value for c in tab.sidebar.caption)  # this model has its positions
    assert json.dumps(messages(at)).count("d_k = 1") == 0  # nothing said above the tabs either
