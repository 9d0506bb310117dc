"""The margins figures.drawing.style reserves for labels, colour bars and legends, against plotly's own
automargin in Chromium: a figure drawn with our fonts (theme=None) must not need more room than
reserved, else plotly draws it a second time (the redraw the reservation exists to avoid) and the
estimate is wrong.

plotly.js is the copy inside the plotly Python package (offline); no Streamlit server is needed.
"""

from __future__ import annotations

import json
from pathlib import Path

import plotly
import plotly.io as pio
import pytest
from playwright.sync_api import Page

import figures.attention as fa
import figures.attention_views as fv
import figures.embeddings as fe
import figures.masks as fk
import figures.model as fm
import figures.positional as fp
import figures.training as ft
from core.tracing.batch import run_batch
from core.tracing.pipeline import PipelineSettings, greedy, load_pipeline, run_pipeline
from figures.drawing.style import AUTO_ANGLE_WIDTH, reserve_figure_margins

pytestmark = pytest.mark.browser

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
SENTENCES = {
    "default": "注意力就是一切 Attention is all you need",
    "mixed": "<script>alert(1)</script> 😀👍🏽 مرحبا schön, 机器学习 " * 2,
}


def app_figures(sentence: str) -> dict:
    """The figures the app draws with theme=None (Attention's, Masks', Full model's, the cross-attention)."""
    pipe = load_pipeline(PipelineSettings(weights="random", d_model=64, num_heads=4, num_layers=2, d_ff=256))
    run = run_pipeline(pipe, sentence)
    trace, src, tgt = run.trace, run.src_tokens, run.tgt_tokens
    attn = fa.attention_of(trace, "encoder", 0)
    cross = fa.attention_of(trace, "cross", 1)
    layer = trace.encoder[0]
    decoded = greedy(pipe, pipe.src_encode(sentence)[1][: len(src)], 6)  # as the page cuts the sentence
    logits = fm.position_logits(trace, 0)
    prefix = [pipe.tgt_labels[i] for i in fm.decoded_ids(decoded)][: len(decoded.steps)]
    figs = {
        "heads": fa.heads_figure(attn, src, src, selected=1),
        "heads_cross": fa.heads_figure(cross, tgt, src),
        "grid": fa.grid_figure(trace, "decoder", q_tokens=tgt, k_tokens=tgt),
        "bars_all": fa.query_bars(attn, 0, src, src, mode="all"),
        "bars_zh": fa.query_bars(attn, 0, src, src, lang="zh"),
        "neuron": fv.neuron_figure(fv.neuron_numbers(attn, 0, 0, 1), src[0], src[1]),
        "residual_post": fm.residual_figure(layer, 0, "post"),
        "residual_pre_zh": fm.residual_figure(layer, 0, "pre", lang="zh"),
        "ffn": fm.ffn_hidden_figure(layer.ffn_hidden[0], src),
        "zero": fm.zero_fraction_figure(layer.ffn_hidden[0], src),
        "stream": fm.stream_norms_figure({"post": trace, "pre": trace}, 64),
        "topk": fm.topk_figure(fm.softmax_t(logits, 2.0), pipe.tgt_labels, 10,
                               reference=fm.softmax_t(logits, 1.0), reference_name="T = 1"),
        "cross_step": fm.cross_attention_figure(decoded.steps[-1], src, prefix, 0),
    }
    batch = run_batch(pipe, [sentence, "你好", "Hi there!"])
    self_attn = fa.attention_of(batch.trace, "decoder", 0)
    steps = fa.head_steps(self_attn, 0, row=1)
    q_tok = fk.padded_tokens(batch.tgt_tokens, steps.mask.shape[0])[1]
    figs.update({
        "mask_ids": fk.ids_figure(batch.src_ids, batch.src_tokens, batch.pad_id, title="source ids (3, S)"),
        "mask_padding_zh": fk.padding_figure(batch.src_padding, lang="zh"),
        "mask_causal": fk.causal_figure(batch.causal),
        "mask_merged": fk.merged_figure(self_attn.mask, batch.tgt_tokens, batch.tgt_tokens),
        "masking": fk.masking_figure(steps.scores, steps.mask, steps.weights, q_tok, q_tok),
    })
    return {k: json.loads(pio.to_json(reserve_figure_margins(f), validate=False)) for k, f in figs.items()}


# The main column's width at 1280 × 720 with the sidebar open, in px: the figures below are drawn at a
# share of it, as the pages place them (ui.show_figure's ``column``), and reserved for that share.
PAGE_WIDTH = 820


def placed_figures(sentence: str, lang: str) -> dict:
    """Figures in columns or with legends that wrap, each with the share of the page it is drawn in."""
    pipe = load_pipeline(PipelineSettings(weights="random", d_model=512, num_heads=8, num_layers=1, d_ff=256))
    run = run_pipeline(pipe, sentence)
    arrays = fe.embedding_arrays(run.trace, pipe.config)
    tokens = run.src_tokens
    logits = fm.position_logits(run.trace, 0)
    heads, train_len = 8, 64
    figs = {
        "emb_norms": (fe.norm_bars(arrays, tokens, lang=lang), 0.5),
        "emb_hist": (fe.entry_histogram(arrays, lang=lang), 0.5),
        "emb_cosine": (fe.cosine_heatmap(arrays.lookup, tokens, lang=lang), 0.5),
        "emb_pca": (fe.pca_scatter(arrays.lookup, tokens, lang=lang), 0.5),
        "lr": (ft.lr_schedule(2000, 512, 400, 0.2, None, lang=lang), 0.5),
        "step_probs": (fm.topk_figure(fm.softmax_t(logits, 1.0), pipe.tgt_labels, 10, chosen=5,
                                      title="next token at step 14 (T = 1)", lang=lang), 0.4),
        "topk_reference": (fm.topk_figure(fm.softmax_t(logits, 2.0), pipe.tgt_labels, 10,
                                          reference=fm.softmax_t(logits, 1.0), lang=lang), 1.0),
        "alibi_bias": (fp.alibi_heatmaps(heads, 12, fp.alibi_heads(heads), lang=lang), 1.0),
        "alibi_offsets": (fp.offset_curves(fp.alibi_offset_bias(heads, 0), y_title="bias", lang=lang), 1.0),
        "beyond_alibi": (fp.beyond_alibi(heads, train_len, 2 * train_len, example=True, lang=lang), 1.0),
        "beyond_sinusoidal": (fp.beyond_sinusoidal(512, train_len, 2 * train_len, example=True, lang=lang),
                              1.0),
        "beyond_rope": (fp.beyond_rope(64, train_len, 2 * train_len, example=True, lang=lang), 1.0),
    }
    return {k: (json.loads(pio.to_json(reserve_figure_margins(f, AUTO_ANGLE_WIDTH * share), validate=False)),
                round(PAGE_WIDTH * share)) for k, (f, share) in figs.items()}


def drawn_margins(page: Page, fig: dict, width: int) -> tuple[dict, dict]:
    """(reserved, drawn): the figure's margins and those plotly's automargin settled on."""
    return page.evaluate(
        """async ([f, width]) => {
          const gd = document.getElementById('g');
          gd.style.width = `${width}px`;
          Plotly.purge(gd);
          await Plotly.newPlot(gd, f.data, f.layout);
          const s = gd._fullLayout._size;
          return [f.layout.margin, {l: s.l, r: s.r, t: s.t, b: s.b}];
        }""",
        [fig, width],
    )


@pytest.mark.parametrize(("sentence", "lang"), [("default", "en"), ("mixed", "zh")])
def test_reserved_margins_hold_at_the_width_the_page_gives(page: Page, sentence, lang):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.set_content('<div id="g"></div>')
    page.add_script_tag(path=str(PLOTLY_JS))
    too_small = {}
    for name, (fig, width) in placed_figures(SENTENCES[sentence], lang).items():
        reserved, drawn = drawn_margins(page, fig, width)
        short = {s: (reserved.get(s, 0), drawn[s]) for s in "lrtb" if drawn[s] > reserved.get(s, 0) + 0.5}
        if short:
            too_small[f"{name} at {width} px"] = short
    assert not too_small, f"plotly needed more room than reserved (reserved, drawn): {too_small}"


@pytest.mark.parametrize("sentence", list(SENTENCES))
def test_reserved_margins_hold_what_plotly_draws(page: Page, sentence):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.set_content('<div id="g" style="width: 1100px"></div>')
    page.add_script_tag(path=str(PLOTLY_JS))
    too_small = {}
    for name, fig in app_figures(SENTENCES[sentence]).items():
        reserved, drawn = drawn_margins(page, fig, 1100)
        short = {s: (reserved.get(s, 0), drawn[s]) for s in "lrtb" if drawn[s] > reserved.get(s, 0)}
        if short:
            too_small[name] = short
        # and not wasteful: at most ~half a plot of room on any side
        assert all(reserved.get(side, 0) < 420 for side in "lrtb"), (name, reserved)
    assert not too_small, f"plotly needed more room than reserved (reserved, drawn): {too_small}"
