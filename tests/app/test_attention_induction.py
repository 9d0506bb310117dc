"""The Attention page marks induction heads (issue 30, part 4): with a decoder-only model (the small GPT,
a model folder) a table of every head's role and its three scores, equal to
``core.training.language.induction_probe`` of the model on screen; the roles in the head
selector, above the heatmaps and in the layers × heads grid; the "repeat a sequence" button that
fills the sentence with a sequence written twice; and, for an encoder-decoder, the button that
switches to the small GPT. Both languages."""

import functools

import apphelpers
import pytest
from apphelpers import assert_clean, messages
from apphelpers import plotly_specs as specs
from streamlit.testing.v1 import AppTest

from core.teaching.induction import head_roles
from core.tracing.pipeline import PipelineSettings, load_pipeline
from core.training.language import induction_probe
from i18n import t as tr
from ui.page.settings import gpt_available

LANGS = ("en", "zh")
needs_gpt = pytest.mark.skipif(not gpt_available(), reason="no small GPT at assets/gpt.pt")


@functools.cache
def shipped_gpt():
    """The small GPT's pipeline, read once for this module (core keeps no model between calls)."""
    return load_pipeline(PipelineSettings(weights="gpt"))


def open_attention(weights: str, lang: str = "en", **query: str) -> AppTest:
    return apphelpers.open_page("pages/attention.py", {"lang": lang, **query}, weights=weights)


def roles_tables(at: AppTest, lang: str) -> list:
    return [df.value for df in at.dataframe if tr("induction.table.pm", lang) in df.value.columns]


def param(at: AppTest, key: str) -> str | None:
    value = at.query_params.get(key)
    return value[0] if isinstance(value, list) else value


def assert_table_is_the_probe(at: AppTest, model, lang: str) -> None:
    """Every head's row: its role and scores as the probe measures them on ``model``, rounded to 3."""
    p = induction_probe(model)
    roles = head_roles(p["prefix_matching"], p["previous_token"], p["copying"])
    (table,) = roles_tables(at, lang)
    keys = ("layer", "head", "role", "pm", "pt", "copying")
    col = {key: tr(f"induction.table.{key}", lang) for key in keys}
    layers, heads = len(p["prefix_matching"]), len(p["prefix_matching"][0])
    assert len(table) == layers * heads
    for _, row in table.iterrows():
        i, j = int(row[col["layer"]]) - 1, int(row[col["head"]]) - 1
        assert row[col["role"]] == tr(f"induction.role.{roles[i][j]}", lang)
        for key, name in (("pm", "prefix_matching"), ("pt", "previous_token"), ("copying", "copying")):
            assert row[col[key]] == pytest.approx(p[name][i][j], abs=6e-4), (key, i, j)


def head_options(at: AppTest, key: str = "attn_head") -> list[str]:
    return at.selectbox(key=key).options


@needs_gpt
@pytest.mark.parametrize("lang", LANGS)
def test_the_small_gpt_shows_every_heads_role_and_scores(lang):
    at = open_attention("gpt", lang)
    assert_clean(at)
    pipe = shipped_gpt()
    assert_table_is_the_probe(at, pipe.model, lang)
    assert tr("induction.title", lang) in [h.value for h in at.subheader]
    # how the scores were measured, said in the page's language
    p = induction_probe(pipe.model)
    explain = tr("induction.explain", lang, batch=p["batch"], length=p["length"])
    assert explain in [m.value for m in at.markdown]
    # the head selector names each head's role and prefix-matching score
    roles = head_roles(p["prefix_matching"], p["previous_token"], p["copying"])
    expected = [
        tr("induction.head_label", lang, n=j + 1, role=tr(f"induction.role.{role}", lang),
           pm=f"{p['prefix_matching'][0][j]:.2f}")
        for j, role in enumerate(roles[0])
    ]  # fmt: skip
    assert head_options(at) == expected
    # so do the titles above every head's heatmap
    titles = {a.get("text") for s in specs(at) for a in s["layout"].get("annotations", [])}
    for j, role in enumerate(roles[0]):
        assert tr("induction.head_title", lang, n=j + 1, role=tr(f"induction.role.{role}", lang)) in {
            (t or "").removesuffix(tr("attention.step_by_step_mark", lang)) for t in titles
        }
    # no sentence about cross-attention, which a language model does not have
    captions = [c.value for c in at.caption]
    assert tr("attention.trained.other", lang) not in captions
    assert tr("attention.trained.one_stack", lang) in captions
    assert "show_gpt" not in [b.key for b in at.button]


@pytest.fixture
def low_thresholds(monkeypatch):
    """Every head gets a role: induction where its copying score is positive, else previous-token (the
    shipped model's roles depend on its training; the probe's cache is emptied before and after)."""
    import core.teaching.induction
    from ui.caches.budget import BUDGET

    monkeypatch.setattr(core.teaching.induction, "INDUCTION_MIN_PM", 0.0)
    monkeypatch.setattr(core.teaching.induction, "PREVIOUS_MIN_PT", 0.0)
    BUDGET.clear()
    yield
    BUDGET.clear()


@needs_gpt
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("thresholds", ["shipped", "low"])
def test_the_layers_by_heads_grid_names_every_head_with_a_role(lang, thresholds, request):
    if thresholds == "low":
        request.getfixturevalue("low_thresholds")
    at = open_attention("gpt", lang, attn_view="grid")
    assert_clean(at)
    p = induction_probe(shipped_gpt().model)
    roles = head_roles(p["prefix_matching"], p["previous_token"], p["copying"])
    named = sorted(tr(f"induction.role.{r}", lang) for row in roles for r in row if r != "other")
    (grid,) = [
        s
        for s in specs(at)
        if len(s["data"]) == 1
        and s["layout"].get("height")
        and any(a.get("textangle") == -90 for a in s["layout"].get("annotations", []))
    ]
    notes = [a["text"] for a in grid["layout"]["annotations"] if a.get("font", {}).get("color") == "#e07b00"]
    assert sorted(notes) == named
    if thresholds == "low":  # every head named, in the table too
        assert len(notes) == len(roles) * len(roles[0])
        assert_table_is_the_probe(at, shipped_gpt().model, lang)


@needs_gpt
@pytest.mark.parametrize("lang", LANGS)
def test_repeat_a_sequence_fills_the_sentence_with_two_equal_halves(lang):
    at = open_attention("gpt", lang)
    before = param(at, "sentence")
    at.button(key="repeat_sequence").click().run()
    assert_clean(at)
    sentence = param(at, "sentence")
    assert sentence and sentence != before
    pipe = shipped_gpt()
    _, ids = pipe.src_encode(sentence)
    n = len(ids) // 2
    assert 12 <= n <= 20 and ids[:n] == ids[n:]
    assert at.sidebar.text_area(key="sentence").value == sentence
    assert tr("induction.repeat.shown", lang, n=n) in messages(at)
    # another click, another sequence
    at.button(key="repeat_sequence").click().run()
    assert param(at, "sentence") != sentence


@needs_gpt
@pytest.mark.parametrize("lang", LANGS)
def test_an_encoder_decoder_offers_the_small_gpt_instead(lang):
    at = open_attention("trained", lang)
    assert_clean(at)
    keys = [b.key for b in at.button]
    assert "repeat_sequence" not in keys and "show_gpt" in keys
    assert not roles_tables(at, lang)
    assert tr("induction.decoder_only", lang) in [c.value for c in at.caption]
    at.button(key="show_gpt").click().run()
    assert_clean(at)
    assert param(at, "weights") == "gpt"
    assert "repeat_sequence" in [b.key for b in at.button]
    assert_table_is_the_probe(at, shipped_gpt().model, lang)


@pytest.mark.usefixtures("model_folders")
@pytest.mark.parametrize("lang", LANGS)
def test_a_decoder_only_model_folder_shows_roles_too(lang):
    from ui.folders.hf_pipeline import load_model

    at = open_attention("hf:gpt2-tiny", lang, sentence="the sentence is a sentence")
    assert_clean(at)
    assert_table_is_the_probe(at, load_model("hf:gpt2-tiny").model, lang)
    at.button(key="repeat_sequence").click().run()
    assert_clean(at)
    sentence = param(at, "sentence")
    _, ids = load_model("hf:gpt2-tiny").src_encode(sentence)
    assert len(ids) >= 4 and ids[: len(ids) // 2] == ids[len(ids) // 2 :]


@needs_gpt
def test_a_probe_that_fails_is_one_line_not_a_traceback(monkeypatch):
    import core.training.language
    from ui.caches.budget import BUDGET

    def fails(model):
        raise ValueError("sequence length 81 exceeds max_len=64")

    monkeypatch.setattr(core.training.language, "induction_probe", fails)
    BUDGET.clear()
    try:
        at = open_attention("gpt", "en")
    finally:
        BUDGET.clear()
    assert_clean(at)
    said = [c.value for c in at.caption if c.value.startswith(tr("induction.failed", "en", error=""))]
    assert len(said) == 1 and "exceeds max_len=64" in said[0], said
    assert not roles_tables(at, "en")
    heads = at.selectbox(key="attn_head").options
    assert heads == [str(n) for n in range(1, len(heads) + 1)]  # plain numbers: no role to name


@pytest.mark.usefixtures("model_folders")
def test_an_encoder_only_model_folder_has_no_roles():
    at = open_attention("hf:bert-tiny", "en", sentence="the sentence is a sentence")
    assert_clean(at)
    assert "repeat_sequence" not in [b.key for b in at.button]
    assert not roles_tables(at, "en")
    assert tr("induction.decoder_only", "en") in [c.value for c in at.caption]
