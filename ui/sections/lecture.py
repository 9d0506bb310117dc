"""The Lecture page's steps: the whole Transformer as a sequence of slides, one large figure per screen.

Steps: the whole model → tokens → embeddings → positional encoding → encoder self-attention →
decoder masked self-attention → cross-attention → masks → residual + LayerNorm → feed-forward →
output probabilities → greedy decoding. Each is one figure of the app's own figure functions (the
same numbers as the pages, on the sidebar's sentence and weights), restyled for a projector by
``figures/drawing/presenter.py``, with a big title, one or two sentences and the paper's equation. Steps
that need a stack the model lacks are left out (``shown_steps``), with a note saying how many.

Also here: the step on screen (``current_step``: a room's, a followed ``?step=N``, or the
session's), Previous / Next, the page's fixed stylesheet and how a slide is laid out. The page's
decisions (URL per step, keys, the folded sidebar, rooms) are in docs/decisions.md, "Lecture mode"."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import streamlit as st

import figures.positional as fp
import ui
from core.names import Weights
from core.tracing.run import SentenceRun
from figures.attention import groups_text, head_steps, heads_figure
from figures.drawing.presenter import PRESENTER_HEIGHT, Slide, presenter_style
from figures.drawing.redraw import draw_once
from figures.drawing.style import BASE_FONT_SIZE
from figures.embeddings import embedding_arrays, embedding_heatmap
from figures.masks import masking_figure
from figures.model import (
    NORMED,
    STREAM,
    cross_attention_figure,
    decoded_ids,
    ffn_hidden_figure,
    position_logits,
    residual_figure,
    residual_stages,
    softmax_t,
    topk_figure,
)
from figures.overview import DiagramSizes, has_output_bias, output_latex, pipeline_diagram
from figures.tokenization import token_boxes, wordpiece_figure
from ui.classroom import panels as classroom
from ui.page.keys import check_step

STEP = "lecture_step"  # the step on screen (1-based), kept per session
URL_SEEN = "lecture_step_url"  # the ?step= value this page wrote last: another one is followed
MOVED = "lecture_step_moved"  # Previous / Next (a click or a key) moved the step in this run
WRITTEN = "lecture_steps_written"  # {?step= value: when this session last wrote it} (time.monotonic)
STALE = 30.0  # seconds: a ?step= this session wrote that recently is the browser's old URL, not a link
TOP_K = 10
MASK_MAX = 24  # the masks slide shows the first 24 decoder positions: a corner that is exact (causal)
WIDE_HEIGHT = 390  # a full-width figure: its text sits above it
PE_ROWS = 64  # sinusoidal table rows drawn: enough for the slow stripes to show
ROPE_POSITIONS = 8  # RoPE: the same vector turned at positions 0 … 7, as on the Positional page
ALIBI_LEN = 16  # ALiBi: the bias panels cover the sentence's first 16 positions at most

# Fixed stylesheet (no user text): compact chrome, large text. st.html with only <style> goes to
# the event container and takes no room on the page.
STYLE = """<style>
[data-testid="stHeader"] { background: transparent; }
[data-testid="stMainBlockContainer"] { padding-top: 1rem; padding-bottom: 1rem; }
[data-testid="stMainBlockContainer"] > div > [data-testid="stElementContainer"]:has(h1),
[data-testid="stMainBlockContainer"] > div > [data-testid="stElementContainer"]:has(
  [data-testid="stCaptionContainer"]) { display: none; }
.st-key-lecture_slide h2 { font-size: 2rem; padding: 0.1rem 0; }
.st-key-lecture_text [data-testid="stMarkdown"] p { font-size: 1.3rem; line-height: 1.45; }
.st-key-room_code_big p { font-size: 5rem; font-weight: 700; letter-spacing: 0.12em; line-height: 1.1;
  font-family: "Source Code Pro", monospace; margin: 0; }
.st-key-room_code [data-testid="stCode"] code { font-size: 1.4rem; }
.st-key-room_answered p { font-size: 1.5rem; }
.st-key-room_result [data-testid="stAlertContainer"] p,
.st-key-room_question [data-testid="stAlertContainer"] p,
.st-key-room_question label p { font-size: 1.25rem; }
.st-key-room_result p code, .st-key-room_question p code { font-size: 1em; }
</style>"""

LATEX = {
    "tokens": r"\text{text} \rightarrow (t_1, \dots, t_S) \rightarrow (\mathrm{id}_1, \dots, \mathrm{id}_S)",
    "embeddings": r"x_i = E[\mathrm{id}_i]\,\sqrt{d_{\text{model}}}",
    "embeddings_unscaled": r"x_i = E[\mathrm{id}_i]",
    "positional": (
        r"\begin{aligned} PE_{(pos,\,2i)} &= \sin\!\big(pos / 10000^{2i/d_{\text{model}}}\big) \\ "
        r"PE_{(pos,\,2i+1)} &= \cos\!\big(pos / 10000^{2i/d_{\text{model}}}\big) \end{aligned}"
    ),
    "positional_learned": r"x_i = E[\mathrm{id}_i] + P[i]",
    "positional_learned_scaled": r"x_i = E[\mathrm{id}_i]\,\sqrt{d_{\text{model}}} + P[i]",
    "positional_learned_bert": r"x_i = \mathrm{LayerNorm}\big(E[\mathrm{id}_i] + P[i] + T[0]\big)",
    # RoPE and ALiBi add nothing to x_i: what they do in every self-attention instead
    "positional_rope": (
        r"\begin{aligned} q_m &\mapsto R_m\,q_m,\quad k_n \mapsto R_n\,k_n \\ "
        r"(R_m q_m)\cdot(R_n k_n) &= q_m\cdot R_{n-m}\,k_n \end{aligned}"
    ),
    "positional_alibi": r"s_{ij} = \frac{q_i\cdot k_j}{\sqrt{d_k}} - m_h\,|i-j|",
    "positional_none": r"x_i = E[\mathrm{id}_i]\,\sqrt{d_{\text{model}}}",
    "encoder": r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}}\Big)V",
    "decoder": (
        r"\begin{aligned} & \mathrm{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}} + M\Big)V \\ "
        r"& M_{tj} = \begin{cases} 0 & j \le t \\ -\infty & j > t \end{cases} \end{aligned}"
    ),
    # positions="alibi": every self-attention adds the bias B of head h to the scores (core.model.positional)
    "encoder_alibi": (
        r"\begin{aligned} & \mathrm{Attention}(Q, K, V) = "
        r"\mathrm{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}} + B\Big)V \\ "
        r"& B_{ij} = -m_h\,|i-j| \quad \text{(ALiBi)} \end{aligned}"
    ),
    "decoder_alibi": (
        r"\begin{aligned} & \mathrm{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}} + B + M\Big)V \\ "
        r"& B_{tj} = -m_h\,(t-j) \quad \text{(ALiBi)} \\ "
        r"& M_{tj} = \begin{cases} 0 & j \le t \\ -\infty & j > t \end{cases} \end{aligned}"
    ),
    "cross": (
        r"\begin{aligned} Q &= Y\,W_Q \\ K &= \mathrm{memory}\,W_K \\ "
        r"V &= \mathrm{memory}\,W_V \end{aligned}"
    ),
    "masks": r"s_{tj} = -\infty\ \Rightarrow\ \mathrm{softmax}(s_t)_j = 0",
    "residual_post": r"x_{\text{out}} = \mathrm{LayerNorm}\big(x + \mathrm{Sublayer}(x)\big)",
    "residual_pre": r"x_{\text{out}} = x + \mathrm{Sublayer}\big(\mathrm{LayerNorm}(x)\big)",
    "ffn_relu": r"\mathrm{FFN}(x) = \max(0,\ xW_1 + b_1)\,W_2 + b_2",
    "ffn_gelu": r"\mathrm{FFN}(x) = \mathrm{GELU}(xW_1 + b_1)\,W_2 + b_2",
    "output": r"P(y_{i+1} \mid y_{\le i}, x) = \mathrm{softmax}(h_i W_{\text{out}})",
    "greedy": r"y_t = \arg\max_{w}\ P(w \mid y_{<t}, x)",
    # a decoder-only model (GPT-2, Llama): one sequence x, its continuation written onto its end
    "output_one_stack": r"P(x_{i+1} \mid x_{\le i}) = \mathrm{softmax}(h_i W_{\text{out}})",
    "greedy_one_stack": r"x_{t+1} = \arg\max_{w}\ P(w \mid x_{\le t})",
    "residual_pre_rms": r"x_{\text{out}} = x + \mathrm{Sublayer}\big(\mathrm{RMSNorm}(x)\big)",
    "residual_post_rms": r"x_{\text{out}} = \mathrm{RMSNorm}\big(x + \mathrm{Sublayer}(x)\big)",
    "ffn_gelu_tanh": r"\mathrm{FFN}(x) = \mathrm{GELU}(xW_1 + b_1)\,W_2 + b_2",
    "ffn_swiglu": (
        r"\mathrm{FFN}(x) = \big(\mathrm{SiLU}(xW_{\text{gate}}) \odot xW_{\text{up}}\big)\,W_{\text{down}}"
    ),
}


@dataclass(frozen=True)
class Context:
    """What every slide reads: the run (each part computed when a slide first reads it), the
    sentence as typed and the page's language."""

    run: SentenceRun
    sentence: str
    lang: str

    def first_layer(self):
        """Layer 1 of the stack that reads the sentence: the encoder's, or a decoder-only model's one."""
        return self.run.trace.decoder[0] if self.run.config.stack == "decoder" else self.run.encoder[0]


# -- the steps: each returns its slide ---------------------------------------------------------------


# One heatmap per head side by side: the full width, and a little less scaling, keep the token
# labels of a dozen tokens apart.
HEADS = {"wide": True, "font_scale": 1.15}
HEADS_PER_ROW = 4  # heads_figure's grid: more heads wrap to rows too short for token labels


def heads_slide_figure(attn, q_tokens, k_tokens, lang: str):
    """heads_figure; with more than one row of heads the token labels go (the hover keeps them)."""
    fig = heads_figure(attn, q_tokens, k_tokens, lang=lang)
    if attn.weights.shape[1] > HEADS_PER_ROW:
        fig.update_xaxes(showticklabels=False)
        fig.update_yaxes(showticklabels=False)
    return fig


def answer(c: Context) -> dict:
    """The model's answer for a slide whose rows are the decoder's tokens (Slide's code and its label)."""
    run = c.run
    shown = " ".join(run.answer) if run.answer_kind == "greedy" else " ".join(f"[{a}]" for a in run.answer)
    return {"code": shown, "code_label": ui.t(f"answer.{run.answer_kind}")}


def overview_slide(c: Context) -> Slide:
    target_source = {"target": "given", "own": "greedy"}.get(c.run.decoder_reads, "sentence")
    sizes = DiagramSizes.of_model(c.run.config, len(c.run.src_tokens), len(c.run.tgt_tokens), target_source)
    stack = c.run.config.stack
    text = ui.t("lecture.overview.text_decoder" if stack == "decoder"
                else "lecture.overview.text_encoder" if stack == "encoder" else "lecture.overview.text")
    return Slide(pipeline_diagram(sizes, lang=c.lang), text, font_scale=1.0, wide=True)


def tokens_slide(c: Context) -> Slide:
    ids = [int(i) for i in c.run.source.src_ids[0]]
    boxes = wordpiece_figure if c.run.pipe.weights == Weights.MINILM else token_boxes
    fig = boxes(c.run.src_tokens, ids=ids, lang=c.lang)
    text = ui.t("lecture.tokens.text")
    return Slide(fig, text, LATEX["tokens"], c.sentence, ui.t("lecture.sentence"))


def embeddings_slide(c: Context) -> Slide:
    lookup = embedding_arrays(c.run.source).lookup
    scaled = c.run.config.scale_embeddings
    return Slide(
        embedding_heatmap(lookup, c.run.src_tokens, lang=c.lang),
        ui.t("lecture.embeddings.text", d_model=c.run.config.d_model),
        LATEX["embeddings" if scaled else "embeddings_unscaled"],
    )


def positional_slide(c: Context) -> Slide:
    """What this model's positions do (config.positions): the sinusoid table or the learned rows that are
    added, or, for RoPE and ALiBi, which add nothing, the rotation or the bias in every self-attention."""
    positions = c.run.config.positions
    if positions == "learned":
        pe = embedding_arrays(c.run.source).pe  # the learned rows this sentence used
        # table_heatmap scales its colours to the table (learned rows are small); pe_heatmap is ±1
        table = fp.table_heatmap
        if c.run.config.scale_embeddings:
            equation = "learned_scaled"
        else:
            equation = "learned_bert" if c.run.config.embed_norm else "learned"
        folder = c.run.pipe.weights == Weights.HF  # trained or not, the folder does not say
        text = (ui.t("lecture.positional.text_learned_folder", rows=c.run.config.max_len) if folder
                else ui.t("lecture.positional.text_learned"))
        return Slide(table(pe, lang=c.lang), text, LATEX[f"positional_{equation}"])
    if positions == "rope":
        d_k = c.run.config.d_k
        pairs = fp.rope_pairs(d_k)
        if not pairs:  # d_k = 1: no pair of dimensions to turn, so nothing carries the position
            embedded = embedding_arrays(c.run.source).embedded
            return Slide(
                embedding_heatmap(embedded, c.run.src_tokens, lang=c.lang),
                ui.t("lecture.positional.text_rope_none", d_k=d_k),
                LATEX["positional_none"],
            )
        return Slide(
            fp.rope_rotation_figure(d_k, pairs, ROPE_POSITIONS, lang=c.lang),
            rope_text(c),
            LATEX["positional_rope"],
            wide=True,
        )
    if positions == "alibi":
        heads = c.run.config.num_heads
        length = min(max(len(c.run.src_tokens), 2), ALIBI_LEN)  # this sentence's query × key positions
        fig = fp.alibi_heatmaps(heads, length, fp.alibi_heads(heads), lang=c.lang)
        return Slide(fig, ui.t("lecture.positional.text_alibi"), LATEX["positional_alibi"], wide=True)
    rows = max(PE_ROWS, len(c.run.src_tokens))
    return Slide(
        fp.pe_heatmap(fp.pe_table(rows, c.run.config.d_model), lang=c.lang),
        ui.t("lecture.positional.text"),
        LATEX["positional"],
    )


def rope_text(c: Context) -> str:
    """The RoPE slide's text: the paper's pairs (2i, 2i+1) and base 10000 as the panels draw them, or a
    decoder-only model's own (config.rope_theta, rope_pairing), which the panels do not draw."""
    if c.run.config.stack != "decoder":
        return ui.t("lecture.positional.text_rope")
    cfg = c.run.config
    theta = cfg.rope_theta
    pairs = ui.t(f"lecture.positional.pairs_{cfg.rope_pairing}")
    return ui.t("lecture.positional.text_rope_one_stack", pairs=pairs,
                theta=str(int(theta)) if float(theta).is_integer() else f"{theta:g}")


def self_attention(c: Context, attn_kind: str) -> str:
    """The LATEX key of a self-attention slide: with the bias term B when the model's positions add one."""
    return f"{attn_kind}_alibi" if c.run.config.positions == "alibi" else attn_kind


def encoder_slide(c: Context) -> Slide:
    attn = c.run.attention("encoder", 0)
    src = c.run.src_tokens
    fig = heads_slide_figure(attn, src, src, c.lang)
    return Slide(
        fig, ui.t("lecture.encoder.text", h=c.run.config.num_heads), LATEX[self_attention(c, "encoder")],
        **HEADS,
    )


def decoder_slide(c: Context) -> Slide:
    attn = c.run.attention("decoder", 0)
    tgt = c.run.tgt_tokens
    fig = heads_slide_figure(attn, tgt, tgt, c.lang)
    cfg = c.run.config
    text = ui.t("lecture.decoder.text")
    if c.run.config.stack == "decoder":
        text = ui.t("lecture.decoder.text_one_stack", h=cfg.num_heads)
        kv = cfg.num_kv_heads or cfg.num_heads
        if kv < cfg.num_heads:  # grouped-query attention (Qwen2, Llama): heads share keys and values
            groups = groups_text(cfg.num_heads, kv, c.lang)  # the model's own grouping, one by one
            key = "lecture.decoder.mqa" if kv == 1 else "lecture.decoder.gqa"
            text += " " + ui.t(key, h=cfg.num_heads, kv=kv, groups=groups)
    return Slide(fig, text, LATEX[self_attention(c, "decoder")], **answer(c), **HEADS)


def cross_slide(c: Context) -> Slide:
    attn = c.run.attention("cross", len(c.run.trace.decoder) - 1)
    fig = heads_slide_figure(attn, c.run.tgt_tokens, c.run.src_tokens, c.lang)
    return Slide(fig, ui.t("lecture.cross.text"), LATEX["cross"], **answer(c), **HEADS)


def masks_slide(c: Context) -> Slide:
    s = head_steps(c.run.attention("decoder", 0), 0)
    tgt = c.run.tgt_tokens
    # The top-left corner of a causal attention is exact: row t < n only has weights on keys ≤ t.
    n = min(len(tgt), MASK_MAX)
    corner = (s.scores[:n, :n], s.mask[:n, :n], s.weights[:n, :n])
    bias = None if s.bias is None else s.bias[:n, :n]  # ALiBi: the scores hold its bias, the panel says so
    # the app's 18 px labels (the Masks page uses 15 px in its narrow columns), then 1.15×
    fig = masking_figure(*corner, tgt[:n], tgt[:n], bias=bias, font_size=BASE_FONT_SIZE, lang=c.lang)
    text = ui.t("lecture.masks.text_one_stack" if c.run.config.stack == "decoder" else "lecture.masks.text")
    if n < len(tgt):
        text += " " + ui.t("lecture.masks.cut", n=n, total=len(tgt))
    return Slide(fig, text, LATEX["masks"], font_scale=1.15, wide=True)


def residual_slide(c: Context) -> Slide:
    norm = c.run.config.norm
    norm_kind = c.run.config.norm_kind  # "rms": RMSNorm (Llama, Qwen2)
    layer = c.first_layer()
    fig = residual_figure(layer, 0, norm, norm_kind=norm_kind, lang=c.lang)
    # The text states the numbers of the rows it speaks of (drawn on the slide): the LayerNorms' outputs
    # (post-norm), whose variance is 1 only before γ and β, or the stream, never normalised (pre-norm).
    rows = [s for s in residual_stages(layer, 0, norm) if s.kind == (NORMED if norm == "post" else STREAM)]
    d = c.run.config.d_model
    # a decoder-only model's layer 1 is its one stack's; its norm is said from its configuration
    one_stack = c.run.config.stack == "decoder"
    key = f"lecture.residual.text_{norm}" + (f"_{norm_kind}_one_stack" if one_stack else "")
    text = ui.t(
        key,
        d=d,
        root=f"{d**0.5:.2f}",
        variances=" / ".join(f"{float(s.vector.var()):.2f}" for s in rows),
        lengths=" / ".join(f"{s.norm:.2f}" for s in rows),
    )
    return Slide(
        fig,
        text,
        LATEX[f"residual_{norm}_rms" if norm_kind == "rms" else f"residual_{norm}"],
        c.run.src_tokens[0],
        ui.t("lecture.token"),
        font_scale=1.15,
        wide=True,
    )


def ffn_slide(c: Context) -> Slide:
    activation = c.run.config.activation
    hidden = c.first_layer().ffn_hidden[0]
    fig = ffn_hidden_figure(hidden, c.run.src_tokens, activation=activation, lang=c.lang)
    cfg = c.run.config
    one_stack = cfg.stack == "decoder"
    name = ui.t(f"lecture.ffn.activation.{activation}") if one_stack else activation.upper()
    text = ui.t("lecture.ffn.text_one_stack" if one_stack else "lecture.ffn.text", d_model=cfg.d_model,
                d_ff=cfg.d_ff, activation=name)
    return Slide(fig, text, LATEX.get(f"ffn_{activation}"))


def output_slide(c: Context) -> Slide:
    if c.run.config.stack == "decoder":  # the last position: the token that would follow the whole sentence
        last = len(c.run.tgt_tokens) - 1
        probs = softmax_t(position_logits(c.run.trace, last), 1.0)
        fig = topk_figure(probs, c.run.pipe.tgt_labels, TOP_K, lang=c.lang)
        text = ui.t("lecture.output.text_one_stack", k=TOP_K)
        return Slide(fig, text, output_equation(c, "output_one_stack"), **answer(c))
    probs = softmax_t(position_logits(c.run.trace, 0), 1.0)
    fig = topk_figure(probs, c.run.pipe.tgt_labels, TOP_K, lang=c.lang)
    return Slide(fig, ui.t("lecture.output.text", k=TOP_K), output_equation(c, "output"), **answer(c))


def output_equation(c: Context, key: str) -> str:
    """The output equation (``LATEX[key]``) as this model computes it: + b where its output layer has
    a bias."""
    logits = output_latex(has_output_bias(c.run.config), "h_i", r"W_{\text{out}}")
    return LATEX[key].replace(r"\mathrm{softmax}(h_i W_{\text{out}})", rf"\mathrm{{softmax}}({logits})")


def greedy_one_stack(c: Context) -> Slide:
    """A decoder-only model continues the sentence: the last step's last-layer self-attention, every
    head, over the sentence and what it wrote before the last token (no source to look back at)."""
    decoded = c.run.decoding  # core.tracing.pipeline.generate: greedy, the sentence first
    labels = [c.run.pipe.tgt_labels[i] for i in decoded.tokens[0].tolist()]
    written = labels[len(c.run.tgt_tokens):]
    last = decoded.steps[-1]
    seen = labels[: last.tgt_ids.size(1)]  # the tokens the last step read
    fig = heads_slide_figure(last.decoder[-1].self_attn, seen, seen, c.lang)
    return Slide(fig, ui.t("lecture.greedy.text_one_stack", n=len(written)), LATEX["greedy_one_stack"],
                 " ".join(written), ui.t("lecture.output_one_stack"), **HEADS)


def greedy_slide(c: Context) -> Slide:
    if c.run.config.stack == "decoder":
        return greedy_one_stack(c)
    decoded = c.run.decoding  # the run's own, or made for this slide (random weights, a target given)
    labels = [c.run.pipe.tgt_labels[i] for i in decoded_ids(decoded)]  # [BOS] y1 … yn
    n = len(decoded.steps)
    # Row i of the last step is the position that chose token i + 1: labelled with what it wrote.
    fig = cross_attention_figure(decoded.steps[-1], c.run.src_tokens, labels[1 : n + 1], lang=c.lang)
    return Slide(
        fig, ui.t("lecture.greedy.text"), LATEX["greedy"], " ".join(labels[1 : n + 1]), ui.t("lecture.output")
    )


# (id, the stacks it needs, slide): the lecture's order. "": any model; "encoder", "decoder"; "both":
# cross-attention, which reads the encoder's memory from the decoder.
STEPS: list[tuple[str, str, Callable[..., Slide]]] = [
    ("overview", "", overview_slide),
    ("tokens", "", tokens_slide),
    ("embeddings", "", embeddings_slide),
    ("positional", "", positional_slide),
    ("encoder", "encoder", encoder_slide),
    ("decoder", "decoder", decoder_slide),
    ("cross", "both", cross_slide),
    ("masks", "decoder", masks_slide),
    ("residual", "", residual_slide),
    ("ffn", "", ffn_slide),
    ("output", "decoder", output_slide),
    ("greedy", "decoder", greedy_slide),
]


def shown_steps(c: Context) -> list[tuple[str, Callable[..., Slide]]]:
    """The steps this model has: those needing a stack it lacks are left out."""
    stack = c.run.config.stack
    has = {"": True, "encoder": stack != "decoder", "decoder": stack != "encoder",
           "both": stack == "encoder_decoder"}
    return [(name, slide) for name, needs, slide in STEPS if has[needs]]


def skipped_note(c: Context, run) -> str | None:
    """What the note under every slide says was left out (None: nothing was)."""
    left_out = len(STEPS) - len(shown_steps(c))
    if not left_out:
        return None
    model = run.pipe.name or "MiniLM"
    key = "lecture.skipped_decoder" if c.run.config.stack == "decoder" else "lecture.skipped"
    return ui.t(key, model=model, n=left_out)


def _move(delta: int) -> None:
    """Previous / Next; a student following a room who moves on their own leaves it (Rejoin is one click)."""
    classroom.leave_room("classroom.left_step")
    st.session_state[STEP] = st.session_state.get(STEP, 1) + delta
    st.session_state[MOVED] = True


def current_step(total: int, lang: str, room_step: int | None = None) -> int:
    """The step to show, 1 … total: a room's (``room_step``, whatever the URL says), else a ``?step=``
    this page did not write (a link, a bookmark), else the session's; a tampered one falls back with a
    message. The URL says the step.

    The browser sends the URL it has with every rerun, and under load that may not yet hold the step
    the last runs wrote (a key pressed while their replies were on their way): a step this session
    wrote within ``STALE`` seconds is such an old URL, not a link to follow, and neither is any URL in
    a run that Previous / Next (a click or a key) moved."""
    state = st.session_state
    raw = st.query_params.get("step")
    notice = None
    moved = state.pop(MOVED, False)
    written = state.setdefault(WRITTEN, {})
    now = time.monotonic()
    ours = raw is not None and now - written.get(raw, -math.inf) < STALE
    if room_step is not None:
        step = room_step
    elif raw is not None and raw != state.get(URL_SEEN) and not moved and not ours:
        step, notice = check_step(raw, total, lang)
    else:
        step = state.get(STEP, 1)
    step = min(max(int(step), 1), total)
    state[STEP] = step
    state[URL_SEEN] = str(step)
    written[state[URL_SEEN]] = now  # at most one entry per step
    if raw != state[URL_SEEN]:
        st.query_params["step"] = state[URL_SEEN]
    if notice:
        st.warning(notice, icon=":material/warning:")
    return step


def styled(slide: Slide) -> Slide:
    """The slide with its figure restyled for the projector and shaped to be drawn once: what every
    session showing this step gets (``ui.shared_view``)."""
    height = WIDE_HEIGHT if slide.wide else PRESENTER_HEIGHT
    return replace(slide, fig=draw_once(presenter_style(slide.fig, scale=slide.font_scale, height=height)))


def show_slide(slide: Slide, name: str, step: int, skipped_note: str | None) -> None:
    """The slide under its heading. Side by side: text, equation and notes left, the figure right.
    Wide (several panels): text left and equation right on one row, the figure under them at full
    width. ``skipped_note``: said under the text when steps were left out for this model."""
    if slide.wide:
        text_box, eq_box = st.columns([2, 1], gap="medium", vertical_alignment="center")
        figure_box = st.container()
    else:
        text_box, figure_box = st.columns([1.1, 2.2], gap="medium")
        eq_box = text_box
    with text_box, st.container(key="lecture_text"):
        st.markdown(slide.text)
        if skipped_note:
            st.caption(skipped_note)
    with eq_box:
        if slide.latex:
            st.latex(slide.latex)
        if slide.code is not None:
            ui.show_text(slide.code, slide.code_label)
        if not slide.wide:
            st.caption(ui.t("lecture.keys"))
    with figure_box:
        ui.show_figure(slide.fig, key=f"lecture_{name}", name=f"lecture-{step:02d}-{name}")
