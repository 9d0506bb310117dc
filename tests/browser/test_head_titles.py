"""Every head's title above its heatmap in the all-heads figure fits its column, drawn by plotly in
Chromium: no title runs into another, into a heatmap, a tick label or the colour bar, or past the
figure's edge. In English and 中文, with each head's role (the longest one too) and the "step by
step" mark, for every head count the app draws (1-16) and short and long sentences.

plotly.js is the copy inside the plotly Python package (offline); no Streamlit server is needed.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import plotly
import plotly.io as pio
import pytest
import torch
from playwright.sync_api import Page

import figures.attention as fa
from figures.drawing.style import AUTO_ANGLE_WIDTH
from i18n import t

pytestmark = pytest.mark.browser

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
SENTENCES = {
    "en": "The cat sat on the mat . The cat sat on the mat .".split(),
    "zh": list("床前明月光疑是地上霜举头望明月"),
}
ROLES = ["previous-token", "induction", "other"]  # the longest first: worst case beside its neighbours

BOXES = """async ([f, width]) => {
  const gd = document.getElementById('g');
  gd.style.width = `${width}px`;
  Plotly.purge(gd);
  await Plotly.newPlot(gd, f.data, f.layout);
  const box = (el) => { const r = el.getBoundingClientRect();
                        return {l: r.left, r: r.right, t: r.top, b: r.bottom, text: el.textContent}; };
  const all = (sel) => [...gd.querySelectorAll(sel)].map(box).filter((b) => b.r > b.l);
  return {figure: box(gd.querySelector('.main-svg')), titles: all('.annotation-text'),
          others: [...all('.xtick text'), ...all('.ytick text'), ...all('.nsewdrag'), ...all('.colorbar')]};
}"""


def meet(a: dict, b: dict, slack: float = 1.0) -> bool:
    across = a["l"] < b["r"] - slack and b["l"] < a["r"] - slack
    return across and a["t"] < b["b"] - slack and b["t"] < a["b"] - slack


def heads(n_heads: int, tokens: list[str], lang: str, selected: int, roles: bool):
    g = torch.Generator().manual_seed(0)
    weights = torch.softmax(torch.randn(1, n_heads, len(tokens), len(tokens), generator=g), -1)  # (1,h,L,L)
    titles = None
    if roles:
        titles = [t("induction.head_title", lang, n=j + 1, role=t(f"induction.role.{ROLES[j % 3]}", lang))
                  for j in range(n_heads)]
    fig = fa.heads_figure(SimpleNamespace(weights=weights), tokens, tokens, selected=selected, titles=titles,
                          lang=lang)
    return json.loads(pio.to_json(fig, validate=False))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_head_titles_fit_their_columns(page: Page, lang: str):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.set_content('<div id="g"></div>')
    page.add_script_tag(path=str(PLOTLY_JS))
    short = SENTENCES[lang]
    long = short * 2  # more than 24 tokens: small labels, two heatmaps a row up to 8 heads
    problems = []
    for n_heads in (1, 2, 3, 4, 6, 8, 12, 16):
        for tokens in (short, long):
            for selected in sorted({0, min(1, n_heads - 1), n_heads - 1}):
                for roles in (True, False):
                    fig = heads(n_heads, tokens, lang, selected, roles)
                    drawn = page.evaluate(BOXES, [fig, AUTO_ANGLE_WIDTH])
                    case = f"{n_heads} heads, {len(tokens)} tokens, head {selected + 1} picked, roles {roles}"
                    titles, edge = drawn["titles"], drawn["figure"]
                    assert len(titles) == n_heads, case
                    for i, a in enumerate(titles):
                        if a["l"] < edge["l"] - 1 or a["r"] > edge["r"] + 1 or a["t"] < edge["t"] - 1:
                            problems.append(f"{case}: {a['text']!r} leaves the figure")
                        problems += [f"{case}: {a['text']!r} runs into {b['text']!r}"
                                     for b in titles[i + 1 :] if meet(a, b)]
                        problems += [f"{case}: {a['text']!r} covers {b['text'] or 'a plot area'!r}"
                                     for b in drawn["others"] if meet(a, b)]
    assert not problems, "\n".join(problems[:20])
