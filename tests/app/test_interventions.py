"""Interventions in the app (issue 41): parts switched off by the URL on every page, chosen where a head
or a layer is shown, the intact model beside; patching and every layer's guess on their page. Every
number on screen is compared with core's (tests/core/interventions proves core against transformers,
transformer-lens and a hand-written model); every bad value gets a message, never a traceback.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from apphelpers import PAGE_SCRIPTS, assert_clean, badges, messages, open_page, plotly_array

from core.interventions.runs import ablated as ablated_pipe
from core.interventions.runs import answer_probs, lens_of, patch_ids, patch_texts, ready_pairs
from core.tracing.pipeline import PipelineSettings, load_pipeline, run_pipeline
from i18n import t

INDUCTION = "dec.2.1,dec.2.3"  # the small GPT's two induction heads
CROSS2 = "cross.2.1,cross.2.2,cross.2.3,cross.2.4"  # the pinyin model's layer-2 cross-attention


def codes(at) -> list[str]:
    return [c.value for c in at.code]


def chart(at, key: str) -> dict:
    (found,) = [c for c in at.get("plotly_chart") if str(c.key) == key]
    return json.loads(found.proto.spec)


def z_of(spec: dict) -> np.ndarray:
    return plotly_array(spec["data"][0]["z"]).astype(float)


@pytest.mark.parametrize("page", PAGE_SCRIPTS)
def test_every_page_opens_with_parts_off_and_names_them(page):
    """?ablate= is valid on every page: it opens cold by its URL, shows the badge naming what is off,
    and keeps the parts in the URL (a page switch is a new page run with the same settings)."""
    lang = "zh" if PAGE_SCRIPTS.index(page) % 2 else "en"
    at = open_page(page, {"ablate": INDUCTION, "lang": lang}, weights="gpt")
    assert_clean(at)
    said = t("interventions.badge", lang, parts="")
    assert any(said.rstrip() in b for b in badges(at)), badges(at)
    assert at.query_params["ablate"] == INDUCTION


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_overview_answer_is_the_ablated_models_beside_the_intact_one(lang):
    """``overview_answer`` is what the model writes with layer 2's cross-attention off; the comparison
    beside it has the intact answer, each token's probability as core computes it."""
    at = open_page("pages/overview.py", {"ablate": CROSS2, "lang": lang}, weights="trained")
    assert_clean(at)
    intact = load_pipeline(PipelineSettings(weights="trained"))
    off = ablated_pipe(intact, CROSS2)
    theirs, ours = run_pipeline(intact, "重庆很重要"), run_pipeline(off, "重庆很重要")
    assert " ".join(ours.answer) != " ".join(theirs.answer)  # the switch changes what it writes
    shown = codes(at)
    assert shown[0] == " ".join(ours.answer)  # the Overview's answer, first on the page
    assert " ".join(theirs.answer) in shown and " ".join(ours.answer) in shown[1:]
    tables = [d.value for d in at.dataframe]
    probs = [list(table.iloc[:, 1]) for table in tables]
    for expected in (answer_probs(theirs), answer_probs(ours)):
        assert [round(p, 4) for _, p in expected] in probs


def test_the_small_gpts_copy_loss_with_its_induction_heads_off():
    """The second copy of a repeated random sequence: 3.17 nats with the induction heads, far more
    without them; both figures as core's probe gives them."""
    from core.training.language import induction_probe

    at = open_page("pages/overview.py", {"ablate": INDUCTION}, weights="gpt")
    assert_clean(at)
    intact = load_pipeline(PipelineSettings(weights="gpt"))
    probe = induction_probe(intact.model)
    off = induction_probe(ablated_pipe(intact, INDUCTION).model)
    assert round(probe["loss_second_copy"], 2) == 3.17
    assert off["loss_second_copy"] > 3 * probe["loss_second_copy"]
    values = [m.value for m in at.metric]
    assert values == [t("interventions.compare.loss.value", "en", loss=v)
                      for v in (probe["loss_second_copy"], off["loss_second_copy"])]


BAD = [
    ("dec.9.1", "layer"),
    ("dec.2.99", "head"),
    ("cross.1.1", "stack"),  # a decoder-only model has no cross-attention
    ("dec.1.ffn.x", "format"),
    ("<script>alert(1)</script>", "format"),
    ("dec.0.1", "format"),
    ("ｄｅｃ.１.１", "format"),
    ("x" * 3000, "too_long"),
]


@pytest.mark.parametrize(("value", "reason"), BAD, ids=[r + str(i) for i, (_, r) in enumerate(BAD)])
def test_a_bad_ablate_value_is_said_and_dropped(value, reason):
    at = open_page("pages/attention.py", {"ablate": f"{value},dec.1.2", "lang": "zh"}, weights="gpt")
    assert_clean(at)
    why = t(f"interventions.why.{reason}", "zh", limit="").split("{")[0][:6]
    assert any("ablate=" in m and why in m for m in messages(at)), messages(at)
    if reason == "too_long":  # not read at all
        assert "ablate" not in at.query_params
    else:
        assert at.query_params["ablate"] == "dec.1.2"  # the good part stays, the bad one is gone


def test_a_bad_mode_is_said():
    at = open_page("pages/overview.py", {"ablate": "dec.1.1", "ablate_mode": "bogus"}, weights="gpt")
    assert_clean(at)
    assert any("ablate_mode" in m for m in messages(at))


def test_mean_mode_shows_the_means_model():
    at = open_page("pages/overview.py", {"ablate": "dec.2.1", "ablate_mode": "mean"}, weights="gpt")
    assert_clean(at)
    pipe = ablated_pipe(load_pipeline(PipelineSettings(weights="gpt")), "dec.2.1", "mean")
    run = run_pipeline(pipe, at.session_state["sentence"])
    assert codes(at)[0] == " ".join(f"[{w}]" for w in run.answer) or " ".join(run.answer) in codes(at)[0]
    assert any(t("interventions.caption.mean", "en", n=32)[:40] in c.value for c in at.caption)


def test_a_head_is_switched_off_beside_its_picker_and_back_on():
    at = open_page("pages/attention.py", {"attn_layer": "2", "attn_head": "3"}, weights="gpt")
    toggle = at.toggle(key="attn_ablate")
    assert toggle.label == t("interventions.switch.head", "en", layer=2, head=3) and not toggle.value
    toggle.set_value(True).run()
    assert_clean(at)
    assert at.query_params["ablate"] == "dec.2.3"
    at.button(key="ablate_clear").click().run()
    assert "ablate" not in at.query_params


def test_heads_switched_off_in_the_all_heads_view_are_marked_off():
    at = open_page("pages/attention.py", {"attn_layer": "2", "ablate": INDUCTION}, weights="gpt")
    assert_clean(at)
    spec = chart(at, "attn_heads")
    titles = [a["text"] for a in spec["layout"]["annotations"]]
    assert sum(t("interventions.head.off", "en", title="") .strip(" ·") in x for x in titles) == 2
    pills = at.get("button_group")
    (heads,) = [p for p in pills if p.key == "attn_heads_off"]
    assert sorted(heads.value) == ["dec.2.1", "dec.2.3"]


def test_the_full_models_layer_view_switches_its_sublayers():
    at = open_page("pages/model.py", {"model_layer": "1"}, weights="trained")
    (pills,) = [p for p in at.get("button_group") if p.key == "model_layer_off"]
    pills.set_value(["cross.1.attn", "dec.1.ffn"]).run()
    assert_clean(at)
    assert at.query_params["ablate"] == "cross.1.attn,dec.1.ffn"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_pinyin_patching_grids_are_cores(lang):
    """重庆 vs 重要: the heads grid and the residual grid on screen are core's numbers."""
    at = open_page("pages/interventions.py", {"iv_view": "patch", "lang": lang}, weights="trained")
    assert_clean(at)
    pipe = load_pipeline(PipelineSettings(weights="trained"))
    clean, corrupted, position = ready_pairs(pipe)["pinyin"]
    expected = patch_ids(pipe, clean, corrupted, position)
    assert (expected.answer, expected.foil) == ("chóng", "zhòng")
    np.testing.assert_allclose(z_of(chart(at, "patch_heads")), expected.patching.heads.numpy(), atol=1e-6)
    np.testing.assert_allclose(z_of(chart(at, "patch_resid")), expected.patching.resid.numpy(), atol=1e-6)
    assert expected.patching.heads[0, 1] > 0.5  # encoder layer 1, head 2 carries most of it


def test_the_small_gpts_induction_pair_finds_its_induction_head():
    at = open_page("pages/interventions.py", {"iv_view": "patch"}, weights="gpt")
    assert_clean(at)
    heads = z_of(chart(at, "patch_heads"))
    assert heads.shape == (2, 4) and np.unravel_index(heads.argmax(), heads.shape) == (1, 0)  # head 2.1


@pytest.mark.parametrize(
    ("clean", "corrupted", "key"),
    [("the cat sat", "the dog sat down there", "interventions.patch.refused.lengths"),
     ("the cat sat", "the cat sat", "interventions.patch.refused.same")],
)
def test_an_unpatchable_pair_is_said(clean, corrupted, key):
    query = {"iv_view": "patch", "patch_pair": "own", "patch_clean": clean, "patch_corrupt": corrupted}
    at = open_page("pages/interventions.py", {**query, "lang": "zh"}, weights="random")
    assert_clean(at)
    said = t(key, "zh", n=3, m=5).split("3")[0][:4]
    assert any(said in m for m in messages(at)), messages(at)
    assert not at.get("plotly_chart")


def test_an_empty_pair_asks_for_two_inputs():
    query = {"iv_view": "patch", "patch_pair": "own", "patch_clean": "", "patch_corrupt": ""}
    at = open_page("pages/interventions.py", query, weights="random")
    assert_clean(at)
    assert t("interventions.patch.need_two", "en") in messages(at)


def test_the_users_own_pair_on_random_weights():
    query = {"iv_view": "patch", "patch_pair": "own", "patch_clean": "注意力 is all",
             "patch_corrupt": "注意力 is any"}
    at = open_page("pages/interventions.py", query, weights="random")
    assert_clean(at)
    pipe = load_pipeline(PipelineSettings(weights="random"))
    expected = patch_texts(pipe, "注意力 is all", "注意力 is any")
    np.testing.assert_allclose(z_of(chart(at, "patch_heads")), expected.patching.heads.numpy(), atol=1e-6)


@pytest.mark.parametrize(("weights", "lang"), [("trained", "zh"), ("gpt", "en")])
def test_every_layers_guess_is_cores_lens(weights, lang):
    at = open_page("pages/interventions.py", {"iv_view": "lens", "lang": lang}, weights=weights)
    assert_clean(at)
    pipe = load_pipeline(PipelineSettings(weights=weights))
    run = run_pipeline(pipe, at.session_state["sentence"])
    lens = lens_of(pipe, run)
    np.testing.assert_allclose(z_of(chart(at, "lens_figure")), lens.answer_prob.numpy().T, atol=1e-6)
    assert t("interventions.lens.norm.LayerNorm", lang, norm="LayerNorm") in [c.value for c in at.caption]


@pytest.mark.parametrize("view", ["patch", "lens"])
def test_an_encoder_only_model_says_it_writes_nothing(view):
    at = open_page("pages/interventions.py", {"iv_view": view}, weights="minilm")
    assert_clean(at)
    said = t("interventions.encoder_only", "en", model="all-MiniLM-L6-v2")
    assert said in messages(at)
