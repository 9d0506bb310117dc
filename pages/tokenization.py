"""Tokenization: BPE learned merge by merge (classic ``</w>`` and GPT-2 byte-level), ids, special tokens,
and WordPiece (BERT's tokenizer, read by the pretrained all-MiniLM-L6-v2) beside byte-level BPE.

Play button: ``st.fragment(run_every=…)`` steps the ``tok_step`` slider on the server, jumping from
one merge that changes the sentence to the next (most merges never touch a short sentence). We
chose it over a plotly animation with frames because the slider, the URL and the title stay in step
with what is drawn, and a frame per merge for a long sentence would ship megabytes of JSON; one step
is one small figure (3 traces) plus the token-count curve.

URL: ``tok_merges`` is a bound widget (``bind="query-params"``). ``tok_source``, ``tok_kind`` and
``tok_labels`` are synced by hand with language-independent ids (``?tok_source=textbook``): a bound
widget puts its *displayed* (translated) label in the URL, so a link would change with the language
(the English labels of older links are still understood). ``tok_step`` is synced by hand too (see
the comment where it is read). A bad value in the URL gives a warning naming it, on the page's
first run in the session.

WordPiece: with weights=minilm the model reads WordPiece, so that section comes first; with other
weights it is a comparison in an expander, when the optional package is installed (its vocab.txt
is read once, cached). "Ours" is the byte-level BPE of the random-weights model (1,000 merges).

Training is cached (``ui.budget.cached``: one shared tokenizer, in the server's cache budget) keyed by
(sha256 of the text, merges, kind). Measured here: en_zh.txt (13 KB) at 300 merges trains in ~0.03 s,
all shipped files (80 KB) in ~0.1 s. An upload or a paste is capped at 1 MB, but the bytes do not bound
the work: it grows with merges × the length of each word, and 999 KB of Chinese without spaces (one
word) took ~20 s per kind at 1,000 merges. So the work is estimated before training
(``core.bpe.plan_training``, ``WORK_BUDGET``) and, past the budget, long words are cut and if need be
only the beginning of the text is learned from; the page says so before training starts. One large
training runs at a time in the server (``big_training_slot``): each holds the GIL for its duration.
"""

import hashlib
import math
import threading
from pathlib import Path

import streamlit as st

import ui
import ui.budget
from core.bpe import BPETokenizer, TrainingWork, plan_training
from core.wordpiece import SPECIALS
from figures.tokenization import (
    MAX_BOXES,
    TEXTBOOK_CORPUS,
    TEXTBOOK_COUNTS,
    UPLOAD_LIMIT,
    box_texts,
    byte_rows,
    changed_steps,
    column_labels,
    compare_rows,
    encoded_figure,
    film_text,
    greedy_steps,
    merge_rows,
    merge_step_figure,
    read_upload,
    special_rows,
    token_boxes,
    token_count_figure,
    wordpiece_figure,
    wordpiece_word_rows,
)
from i18n import t
from ui.settings import literal
from ui.tables import show_table

ROOT = Path(__file__).resolve().parents[1]
CORPUS_DIR = ROOT / "assets" / "corpus"
SOURCES = ("corpus", "corpus_all", "textbook", "paste", "upload")
KINDS = ("byte", "classic")
LABEL_MODES = ("text", "spelling")
# Links made when these widgets were bound carry the English label: still understood.
ALIASES = {
    "tok_source": {
        "en_zh.txt (shipped)": "corpus",
        "all shipped corpus files": "corpus_all",
        "textbook example": "textbook",
        "pasted text": "paste",
        "uploaded .txt": "upload",
    },
    "tok_kind": {"byte-level": "byte"},
    "tok_labels": {},
}
CHOICES = {"tok_source": SOURCES, "tok_kind": KINDS, "tok_labels": LABEL_MODES}
MAX_MERGES = 1000  # 1000 merges on en_zh.txt = the vocabulary of the random-weights model
DEFAULT_MERGES = 300
PLAY_SECONDS = 0.8
PLAYING = "_tok_playing"  # session flags (not widget keys)
TOGGLED = "_tok_toggled"
URL_CHECKED = "_tok_url_checked"  # the page parameters whose URL value was checked this session
MAX_IDS_SHOWN = 400
# Units of core.bpe.training_work one training may cost: at most ~1.5 s of one core here (2-11 ns a
# unit, measured on 1 MB texts and Chinese runs without spaces; benchmarks/bpe_upload.py). The page
# trains both kinds: an upload costs a page view ~2-3 s (999 KB of Chinese without spaces: 29 s before).
WORK_BUDGET = 150_000_000
BIG_TEXT = 100_000  # characters: a training on more waits for big_training_slot (the shipped files: 80 KB)
# The browser refuses a larger file before sending it (Streamlit's red note under the box); the server's
# server.maxUploadSize, if lower, is the limit instead.
UPLOAD_MB = min(math.ceil(UPLOAD_LIMIT / 1e6), int(st.get_option("server.maxUploadSize")))


@st.cache_data(show_spinner=False)
def corpus_text(everything: bool = False) -> str:
    """en_zh.txt (English paragraphs and their Chinese versions), or every shipped corpus file."""
    paths = sorted(CORPUS_DIR.glob("*.txt")) if everything else [CORPUS_DIR / "en_zh.txt"]
    return "\n".join(path.read_text(encoding="utf-8") for path in paths)


@ui.budget.cached(max_entries=16)  # one shared tokenizer, in the server's cache budget (ui.budget)
def train(text_hash: str, merges: int, kind: str, chars: int, max_word: int | None,
          _text: str) -> BPETokenizer:
    """Cached by (text hash, merges, kind, the plan's limits); ``_text`` is not hashed again (leading
    underscore). A large text waits for the server's one big training at a time."""
    def run() -> BPETokenizer:
        return BPETokenizer.train(_text[:chars], merges, byte_level=(kind == "byte"), max_word=max_word)

    if chars <= BIG_TEXT:
        return run()
    with big_training_slot():
        return run()


@st.cache_resource(show_spinner=False)
def big_training_slot() -> threading.Lock:
    """One per server process: a training holds the GIL for its duration, so two at once would halve
    what every other session's page gets."""
    return threading.Lock()


@ui.budget.cached(max_entries=32)
def planned(text_hash: str, merges: int, kind: str, _text: str) -> TrainingWork:
    """core.bpe.plan_training, once per text, merges and kind (~0.1-0.5 s for 1 MB)."""
    return plan_training(_text, merges, kind == "byte", WORK_BUDGET)


def digest_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def trained(text: str, merges: int, kind: str, work: TrainingWork | None = None) -> BPETokenizer:
    """The tokenizer of ``kind`` trained on ``text`` as ``work`` (a plan) says; by default the whole text
    (the page's small texts: the textbook example)."""
    digest = digest_of(text)
    chars, max_word = (len(text), None) if work is None else (work.chars, work.max_word)
    with st.spinner(ui.t("tokenization.training")):
        return train(digest, merges, kind, chars, max_word, text)


def limits_text(text: str, works: dict[str, TrainingWork]) -> str | None:
    """What the plans changed, in a sentence and a line per kind (None: nothing)."""
    lines = []
    for kind, work in works.items():
        name = ui.t(f"tokenization.kind_name.{kind}")
        unit = ui.t(f"tokenization.limit.unit.{kind}")
        edge = 0 if kind == "byte" else 1  # a classic word's symbols: its characters and </w>
        if work.max_word is not None:
            lines.append(ui.t("tokenization.limit.cut", kind=name, unit=unit, n=f"{work.max_word - edge:,}",
                              longest=f"{work.longest - edge:,}"))
        if work.chars < len(text):
            lines.append(ui.t("tokenization.limit.prefix", kind=name, used=f"{work.chars:,}",
                              total=f"{len(text):,}"))
    return ui.t("tokenization.limit") + "\n\n" + "\n".join(lines) if lines else None


@st.cache_resource(show_spinner=False)
def wordpiece_tokenizer():
    """all-MiniLM-L6-v2's WordPiece (its vocab.txt, 30,522 tokens), or None without the package."""
    from core.pretrained import minilm_directory
    from core.wordpiece import WordPieceTokenizer

    try:
        return WordPieceTokenizer.from_file(minilm_directory() / "vocab.txt")
    except (ImportError, OSError, ValueError):
        return None


@st.cache_resource(show_spinner=False)
def model_bpe() -> BPETokenizer:
    """Our byte-level BPE as the random-weights model reads it (1,000 merges on the shipped corpus)."""
    from core.pipeline import corpus_tokenizer

    return corpus_tokenizer()


def check_param(key: str, ok) -> None:
    """A page parameter in the URL that the widget will ignore: say so instead of dropping it silently.

    Only on the page's first run in a session (a URL typed or shared); afterwards the URL is
    written by the widgets themselves, and a step beyond a shrunken slider is just clamped.
    """
    if key in st.session_state[URL_CHECKED]:
        return
    st.session_state[URL_CHECKED].add(key)
    raw = st.query_params.get(key)
    if raw is not None and not ok(raw):
        st.warning(ui.t("tokenization.url.ignored", key=key, raw=literal(raw)))


def url_choice(key: str) -> None:
    """Before a hand-synced widget is drawn: on the page's first run, its value from the URL."""
    state = st.session_state
    if key in state[URL_CHECKED]:
        return
    state[URL_CHECKED].add(key)
    raw = st.query_params.get(key)
    if raw is None:
        return
    value = ALIASES[key].get(raw, raw)
    if value in CHOICES[key]:
        state[key] = value
    else:
        st.warning(ui.t("tokenization.url.ignored", key=key, raw=literal(raw)))


def write_url(key: str, value: str) -> None:
    """After the widget: its id in the URL; the default (first choice) is left out."""
    if value == CHOICES[key][0]:
        st.query_params.pop(key, None)
    elif st.query_params.get(key) != value:
        st.query_params[key] = value


def is_int_in(lo: int, hi: int):
    def ok(raw: str) -> bool:
        try:
            return lo <= int(float(raw)) <= hi and float(raw) == int(float(raw))
        except (ValueError, OverflowError):
            return False

    return ok


def dataframe(rows: list[dict], **kwargs) -> None:
    """Rows of a figures.tokenization helper, with translated column headers; formula-safe text cells
    (``ui.tables.show_table``: a token such as ``=HYPERLINK(…)`` in the table's own CSV download)."""
    keys = list(rows[0]) if rows else []
    labels = column_labels(keys, lang)
    config = {k: st.column_config.Column(labels[k]) for k in keys}
    show_table(rows, hide_index=True, width="stretch", column_config=config, **kwargs)


def show_ids(ids: list[int], label: str) -> None:
    more = " …" if len(ids) > MAX_IDS_SHOWN else ""
    ui.show_text(" ".join(map(str, ids[:MAX_IDS_SHOWN])) + more, label)


def wordpiece_section(sentence: str) -> None:
    """WordPiece (all-MiniLM-L6-v2) beside our byte-level BPE, on the sidebar's sentence."""
    wp = wordpiece_tokenizer()
    if wp is None:
        st.info(ui.t("minilm.missing"))
        return
    st.markdown(ui.t("tokenization.wp.intro"))
    if not sentence.strip():
        st.info(ui.t("tokenization.wp.empty"))
        return
    bpe = model_bpe()
    wp_ids = wp.encode(sentence)
    wp_tokens = wp.convert_ids_to_tokens(wp_ids)
    bpe_tokens = bpe.tokenize(sentence)
    bpe_ids = bpe.encode(sentence)
    dataframe(compare_rows(bpe_tokens, wp_tokens, len(bpe.vocab), len(wp), lang=lang))
    left, right = st.columns(2)
    with left:
        st.markdown(ui.t("tokenization.wp.left", n=len(wp_tokens)))
        ui.show_themed_figure(
            wordpiece_figure(wp_tokens, wp_ids, row_units=38, lang=lang),
            key="tok_wp_boxes",
            name="wordpiece-tokens",
        )
        ui.show_tokens(wp_tokens, ui.t("tokenization.wp.tokens", n=len(wp_tokens)))
        show_ids(wp_ids, ui.t("tokenization.wp.ids", n=len(wp_ids)))
    with right:
        st.markdown(ui.t("tokenization.wp.right", n=len(bpe_tokens), merges=len(bpe.merges)))
        labels = box_texts(bpe, bpe_tokens, "text")
        ui.show_themed_figure(
            token_boxes(bpe_tokens, ids=bpe_ids, labels=labels, row_units=38, lang=lang),
            key="tok_wp_bpe",
            name="bpe-tokens",
        )
        ui.show_tokens(labels, ui.t("tokenization.wp.tokens", n=len(bpe_tokens)))
        show_ids(bpe_ids, ui.t("tokenization.wp.ids", n=len(bpe_ids)))
    st.markdown(ui.t("tokenization.wp.how"))
    st.latex(r"j^{\ast} = \max\{\, j > i \;:\; w_{i:j} \in V \,\}")
    st.markdown(ui.t("tokenization.wp.input"))
    st.latex(r"x = \big(\,[\mathrm{CLS}],\ t_1,\ t_2,\ \dots,\ t_n,\ [\mathrm{SEP}]\,\big)")
    st.markdown(ui.t("tokenization.wp.differs"))

    st.markdown(ui.t("tokenization.wp.words.title"))
    rows = wordpiece_word_rows(wp, sentence)
    dataframe(rows, height=min(38 + 35 * len(rows), 280))
    words = list(dict.fromkeys(r["word"] for r in rows if r["word"] not in SPECIALS))
    if words:
        state = st.session_state
        if state.get("tok_wp_word") not in words:  # a new sentence: the word cut into the most pieces
            state["tok_wp_word"] = max(words, key=lambda w: (len(wp.word_pieces(w)), len(w)))
        word = st.selectbox(ui.t("tokenization.wp.word"), words, key="tok_wp_word")
        steps = greedy_steps(wp, word)
        pieces = literal(" ".join(wp.word_pieces(word)))
        st.caption(ui.t("tokenization.wp.greedy", word=literal(word), pieces=pieces))
        dataframe(steps, height=min(38 + 35 * len(steps), 280))


settings = ui.page_setup("nav.tokenization.title")
lang = settings.lang
st.session_state.setdefault(URL_CHECKED, set())
minilm = settings.weights == "minilm"
st.caption(ui.t("tokenization.caption.minilm" if minilm else "tokenization.caption"))

if minilm:
    st.subheader(ui.t("tokenization.wp.title.model"))
    wordpiece_section(settings.sentence)
    st.divider()

# ----------------------------------------------------------------------------------------------------
# Training text and settings

for key in CHOICES:
    url_choice(key)
check_param("tok_merges", is_int_in(0, MAX_MERGES))

c1, c2, c3, c4 = st.columns([5, 4, 3, 5])
# The language is bound into format_func: it is called again outside the run (AppTest does).
with c1:
    source = st.selectbox(
        ui.t("tokenization.source"), SOURCES, key="tok_source",
        format_func=lambda s, lang=lang: t(f"tokenization.source.{s}", lang),
        help=ui.t("tokenization.source.help"),
    )
with c2:
    kind = st.radio(
        ui.t("tokenization.kind"), KINDS, key="tok_kind",
        format_func=lambda k, lang=lang: t(f"tokenization.kind.{k}", lang),
        help=ui.t("tokenization.kind.help"),
    )
with c3:
    mode = st.radio(
        ui.t("tokenization.labels"), LABEL_MODES, key="tok_labels",
        format_func=lambda m, lang=lang: t(f"tokenization.labels.{m}", lang),
        help=ui.t("tokenization.labels.help"),
    )
with c4:
    num_merges = st.slider(
        ui.t("tokenization.merges"), 0, MAX_MERGES, DEFAULT_MERGES, key="tok_merges", bind="query-params",
        help=ui.t("tokenization.merges.help"),
    )
for key, value in (("tok_source", source), ("tok_kind", kind), ("tok_labels", mode)):
    write_url(key, value)

text = None
if source == "paste":
    pasted = st.text_area(ui.t("tokenization.paste"), key="tok_text", height=120, max_chars=UPLOAD_LIMIT)
    if pasted.strip():
        text = pasted
    else:
        st.info(ui.t("tokenization.paste.empty"))
        text = TEXTBOOK_CORPUS
elif source == "upload":
    uploaded = st.file_uploader(
        ui.t("tokenization.upload", mb=UPLOAD_MB), type=["txt"], key="tok_upload", max_upload_size=UPLOAD_MB,
    )
    result = read_upload(uploaded.getvalue() if uploaded is not None else None, lang=lang)
    if uploaded is None:  # also what the server sees of a file the browser refused as too big
        st.info(ui.t("tokenization.upload.none_limit", mb=UPLOAD_MB) + " "
                + ui.t("tokenization.upload.fallback"))
        text = corpus_text()
    elif result.text is None:
        st.error(result.error + " " + ui.t("tokenization.upload.fallback"))
        text = corpus_text()
    else:
        text = result.text
elif source == "textbook":
    text = TEXTBOOK_CORPUS
else:
    text = corpus_text(everything=(source == "corpus_all"))

other_kind = "classic" if kind == "byte" else "byte"
digest = digest_of(text)
works = {k: planned(digest, num_merges, k, text) for k in (kind, other_kind)}
limits = limits_text(text, works)
if limits:  # said before the training starts
    st.warning(limits, icon=":material/speed:")
tok = trained(text, num_merges, kind, works[kind])
tok_other = trained(text, num_merges, other_kind, works[other_kind])
n = len(tok.merges)
learned = text[: works[kind].chars]
size = len(learned.encode("utf-8", "surrogatepass"))
vocab_key = "tokenization.vocab.byte" if tok.byte_level else "tokenization.vocab.classic"
st.caption(
    ui.t(
        vocab_key, chars=f"{len(learned):,}", kb=f"{size / 1000:,.1f}", n=n, vocab=len(tok.vocab),
        base=len(tok.vocab) - 5 - n,
    )
)
if n < num_merges:
    st.info(ui.t("tokenization.ran_out", n=n, asked=num_merges))
if source == "corpus" and kind == "byte" and num_merges == MAX_MERGES:
    st.caption(ui.t("tokenization.same_as_model"))

# ----------------------------------------------------------------------------------------------------
# The film: the sentence re-segmented after each merge

st.subheader(ui.t("tokenization.film.title"))
sentence = settings.sentence
has_sentence = bool(sentence.strip())
if not has_sentence:
    st.info(ui.t("tokenization.empty"))

explain, formula = st.columns([3, 2])
with explain:
    st.markdown(ui.t("tokenization.film.explain"))
with formula:  # two short lines: one long one is cut off in this column at 1280×720
    st.latex(r"(a,\, b) = \arg\max_{(x,\, y)}\ \mathrm{count}(x\;y)")
    st.latex(r"a\;b \;\to\; ab")
    st.latex(r"|V| = 5 + 256 + k" if tok.byte_level else r"|V| = 5 + |\Sigma| + 1 + k")
    st.caption(ui.t(f"tokenization.film.formula_{'byte' if tok.byte_level else 'classic'}"))

film = None
if has_sentence:
    film, cut = film_text(sentence, tok.byte_level)
    if not film.strip():  # a single huge "word": cut inside it
        film, cut = sentence[: MAX_BOXES // 4], True
    if cut:
        st.caption(ui.t("tokenization.film.cut", n=len(film), boxes=MAX_BOXES))
    segs = tok.segmentations(film)
    steps = changed_steps(segs)

    # tok_step is kept in the URL by hand, not with bind="query-params": the slider's range follows
    # the number of merges, and a bound slider whose range shrinks below its URL value raises
    # (Streamlit re-seeds it from the URL because its identity changed). By hand we can clamp.
    state = st.session_state
    if "tok_step" not in state[URL_CHECKED]:  # first run of this page in the session: read the URL
        state[URL_CHECKED].add("tok_step")
        raw = st.query_params.get("tok_step")
        if raw is not None and is_int_in(0, n)(raw):
            state["tok_step"] = int(float(raw))
        elif raw is not None:
            st.warning(ui.t("tokenization.url.step", raw=literal(raw), n=n))
    if state.get("tok_step") is None:
        state["tok_step"] = n  # the final tokens
    elif state["tok_step"] > n:  # fewer merges than the step shown: clamp
        state["tok_step"] = n

    def toggle_play() -> None:
        state = st.session_state
        state[PLAYING] = not state.get(PLAYING, False)
        state[TOGGLED] = True
        if state[PLAYING] and state.get("tok_step", n) >= (steps[-1] if steps else n):
            state["tok_step"] = 0  # at the end: play from the start

    playing = bool(st.session_state.get(PLAYING)) and n > 0

    @st.fragment(run_every=PLAY_SECONDS if playing else None)
    def film_view() -> None:
        state = st.session_state
        if state.get(PLAYING) and not state.get(TOGGLED):  # a tick of run_every: next step
            later = [k for k in steps if k > state.get("tok_step", 0)]
            if later:
                state["tok_step"] = later[0]
            else:  # the end: stop, and rerun the page to remove run_every
                state["tok_step"] = n
                state[PLAYING] = False
                st.rerun(scope="app")
        button_col, slider_col = st.columns([1, 8], vertical_alignment="bottom")
        with button_col:
            st.button(
                ui.t("tokenization.pause" if state.get(PLAYING) else "tokenization.play"), key="tok_play",
                on_click=toggle_play,
                icon=":material/pause:" if state.get(PLAYING) else ":material/play_arrow:", disabled=(n == 0),
                help=ui.t("tokenization.play.help", s=f"{PLAY_SECONDS:g}"),
            )
        if state.pop(TOGGLED, False):  # play/pause changes run_every: that needs a whole-page run
            st.rerun(scope="app")
        with slider_col:
            if n > 0:
                step = st.slider(
                    ui.t("tokenization.step"), 0, n, key="tok_step", help=ui.t("tokenization.step.help"),
                )
            else:
                step = 0
                st.caption(ui.t("tokenization.no_merges"))
        if step == n:  # the default (last step) is left out of the URL
            st.query_params.pop("tok_step", None)
        elif st.query_params.get("tok_step") != str(step):
            st.query_params["tok_step"] = str(step)
        ui.show_themed_figure(
            merge_step_figure(tok, segs, step, mode=mode, lang=lang), key="tok_film", name="bpe-merge-step"
        )
        left, right = st.columns([3, 2])
        with left:
            ui.show_themed_figure(token_count_figure(segs, step, lang=lang), key="tok_curve",
                                  name="bpe-token-count")
        with right:
            st.markdown(ui.t("tokenization.curve.explain", changed=len(steps), n=n))
            st.latex(r"n_k \le n_{k-1}")
            st.caption(ui.t("tokenization.curve.legend"))

    film_view()

with st.expander(ui.t("tokenization.textbook.title"), expanded=(source == "textbook")):
    golden = trained(TEXTBOOK_CORPUS, 10, "classic")
    counts = ", ".join(f"*{w}* × {c}" for w, c in TEXTBOOK_COUNTS)
    st.markdown(ui.t("tokenization.textbook.explain", counts=counts))
    dataframe(merge_rows(golden), height=250)
    st.code("lowest → " + " ".join(golden.tokenize("lowest")), language=None)

# ----------------------------------------------------------------------------------------------------
# Merges table

st.subheader(ui.t("tokenization.merges.title"))
st.caption(ui.t("tokenization.merges.caption", kind=ui.t(f"tokenization.kind_name.{kind}")))
dataframe(merge_rows(tok), height=280)

# ----------------------------------------------------------------------------------------------------
# Classic vs byte-level

st.subheader(ui.t("tokenization.versus.title"))
if has_sentence:
    columns = st.columns(2)
    for col, tk in zip(columns, sorted((tok, tok_other), key=lambda x: x.byte_level), strict=True):
        with col:
            tokens = tk.tokenize(sentence)
            unknown = sum(1 for x in tokens if x == "[UNK]")
            st.markdown(
                ui.t(
                    "tokenization.versus.byte" if tk.byte_level else "tokenization.versus.classic",
                    n=len(tokens), unknown=unknown, vocab=len(tk.vocab),
                )
            )
            ui.show_themed_figure(
                encoded_figure(tk, sentence, row_units=38, mode=mode, lang=lang),
                key=f"tok_side_{int(tk.byte_level)}",
                name="bpe-byte-level" if tk.byte_level else "bpe-classic",
            )
    st.markdown(ui.t("tokenization.versus.explain"))

rows = byte_rows(sentence) if has_sentence else []
example = not rows
if example:
    rows = byte_rows("中文é😀")
st.markdown(ui.t("tokenization.bytes.example" if example else "tokenization.bytes.yours"))
st.latex(r"\text{UTF-8}:\quad \text{中} = \text{U+4E2D} \;\to\; \texttt{E4}\ \texttt{B8}\ \texttt{AD}")
dataframe([{k: v for k, v in r.items() if k != "bytes"} for r in rows], height=min(38 + 35 * len(rows), 300))

# ----------------------------------------------------------------------------------------------------
# Ids and special tokens

st.subheader(ui.t("tokenization.ids.title"))
st.markdown(ui.t("tokenization.ids.explain"))
st.latex(
    r"x_i = \mathrm{id}(t_i) \in \{0, 1, \dots, |V| - 1\}, \qquad "
    r"e_i = E[\,x_i\,] \in \mathbb{R}^{d_{\text{model}}}"
)
sp_left, sp_right = st.columns([1, 3])
with sp_left:
    dataframe(special_rows(tok))
with sp_right:
    if has_sentence:
        wrapped = "[BOS]" + sentence + "[EOS]"
        title = ui.t("tokenization.ids.figure", kind=ui.t(f"tokenization.kind_name.{kind}"))
        ui.show_themed_figure(
            encoded_figure(tok, wrapped, title=title, row_units=60, mode=mode, lang=lang),
            key="tok_special",
            name="bpe-special-tokens",
        )
        ids = tok.encode(wrapped)
        show_ids(ids, ui.t("tokenization.ids.encode", n=len(ids)))
        plain = tok.tokenize("[BOS]", allow_special=False)
        ui.show_tokens(plain, ui.t("tokenization.ids.plain", n=len(plain)))
        if tok.byte_level:
            back = tok.decode(ids)
            st.caption(ui.t(f"tokenization.ids.roundtrip_{'yes' if back == wrapped else 'no'}"))
    else:
        st.info(ui.t("tokenization.ids.empty"))

# ----------------------------------------------------------------------------------------------------
# The model's own tokenizer (MiniLM's is the WordPiece section at the top)

pipe = ui.get_pipeline(settings, quiet=True)
if pipe is not None and has_sentence and pipe.kind != "pretrained":
    st.subheader(ui.t("tokenization.model.title"))
    labels, model_ids = pipe.src_encode(sentence)
    what = ui.t("tokenization.model.trained" if pipe.kind == "trained" else "tokenization.model.random")
    st.caption(ui.t("tokenization.model.caption", what=what, n=len(labels)))
    ui.show_themed_figure(
        token_boxes(labels, ids=model_ids, title=ui.t("tokenization.model.figure"), lang=lang),
        key="tok_model",
        name="model-input-tokens",
    )

if not minilm:
    with st.expander(ui.t("tokenization.wp.title.compare")):
        wordpiece_section(sentence)
