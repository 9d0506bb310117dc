"""The model's answer is on screen: on the Overview and beside every view whose rows are the decoder's tokens.

Type 天气预报 with the default weights: the pages used to show the decoder's *input* ([BOS] tiān qì yù),
never what the model wrote (tiān qì yù bào).
"""

from __future__ import annotations

import pytest
from apphelpers import assert_clean, open_page

from core.tracing.pipeline import PipelineSettings, load_pipeline, run_pipeline
from i18n import t


def codes(at) -> list[str]:
    return [c.value for c in at.code]


def captions(at) -> list[str]:
    return [c.value for c in at.caption]


def answer_shown(at, text: str, kind: str = "greedy", lang: str = "en") -> bool:
    """The answer's label and, right after it, the answer itself."""
    return t(f"answer.{kind}", lang) in captions(at) and text in codes(at)


TRAINED = {"sentence": "天气预报"}
CROSS = t("attention.kind.cross", "en")
ANSWER = "tiān qì yù bào"  # the checkpoint's greedy decoding (tests/core check the model itself)


def test_the_checkpoints_answer_is_the_pinyin_it_wrote():
    run = run_pipeline(load_pipeline(PipelineSettings(weights="trained")), "天气预报")
    assert run.answer_kind == "greedy" and " ".join(run.answer) == ANSWER
    assert run.tgt_tokens == ["[BOS]", "tiān", "qì", "yù"]  # the decoder's input lacks the last syllable


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_overview_shows_the_answer(lang):
    at = open_page("pages/overview.py", {**TRAINED, "lang": lang}, weights=None)
    assert_clean(at)
    assert answer_shown(at, ANSWER, lang=lang)


@pytest.mark.parametrize(
    ("page", "query"),
    [
        ("pages/attention.py", {"attn_kind": CROSS, "hv_kind": CROSS}),
        ("pages/attention.py", {"attn_explore": t("attention.tab.neuron_view", "en"), "nv_kind": CROSS}),
        ("pages/attention.py", {"attn_kind": "Decoder masked self-attention"}),
        ("pages/masks.py", {}),
        ("pages/model.py", {"model_view": t("model.tab.output", "en")}),
        ("pages/lecture.py", {"step": "6"}),  # decoder self-attention
        ("pages/lecture.py", {"step": "7"}),  # cross-attention
        ("pages/lecture.py", {"step": "11"}),  # output probabilities
    ],
)
def test_every_view_of_the_decoders_tokens_shows_the_answer(page, query):
    at = open_page(page, {**TRAINED, **query}, weights=None)
    assert_clean(at)
    assert ANSWER in codes(at), (page, query, codes(at))


def test_an_encoder_view_has_no_answer_beside_it():
    at = open_page("pages/attention.py", {**TRAINED, "attn_kind": "Encoder self-attention"}, weights=None)
    assert_clean(at)
    assert ANSWER not in codes(at)


def test_random_weights_show_what_they_predict_and_say_it_is_noise():
    query = {"sentence": "Hello world", "d_model": "32", "num_heads": "2", "num_layers": "1"}
    at = open_page("pages/overview.py", query, weights="random")
    assert_clean(at)
    pipe = load_pipeline(PipelineSettings(weights="random", d_model=32, num_heads=2, num_layers=1, d_ff=128))
    run = run_pipeline(pipe, "Hello world")
    assert run.answer_kind == "sentence" and run.answer == run.predicted
    assert answer_shown(at, " ".join(f"[{a}]" for a in run.answer), kind="sentence")


def test_a_given_target_shows_the_prediction_at_each_position():
    at = open_page("pages/overview.py", {**TRAINED, "target": "tiān qì"}, weights=None)
    assert_clean(at)
    assert answer_shown(at, "[tiān] [qì] [yù]", kind="teacher")
