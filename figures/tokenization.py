"""Tokenization figures and helpers: BPE merge by merge, token ids, bytes behind a character, and
WordPiece (BERT's tokenizer, all-MiniLM-L6-v2) beside byte-level BPE.

Pure: tokens / a trained ``BPETokenizer`` (or ``WordPieceTokenizer``, core/tokenizers/) in,
``go.Figure`` or plain rows out; no Streamlit. Every text comes from ``i18n`` (``lang="en"|"zh"``).
Row helpers return stable column keys (tests and the page read them); :func:`column_labels` gives
the translated headers.

The token-box figure is one horizontal ``Bar`` trace (one bar per token: the boxes, their colours
and the hover) plus one ``Scatter`` text trace for the labels and one for the ids: three traces
whatever the number of tokens, so a slider step redraws three traces, not one per token. The tokens
flow left to right and wrap into rows like text; a box is as wide as its label (a Chinese character or
an emoji counts as two Latin letters).
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from core.tokenizers.bpe import END_OF_WORD, BPETokenizer, char_byte_table, token_bytes
from core.tokenizers.vocab import SPECIAL_TOKENS
from core.tokenizers.wordpiece import (
    MAX_WORD_CHARS,
    SPECIALS,
    UNK,
    WordPieceTokenizer,
    normalize,
    pre_tokenize,
)
from figures.drawing.style import FONT_FAMILY, apply_style, escape_label, token_label
from i18n import t

# The textbook example (Sennrich et al. 2016; Jurafsky & Martin, ch. 2): word counts low×5,
# lower×2, newest×6, widest×3. Classic BPE learns e+s, es+t, est+</w>, l+o, lo+w, ... from it.
TEXTBOOK_COUNTS = (("low", 5), ("lower", 2), ("newest", 6), ("widest", 3))
TEXTBOOK_CORPUS = " ".join(w for w, n in TEXTBOOK_COUNTS for _ in range(n))

MAX_BOXES = 160  # more boxes than this are not legible at 1280×720: the figure shows the first ones
UPLOAD_LIMIT = 1_000_000  # bytes: training on more would make the first view slow

# Pastel colours, one per token id (id mod 10), dark enough text on all of them.
PALETTE = (
    "#cfe0f5", "#fde2b8", "#cfe8d5", "#f7d4d4", "#e6dcf5",
    "#fff3b0", "#d4f0f0", "#f5dcc8", "#e0e0e0", "#dff5c8",
)
SPECIAL_COLOR = "#9e9e9e"
HIGHLIGHT_FILL = "#ff9f43"
HIGHLIGHT_LINE = "#c0392b"
EDGE = "#555555"


# ----------------------------------------------------------------------------------------------------
# Plain helpers


def display_width(label: str) -> float:
    """Width of a label in "Latin letter" units: wide (CJK) and emoji characters count 2."""
    width = 0.0
    for ch in label:
        if unicodedata.combining(ch) or ch in "\u200d\ufe0f":
            continue
        width += 2.0 if unicodedata.east_asian_width(ch) in ("W", "F") or ord(ch) >= 0x1F000 else 1.0
    return width


@dataclass(frozen=True)
class Upload:
    """The result of reading an uploaded file: ``text`` or an ``error`` to show (never both)."""

    text: str | None
    error: str | None = None


def read_upload(data: bytes | None, limit: int = UPLOAD_LIMIT, *, lang: str = "en") -> Upload:
    """Uploaded bytes -> text for training, or a clear message: too big, binary, not UTF-8, empty.

    >>> read_upload("低 low".encode()).text
    '低 low'
    >>> read_upload(b"\\xff\\xfe\\x00").error
    'This file is not UTF-8 text (it looks binary): upload a plain .txt file saved as UTF-8.'
    """
    if data is None:
        return Upload(None, t("tokenization.upload.none", lang))
    if len(data) > limit:
        size, most = f"{len(data) / 1e6:.1f}", f"{limit / 1e6:g}"
        return Upload(None, t("tokenization.upload.too_big", lang, size=size, limit=most))
    try:
        text = data.decode("utf-8-sig", errors="strict")  # utf-8-sig: a BOM is not part of the text
    except UnicodeDecodeError:
        key = "tokenization.upload.binary" if b"\x00" in data else "tokenization.upload.not_utf8"
        return Upload(None, t(key, lang))
    if "\x00" in text:
        return Upload(None, t("tokenization.upload.nul", lang))
    if not text.strip():
        return Upload(None, t("tokenization.upload.empty", lang))
    return Upload(text)


def film_text(text: str, byte_level: bool, max_symbols: int = MAX_BOXES) -> tuple[str, bool]:
    """The longest prefix of ``text`` whose un-merged symbols fit in ``max_symbols`` boxes.

    Byte-level: one symbol per UTF-8 byte; classic: one per character plus ``</w>`` per word.
    Returns (prefix, whether it was cut). The cut falls at a word boundary when there is one.

    >>> film_text("ab cd", byte_level=False, max_symbols=4)
    ('ab', True)
    """
    used = 0
    in_word = False
    last_space = None
    for i, ch in enumerate(text):
        if byte_level:
            cost = len(ch.encode("utf-8", "surrogatepass"))
        elif ch.isspace():
            cost = 0
        else:
            cost = 1 if in_word else 2  # the first character of a word also brings its </w>
        in_word = not ch.isspace()
        if used + cost > max_symbols:
            end = last_space if last_space else i
            return text[:end].rstrip(), True
        used += cost
        if ch.isspace():
            last_space = i
    return text, False


def changed_steps(segmentations: Sequence[list[str]]) -> list[int]:
    """Steps k >= 1 at which merge k changed the sentence (``segmentations`` shares unchanged lists)."""
    return [
        k for k in range(1, len(segmentations))
        if segmentations[k] is not segmentations[k - 1] and segmentations[k] != segmentations[k - 1]
    ]


def merged_token(tok: BPETokenizer, step: int) -> str | None:
    """The token created by merge ``step`` (1-based: step k applies ``tok.merges[k-1]``)."""
    if 1 <= step <= len(tok.merges):
        a, b = tok.merges[step - 1]
        return a + b
    return None


def shown(token: str) -> str:
    """A token's readable form as plain text with visible spaces / newlines, e.g. ``' is'``.

    The en space inside ``⟨e4 b8⟩`` stays a space (repr would write it as ``\\u2002``).
    """
    return repr(token).replace("\\u2002", "\u2002")


def display_text(tok: BPETokenizer, token: str) -> str:
    """How a token reads: byte-level tokens decoded, a piece of a character as its bytes ``⟨e4 b8⟩``.

    The same convention as the model's token labels on the other pages. Classic tokens (and
    special tokens) are shown as they are, ``</w>`` included.

    >>> t = BPETokenizer([], byte_level=True)
    >>> display_text(t, "Ġhi"), display_text(t, "ä¸").replace("\u2002", " "), display_text(t, "[BOS]")
    (' hi', '⟨e4 b8⟩', '[BOS]')
    """
    if not tok.byte_level or token in SPECIAL_TOKENS:
        return token
    text = tok.readable(token)
    if "\ufffd" in text:
        return "⟨" + "\u2002".join(f"{b:02x}" for b in token_bytes(token)) + "⟩"  # en space: not ␣
    return text


def merge_rows(tok: BPETokenizer) -> list[dict]:
    """The merges table: step, pair, new token, its id and readable form."""
    rows = []
    for rank, (a, b) in enumerate(tok.merges):
        new = a + b
        rows.append({
            "step": rank + 1,
            "left": a,
            "right": b,
            "new token": new,
            "id": tok.token_to_id.get(new),
            "reads as": shown(display_text(tok, new) if tok.byte_level else tok.readable(new)),
        })
    return rows


def byte_rows(text: str, limit: int = 40) -> list[dict]:
    """One row per distinct non-ASCII character of ``text``: code point, UTF-8 bytes, GPT-2 spelling.

    >>> byte_rows("a中")[0]["bytes"]
    [228, 184, 173]
    """
    rows = []
    seen = set()
    for ch, data, spelling in char_byte_table(text):
        if ord(ch) < 128 or ch in seen:
            continue
        seen.add(ch)
        rows.append({
            "character": ch,
            "code point": f"U+{ord(ch):04X}",
            "bytes": data,
            "UTF-8 bytes (hex)": " ".join(f"{b:02X}" for b in data),
            "GPT-2 spelling": spelling,
            "byte tokens": len(data),
        })
        if len(rows) >= limit:
            break
    return rows


def special_rows(tok: BPETokenizer) -> list[dict]:
    """The special tokens with their reserved ids (the same in every vocabulary of the project)."""
    return [{"token": s, "id": tok.token_to_id[s]} for s in SPECIAL_TOKENS]


# Column key -> i18n key of its header (tokenization.col.<slug>).
_COLUMNS = {
    "step": "step",
    "left": "left",
    "right": "right",
    "new token": "new_token",
    "id": "id",
    "reads as": "reads_as",
    "character": "character",
    "code point": "code_point",
    "UTF-8 bytes (hex)": "utf8",
    "GPT-2 spelling": "gpt2",
    "byte tokens": "byte_tokens",
    "token": "token",
    "tokenizer": "tokenizer",
    "tokens": "tokens",
    "unknown": "unknown",
    "vocabulary": "vocabulary",
    "word": "word",
    "pieces": "pieces",
    "ids": "ids",
    "try": "try",
    "candidate": "candidate",
    "in vocabulary": "in_vocab",
}


def column_labels(keys: Sequence[str], lang: str = "en") -> dict[str, str]:
    """Translated headers for the row helpers' column keys (a key without one keeps its name)."""
    return {k: t(f"tokenization.col.{_COLUMNS[k]}", lang) if k in _COLUMNS else k for k in keys}


# ----------------------------------------------------------------------------------------------------
# The token-box figure


def _layout(widths: Sequence[float], row_units: float, gap: float) -> list[tuple[float, int]]:
    """(x0, row) for boxes of these widths, flowing left to right and wrapping like text."""
    out = []
    x, row = 0.0, 0
    for w in widths:
        if x > 0 and x + w > row_units:
            x, row = 0.0, row + 1
        out.append((x, row))
        x += w + gap
    return out


BOX_CHARS = 16  # longer labels are shortened with … (the hover shows the whole token)


def box_label(text: str) -> str:
    """What is written in a box (escaped for plotly, whitespace visible, long ones shortened)."""
    return token_label(text, max_chars=BOX_CHARS)


def _box_width(text: str, token_id: int | None) -> float:
    visible = html.unescape(box_label(text))  # what the reader sees, e.g. "</w>" not "&lt;/w&gt;"
    id_width = 0.95 * len(str(token_id)) if token_id is not None else 0.0
    return max(display_width(visible), id_width, 1.0) + 1.4


BOX_GAP, ROW_HEIGHT = 0.5, 1.0  # between two boxes of a row; from one row to the next (x, y units)


def token_boxes(
    tokens: Sequence[str],
    *,
    ids: Sequence[int] | None = None,
    labels: Sequence[str] | None = None,
    readable: Sequence[str] | None = None,
    highlight: Sequence[bool] | None = None,
    title: str | None = None,
    row_units: float = 80.0,
    max_boxes: int = MAX_BOXES,
    specials: Sequence[str] = SPECIAL_TOKENS,
    lang: str = "en",
) -> go.Figure:
    """One coloured box per token, the token (or ``labels[i]``) inside and its id (if given) under it.

    ``highlight[i]`` draws box i in orange with a thick red edge (the merge just applied).
    Colours follow the id (``id mod 10``; the ``specials`` grey), or alternate without ids.
    Only the first ``max_boxes`` tokens are drawn; the title says so.
    """
    tokens = list(tokens)
    n_all = len(tokens)
    n = min(n_all, max_boxes)
    tokens = tokens[:n]
    ids = list(ids)[:n] if ids is not None else None
    readable = list(readable)[:n] if readable is not None else None
    hl = list(highlight)[:n] if highlight is not None else [False] * n
    texts = list(labels)[:n] if labels is not None else tokens
    widths = [_box_width(x, ids[i] if ids is not None else None) for i, x in enumerate(texts)]
    places = _layout(widths, row_units, BOX_GAP)
    rows = (places[-1][1] + 1) if places else 1
    xs = [x for x, _ in places]
    ys = [-r * ROW_HEIGHT for _, r in places]
    fig = go.Figure()
    fig.add_trace(_box_bars(tokens, ids, readable, hl, specials, widths, xs, ys, lang))
    centres = [x + w / 2 for x, w in zip(xs, widths, strict=True)]
    label_y = [y + (0.08 if ids is not None else 0.0) for y in ys]
    fig.add_trace(_box_text(centres, label_y, [box_label(x) for x in texts], 18, "#111111", "labels"))
    if ids is not None:
        fig.add_trace(_box_text(centres, [y - 0.42 for y in ys], [str(i) for i in ids], 16, "#1a3d7c", "ids"))
    fig.update_xaxes(visible=False, range=[-0.3, row_units + 0.3], fixedrange=True)
    fig.update_yaxes(visible=False, range=[-(rows - 1) * ROW_HEIGHT - 0.7, 0.55], fixedrange=True)
    if n < n_all:
        title = (title or "") + t("tokenization.fig.first_n", lang, n=n, total=n_all)
    per_row = 62 if ids is not None else 50
    apply_style(fig, height=rows * per_row + (70 if title else 30), title=title)
    fig.update_layout(barmode="overlay", bargap=0, dragmode=False, showlegend=False)
    return fig


def _box_bars(
    tokens: list[str],
    ids: list[int] | None,
    readable: list[str] | None,
    hl: list[bool],
    specials: Sequence[str],
    widths: list[float],
    xs: list[float],
    ys: list[float],
    lang: str,
) -> go.Bar:
    """The boxes: horizontal bars ``widths`` long from ``xs``, one per token, with its hover."""
    colors, line_colors, line_widths = _box_colors(tokens, ids, hl, specials)
    return go.Bar(
        orientation="h",
        y=[y + (0.08 if ids is not None else 0.0) for y in ys],
        x=widths,
        base=xs,
        width=0.56 if ids is not None else 0.7,  # lower with an id written under it
        marker={"color": colors, "line": {"color": line_colors, "width": line_widths}},
        customdata=_box_hovers(tokens, ids, readable, lang),
        hovertemplate="%{customdata}<extra></extra>",
        name="tokens",
        showlegend=False,
    )


def _box_colors(
    tokens: list[str], ids: list[int] | None, hl: list[bool], specials: Sequence[str]
) -> tuple[list[str], list[str], list[int]]:
    """(fill, edge colour, edge width) of each box: highlighted, special, by id, or alternating."""
    special = set(specials)
    colors, line_colors, line_widths = [], [], []
    for i, tok in enumerate(tokens):
        if hl[i]:
            colors.append(HIGHLIGHT_FILL)
        elif tok in special:
            colors.append(SPECIAL_COLOR)
        elif ids is not None:
            colors.append(PALETTE[ids[i] % len(PALETTE)])
        else:
            colors.append(PALETTE[i % 2])
        line_colors.append(HIGHLIGHT_LINE if hl[i] else EDGE)
        line_widths.append(4 if hl[i] else 1)
    return colors, line_colors, line_widths


def _box_hovers(tokens: list[str], ids: list[int] | None, readable: list[str] | None, lang: str) -> list[str]:
    """Each box's hover: the whole token (a box may shorten it), how it reads, its id."""
    hover = []
    for i, tok in enumerate(tokens):
        parts = [escape_label(t("tokenization.fig.hover.token", lang, i=i, token=tok))]
        if readable is not None:
            parts.append(escape_label(t("tokenization.fig.hover.reads", lang, text=repr(readable[i]))))
        if ids is not None:
            parts.append(t("tokenization.fig.hover.id", lang, id=ids[i]))
        hover.append("<br>".join(parts))
    return hover


def _box_text(
    x: list[float], y: list[float], text: list[str], size: int, color: str, name: str
) -> go.Scatter:
    """Text written at (x, y) over the boxes (the labels, or the ids under them); no hover of its own."""
    return go.Scatter(
        x=x,
        y=y,
        mode="text",
        text=text,
        textfont={"family": FONT_FAMILY, "size": size, "color": color},
        hoverinfo="skip",
        name=name,
        showlegend=False,
    )


# ----------------------------------------------------------------------------------------------------
# Figures built from a tokenizer


def box_texts(tok: BPETokenizer, tokens: Sequence[str], mode: str = "text") -> list[str]:
    """Box labels: ``"text"`` how the tokens read (:func:`display_text`), ``"spelling"`` the tokens."""
    if mode == "spelling":
        return list(tokens)
    return [display_text(tok, x) for x in tokens]


def merge_step_figure(
    tok: BPETokenizer, segmentations: Sequence[list[str]], step: int, row_units: float = 80.0,
    mode: str = "text", *, lang: str = "en",
) -> go.Figure:
    """The sentence after ``step`` merges; the token the step's merge created is highlighted.

    A box is highlighted where the segmentation changed at this step, i.e. where merge ``step``
    glued two boxes of the previous step into one. ``mode``: see :func:`box_texts`.
    """
    step = max(0, min(step, len(segmentations) - 1))
    tokens = segmentations[step]
    new = merged_token(tok, step)
    changed = step > 0 and tokens is not segmentations[step - 1]
    highlight = [changed and x == new for x in tokens]
    ids = [tok.token_to_id.get(x, SPECIAL_TOKENS.index("[UNK]")) for x in tokens]
    if step == 0:
        start = (
            t("tokenization.fig.step0.bytes", lang)
            if tok.byte_level
            else t("tokenization.fig.step0.chars", lang, eow=END_OF_WORD)
        )
        title = t("tokenization.fig.step0", lang, total=len(tok.merges), start=start, n=len(tokens))
    else:
        a, b = tok.merges[step - 1]
        what = "" if changed else t("tokenization.fig.not_here", lang)
        if mode == "text":  # the title spells the merge as the boxes do (⟨e5 b9⟩, not GPT-2's "å¹")
            a, b, new = (display_text(tok, x) for x in (a, b, new))
            reads = ""
        else:
            reads = f" “{display_text(tok, new)}”" if tok.byte_level else ""
        title = t(
            "tokenization.fig.step", lang, step=step, total=len(tok.merges), a=a, b=b, new=new,
            reads=reads, what=what, n=len(tokens),
        )
    return token_boxes(
        tokens,
        ids=ids,
        labels=box_texts(tok, tokens, mode),
        readable=[tok.readable(x) for x in tokens],
        highlight=highlight,
        title=title,
        row_units=row_units,
        lang=lang,
    )


def encoded_figure(
    tok: BPETokenizer, text: str, *, title: str | None = None, row_units: float = 80.0,
    allow_special: bool = True, mode: str = "text", lang: str = "en",
) -> go.Figure:
    """``text`` tokenized with all merges, each box with its id (``tok.encode``) underneath."""
    tokens = tok.tokenize(text, allow_special=allow_special)
    ids = tok.encode(text, allow_special=allow_special)
    return token_boxes(
        tokens, ids=ids, labels=box_texts(tok, tokens, mode), readable=[tok.readable(x) for x in tokens],
        title=title, row_units=row_units, lang=lang,
    )


def token_count_figure(segmentations: Sequence[list[str]], step: int, *, lang: str = "en") -> go.Figure:
    """How many tokens the sentence has after 0, 1, ... merges; a marker at the current step."""
    counts = [len(s) for s in segmentations]
    step = max(0, min(step, len(counts) - 1))
    fig = go.Figure(
        go.Scatter(
            x=list(range(len(counts))),
            y=counts,
            mode="lines",
            line={"shape": "hv", "color": "#2b6cb0", "width": 3},
            hovertemplate=t("tokenization.fig.count.hover", lang, x="%{x}", y="%{y}") + "<extra></extra>",
            name="tokens",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[step], y=[counts[step]], mode="markers",
            marker={"size": 14, "color": HIGHLIGHT_FILL, "line": {"color": HIGHLIGHT_LINE, "width": 2}},
            hovertemplate=t("tokenization.fig.count.now", lang, x="%{x}", y="%{y}") + "<extra></extra>",
            name="now",
        )
    )
    grid = {"showgrid": True, "gridcolor": "#e5e5e5", "zeroline": False, "rangemode": "tozero"}
    fig.update_xaxes(title=t("tokenization.fig.count.x", lang), **grid)
    fig.update_yaxes(title=t("tokenization.fig.count.y", lang), **grid)
    apply_style(fig, height=260)
    fig.update_layout(showlegend=False, margin={"l": 70, "r": 20, "t": 20, "b": 60})
    return fig


# ----------------------------------------------------------------------------------------------------
# WordPiece (BERT, all-MiniLM-L6-v2) beside byte-level BPE

_SPECIAL_SPLIT = re.compile("(" + "|".join(re.escape(x) for x in SPECIALS) + ")")


def wordpiece_figure(
    tokens: Sequence[str], ids: Sequence[int], *, title: str | None = None, row_units: float = 80.0,
    lang: str = "en",
) -> go.Figure:
    """WordPiece tokens as boxes, as the vocabulary spells them (``##ing``), ids underneath.

    BERT's special tokens ([CLS], [SEP], [UNK] ...) are grey, like the project's own.
    """
    return token_boxes(tokens, ids=ids, title=title, row_units=row_units, specials=SPECIALS, lang=lang)


def wordpiece_word_rows(tok: WordPieceTokenizer, text: str, limit: int = 200) -> list[dict]:
    """One row per word after BERT's normalisation: the word, its pieces and their ids.

    Shows the two steps of WordPiece: the text is lowercased, accents go, every CJK character and
    every punctuation mark becomes a word of its own; then each word is cut into pieces.

    >>> tok = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able"])
    >>> [(r["word"], r["pieces"], r["ids"]) for r in wordpiece_word_rows(tok, "Unaffable xyz")]
    [('unaffable', 'un ##aff ##able', '5 6 7'), ('xyz', '[UNK]', '1')]
    """
    rows = []
    for chunk in _SPECIAL_SPLIT.split(text):
        # a special token typed in the text stays one token, as in WordPieceTokenizer.tokenize
        words = [chunk] if chunk in SPECIALS else pre_tokenize(normalize(chunk))
        for word in words:
            pieces = [word] if word in SPECIALS else tok.word_pieces(word)
            ids = [tok.stoi[p] for p in pieces]
            rows.append({"word": word, "pieces": " ".join(pieces), "ids": " ".join(map(str, ids))})
            if len(rows) >= limit:
                return rows
    return rows


def greedy_steps(tok: WordPieceTokenizer, word: str, limit: int = 120) -> list[dict]:
    """Greedy longest-match-first, every attempt: from the current start, the longest candidate first.

    ``in vocabulary`` is "✓" for the piece taken, "✗" for a candidate that is not in the vocabulary.
    A start where nothing matches makes the whole word [UNK] (the last row says so).

    >>> tok = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able"])
    >>> [(r["candidate"], r["in vocabulary"]) for r in greedy_steps(tok, "unaff")]
    [('unaff', '✗'), ('unaf', '✗'), ('una', '✗'), ('un', '✓'), ('##aff', '✓')]
    """
    rows: list[dict] = []
    if len(word) > MAX_WORD_CHARS:
        return [{"try": 1, "candidate": word[:20] + "…", "in vocabulary": "✗ → " + UNK}]
    start = 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            found = piece in tok.stoi
            rows.append({"try": len(rows) + 1, "candidate": piece, "in vocabulary": "✓" if found else "✗"})
            if found:
                start = end
                break
            if len(rows) >= limit:
                return rows
        else:  # not even one character matched here: the whole word is unknown
            rows[-1]["in vocabulary"] = "✗ → " + UNK
            return rows
    return rows


def compare_rows(
    bpe_tokens: Sequence[str], wordpiece_tokens: Sequence[str], bpe_vocab: int, wordpiece_vocab: int,
    lang: str = "en",
) -> list[dict]:
    """Byte-level BPE and WordPiece on the same sentence: tokens, unknown tokens, vocabulary size.

    ``wordpiece_tokens`` include [CLS] and [SEP], which are counted (the model reads them).
    """
    return [
        {
            "tokenizer": t("tokenization.wp.name.bpe", lang),
            "tokens": len(bpe_tokens),
            "unknown": sum(1 for x in bpe_tokens if x == "[UNK]"),
            "vocabulary": bpe_vocab,
        },
        {
            "tokenizer": t("tokenization.wp.name.wordpiece", lang),
            "tokens": len(wordpiece_tokens),
            "unknown": sum(1 for x in wordpiece_tokens if x == UNK),
            "vocabulary": wordpiece_vocab,
        },
    ]
