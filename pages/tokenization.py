"""Tokenization: BPE learned merge by merge (classic ``</w>`` and GPT-2 byte-level), ids, special tokens.

Play button: ``st.fragment(run_every=…)`` steps the ``tok_step`` slider on the server, jumping from
one merge that changes the sentence to the next (most merges never touch a short sentence). We
chose it over a plotly animation with frames because the slider, the URL and the title stay in step
with what is drawn, and a frame per merge for a long sentence would ship megabytes of JSON; one step
is one small figure (3 traces) plus the token-count curve.

URL: ``tok_source``, ``tok_kind``, ``tok_labels`` and ``tok_merges`` are bound widgets
(``bind="query-params"``); ``tok_step`` is synced by hand (see the comment where it is read).
A bad value in the URL gives a warning naming it, on the page's first run in the session.

Training is cached with ``st.cache_resource`` keyed by (sha256 of the text, merges, kind). Measured
here: en_zh.txt (13 KB) at 300 merges trains in ~0.03 s, all shipped files (80 KB) in ~0.1 s; an
upload is capped at 1 MB (~0.6 s at 500 merges, byte-level).
"""

import hashlib
from pathlib import Path

import streamlit as st

import ui
from core.bpe import BPETokenizer
from figures.tokenization import (
    MAX_BOXES,
    TEXTBOOK_CORPUS,
    TEXTBOOK_COUNTS,
    UPLOAD_LIMIT,
    byte_rows,
    changed_steps,
    encoded_figure,
    film_text,
    merge_rows,
    merge_step_figure,
    read_upload,
    special_rows,
    token_boxes,
    token_count_figure,
)
from ui.settings import literal

ROOT = Path(__file__).resolve().parents[1]
CORPUS_DIR = ROOT / "assets" / "corpus"
# Bound widgets put the *label* of the choice in the URL, so the labels are short and URL-friendly.
SOURCES = {
    "corpus": "en_zh.txt (shipped)",
    "corpus_all": "all shipped corpus files",
    "textbook": "textbook example",
    "paste": "pasted text",
    "upload": "uploaded .txt",
}
SOURCE_IDS = {label: key for key, label in SOURCES.items()}
KINDS = {"byte": "byte-level", "classic": "classic"}
KIND_IDS = {label: key for key, label in KINDS.items()}
KIND_NAMES = {"byte": "Byte-level BPE (GPT-2)", "classic": "Classic BPE (</w>)"}
LABEL_MODES = {"text": "text", "spelling": "spelling"}
MAX_MERGES = 1000  # 1000 merges on en_zh.txt = the vocabulary of the random-weights model
DEFAULT_MERGES = 300
PLAY_SECONDS = 0.8
PLAYING = "_tok_playing"  # session flags (not widget keys)
TOGGLED = "_tok_toggled"
URL_CHECKED = "_tok_url_checked"  # the page parameters whose URL value was checked this session
CHART = {"displayModeBar": False}


@st.cache_data(show_spinner=False)
def corpus_text(everything: bool = False) -> str:
    """en_zh.txt (English paragraphs and their Chinese versions), or every shipped corpus file."""
    paths = sorted(CORPUS_DIR.glob("*.txt")) if everything else [CORPUS_DIR / "en_zh.txt"]
    return "\n".join(path.read_text(encoding="utf-8") for path in paths)


@st.cache_resource(max_entries=16, show_spinner="Learning the merges…")
def train(text_hash: str, merges: int, kind: str, _text: str) -> BPETokenizer:
    """Cached by (text hash, merges, kind); ``_text`` is not hashed again (leading underscore)."""
    return BPETokenizer.train(_text, merges, byte_level=(kind == "byte"))


def trained(text: str, merges: int, kind: str) -> BPETokenizer:
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return train(digest, merges, kind, text)


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
        st.warning(f"Ignored {key}={literal(raw)} from the URL (not a valid value); using the default.")


def is_int_in(lo: int, hi: int):
    def ok(raw: str) -> bool:
        try:
            return lo <= int(float(raw)) <= hi and float(raw) == int(float(raw))
        except (ValueError, OverflowError):
            return False

    return ok


settings = ui.page_setup("nav.tokenization.title")
st.session_state.setdefault(URL_CHECKED, set())
st.caption(
    "Byte Pair Encoding (BPE): start from characters (or bytes); repeatedly glue the most frequent "
    "pair of neighbours in the training text into one new token. The ordered list of glue steps, the "
    "*merges*, is the tokenizer. Tokenizing comes before the model: the weights play no part here."
)

# ----------------------------------------------------------------------------------------------------
# Training text and settings

check_param("tok_source", lambda v: v in SOURCE_IDS)
check_param("tok_kind", lambda v: v in KIND_IDS)
check_param("tok_merges", is_int_in(0, MAX_MERGES))
check_param("tok_labels", lambda v: v in LABEL_MODES.values())

c1, c2, c3, c4 = st.columns([5, 4, 3, 5])
with c1:
    source = SOURCE_IDS[st.selectbox(
        "Training text", list(SOURCES.values()), key="tok_source", bind="query-params",
        help="en_zh.txt: English paragraphs, each followed by its Chinese version (13 KB). All files adds "
             "2,600 Chinese phrases with their pinyin. Textbook: low ×5, lower ×2, newest ×6, widest ×3.",
    )]
with c2:
    kind = KIND_IDS[st.radio(
        "BPE kind (film, merges)", list(KINDS.values()), key="tok_kind", bind="query-params",
        help="byte-level: GPT-2's BPE over UTF-8 bytes. classic: Sennrich et al.'s BPE over characters, "
             "each word ending in </w>.",
    )]
with c3:
    mode = st.radio(
        "Box labels", list(LABEL_MODES.values()), key="tok_labels", bind="query-params",
        help="The text a token stands for (a piece of a character as its bytes, e.g. ⟨e4 b8⟩), or the "
             "token as GPT-2's vocabulary spells it (a space is Ġ, 中 is ä¸Ń). Classic tokens are "
             "always shown as they are.",
    )
with c4:
    num_merges = st.slider(
        "Number of merges to learn", 0, MAX_MERGES, DEFAULT_MERGES, key="tok_merges", bind="query-params",
        help="Each merge adds one token to the vocabulary. Training stops early if no pair is left.",
    )

text = None
if source == "paste":
    pasted = st.text_area(
        "Training text (paste anything: English, 中文, code…)", key="tok_text", height=120,
        max_chars=UPLOAD_LIMIT,
    )
    if pasted.strip():
        text = pasted
    else:
        st.info("The pasted text is empty: paste some text above. Meanwhile the textbook example is used.")
        text = TEXTBOOK_CORPUS
elif source == "upload":
    uploaded = st.file_uploader(
        f"A plain-text file (.txt, UTF-8, at most {UPLOAD_LIMIT / 1e6:g} MB)", type=["txt"],
        key="tok_upload", max_upload_size=1,
    )
    result = read_upload(uploaded.getvalue() if uploaded is not None else None)
    if result.text is None:
        (st.info if uploaded is None else st.error)(
            result.error + " Meanwhile the shipped corpus is used."
        )
        text = corpus_text()
    else:
        text = result.text
elif source == "textbook":
    text = TEXTBOOK_CORPUS
else:
    text = corpus_text(everything=(source == "corpus_all"))

tok = trained(text, num_merges, kind)
other_kind = "classic" if kind == "byte" else "byte"
tok_other = trained(text, num_merges, other_kind)
n = len(tok.merges)
size = len(text.encode("utf-8", "surrogatepass"))
st.caption(
    f"Training text: {len(text):,} characters ({size / 1000:,.1f} KB) · learned {n} merges · "
    f"vocabulary {len(tok.vocab)} tokens = 5 special + "
    + ("256 bytes" if tok.byte_level else f"{len(tok.vocab) - 5 - n} characters and </w>")
    + f" + {n} merged."
)
if n < num_merges:
    st.info(f"The training text ran out of pairs after {n} merges (asked for {num_merges}).")
if source == "corpus" and kind == "byte" and num_merges == MAX_MERGES:
    st.caption("This is exactly the vocabulary of the random-weights model on the other pages.")

# ----------------------------------------------------------------------------------------------------
# The film: the sentence re-segmented after each merge

st.subheader("Merge by merge: your sentence")
sentence = settings.sentence
has_sentence = bool(sentence.strip())
if not has_sentence:
    st.info("The sentence is empty: type a sentence in the sidebar (any language) to see it tokenized.")

film = None
if has_sentence:
    film, cut = film_text(sentence, tok.byte_level)
    if not film.strip():  # a single huge "word": cut inside it
        film, cut = sentence[: MAX_BOXES // 4], True
    if cut:
        st.caption(f"The film shows the first {len(film)} characters of the sentence (at most {MAX_BOXES} "
                   "boxes at step 0); the ids below cover the whole sentence.")
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
            st.warning(f"Ignored tok_step={literal(raw)} from the URL (must be a whole number from 0 to "
                       f"{n}); showing step {n}.")
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
                "Pause" if state.get(PLAYING) else "Play", key="tok_play", on_click=toggle_play,
                icon=":material/pause:" if state.get(PLAYING) else ":material/play_arrow:", disabled=(n == 0),
                help=f"Jumps from one merge that changes the sentence to the next, every {PLAY_SECONDS:g} s.",
            )
        if state.pop(TOGGLED, False):  # play/pause changes run_every: that needs a whole-page run
            st.rerun(scope="app")
        with slider_col:
            if n > 0:
                step = st.slider(
                    "Merges applied (step)", 0, n, key="tok_step",
                    help="Step k applies the first k merges. The box the k-th merge created is orange.",
                )
            else:
                step = 0
                st.caption("No merges learned (0 merges): the sentence stays as bare symbols.")
        if step == n:  # the default (last step) is left out of the URL
            st.query_params.pop("tok_step", None)
        elif st.query_params.get("tok_step") != str(step):
            st.query_params["tok_step"] = str(step)
        st.plotly_chart(merge_step_figure(tok, segs, step, mode=mode), width="stretch", config=CHART,
                        key="tok_film")
        left, right = st.columns([3, 2])
        with left:
            st.plotly_chart(token_count_figure(segs, step), width="stretch", config=CHART, key="tok_curve")
        with right:
            st.markdown(
                "Each merge can only make the sentence shorter (or leave it alone). "
                f"{len(steps)} of the {n} merges change this sentence; **Play** jumps between them."
            )
            st.caption("Orange box: the token the current merge created. Number under a box: its id.")

    film_view()

with st.expander("The textbook example, step by step (classic BPE)", expanded=(source == "textbook")):
    golden = trained(TEXTBOOK_CORPUS, 10, "classic")
    st.markdown(
        "Word counts: " + ", ".join(f"*{w}* × {c}" for w, c in TEXTBOOK_COUNTS)
        + ". Every word starts as characters plus the end-of-word symbol `</w>` "
        "(`l o w </w>`). The pair `e s` occurs 6 + 3 = 9 times (newest, widest): it is merged first; "
        "then `es t` (9), then `est </w>` (9), then `l o` (7) and `lo w` (7). Ties go to the "
        "alphabetically smaller pair. A new word like *lowest* is then cut into known pieces: "
        "`low` + `est</w>`, although it never occurred."
    )
    st.dataframe(merge_rows(golden), hide_index=True, width="stretch", height=250)
    st.code("lowest → " + " ".join(golden.tokenize("lowest")), language=None)

# ----------------------------------------------------------------------------------------------------
# Merges table

st.subheader("The merges, in the order learned")
st.caption(f"{KIND_NAMES[kind]} · step k glues left + right into the new token, which gets the next free id.")
st.dataframe(merge_rows(tok), hide_index=True, width="stretch", height=280)

# ----------------------------------------------------------------------------------------------------
# Classic vs byte-level

st.subheader("Classic vs byte-level, same text, same number of merges")
if has_sentence:
    columns = st.columns(2)
    for col, t in zip(columns, sorted((tok, tok_other), key=lambda t: t.byte_level), strict=True):
        with col:
            tokens = t.tokenize(sentence)
            unknown = sum(1 for x in tokens if x == "[UNK]")
            st.markdown(f"**{'Byte-level' if t.byte_level else 'Classic'}**: {len(tokens)} tokens, "
                        f"{unknown} unknown, vocabulary {len(t.vocab)}")
            st.plotly_chart(
                encoded_figure(t, sentence, row_units=38, mode=mode),
                width="stretch", config=CHART,
                key=f"tok_side_{int(t.byte_level)}",
            )
    st.markdown(
        "Classic BPE cuts at spaces and ends every word with `</w>`; a character it never saw becomes "
        "`[UNK]`. Byte-level BPE starts from the 256 byte values, so nothing is ever unknown: a Chinese "
        "character is 3 bytes, an emoji 4, and each byte is *spelled* with one printable character "
        "(GPT-2's table; a space is `Ġ`). Merges then rebuild frequent characters and words. Chinese "
        "has no spaces, so for the classic kind a whole run of 汉字 is one \"word\"."
    )

rows = byte_rows(sentence) if has_sentence else []
example = not rows
if example:
    rows = byte_rows("中文é😀")
st.markdown("**The bytes behind each non-ASCII character**"
            + (" (your sentence has none: an example)" if example else " of your sentence"))
st.dataframe([{k: v for k, v in r.items() if k != "bytes"} for r in rows], hide_index=True, width="stretch",
             height=min(38 + 35 * len(rows), 300))

# ----------------------------------------------------------------------------------------------------
# Ids and special tokens

st.subheader("Token ids and special tokens")
st.markdown(
    "The model never sees text, only ids: the position of each token in the vocabulary. Five "
    "**special tokens** take the first ids in every vocabulary of Glassbox. They are never split "
    "and never learned from text: `[PAD]` fills a short sentence in a batch, `[UNK]` stands for an "
    "unknown character, `[BOS]`/`[EOS]` mark the beginning and end of a sequence (the decoder starts "
    "from `[BOS]`), `[MASK]` hides a token (BERT-style training)."
)
sp_left, sp_right = st.columns([1, 3])
with sp_left:
    st.dataframe(special_rows(tok), hide_index=True, width="stretch")
with sp_right:
    if has_sentence:
        wrapped = "[BOS]" + sentence + "[EOS]"
        st.plotly_chart(
            encoded_figure(tok, wrapped, title=f"[BOS] + sentence + [EOS], {KIND_NAMES[kind]}", row_units=60,
                           mode=mode),
            width="stretch", config=CHART, key="tok_special",
        )
        ids = tok.encode(wrapped)
        ui.show_text(" ".join(map(str, ids[:400])) + (" …" if len(ids) > 400 else ""),
                     f"encode(...): {len(ids)} ids")
        plain = tok.tokenize("[BOS]", allow_special=False)
        ui.show_tokens(plain, "The same “[BOS]” read as ordinary text (allow_special=False): "
                              f"{len(plain)} tokens, not one")
        if tok.byte_level:
            back = tok.decode(ids)
            st.caption("decode(encode(text)) gives the text back exactly: "
                       + ("yes" if back == wrapped else "no"))
    else:
        st.info("Type a sentence in the sidebar to see it encoded between [BOS] and [EOS].")

# ----------------------------------------------------------------------------------------------------
# The model's own tokenizer

pipe = ui.get_pipeline(settings, quiet=True)
if pipe is not None and has_sentence:
    st.subheader("What the model on the other pages reads")
    labels, model_ids = pipe.src_encode(sentence)
    what = ("characters of the trained 汉字→拼音 vocabulary" if pipe.kind == "trained"
            else "byte-level BPE with its own merges, learned from the shipped corpus")
    st.caption(f"The model's source tokenizer: {what}. {len(labels)} tokens.")
    st.plotly_chart(
        token_boxes(labels, ids=model_ids, title="Model input tokens and ids"),
        width="stretch", config=CHART, key="tok_model",
    )
