"""The sentence a page opens with suits the weights on screen; a sentence the user chose is never replaced.

The 汉字→拼音 checkpoint knows no English: the old default (Chinese + English) opened every page on
five [UNK]s. Until the user types a sentence, the default follows the weights.
"""

from __future__ import annotations

from apphelpers import assert_clean, open_app

from ui.page.settings import DEFAULT_SENTENCES, default_sentence


def sentence(at) -> str:
    return at.text_area(key="sentence").value


def test_the_checkpoint_opens_on_chinese_it_reads_without_unknowns():
    at = open_app(weights=None)
    assert_clean(at)
    assert at.radio(key="weights").value == "trained"
    assert sentence(at) == DEFAULT_SENTENCES["trained"]
    run = at.session_state["_glassbox_settings"]
    from core.tracing.pipeline import PipelineSettings, load_pipeline, run_pipeline

    shown = run_pipeline(load_pipeline(PipelineSettings(weights="trained")), run.sentence, target="")
    assert "[UNK]" not in shown.src_tokens
    # 重 read two ways in context, each syllable on its character: what the model learned
    assert shown.decoded is not None
    assert shown.predicted[: len(shown.src_tokens)] == ["chóng", "qìng", "hěn", "zhòng", "yào"]
    assert "sentence" not in at.query_params  # the default is not written into the URL


def test_the_default_follows_the_weights_until_the_user_types():
    at = open_app(weights=None)
    at.radio(key="weights").set_value("random").run()
    assert_clean(at)
    assert sentence(at) == default_sentence("random")
    assert "sentence" not in at.query_params and at.query_params["weights"] == "random"
    at.radio(key="weights").set_value("minilm").run()
    assert sentence(at) == default_sentence("minilm") and "The animal" in sentence(at)
    at.radio(key="weights").set_value("trained").run()
    assert sentence(at) == DEFAULT_SENTENCES["trained"]
    # typed: kept whatever the weights
    at.text_area(key="sentence").set_value("我爱北京").run()
    at.radio(key="weights").set_value("random").run()
    assert_clean(at)
    assert sentence(at) == "我爱北京"
    assert at.query_params["sentence"] == "我爱北京"


def test_a_sentence_in_the_url_is_never_replaced():
    at = open_app({"sentence": "Attention is all you need"}, weights=None)
    assert sentence(at) == "Attention is all you need"
    at.radio(key="weights").set_value("random").run()
    at.radio(key="weights").set_value("trained").run()
    assert_clean(at)
    assert sentence(at) == "Attention is all you need"


def test_a_session_model_gets_a_sentence_of_its_task():
    assert default_sentence("session", "reverse").isdigit()
    assert default_sentence("session", "pinyin") == DEFAULT_SENTENCES["trained"]
