"""Streamlit's second drawing of every changed chart, with and without figures.drawing.redraw.draw_once.

Streamlit (1.67) mounts a changed chart anew: ``Plotly.newPlot`` on the figure, then, from an effect,
``Plotly.react`` on a deep copy of it. This script does the same in a bare page (Debian's Chromium,
the plotly.js that plotly.py ships) for the Attention page's four charts at d_model 512, 8 heads,
6 layers, two seeds in turn, the figures as sent before and after ``draw_once``, interleaved in one
run, and prints the medians: the react on the copy should go from a full drawing to a few ms.

    .venv/bin/python benchmarks/redraw.py
"""

from __future__ import annotations

import copy
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import plotly  # noqa: E402
import plotly.io as pio  # noqa: E402

import figures.attention as fa  # noqa: E402
import figures.attention_views as fv  # noqa: E402
from core.tracing.pipeline import PipelineSettings, load_pipeline, run_pipeline  # noqa: E402
from figures.drawing.redraw import draw_once  # noqa: E402
from figures.drawing.style import reserve_figure_margins  # noqa: E402

SENTENCE = "注意力就是一切 Attention is all you need"
WIDTH = 704  # the main column at 1280×720 with the sidebar open; Streamlit sets width and height
PAGE = """<!doctype html><meta charset="utf-8"><script src="{plotly}"></script><body style="width:{w}px">
<script>
const copy = (x) => JSON.parse(JSON.stringify(x));
async function run(variants, reps) {{  // variants[v][seed][name] = {{data, layout}}
  const out = variants.map(() => ({{}}));
  for (let r = 0; r < reps; r++) for (let v = 0; v < variants.length; v++) {{
    for (const [name, fig] of Object.entries(variants[v][r % 2])) {{
      const old = document.getElementById(name + v);
      if (old) {{ Plotly.purge(old); old.remove(); }}
      const div = document.createElement("div"); div.id = name + v; document.body.appendChild(div);
      const t0 = performance.now();
      await Plotly.newPlot(div, copy(fig.data), copy(fig.layout), {{displaylogo: false}});
      div.offsetHeight;
      const t1 = performance.now();
      await Plotly.react(div, copy(div.data), copy(div.layout), {{displaylogo: false}});
      div.offsetHeight;
      const t2 = performance.now();
      (out[v][name] ??= {{newPlot: [], react: []}});
      out[v][name].newPlot.push(t1 - t0); out[v][name].react.push(t2 - t1);
    }}
  }}
  return out;
}}
</script>"""


def attention_figures(seed: int) -> dict:
    pipe = load_pipeline(
        PipelineSettings(d_model=512, num_heads=8, num_layers=6, d_ff=2048, seed=seed, weights="random")
    )
    run = run_pipeline(pipe, SENTENCE)
    attn = fa.attention_of(run.trace, "encoder", 0)
    q, k = fa.tokens_of("encoder", run.src_tokens, run.tgt_tokens)
    return {
        "neuron": fv.neuron_figure(fv.neuron_numbers(attn, 0, 0, 1), q[0], k[1]),
        "heads": fa.heads_figure(attn, q, k, selected=0),
        "grid": fa.grid_figure(run.trace, "encoder", q_tokens=q, k_tokens=k),
        "bars": fa.query_bars(attn, 0, q, k, mode="head", head=0),
    }


def as_sent(fig, once: bool) -> dict:
    fig = reserve_figure_margins(copy.deepcopy(fig))
    if once:
        draw_once(fig)
    spec = json.loads(pio.to_json(fig, validate=False))
    spec["layout"].update(width=WIDTH, height=spec["layout"].get("height", 450))
    return spec


def main() -> None:
    from playwright.sync_api import sync_playwright

    seeds = [attention_figures(seed) for seed in (0, 1)]
    variants = [[{n: as_sent(f, once) for n, f in figs.items()} for figs in seeds] for once in (False, True)]
    plotly_js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        page_file = Path(tmp) / "redraw.html"
        page_file.write_text(PAGE.format(plotly=plotly_js.as_uri(), w=WIDTH), encoding="utf-8")
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(page_file.as_uri())
        page.evaluate("v => run(v, 4)", variants)  # warm-up: JIT, fonts
        before, after = page.evaluate("v => run(v, 16)", variants)
        browser.close()
    med = statistics.median
    print(f"plotly.py {plotly.__version__}'s plotly.js; medians of 16 in ms; newPlot, then react on a copy")
    print(f"{'chart':8} {'newPlot':>8} {'react before':>13} {'react after':>12}")
    totals = [0.0, 0.0, 0.0]
    for name in before:
        row = (med(before[name]["newPlot"]), med(before[name]["react"]), med(after[name]["react"]))
        totals = [a + b for a, b in zip(totals, row, strict=True)]
        print(f"{name:8} {row[0]:8.1f} {row[1]:13.1f} {row[2]:12.1f}")
    print(f"{'all':8} {totals[0]:8.1f} {totals[1]:13.1f} {totals[2]:12.1f}")
    drawn_before, drawn_after = totals[0] + totals[1], med_sum(after, "newPlot") + totals[2]
    print(f"newPlot + react: {drawn_before:.0f} → {drawn_after:.0f} ms ({drawn_after / drawn_before:.2f}×)")


def med_sum(result: dict, key: str) -> float:
    return sum(statistics.median(r[key]) for r in result.values())


if __name__ == "__main__":
    main()
