"""The room's tally: a bar per option, how many chose it; after the reveal, the model's answer in green.

    tally_figure(("重", "庆", "很"), (12, 3, 5), answer=0, lang="zh")

Drawn for a projector (one bar per option, the count and the share written after each bar, no
tick numbers to read) and for a student's laptop, from the same function.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from figures.drawing.style import escape_label
from figures.drawing.toolbox import build_figure
from i18n import t

BAR = "#4c78a8"
RIGHT = "#2e8b57"  # the model's answer, once revealed
OTHER = "#b8c4d6"  # the other options, once revealed
ROW_PX = 56
MAX_LABEL = 18  # characters of an option on the axis (the hover has it whole)


def option_label(option: str) -> str:
    """An option as an axis label: escaped (``<b>`` stays text), long ones shortened with …"""
    text = str(option)
    return escape_label(text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…")


def tally_figure(
    options: Sequence[str], counts: Sequence[int], answer: int | None = None, *, lang: str = "en"
) -> go.Figure:
    """Horizontal bars, the options top to bottom in their order; ``answer`` (revealed) in green.
    Options are labels of tokens or numbers (user text): escaped and whitespace made visible."""
    if len(options) != len(counts):
        raise ValueError(f"{len(options)} options for {len(counts)} counts")
    total = sum(counts)
    rows = list(range(len(options)))
    colours = [BAR if answer is None else (RIGHT if i == answer else OTHER) for i in rows]
    texts = [f"{c}  ({c / total:.0%})" if total else "0" for c in counts]
    labels = [option_label(o) + ("  ✓" if i == answer else "") for i, o in enumerate(options)]
    bar = {
        "type": "bar",
        "orientation": "h",
        "x": list(counts),
        "y": rows,
        "marker": {"color": colours},
        "text": texts,
        "textposition": "outside",
        "cliponaxis": False,
        "hovertemplate": "%{customdata}: %{x}<extra></extra>",
        "customdata": [escape_label(o) for o in options],
    }
    most = max([*counts, 1])
    layout = {
        "xaxis": {"range": [0, most * 1.35], "showticklabels": False, "showgrid": False, "zeroline": False,
                  "title": {"text": t("classroom.tally_axis", lang)}},
        "yaxis": {"tickmode": "array", "tickvals": rows, "ticktext": labels, "autorange": "reversed"},
        "height": 90 + ROW_PX * len(options),
        "showlegend": False,
        "bargap": 0.3,
        "margin": {"r": 30},  # the count after the longest bar sits inside the axis range (1.35 ×)
    }
    return build_figure([bar], layout)
