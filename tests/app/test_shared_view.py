"""A shared figure is serialised once (ui.page.figure.SerialisedFigure): what the browser gets is the same to
the byte as without sharing, the shared dict is made once and never changed, views of other runs or
languages are not mixed, and the dicts are counted in the server's byte budget."""

from __future__ import annotations

import copy
import gc
import json
import weakref

import numpy as np
import plotly.graph_objects as go
import plotly.io
import plotly.tools
import pytest
import streamlit.testing.v1.local_script_runner as local_runner
from apphelpers import assert_clean, open_page
from plotly.basedatatypes import BaseFigure
from streamlit.testing.v1 import AppTest

import ui.page.figure as uf
from figures.positional import pe_heatmap, pe_table
from ui.caches.budget import BUDGET, Budget, nbytes

PAGE = "pages/lecture.py"


@pytest.fixture
def sent(monkeypatch):
    """Per AppTest run, the plotly charts it sent: each chart's whole Element proto (the spec, config, id,
    theme, selection modes, width and height), serialised: the bytes the browser is sent for it."""
    runs: list[list[bytes]] = []
    parse = local_runner.parse_tree_from_messages

    def recording(msgs):
        runs.append([m.delta.new_element.SerializeToString() for m in msgs if _is_chart(m)])
        return parse(msgs)

    monkeypatch.setattr(local_runner, "parse_tree_from_messages", recording)
    return runs


def _is_chart(msg) -> bool:
    return (msg.WhichOneof("type") == "delta" and msg.delta.WhichOneof("type") == "new_element"
            and msg.delta.new_element.WhichOneof("type") == "plotly_chart")  # fmt: skip


@pytest.fixture
def serialisations(monkeypatch):
    """How many times a real figure was turned into its dict (plotly's ``BaseFigure.to_dict``; a
    stand-in's own ``to_dict`` is not counted)."""
    calls = []
    to_dict = BaseFigure.to_dict

    def counting(self):
        calls.append(type(self).__name__)
        return to_dict(self)

    monkeypatch.setattr(BaseFigure, "to_dict", counting)
    return calls


def unshared(monkeypatch):
    """show_figure as before sharing: every draw serialises the figure itself."""
    monkeypatch.setattr(uf, "serialised", lambda fig: fig)


# -- the stand-in --------------------------------------------------------------------------------------


def test_the_stand_in_serialises_to_the_figures_own_json():
    fig = pe_heatmap(pe_table(16, 8), lang="en")  # a heatmap: its z goes as a base64 typed array
    fig.add_trace(go.Scatter(x=[0, 1], y=[np.nan, 2.5], uid="u1", name="line"))  # NaN, a uid
    stand_in = uf.SerialisedFigure(fig)
    assert plotly.io.to_json(stand_in, validate=False) == plotly.io.to_json(fig, validate=False)
    assert all("uid" not in trace for trace in stand_in.to_dict()["data"])
    assert stand_in.to_plotly_json() is stand_in.to_dict()  # the same dict every time: no copy
    kept = copy.deepcopy(stand_in.to_dict())
    plotly.io.to_json(plotly.tools.return_figure_from_figure_or_data(stand_in, True), validate=False)
    assert stand_in.to_dict() == kept  # what Streamlit does with it changes nothing


def test_a_shared_figure_is_drawn_from_its_stand_in_until_its_state_changes():
    fig = uf.memo_figure(pe_heatmap, pe_table(12, 6), lang="en")
    assert uf.serialised(fig) is fig._serialised  # hit: a memo figure is serialised when stored
    themed = uf._share(pe_heatmap(pe_table(12, 6), lang="en")).value  # stored as built (Streamlit theme)
    assert uf.serialised(themed) is themed._serialised
    uf.draw_once(themed)  # what show_figure(theme=None) does to it: the stand-in is of another state
    assert uf.serialised(themed) is themed
    own = pe_heatmap(pe_table(12, 6), lang="en")  # a session's own figure: never a stand-in
    assert uf.serialised(uf.draw_once(own)) is own


def test_only_the_figures_a_view_holds_are_serialised_and_each_once():
    a, b = go.Figure(go.Bar(y=[1])), go.Figure(go.Bar(y=[2]))
    view = {"slides": (a, b, a), "note": "text", "n": 3}
    assert [id(f) for f in uf._figures_in(view)] == [id(a), id(b)]
    shared = uf._share(view)
    first = a._serialised
    assert shared.value is view and shared.stand_ins == (first, b._serialised)
    assert shared.dicts == (first.to_dict(), b._serialised.to_dict())
    again = uf._share(view)  # stored by another cache too: the same stand-ins, counted there as well
    assert a._serialised is first and again.stand_ins == shared.stand_ins
    assert b._serialised.to_dict()["data"][0]["y"] == [2]


# -- byte-identical charts -------------------------------------------------------------------------------


def chart_script(shared: bool, themed: bool, options: dict):
    import ui
    from figures.positional import pe_heatmap, pe_table

    make = (pe_heatmap, pe_table(24, 16))
    fig = ui.memo_figure(*make, lang="en", themed=themed) if shared else make[0](*make[1:], lang="en")
    draw = ui.show_themed_figure if themed else ui.show_figure
    draw(fig, key="chart", name="pe", **options)


OPTIONS = [
    {},
    {"on_select": "rerun", "selection_mode": ("points", "box")},
    {"config": {"scrollZoom": False}, "width": "content", "height": 300},
    {"use_container_width": False},
]


@pytest.mark.parametrize("themed", [False, True], ids=["our-style", "streamlit-theme"])
@pytest.mark.parametrize("options", OPTIONS, ids=["plain", "selection", "config-size", "container-width"])
def test_a_shared_figure_sends_the_same_chart_as_an_unshared_one(sent, serialisations, themed, options):
    alone = AppTest.from_function(chart_script, args=(False, themed, options), default_timeout=60).run()
    shared = AppTest.from_function(chart_script, args=(True, themed, options), default_timeout=60)
    shared.run()
    serialisations.clear()
    shared.run()
    assert_clean(alone)
    assert_clean(shared)
    assert len(sent[0]) == 1 and sent[0] == sent[1] == sent[2]
    assert serialisations == []  # the second run drew the shared figure without serialising it
    if "on_select" in options:  # still a widget: its selection state is there, empty
        assert shared.get("plotly_chart")[0].value["selection"]["points"] == []


# -- the lecture's slides -------------------------------------------------------------------------------


@pytest.mark.parametrize("step", ["1", "3", "5"], ids=["overview", "embeddings", "self-attention"])
def test_a_lecture_slide_is_the_same_to_the_byte_with_and_without_sharing(
    sent, serialisations, monkeypatch, step
):
    query = {"step": step, "sentence": f"shared view {step}"}
    first = open_page(PAGE, query)  # builds the view: its figure is serialised once, here
    assert_clean(first)
    serialisations.clear()
    again = open_page(PAGE, query)  # another session: the same view, nothing serialised
    assert serialisations == []
    unshared(monkeypatch)
    alone = open_page(PAGE, query)
    assert len(sent[-1]) == 1 and serialisations  # unshared: serialised while drawing
    assert sent[-3] == sent[-2] == sent[-1]
    assert again.get("plotly_chart")[0].proto.spec == alone.get("plotly_chart")[0].proto.spec


def test_languages_and_runs_are_not_mixed(monkeypatch):
    def chart(query):
        at = open_page(PAGE, {"step": "5", **query})
        assert_clean(at)
        return at.get("plotly_chart")[0].proto.spec

    queries = [{"sentence": "the cat sat"}, {"sentence": "the cat sat", "lang": "zh"},
               {"sentence": "a dog ran far"}]  # fmt: skip
    shared = [chart(q) for q in queries]
    assert len(set(shared)) == 3  # three views, three charts
    unshared(monkeypatch)
    assert [chart(q) for q in queries] == shared  # each the same as its own unshared chart
    zh = json.loads(shared[1])
    assert any("\u4e00" <= ch <= "\u9fff" for ch in json.dumps(zh["layout"], ensure_ascii=False))


# -- memory ---------------------------------------------------------------------------------------------


def test_a_views_serialised_form_is_counted_in_the_budget():
    open_page(PAGE, {"step": "5", "sentence": "counted in bytes"})
    # the budget's entries, least recently used first: the last view of step 5 (the encoder's
    # self-attention) is the one just drawn
    *_, (key, size) = [
        (k, n) for name, k, n in BUDGET.entries() if name.startswith("_view@") and k[1] == "lecture.5"
    ]
    view = uf._view.cache._values[key].value
    plain = view.fig._serialised.to_dict()
    bdata = sum(len(t["z"]["bdata"]) for t in plain["data"] if t["type"] == "heatmap")
    assert bdata > 0
    assert size >= nbytes(view) + bdata  # measured with the view: the dict's arrays are counted


def test_the_budget_drops_a_shared_figure_with_its_serialised_form():
    budget = Budget(limit=1)  # every store drops all older entries
    cache = budget.cache("figures")  # measured as the server's caches are (ui.caches.budget.nbytes)
    first = cache.get("a", lambda: uf._share(uf.draw_once(pe_heatmap(pe_table(64, 32), lang="en")))).value
    size = budget.total
    assert size >= nbytes(first) + len(first._serialised.to_dict()["data"][0]["z"]["bdata"])
    gone = weakref.ref(first._serialised)
    del first
    cache.get("b", lambda: uf._share(go.Figure(go.Bar(y=[1]))))
    gc.collect()
    assert gone() is None  # the stand-in and its dict went with the dropped figure
    assert [key for _, key, _ in budget.entries()] == ["b"] and budget.total < size
