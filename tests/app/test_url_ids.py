"""A shared link opens the same view in every language and for every model (issue 25, finding 6).

Tabs and radios used to keep their *translated label* in the URL (``?model_view=5 · Greedy decoding``,
``?attn_kind=Decoder cross-attention``): a link made in English opened the first tab in 中文, and
``?pe_tab=ALiBi`` was refused for an ALiBi model, whose tab is labelled "ALiBi ✓ this model". The URL
now holds ids (``decoding``, ``cross``, ``alibi``); a link made before, with a label in either language,
opens the same view and its URL is rewritten to the id.

Which tab is open: the page draws only the open one, so its charts say which.
"""

from __future__ import annotations

import apphelpers
import pytest
from apphelpers import assert_clean, messages

from i18n import t


def open_page(page: str, query: dict) -> object:
    at = apphelpers.open_page(f"pages/{page}.py", query)
    assert_clean(at)
    return at


# (page, URL key, id, the chart the view draws, extra query): one view per tab bar, not its first
TABS = [
    ("model", "model_view", "decoding", "model_step_cross", {}),
    ("model", "model_view", "stream", "model_stream", {}),
    ("attention", "attn_view", "grid", "attn_grid", {}),
    ("attention", "attn_explore", "neuron_view", "attn_neuron", {}),
    ("positional", "pe_tab", "rope", "pe_rope_rotation_chart", {}),
]


def chart_keys(at) -> set[str]:
    return {str(chart.proto.id).rsplit("-", 1)[-1] for chart in at.get("plotly_chart")}


@pytest.mark.parametrize(("page", "key", "view", "chart", "query"), TABS)
def test_a_tab_link_made_in_either_language_opens_the_same_tab_in_the_other(page, key, view, chart, query):
    for made, opened_in in (("en", "zh"), ("zh", "en")):
        at = open_page(page, {**query, "lang": made, key: view})
        assert chart in chart_keys(at)
        url = dict(at.query_params)
        assert url[key] == view  # the id, not the label of either language
        other = open_page(page, {**url, "lang": opened_in})
        assert chart in chart_keys(other), (made, opened_in)
        assert other.query_params[key] == view
        assert not [m for m in messages(other) if key in m]


@pytest.mark.parametrize(("page", "key", "view", "chart", "query"), TABS)
def test_a_tab_link_with_an_old_label_still_opens_its_tab_and_the_url_gets_the_id(
    page, key, view, chart, query
):
    tab = {"model_view": "model.tab.", "attn_view": "attention.tab.", "attn_explore": "attention.tab.",
           "pe_tab": "positional.tab."}[key] + view
    for made in ("en", "zh"):
        for lang in ("en", "zh"):
            at = open_page(page, {**query, "lang": lang, key: t(tab, made)})
            assert chart in chart_keys(at), (made, lang)
            assert at.query_params[key] == view
            assert not [m for m in messages(at) if key in m]


def test_the_tab_stays_open_when_the_language_changes():
    at = open_page("model", {"model_view": t("model.tab.stream", "en")})
    assert "model_stream" in chart_keys(at)
    at.button_group(key="lang").set_value("zh").run()
    assert_clean(at)
    assert "model_stream" in chart_keys(at) and at.query_params["model_view"] == "stream"
    assert [tab.label for tab in at.tabs if tab.children] == [t("model.tab.stream", "zh")]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_pe_tab_alibi_opens_the_alibi_tab_of_an_alibi_model(lang):
    """The ALiBi model's own tab is labelled "ALiBi ✓ this model": its id, the plain label of a link made
    with another model, and the marked label all open it."""
    for value in ("alibi", "ALiBi", t("positional.tab.current", lang, name=t("positional.tab.alibi", lang))):
        at = open_page("positional", {"positions": "alibi", "lang": lang, "pe_tab": value})
        assert "pe_alibi_bias_chart" in chart_keys(at), value
        assert at.query_params["pe_tab"] == "alibi"
        assert not [m for m in messages(at) if "pe_tab" in m], value
    marked = t("positional.tab.current", "en", name="ALiBi")  # made with an ALiBi model, opened with another
    at = open_page("positional", {"pe_tab": marked})
    assert "pe_alibi_bias_chart" in chart_keys(at) and at.query_params["pe_tab"] == "alibi"


# (page, key, option, label key, extra query): radios whose options are labelled in the page's language
RADIOS = [
    ("attention", "attn_kind", "cross", "attention.kind.cross", {}),
    ("attention", "hv_kind", "decoder", "attention.kind.decoder", {}),
    ("attention", "nv_kind", "cross", "attention.kind.cross", {"attn_explore": "neuron_view"}),
    ("attention", "attn_bar", "mean", "attention.bars.mean", {"attn_view": "query"}),
    ("masks", "mask_kind", "cross", "masks.kind.cross", {}),
]


@pytest.mark.parametrize(("page", "key", "option", "label", "query"), RADIOS)
def test_a_radio_keeps_its_option_in_the_url_in_every_language(page, key, option, label, query):
    at = open_page(page, {**query, "lang": "en"})
    at.radio(key=key).set_value(option).run()
    assert_clean(at)
    assert at.query_params[key] == option  # not its English label
    for lang in ("en", "zh"):
        shared = open_page(page, {**dict(at.query_params), "lang": lang})
        assert shared.radio(key=key).value == option, lang
        assert not [m for m in messages(shared) if key in m]
        for made in ("en", "zh"):  # a link made before: the label, in either language
            old = open_page(page, {**query, "lang": lang, key: t(label, made)})
            assert old.radio(key=key).value == option, (made, lang)
            assert old.query_params[key] == option
