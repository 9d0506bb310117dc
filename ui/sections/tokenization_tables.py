"""The Tokenization page's own helpers: its URL values, the note on what a training plan limited, and
its tables.

URL: ``tok_merges`` is a bound widget (``bind="query-params"``); ``tok_source``, ``tok_kind``,
``tok_labels`` and ``tok_step`` (:func:`step_from_url`) are synced by hand, the first three with
language-independent ids (``?tok_source=textbook``). A bad value in the URL gives a warning naming it,
on the page's first run in the session; afterwards the URL is written by the widgets themselves.

Play button (:func:`play_film`): ``st.fragment(run_every=…)`` steps the ``tok_step`` slider on the
server, jumping from one merge that changes the sentence to the next.

Decisions (URL values synced by hand, the play button rather than a plotly animation):
docs/decisions.md, ui/sections/tokenization_tables.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from core.tokenizers.bpe import BPETokenizer, TrainingWork
from figures.drawing.text import literal
from figures.tokenization import (
    TEXTBOOK_CORPUS,
    UPLOAD_LIMIT,
    changed_steps,
    column_labels,
    merge_step_figure,
    read_upload,
    token_count_figure,
)
from i18n import t as tr
from ui import show_text, show_themed_figure, t
from ui.caches.cache import corpus_text
from ui.page.tables import show_table

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
URL_CHECKED = "_tok_url_checked"  # session flag: the page parameters whose URL value was checked
MAX_MERGES = 1000  # 1000 merges on en_zh.txt = the vocabulary of the random-weights model
DEFAULT_MERGES = 300
MAX_IDS_SHOWN = 400
PLAY_SECONDS = 0.8
PLAYING = "_tok_playing"  # session flags (not widget keys)
TOGGLED = "_tok_toggled"
# The browser refuses a larger file before sending it (Streamlit's red note under the box); the server's
# server.maxUploadSize, if lower, is the limit instead.
UPLOAD_MB = min(math.ceil(UPLOAD_LIMIT / 1e6), int(st.get_option("server.maxUploadSize")))


# -- the training widgets ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """The training the widgets ask for."""

    source: str  # SOURCES
    kind: str  # KINDS: the tokenizer shown; the other kind is learned too, for the comparison
    mode: str  # LABEL_MODES: how a box is labelled
    merges: int


def choose_training(lang: str) -> Choice:
    """The training text, the kind shown, the box labels and the number of merges: four widgets."""
    read_choices(MAX_MERGES)
    c1, c2, c3, c4 = st.columns([5, 4, 3, 5])
    # The language is bound into format_func: it is called again outside the run (AppTest does).
    with c1:
        source = _labelled(st.selectbox, "tokenization.source", SOURCES, "tok_source", lang)
    with c2:
        kind = _labelled(st.radio, "tokenization.kind", KINDS, "tok_kind", lang)
    with c3:
        mode = _labelled(st.radio, "tokenization.labels", LABEL_MODES, "tok_labels", lang)
    with c4:
        merges = st.slider(
            t("tokenization.merges"),
            0,
            MAX_MERGES,
            DEFAULT_MERGES,
            key="tok_merges",
            bind="query-params",
            help=t("tokenization.merges.help"),
        )
    write_choices(source, kind, mode)
    return Choice(source, kind, mode, merges)


def _labelled(widget, text: str, options, key: str, lang: str):
    """A choice among ``options`` labelled ``text``, each option shown as ``text.<option>``."""
    return widget(t(text), options, key=key, format_func=lambda o, lang=lang: tr(f"{text}.{o}", lang),
                  help=t(f"{text}.help"))


# -- URL values --------------------------------------------------------------------------------------


def first_look(key: str) -> bool:
    """Whether ``key``'s URL value is still to be checked in this session (and now it is)."""
    checked = st.session_state.setdefault(URL_CHECKED, set())
    if key in checked:
        return False
    checked.add(key)
    return True


def check_param(key: str, ok: Callable[[str], bool]) -> None:
    """A page parameter in the URL that the widget will ignore: say so instead of dropping it silently.

    Only on the page's first run in a session (a URL typed or shared); afterwards the URL is
    written by the widgets themselves, and a step beyond a shrunken slider is just clamped.
    """
    if not first_look(key):
        return
    raw = st.query_params.get(key)
    if raw is not None and not ok(raw):
        st.warning(t("tokenization.url.ignored", key=key, raw=literal(raw)))


def url_choice(key: str) -> None:
    """Before a hand-synced widget is drawn: on the page's first run, its value from the URL."""
    if not first_look(key):
        return
    raw = st.query_params.get(key)
    if raw is None:
        return
    value = ALIASES[key].get(raw, raw)
    if value in CHOICES[key]:
        st.session_state[key] = value
    else:
        st.warning(t("tokenization.url.ignored", key=key, raw=literal(raw)))


def read_choices(max_merges: int) -> None:
    """Before the training widgets are drawn: the hand-synced choices from the URL, and a warning for a
    ``tok_merges`` the slider will ignore (on the page's first run)."""
    for key in CHOICES:
        url_choice(key)
    check_param("tok_merges", is_int_in(0, max_merges))


def write_choices(source: str, kind: str, mode: str) -> None:
    """After the training widgets: their ids in the URL."""
    for key, value in (("tok_source", source), ("tok_kind", kind), ("tok_labels", mode)):
        write_url(key, value)


def write_url(key: str, value: str) -> None:
    """After the widget: its id in the URL; the default (first choice) is left out."""
    if value == CHOICES[key][0]:
        st.query_params.pop(key, None)
    elif st.query_params.get(key) != value:
        st.query_params[key] = value


def is_int_in(lo: int, hi: int) -> Callable[[str], bool]:
    def ok(raw: str) -> bool:
        try:
            return lo <= int(float(raw)) <= hi and float(raw) == int(float(raw))
        except (ValueError, OverflowError):
            return False

    return ok


def step_from_url(n: int) -> None:
    """Before the ``tok_step`` slider (0 … ``n`` merges) is drawn: its value, from the URL on the page's
    first run, then clamped to ``n``; the final tokens by default.

    Kept in the URL by hand, not with ``bind="query-params"``: the slider's range follows the number of
    merges, and a bound slider whose range shrinks below its URL value raises (Streamlit re-seeds it
    from the URL because its identity changed). By hand we can clamp.
    """
    state = st.session_state
    if first_look("tok_step"):
        raw = st.query_params.get("tok_step")
        if raw is not None and is_int_in(0, n)(raw):
            state["tok_step"] = int(float(raw))
        elif raw is not None:
            st.warning(t("tokenization.url.step", raw=literal(raw), n=n))
    if state.get("tok_step") is None:
        state["tok_step"] = n  # the final tokens
    elif state["tok_step"] > n:  # fewer merges than the step shown: clamp
        state["tok_step"] = n


def write_step(step: int, n: int) -> None:
    """After the slider: the step in the URL; the default (last step) is left out."""
    if step == n:
        st.query_params.pop("tok_step", None)
    elif st.query_params.get("tok_step") != str(step):
        st.query_params["tok_step"] = str(step)


# -- texts and tables -------------------------------------------------------------------------------


def limits_text(text: str, works: dict[str, TrainingWork]) -> str | None:
    """What the training plans changed, in a sentence and a line per kind (None: nothing)."""
    lines = []
    for kind, work in works.items():
        name = t(f"tokenization.kind_name.{kind}")
        unit = t(f"tokenization.limit.unit.{kind}")
        edge = 0 if kind == "byte" else 1  # a classic word's symbols: its characters and </w>
        if work.max_word is not None:
            lines.append(
                t(
                    "tokenization.limit.cut",
                    kind=name,
                    unit=unit,
                    n=f"{work.max_word - edge:,}",
                    longest=f"{work.longest - edge:,}",
                )
            )
        if work.chars < len(text):
            lines.append(
                t("tokenization.limit.prefix", kind=name, used=f"{work.chars:,}", total=f"{len(text):,}")
            )
    return t("tokenization.limit") + "\n\n" + "\n".join(lines) if lines else None


def dataframe(rows: list[dict], lang: str, **kwargs) -> None:
    """Rows of a figures.tokenization helper, with translated column headers; formula-safe text cells
    (``ui.page.tables.show_table``: a token such as ``=HYPERLINK(…)`` in the table's own CSV download)."""
    keys = list(rows[0]) if rows else []
    labels = column_labels(keys, lang)
    config = {k: st.column_config.Column(labels[k]) for k in keys}
    show_table(rows, hide_index=True, width="stretch", column_config=config, **kwargs)


def show_ids(ids: list[int], label: str) -> None:
    more = " …" if len(ids) > MAX_IDS_SHOWN else ""
    show_text(" ".join(map(str, ids[:MAX_IDS_SHOWN])) + more, label)


def training_text(source: str, lang: str) -> str:
    """The text to learn from: a shipped file, the textbook example, a paste or an upload (with the
    shipped text, and a message, when the paste is empty or the upload unusable)."""
    if source == "paste":
        pasted = st.text_area(t("tokenization.paste"), key="tok_text", height=120, max_chars=UPLOAD_LIMIT)
        if pasted.strip():
            return pasted
        st.info(t("tokenization.paste.empty"))
        return TEXTBOOK_CORPUS
    if source == "upload":
        uploaded = st.file_uploader(
            t("tokenization.upload", mb=UPLOAD_MB), type=["txt"], key="tok_upload", max_upload_size=UPLOAD_MB
        )
        result = read_upload(uploaded.getvalue() if uploaded is not None else None, lang=lang)
        if uploaded is None:  # also what the server sees of a file the browser refused as too big
            st.info(
                t("tokenization.upload.none_limit", mb=UPLOAD_MB) + " " + t("tokenization.upload.fallback")
            )
            return corpus_text()
        if result.text is None:
            st.error(result.error + " " + t("tokenization.upload.fallback"))
            return corpus_text()
        return result.text
    if source == "textbook":
        return TEXTBOOK_CORPUS
    return corpus_text(everything=(source == "corpus_all"))


# -- the film ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Film:
    """The sentence re-segmented after each merge: ``segs[k]`` after k merges; ``steps`` the merges that
    change it."""

    tok: BPETokenizer
    segs: list
    steps: list[int]
    mode: str
    lang: str

    @property
    def n(self) -> int:
        return len(self.tok.merges)


def play_film(tok: BPETokenizer, text: str, mode: str, lang: str) -> None:
    """``text`` re-segmented after each merge of ``tok``: a play button, the step slider, the step's
    boxes (labelled as ``mode`` says) and the token count, in a fragment that plays itself."""
    segs = tok.segmentations(text)
    film = Film(tok, segs, changed_steps(segs), mode, lang)
    step_from_url(film.n)
    playing = bool(st.session_state.get(PLAYING)) and film.n > 0
    st.fragment(run_every=PLAY_SECONDS if playing else None)(film_view)(film)


def toggle_play(film: Film) -> None:
    state = st.session_state
    state[PLAYING] = not state.get(PLAYING, False)
    state[TOGGLED] = True
    if state[PLAYING] and state.get("tok_step", film.n) >= (film.steps[-1] if film.steps else film.n):
        state["tok_step"] = 0  # at the end: play from the start


def film_view(film: Film) -> None:
    """The play button, the step slider, the step's boxes and the token count (a fragment)."""
    state, n, lang = st.session_state, film.n, film.lang
    if state.get(PLAYING) and not state.get(TOGGLED):  # a tick of run_every: next step
        later = [k for k in film.steps if k > state.get("tok_step", 0)]
        if later:
            state["tok_step"] = later[0]
        else:  # the end: stop, and rerun the page to remove run_every
            state["tok_step"] = n
            state[PLAYING] = False
            st.rerun(scope="app")
    button_col, slider_col = st.columns([1, 8], vertical_alignment="bottom")
    with button_col:
        st.button(
            t("tokenization.pause" if state.get(PLAYING) else "tokenization.play"),
            key="tok_play",
            on_click=toggle_play,
            args=(film,),
            icon=":material/pause:" if state.get(PLAYING) else ":material/play_arrow:",
            disabled=(n == 0),
            help=t("tokenization.play.help", s=f"{PLAY_SECONDS:g}"),
        )
    if state.pop(TOGGLED, False):  # play/pause changes run_every: that needs a whole-page run
        st.rerun(scope="app")
    with slider_col:
        if n > 0:
            step = st.slider(t("tokenization.step"), 0, n, key="tok_step", help=t("tokenization.step.help"))
        else:
            step = 0
            st.caption(t("tokenization.no_merges"))
    write_step(step, n)
    show_themed_figure(
        merge_step_figure(film.tok, film.segs, step, mode=film.mode, lang=lang),
        key="tok_film",
        name="bpe-merge-step",
    )
    left, right = st.columns([3, 2])
    with left:
        show_themed_figure(
            token_count_figure(film.segs, step, lang=lang), key="tok_curve", name="bpe-token-count"
        )
    with right:
        st.markdown(t("tokenization.curve.explain", changed=len(film.steps), n=n))
        st.latex(r"n_k \le n_{k-1}")
        st.caption(t("tokenization.curve.legend"))
