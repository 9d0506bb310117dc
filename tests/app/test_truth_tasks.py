"""Texts that belong to a task are chosen by the model's task, never by its kind of weights.

A model trained in this session on ``reverse`` is "trained" weights like the 汉字→拼音 checkpoint, but
its cross-attention reads the source backwards: no page may describe it as pinyin.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from apphelpers import ROOT, assert_clean, messages
from streamlit.testing.v1 import AppTest

from core.tracing.pipeline import PipelineSettings, load_pipeline, run_pipeline
from core.training.loop import train
from core.training.pairs import aligned_source
from i18n import t
from ui.page.sidebar import SESSION_MODEL, SESSION_TAG


@functools.cache
def session_model(task: str):
    return train(task, {"d_model": 16, "num_heads": 2, "num_layers": 1, "d_ff": 32}, steps=60,
                 eval_limit=20, log_every=1000, eval_every=10_000)


def open_with_session_model(task: str, page: str, query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / page), default_timeout=60)
    at.session_state[SESSION_MODEL] = session_model(task)
    at.session_state[SESSION_TAG] = f"test-{task}"
    for key, value in {"weights": "session", **query}.items():
        at.query_params[key] = value
    return at.run()


@pytest.mark.parametrize("task", ["reverse", "copy"])
def test_cross_attention_of_a_session_model_is_described_by_its_task(task):
    sentence = "3 1 4 1 5"
    query = {"sentence": sentence, "attn_kind": t("attention.kind.cross", "en"), "target": "5 1 4 1 3"}
    at = open_with_session_model(task, "pages/attention.py", query)
    assert_clean(at)
    shown = " ".join(messages(at))
    assert "拼音" not in shown and "pinyin" not in shown
    # the share the text states, computed here from the model's own cross-attention
    run = run_pipeline(at.session_state["_session_pipeline"][1], sentence, target="5 1 4 1 3")
    weights = run.trace.decoder[0].cross_attn.weights[0, 0].numpy()
    S, T = len(run.src_tokens), len(run.tgt_tokens)
    rows = [(int(np.argmax(weights[q])), aligned_source(task, q, S)) for q in range(T)]
    rows = [(top, want) for top, want in rows if want is not None]
    share = sum(top == want for top, want in rows) / len(rows)
    assert t(f"attention.trained.cross.{task}", "en", layer=1, head=1, share=f"{share:.0%}") in shown


def test_aligned_source_follows_the_task():
    assert [aligned_source("pinyin", q, 3) for q in range(4)] == [0, 1, 2, None]
    assert [aligned_source("reverse", q, 3) for q in range(4)] == [2, 1, 0, None]
    assert aligned_source("lm", 0, 3) is None


def test_the_checkpoint_is_still_described_as_pinyin():
    sentence = "中华人民共和国"
    query = {"sentence": sentence, "attn_kind": t("attention.kind.cross", "en"), "attn_layer": "2"}
    at = AppTest.from_file(str(ROOT / "pages/attention.py"), default_timeout=60)
    for key, value in {"weights": "trained", **query}.items():
        at.query_params[key] = value
    at.run()
    assert_clean(at)
    run = run_pipeline(load_pipeline(PipelineSettings(weights="trained")), sentence, target="")
    top = run.trace.decoder[1].cross_attn.weights[0, 0].argmax(-1).tolist()  # layer 2, head 1
    share = sum(top[q] == q for q in range(len(run.src_tokens))) / len(run.src_tokens)
    assert t("attention.trained.cross.pinyin", "en", layer=2, head=1, share=f"{share:.0%}") in messages(at)


def test_the_positional_page_says_what_a_session_model_was_trained_on():
    at = open_with_session_model("reverse", "pages/positional.py", {"sentence": "31415"})
    assert_clean(at)
    from core.training.pairs import TOY_MAX_LEN

    shown = [c.value for c in at.caption]
    assert t("positional.curves.trained_digits", "en", chars=TOY_MAX_LEN, last=TOY_MAX_LEN) in shown
    assert not any("phrases" in c for c in shown)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_vocabulary_and_embedding_texts_of_a_session_model_name_its_task(lang):
    """A copy model's vocabulary is digits, not the 汉字→拼音 characters: the Tokenization and
    Embeddings pages say which task's vocabulary the rows come from."""
    query = {"sentence": "31415926", "lang": lang}
    tokenization = open_with_session_model("copy", "pages/tokenization.py", query)
    embeddings = open_with_session_model("copy", "pages/embeddings.py", query)
    for at in (tokenization, embeddings):
        assert_clean(at)
        shown = " ".join(messages(at))
        assert "拼音" not in shown and "pinyin" not in shown, shown
    what = t("tokenization.model.trained_task", lang, task="copy")
    captions = [c.value for c in tokenization.caption]
    assert t("tokenization.model.caption", lang, what=what, n=8) in captions
    assert not any(t("tokenization.model.trained", lang) in c for c in captions)
    assert t("embeddings.similarity.trained_task", lang, task="copy") in " ".join(messages(embeddings))
