"""The overview diagram: the Transformer's pipeline as boxes and arrows, with real tensor shapes.

A plotly figure of shapes and annotations (no graphviz: it needs no binary and no network, and
shares the projector font). Pure: sizes in, ``go.Figure`` out; texts from ``i18n`` (``lang``).

An encoder-only model (``stack="encoder"``) is drawn as its encoder row, its output vectors and a note
that there is no decoder; a decoder-only model (``stack="decoder"``) as one row, the sentence through
one causal stack to the next-token probabilities. Every label that says how positions enter follows
``positions``, a final LayerNorm (``final_norm``) is drawn where it is applied, and
``embedding_equation`` writes the same embedding as the page's equation.
How each kind of model is drawn: docs/decisions.md, figures/overview.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go

from figures.drawing.style import COLORS, apply_style, escape_label
from i18n import t

BOX_W, BOX_H = 18.8, 11.0
NORM_NAMES = {"layer": "LayerNorm", "rms": "RMSNorm"}  # by config.norm_kind
ACTIVATION_NAMES = {"relu": "ReLU", "gelu": "GELU", "gelu_tanh": "GELU (tanh)", "swiglu": "SwiGLU"}
COLUMNS = (10.0, 30.0, 50.0, 70.0, 90.0)
ROW_ENCODER, ROW_DECODER = 31.0, 9.0


def has_output_bias(config) -> bool:
    """Does the model's output layer add a bias (logits = h W + b)? The model builds it so: an untied
    matrix with ``generator_bias``; a tied one (W = Eᵀ) has none."""
    return config.stack != "encoder" and config.generator_bias and not config.tie_embeddings


def output_latex(bias: bool, h: str = "h_t", w: str = "W") -> str:
    """The logits the softmax reads, as this model computes them: ``h W`` or ``h W + b``."""
    return rf"{h}\, {w} + b" if bias else rf"{h}\, {w}"


@dataclass(frozen=True)
class DiagramSizes:
    """Every number drawn on the diagram. S, T: source and target lengths in tokens."""

    d_model: int
    num_heads: int
    num_layers: int
    d_ff: int
    S: int
    T: int
    src_vocab: int | None = None
    tgt_vocab: int | None = None
    target_source: str = "greedy"  # what the decoder reads: "given", "greedy", "sentence" (or free text)
    stack: str = "encoder_decoder"  # ModelConfig.stack: "encoder" (BERT) draws no target side, "decoder"
    # (GPT-2, Llama) one causal stack reading the sentence
    scale_embeddings: bool = True  # the lookup × √d_model (the paper); BERT does not scale
    positions: str = "sinusoidal"  # "learned": a trained position table; "rope", "alibi": in attention
    token_types: bool = False  # a token-type (segment) row is added (BERT)
    embed_norm: bool = False  # a LayerNorm on the embedding sum (BERT)
    final_norm: bool = False  # a LayerNorm after each stack (torch.nn.Transformer's; not the paper's)
    norm: str = "post"  # where the norm sits: after each sublayer ("post", the paper) or before ("pre")
    norm_kind: str = "layer"  # "layer" (LayerNorm) | "rms" (RMSNorm)
    activation: str = "relu"  # the FFN's: "relu" | "gelu" | "gelu_tanh" | "swiglu"
    num_kv_heads: int | None = None  # grouped-query attention: fewer key/value heads than query heads
    tie_embeddings: bool = False  # the output matrix is the embedding's transpose (GPT-2)
    output_bias: bool = True  # the output layer adds a bias b (the paper's Linear; not GPT-2, Llama)

    @property
    def d_k(self) -> int:
        return self.d_model // self.num_heads

    @classmethod
    def of_model(cls, config, S: int, T: int, target_source: str) -> DiagramSizes:
        """The numbers of a model (its ``core.model.config.ModelConfig``) reading S source and T target
        tokens."""
        return cls(
            d_model=config.d_model,
            num_heads=config.num_heads,
            num_layers=config.num_layers,
            d_ff=config.d_ff,
            S=S,
            T=T,
            src_vocab=config.src_vocab_size,
            tgt_vocab=config.tgt_vocab_size,
            target_source=target_source,
            stack=config.stack,
            scale_embeddings=config.scale_embeddings,
            positions=config.positions,
            token_types=bool(config.type_vocab_size),
            embed_norm=config.embed_norm,
            final_norm=config.final_norm,
            norm=config.norm,
            norm_kind=config.norm_kind,
            activation=config.activation,
            num_kv_heads=config.num_kv_heads,
            tie_embeddings=config.tie_embeddings,
            output_bias=has_output_bias(config),
        )

    @property
    def norm_name(self) -> str:
        return NORM_NAMES[self.norm_kind]

    @property
    def kv_heads(self) -> int:
        """Key/value heads: fewer than ``num_heads`` with grouped-query attention."""
        return self.num_kv_heads or self.num_heads


def shapes_text(s: DiagramSizes) -> dict[str, str]:
    """The shape written under each box, e.g. ``(1, 9, 64)`` for the embedded source."""
    v = s.tgt_vocab if s.tgt_vocab is not None else "V"
    return {
        "src_ids": f"(1, {s.S})",
        "src_embedded": f"(1, {s.S}, {s.d_model})",
        "memory": f"(1, {s.S}, {s.d_model})",
        "tgt_ids": f"(1, {s.T})",
        "tgt_embedded": f"(1, {s.T}, {s.d_model})",
        "decoder_output": f"(1, {s.T}, {s.d_model})",
        "probs": f"(1, {s.T}, {v})",
    }


def _box(fig: go.Figure, x: float, y: float, title: str, detail: str, shape: str, color: str) -> None:
    fig.add_shape(
        type="rect",
        x0=x - BOX_W / 2,
        x1=x + BOX_W / 2,
        y0=y - BOX_H / 2,
        y1=y + BOX_H / 2,
        line={"color": COLORS["edge"], "width": 2},
        fillcolor=color,
        layer="below",
    )
    text = f"<b>{title}</b>"
    if detail:
        text += f"<br><span style='font-size:15px'>{detail}</span>"
    fig.add_annotation(x=x, y=y + 1.2, text=text, showarrow=False, font={"size": 16})
    fig.add_annotation(
        x=x,
        y=y - BOX_H / 2 + 1.6,
        text=f"<b>{shape}</b>",
        showarrow=False,
        font={"size": 17, "color": "#1a3d7c"},
    )


def _arrow(fig: go.Figure, x0: float, y0: float, x1: float, y1: float, label: str = "") -> None:
    fig.add_annotation(
        x=x1,
        y=y1,
        ax=x0,
        ay=y0,
        xref="x",
        yref="y",
        axref="x",
        ayref="y",
        showarrow=True,
        arrowhead=3,
        arrowsize=1.4,
        arrowwidth=2,
        arrowcolor=COLORS["edge"],
        text="",
    )
    if label:
        fig.add_annotation(
            x=(x0 + x1) / 2 + 1.0,
            y=(y0 + y1) / 2,
            text=label,
            showarrow=False,
            xanchor="left",
            align="left",
            font={"size": 16},
        )


TARGET_SOURCES = ("given", "greedy", "sentence")


ADDED_POSITIONS = ("sinusoidal", "learned")  # a row added to the embedding; the others act in attention


def embed_title(s: DiagramSizes, lang: str = "en") -> str:
    """The embedding box's title: ``Embedding + PE``, ``Embedding + P[pos]``, or ``Embedding`` alone."""
    suffix = {"sinusoidal": "", "learned": ".learned"}.get(s.positions, ".only")
    return t(f"overview.diagram.embedding{suffix}", lang)


def embed_detail(s: DiagramSizes, lang: str = "en") -> str:
    """What the embedding box does: ``×√64 + sin/cos`` (paper), ``+ learned pos<br>+ type → LayerNorm``
    (BERT), or ``×√64<br>RoPE: in self-attn`` (RoPE, ALiBi: nothing added, the position acts there)."""
    first = [f"×√{s.d_model}"] if s.scale_embeddings else []
    if s.positions == "sinusoidal":
        first.append("+ sin/cos")
    elif s.positions == "learned":
        first.append("+ " + t("overview.diagram.learned_pos", lang))
    second = ["+ " + t("overview.diagram.token_type", lang)] if s.token_types else []
    if s.embed_norm:
        second.append("→ " + t("overview.diagram.layer_norm", lang))
    if s.positions not in ADDED_POSITIONS:  # nothing added: say where the position acts instead
        second.append(t(f"overview.diagram.in_attention.{s.positions}", lang))
    return "<br>".join(" ".join(line) for line in (first, second) if line)


def embedding_equation(s: DiagramSizes, symbol: str = "x") -> str:
    r"""The embedding as LaTeX, e.g. ``E[x]\,\sqrt{d_\text{model}} + PE`` (sinusoidal),
    ``\mathrm{LayerNorm}\big(E[x] + P[\text{pos}] + T[0]\big)`` (BERT) or ``E[x]\,\sqrt{d_\text{model}}``
    (RoPE, ALiBi: nothing is added)."""
    return embedding_sum(s.positions, scaled=s.scale_embeddings, token_types=s.token_types,
                         normed=s.embed_norm, symbol=symbol)


def embedding_sum(positions: str, *, scaled: bool = True, token_types: bool = False, normed: bool = False,
                  symbol: str = "x", pos: str = r"\text{pos}") -> str:
    r"""What the encoder reads, as LaTeX, from the model's options (``ModelConfig``'s names).

    >>> embedding_sum("rope"), embedding_sum("sinusoidal", pos="p")
    ('E[x]\\,\\sqrt{d_\\text{model}}', 'E[x]\\,\\sqrt{d_\\text{model}} + PE(p)')
    """
    terms = [f"E[{symbol}]" + (r"\,\sqrt{d_\text{model}}" if scaled else "")]
    if positions == "sinusoidal":
        terms.append("PE" if pos == r"\text{pos}" else f"PE({pos})")
    elif positions == "learned":
        terms.append(f"P[{pos}]")
    if token_types:
        terms.append("T[0]")
    sum_ = " + ".join(terms)
    return rf"\mathrm{{LayerNorm}}\big({sum_}\big)" if normed else sum_


def pipeline_diagram(s: DiagramSizes, *, lang: str = "en") -> go.Figure:
    """sentence → tokens → embeddings + PE → N× encoder → (memory) → N× decoder → probabilities."""
    shp = shapes_text(s)
    fig = go.Figure()
    if s.stack == "decoder":
        key = _one_stack(fig, s, shp, lang)
    else:
        _encoder_row(fig, s, shp, lang)
        paper = s.stack == "encoder_decoder"
        key = _decoder_row(fig, s, shp, lang) if paper else _encoder_output(fig, s, shp, lang)
    # right-aligned to the edge: long sizes (d_model = 384, h = 12) never run into the encoder box
    fig.add_annotation(x=99.5, y=ROW_ENCODER, text=key, showarrow=False, xanchor="right", align="left",
                       font={"size": 16})

    fig.update_xaxes(visible=False, range=[0, 100], fixedrange=True)
    fig.update_yaxes(visible=False, range=[2, 38], fixedrange=True)
    apply_style(fig, height=440)
    fig.update_layout(showlegend=False, dragmode=False)
    return fig


def _encoder_row(fig: go.Figure, s: DiagramSizes, shp: dict[str, str], lang: str) -> None:
    """The top row, in place: sentence → tokens → embedding → N× encoder, with arrows between."""
    c, e = COLUMNS, ROW_ENCODER
    src_v = t("overview.diagram.vocab", lang, n=s.src_vocab) if s.src_vocab is not None else "BPE"
    tokens = t("overview.diagram.n_tokens", lang, n=s.S)
    _box(fig, c[0], e, t("overview.diagram.sentence", lang), t("overview.diagram.encoder_input", lang),
         tokens, COLORS["text"])
    _box(fig, c[1], e, t("overview.diagram.tokens_ids", lang), escape_label(src_v), shp["src_ids"],
         COLORS["tokens"])
    _box(fig, c[2], e, embed_title(s, lang), embed_detail(s, lang), shp["src_embedded"], COLORS["embed"])
    _box(
        fig,
        c[3],
        e,
        t("overview.diagram.encoder", lang, n=s.num_layers),
        t("overview.diagram.encoder_detail", lang, h=s.num_heads, d_k=s.d_k, d_ff=s.d_ff),
        shp["memory"],
        COLORS["encoder"],
    )
    for a, b in zip(c[:3], c[1:4], strict=True):
        _arrow(fig, a + BOX_W / 2, e, b - BOX_W / 2, e)


def _decoder_row(fig: go.Figure, s: DiagramSizes, shp: dict[str, str], lang: str) -> str:
    """The bottom row, in place: target → tokens → embedding → N× decoder → probabilities, and the
    memory's arrow down from the encoder. Returns the key to the symbols."""
    c, e, d = COLUMNS, ROW_ENCODER, ROW_DECODER
    tgt_v = t("overview.diagram.vocab", lang, n=s.tgt_vocab) if s.tgt_vocab is not None else "BPE"
    source = s.target_source
    if source in TARGET_SOURCES:
        source = t(f"overview.diagram.target.{source}", lang)
    else:
        source = escape_label(source)
    _box(fig, c[0], d, t("overview.diagram.target", lang), source,
         t("overview.diagram.n_tokens", lang, n=s.T), COLORS["text"])
    _box(fig, c[1], d, t("overview.diagram.tokens_ids", lang), escape_label(tgt_v), shp["tgt_ids"],
         COLORS["tokens"])
    _box(fig, c[2], d, embed_title(s, lang), embed_detail(s, lang), shp["tgt_embedded"], COLORS["embed"])
    _box(
        fig,
        c[3],
        d,
        t("overview.diagram.decoder", lang, n=s.num_layers),
        t("overview.diagram.decoder_detail" + (".final_norm" if s.final_norm else ""), lang),
        shp["decoder_output"],
        COLORS["decoder"],
    )
    _box(fig, c[4], d, t("overview.diagram.output", lang), t("overview.diagram.output_detail", lang),
         shp["probs"], COLORS["output"])
    for a, b in zip(c[:3], c[1:4], strict=True):
        _arrow(fig, a + BOX_W / 2, d, b - BOX_W / 2, d)
    _arrow(fig, c[3] + BOX_W / 2, d, c[4] - BOX_W / 2, d)
    memory = t("overview.diagram.memory_norm" if s.final_norm else "overview.diagram.memory", lang,
               shape=shp["memory"])
    _arrow(fig, c[3], e - BOX_H / 2, c[3], d + BOX_H / 2, memory)
    return t("overview.diagram.key", lang, S=s.S, T=s.T, d_model=s.d_model, h=s.num_heads, N=s.num_layers,
             d_ff=s.d_ff)


def _encoder_output(fig: go.Figure, s: DiagramSizes, shp: dict[str, str], lang: str) -> str:
    """An encoder only (BERT), in place: its vectors are the output, and a note says there is no
    decoder. Returns the key to the symbols."""
    c, e, d = COLUMNS, ROW_ENCODER, ROW_DECODER
    _box(fig, c[3], d, t("overview.diagram.vectors", lang), t("overview.diagram.vectors_detail", lang),
         shp["memory"], COLORS["output"])
    _arrow(fig, c[3], e - BOX_H / 2, c[3], d + BOX_H / 2)
    fig.add_annotation(
        x=(c[0] + c[2]) / 2,
        y=d,
        text=t("overview.diagram.no_decoder", lang),
        showarrow=False,
        font={"size": 17, "color": "#8a1c1c"},
        bordercolor="#8a1c1c",
        borderwidth=1,
        borderpad=6,
    )
    return t("overview.diagram.key_encoder", lang, S=s.S, d_model=s.d_model, h=s.num_heads, N=s.num_layers,
             d_ff=s.d_ff)


def stack_detail(s: DiagramSizes, lang: str = "en") -> str:
    """A decoder-only layer, from its config: masked self-attention, the FFN's activation, and where
    which norm sits (``pre-RMSNorm``), with the final norm after the stack (``→ RMSNorm``)."""
    norm = f"{s.norm}-{s.norm_name}" + (f" → {s.norm_name}" if s.final_norm else "")
    ffn = t("overview.diagram.ffn", lang, act=ACTIVATION_NAMES[s.activation])
    return "<br>".join((t("overview.diagram.masked_self_attn", lang), ffn, norm))


def _one_stack(fig: go.Figure, s: DiagramSizes, shp: dict[str, str], lang: str) -> str:
    """A decoder-only model, in place: sentence → tokens → embedding → N× layer → probabilities on one
    row, and a note that there is no encoder and no cross-attention. Returns the key to the symbols."""
    c, e, d = COLUMNS, ROW_ENCODER, ROW_DECODER
    vocab = t("overview.diagram.vocab", lang, n=s.tgt_vocab) if s.tgt_vocab is not None else "BPE"
    _box(fig, c[0], d, t("overview.diagram.sentence", lang), t("overview.diagram.stack_input", lang),
         t("overview.diagram.n_tokens", lang, n=s.T), COLORS["text"])
    _box(fig, c[1], d, t("overview.diagram.tokens_ids", lang), escape_label(vocab), shp["tgt_ids"],
         COLORS["tokens"])
    _box(fig, c[2], d, embed_title(s, lang), embed_detail(s, lang), shp["tgt_embedded"], COLORS["embed"])
    _box(fig, c[3], d, t("overview.diagram.layer", lang, n=s.num_layers), stack_detail(s, lang),
         shp["decoder_output"], COLORS["decoder"])
    _box(fig, c[4], d, t("overview.diagram.output", lang), t("overview.diagram.output_detail", lang),
         shp["probs"], COLORS["output"])
    for a, b in zip(c[:4], c[1:], strict=True):
        _arrow(fig, a + BOX_W / 2, d, b - BOX_W / 2, d)
    fig.add_annotation(x=(c[0] + c[2]) / 2, y=e, text=t("overview.diagram.no_encoder", lang),
                       showarrow=False, font={"size": 17, "color": "#8a1c1c"}, bordercolor="#8a1c1c",
                       borderwidth=1, borderpad=6)
    heads = (t("overview.diagram.gqa", lang, h=s.num_heads, kv=s.kv_heads) if s.kv_heads < s.num_heads
             else f"h = {s.num_heads}")
    return t("overview.diagram.key_decoder", lang, T=s.T, d_model=s.d_model, heads=heads, N=s.num_layers,
             d_ff=s.d_ff)
