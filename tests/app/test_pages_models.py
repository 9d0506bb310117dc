"""Masks, Embeddings, Positional and Lecture mode with a decoder-only model folder (hf:gpt2-tiny,
hf:qwen2-tiny), in both languages: the causal mask with padding, what the configuration really does to
the embeddings and the positions, no word on whether the weights were trained, and a lecture through
every slide of the one stack; the quiz and the exercises ask only of attentions the model has (issue 29).
"""

import apphelpers
import numpy as np
import pytest
from apphelpers import assert_clean, messages
from apphelpers import plotly_array as arr
from apphelpers import plotly_specs as specs
from streamlit.testing.v1 import AppTest

from core.tracing.batch import run_batch
from core.tracing.run import SentenceRun
from figures.attention import groups_text
from i18n import t
from ui.folders.hf_pipeline import load_model

pytestmark = pytest.mark.usefixtures("model_folders")

SENTENCE = "注意力 is all you need 🙂"
MODELS = ("hf:gpt2-tiny", "hf:qwen2-tiny")
LANGS = ("en", "zh")
MASK_EXTRAS = ["你好", "Hi there!"]  # the Masks page's own sentences 2 and 3


def open_page(page: str, weights: str, lang: str, **query: str) -> AppTest:
    at = apphelpers.open_page(page, {"lang": lang, "sentence": SENTENCE, **query}, weights=weights)
    assert_clean(at)
    return at


def texts(at: AppTest) -> list[str]:
    return [
        *messages(at),
        *(c.value for c in at.caption),
        *(m.value for m in at.markdown),
        *(h.value for h in at.header),
        *(h.value for h in at.subheader),
    ]


def latex(at: AppTest) -> list[str]:
    return [x.value.strip("$\n") for x in at.latex]  # st.latex sends "$$\n…\n$$"


def titled(at: AppTest, title: str) -> dict:
    found = [s for s in specs(at) if s["layout"].get("title", {}).get("text", "") == title]
    assert len(found) == 1, [s["layout"].get("title", {}).get("text") for s in specs(at)]
    return found[0]


def lead(key: str, lang: str) -> str:
    """The words a text opens with, before its first colon ("Random weights")."""
    return t(key, lang).replace("：", ":").split(":")[0]


# -- Masks ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("weights", MODELS)
def test_masks_shows_the_causal_mask_with_padding_of_the_one_stack(weights, lang):
    at = open_page("pages/masks.py", weights, lang)
    batch = run_batch(load_model(weights), [SENTENCE, *MASK_EXTRAS], max_tokens=32)
    B, L = batch.tgt_ids.shape
    real = batch.tgt_padding[:, 0, 0].numpy()  # (B, L) True = a real token
    ids = titled(at, t("masks.fig.input_ids", lang, B=B, S=L))["data"][0]
    np.testing.assert_array_equal(arr(ids["z"]), real.astype(float))
    pad = titled(at, t("masks.fig.key_padding", lang, B=B, S=L))["data"][0]
    np.testing.assert_array_equal(arr(pad["z"]), real.astype(float))
    causal = titled(at, t("masks.fig.causal", lang, T=L))["data"][0]
    np.testing.assert_array_equal(arr(causal["z"]), np.tril(np.ones((L, L))))
    first = t("masks.fig.sentence", lang, n=1)
    (merged,) = [s for s in specs(at) if any(a["text"] == first for a in s["layout"].get("annotations", []))]
    expected = real[:, None, :] & np.tril(np.ones((L, L), dtype=bool))[None]  # padding ∧ causal
    assert len(merged["data"]) == B
    for b in range(B):
        np.testing.assert_array_equal(arr(merged["data"][b]["z"]), expected[b].astype(float))
    assert at.radio(key="mask_kind").options == [t("masks.kind.decoder", lang)]  # no encoder, no cross
    said = texts(at)
    assert t("masks.one_stack.batch", lang, model=weights) in said
    assert (
        t(
            "masks.batch.input",
            lang,
            B=B,
            L=L,
            pad_id=batch.pad_id,
            model=weights,
            filler=t("masks.batch.filler_eos", lang),
        )
        in said
    )
    assert not any(lead("masks.batch.decoder_random", lang) in s for s in said)
    after = arr([s for s in specs(at) if len(s["data"]) == 3][-1]["data"][2]["z"])  # the weights, masked
    np.testing.assert_array_equal(after, batch.trace.decoder[0].self_attn.weights[0, 0].numpy())


# -- Embeddings -------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("weights", MODELS)
def test_embeddings_say_what_the_configuration_does_and_nothing_of_training(weights, lang):
    at = open_page("pages/embeddings.py", weights, lang)
    config = load_model(weights).config
    assert not config.scale_embeddings and not config.embed_norm
    said = texts(at)
    assert not any(lead("embeddings.similarity.random", lang) in s for s in said)  # "Random weights"
    assert not any(w in s for s in said for w in ("pretrained", "预训练"))
    spread = f"{1 / config.d_model**0.5:.2f}"
    assert t("embeddings.similarity.folder", lang, model=weights, d=config.d_model, spread=spread) in said
    assert t("embeddings.rows.folder", lang, model=weights) in said
    if config.positions == "learned":  # GPT-2: no √d_model, its learned position rows added
        assert (
            t("embeddings.caption.unscaled.learned", lang, model=weights, rows=f"{config.max_len:,}") in said
        )
        assert r"\text{input}_{pos} = E[\text{id}] + P[pos]" in latex(at)
        assert t("embeddings.unscaled.header.learned", lang) in said
    else:  # Qwen2: no √d_model and nothing added, RoPE acts in attention
        assert config.positions == "rope"
        assert t("embeddings.caption.unscaled.in_attention", lang, model=weights, scheme="RoPE") in said
        assert r"\text{input}_{pos} = E[\text{id}]" in latex(at)
        assert t("embeddings.unscaled.header.in_attention", lang) in said
    assert not any("LayerNorm(E" in x for x in latex(at))


# -- Positional -------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_positional_shows_gpt2s_own_table_with_its_rows(lang):
    weights = "hf:gpt2-tiny"
    at = open_page("pages/positional.py", weights, lang, pe_tab="learned")
    config = load_model(weights).config
    rows = config.max_len
    said = texts(at)
    assert (
        t("positional.learned.reach.folder", lang, model=weights, rows=rows, d=config.d_model, step=1) in said
    )
    assert (
        t("positional.curves.folder", lang, model=weights, scheme=t("positional.tab.learned", lang))
        + t("positional.curves.folder.rows", lang, rows=rows)
    ) in said
    assert t("positional.sum.caption.unscaled", lang) in said
    for key in (
        "positional.curves.pretrained",
        "positional.curves.random",
        "positional.learned.reach.minilm",
        "positional.schemes.example",
        "positional.learned.relative.minilm",
    ):
        assert not any(lead(key, lang)[:25] in s for s in said), key
    assert r"x_{pos} = E[\text{id}_{pos}] + P[pos]" in latex(at)


@pytest.mark.parametrize("lang", LANGS)
def test_positional_shows_qwen2s_rope_with_its_base_and_pairing(lang):
    weights = "hf:qwen2-tiny"
    at = open_page("pages/positional.py", weights, lang, pe_tab="rope")
    config = load_model(weights).config
    assert config.positions == "rope" and config.rope_pairing == "half"
    theta = str(int(config.rope_theta))
    said = texts(at)
    (rope,) = [x for x in latex(at) if "R_p" in x]
    assert r"x_{i+d_k/2}" in rope and rf"\theta_i = {theta}^{{-2i/d_k}}" in rope and "x_{2i+1}" not in rope
    assert t("positional.rope.reach.half", lang) in said
    assert (
        t(
            "positional.rope.folder",
            lang,
            model=weights,
            theta=theta,
            pairs=t("positional.rope.pairs.half", lang),
        )
        in said
    )
    assert t("positional.rope.cross.one_stack", lang) in said and t("positional.rope.cross", lang) not in said
    assert t("positional.sum.in_attention.unscaled", lang, scheme="RoPE") in said
    assert (
        t(
            "positional.schemes.sizes.folder",
            lang,
            d=config.d_model,
            h=config.num_heads,
            d_k=config.d_k,
            L=config.max_len,
            example="",
        )
        in said
    )
    for key in ("positional.curves.random", "positional.schemes.example", "positional.sum.in_attention"):
        assert t(key, lang, scheme="RoPE") not in said, key


# -- Lecture mode -----------------------------------------------------------------------------------

ONE_STACK = ["overview", "tokens", "embeddings", "positional", "decoder", "masks", "residual", "ffn",
             "output", "greedy", "ablation"]  # fmt: skip


@pytest.mark.parametrize(
    ("weights", "lang"), [("hf:gpt2-tiny", "en"), ("hf:qwen2-tiny", "en"), ("hf:qwen2-tiny", "zh")]
)
def test_lecture_goes_through_every_slide_of_the_one_stack(weights, lang):
    config = load_model(weights).config
    n = len(ONE_STACK)
    for step, name in enumerate(ONE_STACK, start=1):
        at = open_page("pages/lecture.py", weights, lang, step=str(step))
        key = "lecture.residual.title_rms" if name == "residual" and config.norm_kind == "rms" else None
        title = t(key or f"lecture.{name}.title", lang)
        assert at.header[0].value == t("lecture.heading", lang, step=step, total=n, title=title)
        assert t("lecture.skipped_decoder", lang, model=weights, n=2) in [c.value for c in at.caption]
        assert len(specs(at)) == 1, name  # the slide's figure
        said = texts(at)
        assert not any(
            w in s for s in said for w in ("pretrained", "预训练", "encoder layer 1", "编码器第 1 层")
        )
        kv = config.num_kv_heads or config.num_heads
        groups = groups_text(config.num_heads, kv, lang)
        gqa = t("lecture.decoder.gqa", lang, h=config.num_heads, kv=kv, groups=groups)
        if name == "decoder":  # grouped-query attention said when the model has it (Qwen2), else not
            assert any(gqa in s for s in said) == (kv < config.num_heads)


def test_quiz_and_exercises_ask_only_of_attentions_the_model_has():
    from core.teaching.exercises import exercises_for
    from core.teaching.questions import questions_for
    from ui.classroom import quiz
    from ui.sections import exercises

    for weights in MODELS:
        run = SentenceRun(load_model(weights), SENTENCE)
        questions = questions_for(run, 0)
        assert questions and {q.kind for q in questions} >= {"self_attention", "next_token"}
        assert "cross_attention" not in {q.kind for q in questions}
        assert {q.params.get("attn_kind") for q in questions if q.kind == "self_attention"} == {"decoder"}
        found = exercises_for(run, 0)
        sources = [(e.params.get("source") or {}).get("attn_kind") for e in found]
        assert "encoder" not in sources and "softmax_entry" in {e.kind for e in found}
        assert quiz._slide_question(run, "encoder", 0) is None
        slide = quiz._slide_question(run, "decoder", 0)
        assert slide is not None and slide.params["attn_kind"] == "decoder"
        assert (
            exercises.exercises_at(run, "encoder", 0) == []
            and exercises.exercises_at(run, "residual", 0) == []
        )
        assert [e.kind for e in exercises.exercises_at(run, "decoder", 0)] == ["softmax_entry"]
