"""The lecture's slides: the whole Transformer as a sequence of steps, one large figure per screen.

Steps: the whole model → tokens → embeddings → positional encoding → encoder self-attention →
decoder masked self-attention → cross-attention → masks → residual + LayerNorm → feed-forward →
output probabilities → greedy decoding. Each is one figure of the app's own figure functions (the
same numbers as the pages, on the same sentence and weights), restyled for a projector by
``figures/drawing/presenter.py``, with a big title, one or two sentences and the paper's equation.
Steps that need a stack the model lacks are left out (``shown_steps``), with a note saying how many.

A step is built once into a :class:`SlideView` (``slide_view``): plain data that any screen draws —
the lecturer's Streamlit page, or a follower's light page from its JSON (``view_json``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import plotly.graph_objects as go
import plotly.io as pio

import figures.positional as fp
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
from i18n import t

TOP_K = 10
MASK_MAX = 24  # the masks slide shows the first 24 decoder positions: a corner that is exact (causal)
WIDE_HEIGHT = 390  # a full-width figure: its text sits above it
PE_ROWS = 64  # sinusoidal table rows drawn: enough for the slow stripes to show
ROPE_POSITIONS = 8  # RoPE: the same vector turned at positions 0 … 7, as on the Positional page
ALIBI_LEN = 16  # ALiBi: the bias panels cover the sentence's first 16 positions at most
ABLATION_LAST = 12  # a head switched off, on a language model: its predictions at the last 12 tokens

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
    # a head switched off: its output is replaced before W_O (0, or its mean over reference sentences)
    "ablation": (
        r"\begin{aligned} \mathrm{head}_i &\leftarrow 0 \\ "
        r"\mathrm{MultiHead} &= [\mathrm{head}_1 \dots \mathrm{head}_h]\,W^O \end{aligned}"
    ),
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

    def t(self, key: str, /, **values: object) -> str:
        """The text for ``key`` in the slide's language."""
        return t(key, self.lang, **values)

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
    return {"code": shown, "code_label": c.t(f"answer.{run.answer_kind}")}


def overview_slide(c: Context) -> Slide:
    target_source = {"target": "given", "own": "greedy"}.get(c.run.decoder_reads, "sentence")
    sizes = DiagramSizes.of_model(c.run.config, len(c.run.src_tokens), len(c.run.tgt_tokens), target_source)
    stack = c.run.config.stack
    text = c.t("lecture.overview.text_decoder" if stack == "decoder"
                else "lecture.overview.text_encoder" if stack == "encoder" else "lecture.overview.text")
    return Slide(pipeline_diagram(sizes, lang=c.lang), text, font_scale=1.0, wide=True)


def tokens_slide(c: Context) -> Slide:
    ids = [int(i) for i in c.run.source.src_ids[0]]
    boxes = wordpiece_figure if c.run.pipe.weights == Weights.MINILM else token_boxes
    fig = boxes(c.run.src_tokens, ids=ids, lang=c.lang)
    text = c.t("lecture.tokens.text")
    # boxes sized for their text and ids at the figure's own font: scaled up, the ids ran into each other
    return Slide(fig, text, LATEX["tokens"], c.sentence, c.t("lecture.sentence"), font_scale=1.0)


def embeddings_slide(c: Context) -> Slide:
    lookup = embedding_arrays(c.run.source).lookup
    scaled = c.run.config.scale_embeddings
    return Slide(
        embedding_heatmap(lookup, c.run.src_tokens, lang=c.lang),
        c.t("lecture.embeddings.text", d_model=c.run.config.d_model),
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
        text = (c.t("lecture.positional.text_learned_folder", rows=c.run.config.max_len) if folder
                else c.t("lecture.positional.text_learned"))
        return Slide(table(pe, lang=c.lang), text, LATEX[f"positional_{equation}"])
    if positions == "rope":
        d_k = c.run.config.d_k
        pairs = fp.rope_pairs(d_k)
        if not pairs:  # d_k = 1: no pair of dimensions to turn, so nothing carries the position
            embedded = embedding_arrays(c.run.source).embedded
            return Slide(
                embedding_heatmap(embedded, c.run.src_tokens, lang=c.lang),
                c.t("lecture.positional.text_rope_none", d_k=d_k),
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
        return Slide(fig, c.t("lecture.positional.text_alibi"), LATEX["positional_alibi"], wide=True)
    rows = max(PE_ROWS, len(c.run.src_tokens))
    return Slide(
        fp.pe_heatmap(fp.pe_table(rows, c.run.config.d_model), lang=c.lang),
        c.t("lecture.positional.text"),
        LATEX["positional"],
    )


def rope_text(c: Context) -> str:
    """The RoPE slide's text: the paper's pairs (2i, 2i+1) and base 10000 as the panels draw them, or a
    decoder-only model's own (config.rope_theta, rope_pairing), which the panels do not draw."""
    if c.run.config.stack != "decoder":
        return c.t("lecture.positional.text_rope")
    cfg = c.run.config
    theta = cfg.rope_theta
    pairs = c.t(f"lecture.positional.pairs_{cfg.rope_pairing}")
    return c.t("lecture.positional.text_rope_one_stack", pairs=pairs,
                theta=str(int(theta)) if float(theta).is_integer() else f"{theta:g}")


def self_attention(c: Context, attn_kind: str) -> str:
    """The LATEX key of a self-attention slide: with the bias term B when the model's positions add one."""
    return f"{attn_kind}_alibi" if c.run.config.positions == "alibi" else attn_kind


def encoder_slide(c: Context) -> Slide:
    attn = c.run.attention("encoder", 0)
    src = c.run.src_tokens
    fig = heads_slide_figure(attn, src, src, c.lang)
    return Slide(
        fig, c.t("lecture.encoder.text", h=c.run.config.num_heads), LATEX[self_attention(c, "encoder")],
        **HEADS,
    )


def decoder_slide(c: Context) -> Slide:
    attn = c.run.attention("decoder", 0)
    tgt = c.run.tgt_tokens
    fig = heads_slide_figure(attn, tgt, tgt, c.lang)
    cfg = c.run.config
    text = c.t("lecture.decoder.text")
    if c.run.config.stack == "decoder":
        text = c.t("lecture.decoder.text_one_stack", h=cfg.num_heads)
        kv = cfg.num_kv_heads or cfg.num_heads
        if kv < cfg.num_heads:  # grouped-query attention (Qwen2, Llama): heads share keys and values
            groups = groups_text(cfg.num_heads, kv, c.lang)  # the model's own grouping, one by one
            key = "lecture.decoder.mqa" if kv == 1 else "lecture.decoder.gqa"
            text += " " + c.t(key, h=cfg.num_heads, kv=kv, groups=groups)
    return Slide(fig, text, LATEX[self_attention(c, "decoder")], **answer(c), **HEADS)


def cross_slide(c: Context) -> Slide:
    attn = c.run.attention("cross", len(c.run.trace.decoder) - 1)
    fig = heads_slide_figure(attn, c.run.tgt_tokens, c.run.src_tokens, c.lang)
    return Slide(fig, c.t("lecture.cross.text"), LATEX["cross"], **answer(c), **HEADS)


def masks_slide(c: Context) -> Slide:
    s = head_steps(c.run.attention("decoder", 0), 0)
    tgt = c.run.tgt_tokens
    # The top-left corner of a causal attention is exact: row t < n only has weights on keys ≤ t.
    n = min(len(tgt), MASK_MAX)
    corner = (s.scores[:n, :n], s.mask[:n, :n], s.weights[:n, :n])
    bias = None if s.bias is None else s.bias[:n, :n]  # ALiBi: the scores hold its bias, the panel says so
    # the app's 18 px labels (the Masks page uses 15 px in its narrow columns), then 1.15×
    fig = masking_figure(*corner, tgt[:n], tgt[:n], bias=bias, font_size=BASE_FONT_SIZE, lang=c.lang)
    text = c.t("lecture.masks.text_one_stack" if c.run.config.stack == "decoder" else "lecture.masks.text")
    if n < len(tgt):
        text += " " + c.t("lecture.masks.cut", n=n, total=len(tgt))
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
    text = c.t(
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
        c.t("lecture.token"),
        font_scale=1.15,
        wide=True,
    )


def ffn_slide(c: Context) -> Slide:
    activation = c.run.config.activation
    hidden = c.first_layer().ffn_hidden[0]
    fig = ffn_hidden_figure(hidden, c.run.src_tokens, activation=activation, lang=c.lang)
    cfg = c.run.config
    one_stack = cfg.stack == "decoder"
    name = c.t(f"lecture.ffn.activation.{activation}") if one_stack else activation.upper()
    text = c.t("lecture.ffn.text_one_stack" if one_stack else "lecture.ffn.text", d_model=cfg.d_model,
                d_ff=cfg.d_ff, activation=name)
    return Slide(fig, text, LATEX.get(f"ffn_{activation}"))


def output_slide(c: Context) -> Slide:
    if c.run.config.stack == "decoder":  # the last position: the token that would follow the whole sentence
        last = len(c.run.tgt_tokens) - 1
        probs = softmax_t(position_logits(c.run.trace, last), 1.0)
        fig = topk_figure(probs, c.run.pipe.tgt_labels, TOP_K, lang=c.lang)
        text = c.t("lecture.output.text_one_stack", k=TOP_K)
        return Slide(fig, text, output_equation(c, "output_one_stack"), **answer(c))
    probs = softmax_t(position_logits(c.run.trace, 0), 1.0)
    fig = topk_figure(probs, c.run.pipe.tgt_labels, TOP_K, lang=c.lang)
    return Slide(fig, c.t("lecture.output.text", k=TOP_K), output_equation(c, "output"), **answer(c))


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
    return Slide(fig, c.t("lecture.greedy.text_one_stack", n=len(written)), LATEX["greedy_one_stack"],
                 " ".join(written), c.t("lecture.output_one_stack"), **HEADS)


def greedy_slide(c: Context) -> Slide:
    if c.run.config.stack == "decoder":
        return greedy_one_stack(c)
    decoded = c.run.decoding  # the run's own, or made for this slide (random weights, a target given)
    labels = [c.run.pipe.tgt_labels[i] for i in decoded_ids(decoded)]  # [BOS] y1 … yn
    n = len(decoded.steps)
    # Row i of the last step is the position that chose token i + 1: labelled with what it wrote.
    fig = cross_attention_figure(decoded.steps[-1], c.run.src_tokens, labels[1 : n + 1], lang=c.lang)
    return Slide(
        fig, c.t("lecture.greedy.text"), LATEX["greedy"], " ".join(labels[1 : n + 1]), c.t("lecture.output")
    )


def ablation_slide(c: Context) -> Slide:
    """Switch a head off: the parts the lecturer switched off (else the ones that teach on this model:
    ``core.interventions.runs.default_parts``), the answer without them beside the intact one."""
    from core.interventions.runs import answer_probs, intact_and_ablated
    from figures.interventions import ablation_figure

    intact, off = intact_and_ablated(c.run.pipe)
    runs = [SentenceRun(p, c.sentence, c.run.target, c.run.max_tokens) if p is not c.run.pipe else c.run
            for p in (intact, off)]
    before, after = (answer_probs(r) for r in runs)
    parts = off.settings.ablate.replace(",", ", ")
    label = c.t("interventions.compare.ablated", parts=parts)
    if c.run.config.stack == "decoder":  # both read the sentence: its last tokens, each bar readable
        positions = c.run.tgt_tokens[-ABLATION_LAST:]
        before, after = before[-ABLATION_LAST:], after[-ABLATION_LAST:]
    else:  # each run reads its own output: positions by number
        positions = [str(i + 1) for i in range(max(len(before), len(after)))]
    x_title = c.t("interventions.axis.reads_token") if c.run.config.stack == "decoder" else None
    fig = ablation_figure(positions, before, after, off=label, x_title=x_title, lang=c.lang)
    changed = sum(a[0] != b[0] for a, b in zip(before, after, strict=False))
    text = c.t("lecture.ablation.text", parts=parts, n=changed, total=min(len(before), len(after)),
               mode=c.t(f"interventions.mode.{off.settings.ablate_mode}"))
    written = " ".join(token for token, _ in after)
    return Slide(fig, text, LATEX["ablation"], written, label, wide=True)


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
    ("ablation", "decoder", ablation_slide),
]


def shown_steps(c: Context) -> list[tuple[str, Callable[..., Slide]]]:
    """The steps this model has: those needing a stack it lacks are left out."""
    stack = c.run.config.stack
    has = {"": True, "encoder": stack != "decoder", "decoder": stack != "encoder",
           "both": stack == "encoder_decoder"}
    return [(name, slide) for name, needs, slide in STEPS if has[needs]]


def skipped_note(c: Context) -> str | None:
    """What the note under every slide says was left out (None: nothing was)."""
    left_out = len(STEPS) - len(shown_steps(c))
    if not left_out:
        return None
    model = c.run.pipe.name or "MiniLM"
    key = "lecture.skipped_decoder" if c.run.config.stack == "decoder" else "lecture.skipped"
    return c.t(key, model=model, n=left_out)


def styled(slide: Slide) -> Slide:
    """The slide with its figure restyled for the projector and shaped to be drawn once: what every
    session showing this step gets (``ui.shared_view``)."""
    height = WIDE_HEIGHT if slide.wide else PRESENTER_HEIGHT
    return replace(slide, fig=draw_once(presenter_style(slide.fig, scale=slide.font_scale, height=height)))


# -- one step as data: what every screen shows of it -----------------------------------------------


@dataclass(frozen=True)
class SlideView:
    """Step ``step`` of ``total`` as any screen shows it, built once per (run, step, language):
    ``heading`` is "N / total · title"; ``text`` is our own Markdown (never user text); ``latex`` the
    paper's equation; ``code`` user text (a sentence, tokens) shown verbatim under ``code_label``;
    ``note`` what was left out of this model's lecture; ``fig`` the projector's figure, drawn once;
    ``settings`` the URL settings it was built from (empty when the caller does not say)."""

    name: str
    step: int
    total: int
    title: str
    heading: str
    text: str
    fig: go.Figure
    latex: str | None = None
    code: str | None = None
    code_label: str | None = None
    note: str | None = None
    wide: bool = False
    settings: Mapping[str, str] = field(default_factory=dict)


def step_title(c: Context, name: str) -> str:
    """The step's title: RMSNorm where the model normalises with it (Llama, Qwen2)."""
    rms = name == "residual" and c.run.config.norm_kind == "rms"
    return c.t("lecture.residual.title_rms" if rms else f"lecture.{name}.title")


def slide_view(c: Context, step: int, settings: Mapping[str, str] | None = None) -> SlideView:
    """Step ``step`` (1 … the number of steps this model has) built and styled for the projector."""
    steps = shown_steps(c)
    name, make = steps[step - 1]
    slide = styled(make(c))
    title = step_title(c, name)
    return SlideView(
        name=name,
        step=step,
        total=len(steps),
        title=title,
        heading=c.t("lecture.heading", step=step, total=len(steps), title=title),
        text=slide.text,
        fig=slide.fig,
        latex=slide.latex,
        code=slide.code,
        code_label=slide.code_label,
        note=skipped_note(c),
        wide=slide.wide,
        settings=dict(settings or {}),
    )


def view_json(view: SlideView) -> str:
    """``view`` as one JSON object (the figure as plotly.js reads it): what a follower's page draws."""
    fields = {
        "name": view.name,
        "step": view.step,
        "total": view.total,
        "title": view.title,
        "heading": view.heading,
        "text": view.text,
        "latex": view.latex,
        "code": view.code,
        "code_label": view.code_label,
        "note": view.note,
        "wide": view.wide,
        "settings": dict(view.settings),
    }
    head = json.dumps(fields, ensure_ascii=False)
    return head[:-1] + ', "figure": ' + pio.to_json(view.fig, validate=False) + "}"
