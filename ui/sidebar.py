"""The shared page setup: page config, the settings sidebar, URL sync and the weights badge.

Why every page calls :func:`page_setup` instead of app.py drawing the sidebar once: with a folder
named ``pages/`` beside app.py, Streamlit 1.67 starts in its old "pages directory" mode, and until
some run calls ``st.navigation`` a page opened by its URL (and every AppTest rerun) runs *without*
app.py. So the page itself must draw the sidebar, and app.py must not (duplicate widget keys).

URL sync is done by hand with ``st.query_params`` rather than ``bind="query-params"``: bound widgets
drop a bad value silently (``?d_model=7`` just vanishes), and a widget drawn by a page script is
bound to that page, so its parameter is filtered out of the URL on a page switch. Here the
settings live in ``st.session_state[STORE]`` (not a widget key, so it survives page switches); the
URL is read and validated once per session and rewritten on every run.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from i18n import LANG_NAMES, LANGS
from i18n import strings as _strings
from i18n import t as _t
from ui.settings import (
    D_FF_CHOICES,
    D_MODEL_CHOICES,
    DEFAULTS,
    KEYS,
    MAX_TOKENS_CHOICES,
    NORM_CHOICES,
    NUM_LAYERS_RANGE,
    POSITIONS_CHOICES,
    SEED_RANGE,
    Settings,
    checkpoint_available,
    default_sentence,
    head_choices,
    minilm_available,
    to_query,
    validate,
)

STORE = "_glassbox_settings"  # the validated Settings of this session
NOTICES = "_glassbox_notices"  # messages about values that were changed; shown until the next change

SESSION_MODEL = "session_model"  # core.train.TrainResult chosen with "Use this model" (this browser only)
SESSION_TAG = "session_model_tag"
# True once the user typed a sentence or a URL named one: it is then never replaced. Until then the
# sentence is the default of the weights on screen (ui.settings.default_sentence) and follows them.
SENTENCE_OWN = "_glassbox_sentence_own"


def use_session_model(result) -> None:
    """Show ``result`` (a core.train.TrainResult) on every page of this session."""
    import uuid

    state = st.session_state
    state[SESSION_MODEL] = result
    state[SESSION_TAG] = uuid.uuid4().hex
    state[STORE] = replace(state[STORE], weights="session")
    if not state.get(SENTENCE_OWN):
        state[STORE] = replace(state[STORE], sentence=default_sentence("session", result.task))
    state[NOTICES] = []


def _has_session_model() -> bool:
    return SESSION_MODEL in st.session_state


def _session_task() -> str:
    """The task of the model trained in this session ("" without one)."""
    return getattr(st.session_state.get(SESSION_MODEL), "task", "") or ""


def current_lang() -> str:
    """The interface language of this session ("en" before the settings are read)."""
    settings = st.session_state.get(STORE)
    lang = getattr(settings, "lang", None)
    if lang in LANGS:
        return lang
    raw = st.query_params.get("lang")
    return raw if raw in LANGS else DEFAULTS.lang


def t(key: str, /, **values: object) -> str:
    """The text for ``key`` in this session's language (see i18n/)."""
    return _t(key, current_lang(), **values)


def _on_change(key: str) -> None:
    """A widget changed: validate the new value with the others and store the result."""
    state = st.session_state
    values = state[STORE].to_dict()
    values[key] = state[key]
    if key == "sentence":
        state[SENTENCE_OWN] = True
    elif not state.get(SENTENCE_OWN):
        del values["sentence"]  # validate gives the default of the (new) weights
    checked = validate(values, session_model=_has_session_model(), session_task=_session_task())
    state[STORE] = checked.settings
    state[NOTICES] = checked.notices


def _read_url() -> None:
    """On a session's first run: settings from the URL's query parameters (validated)."""
    params = st.query_params
    raw = {key: params[key] for key in KEYS if key in params}
    checked = validate(raw, session_model=_has_session_model(), session_task=_session_task())
    st.session_state[SENTENCE_OWN] = "sentence" in raw
    st.session_state[STORE] = checked.settings
    st.session_state[NOTICES] = checked.notices


def _write_url(settings: Settings) -> None:
    """Make the URL match the settings (only our keys; other parameters are left alone)."""
    params = st.query_params
    wanted = to_query(settings)
    for key in KEYS:
        if key in wanted:
            if params.get(key) != wanted[key]:
                params[key] = wanted[key]
        elif key in params:
            del params[key]


def weights_caption(settings: Settings, label: str | None = None) -> str:
    """The sentence saying which weights are on screen; shown on every page."""
    lang = settings.lang
    if settings.weights == "trained":
        return _t("weights.badge.trained", lang, label=label or _t("weights.badge.trained_default", lang))
    return _t("weights.badge.random", lang, seed=settings.seed)


def badge_text(pipe, settings: Settings) -> str:
    """The weights on screen, in the session's language: "short badge; details for a caption".

    ``core`` (no i18n there) labels its pipelines in English; the texts here say the same from the
    pipeline's kind and metrics, so the badge follows the language switch.
    """
    lang, m = settings.lang, getattr(pipe, "metrics", {}) or {}
    acc = m.get("test_token_acc")
    acc = f"{acc:.1%}" if isinstance(acc, float) else "?"
    if settings.weights == "session":
        return _t(
            "weights.label.session", lang, task=getattr(pipe, "task", "?"), steps=m.get("steps", "?"), acc=acc
        )
    kind = getattr(pipe, "kind", settings.weights)
    if kind == "random":
        return _t("weights.label.random", lang, seed=settings.seed, merges=getattr(pipe, "merges", "?"))
    if kind == "trained":
        return _t("weights.label.trained", lang, acc=acc)
    key = f"weights.label.{kind}"
    return _t(key, lang) if key in _strings(lang) else pipe.label


def _sidebar(settings: Settings, trained_config) -> None:
    state = st.session_state
    # A widget keyed K shows st.session_state[K]; setting it before the widget is drawn makes every
    # page draw the stored settings, whichever page drew the widget last.
    for key in KEYS:
        state[key] = getattr(settings, key)

    sb = st.sidebar
    sb.segmented_control(
        t("sidebar.lang"),
        LANGS,
        key="lang",
        required=True,
        format_func=LANG_NAMES.__getitem__,
        on_change=_on_change,
        args=("lang",),
    )
    sb.text_area(
        t("sidebar.sentence"),
        key="sentence",
        height=90,
        help=t("sidebar.sentence.help"),
        on_change=_on_change,
        args=("sentence",),
    )
    sb.text_area(
        t("sidebar.target"),
        key="target",
        height=68,
        placeholder=t("sidebar.target.placeholder"),
        on_change=_on_change,
        args=("target",),
    )
    weights_options = ["random"]
    if checkpoint_available() or settings.weights == "trained":
        weights_options.append("trained")
    if _has_session_model():
        weights_options.append("session")
    if minilm_available() or settings.weights == "minilm":
        weights_options.append("minilm")
    sb.radio(
        t("sidebar.weights"),
        weights_options,
        key="weights",
        # format_func is also called outside the run (AppTest): bind the language now
        format_func=lambda w, lang=settings.lang: _t(f"sidebar.weights.{w}", lang),
        on_change=_on_change,
        args=("weights",),
    )
    if not checkpoint_available():
        sb.caption(t("sidebar.no_checkpoint"))
    if not minilm_available():
        sb.caption(t("sidebar.no_minilm"))

    fixed = trained_config is not None
    if fixed:
        c = trained_config
        sb.info(
            t(
                "sidebar.fixed_sizes",
                d_model=c.d_model,
                h=c.num_heads,
                n=c.num_layers,
                d_ff=c.d_ff,
                norm=c.norm,
            )
        )
    sb.selectbox(
        t("sidebar.d_model"),
        (settings.d_model,) if fixed else D_MODEL_CHOICES,
        key="d_model",
        disabled=fixed,
        on_change=_on_change,
        args=("d_model",),
    )
    sb.select_slider(
        t("sidebar.num_heads"),
        (settings.num_heads,) if fixed else head_choices(settings.d_model),
        key="num_heads",
        disabled=fixed,
        help=t("sidebar.num_heads.help"),
        on_change=_on_change,
        args=("num_heads",),
    )
    lo, hi = NUM_LAYERS_RANGE
    sb.slider(
        t("sidebar.num_layers"),
        lo,
        hi,
        key="num_layers",
        disabled=fixed,
        on_change=_on_change,
        args=("num_layers",),
    )
    sb.selectbox(
        t("sidebar.d_ff"),
        (settings.d_ff,) if fixed else D_FF_CHOICES,
        key="d_ff",
        disabled=fixed,
        format_func=lambda v, lang=settings.lang: (
            _t("sidebar.d_ff.default", lang, value=4 * settings.d_model) if v == 0 else str(v)
        ),
        on_change=_on_change,
        args=("d_ff",),
    )
    sb.number_input(
        t("sidebar.seed"),
        min_value=SEED_RANGE[0],
        max_value=SEED_RANGE[1],
        step=1,
        key="seed",
        disabled=fixed,
        on_change=_on_change,
        args=("seed",),
    )
    sb.radio(
        t("sidebar.norm"),
        NORM_CHOICES,
        key="norm",
        horizontal=True,
        disabled=fixed,
        format_func=lambda v, lang=settings.lang: _t(f"sidebar.norm.{v}", lang),
        on_change=_on_change,
        args=("norm",),
    )
    sb.selectbox(
        t("sidebar.positions"),
        (settings.positions,) if fixed else POSITIONS_CHOICES,
        key="positions",
        disabled=fixed,
        help=t("sidebar.positions.help"),
        format_func=lambda v, lang=settings.lang: _t(f"sidebar.positions.{v}", lang),
        on_change=_on_change,
        args=("positions",),
    )
    if settings.positions == "rope" and settings.d_k == 1:  # RoPE turns pairs of dimensions: none here
        sb.caption(t("positional.rope.no_pair.sidebar"))
    sb.select_slider(
        t("sidebar.max_tokens"),
        MAX_TOKENS_CHOICES,
        key="max_tokens",
        help=t("sidebar.max_tokens.help"),
        on_change=_on_change,
        args=("max_tokens",),
    )
    sb.caption(t("sidebar.url"))


def _ensure_navigation() -> None:
    """Register our navigation when this page was started without app.py ("pages/ folder" mode).

    That mode is a process-wide flag, on from server start until some run calls st.navigation: a
    first visitor arriving at /attention would see file names ("app", "attention"...) in the sidebar
    and keep that mode. Calling st.navigation here shows the real page list and ends the mode, so
    the next run goes through app.py. (The page being run is already the right one.)
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # internal API moved: the app still works, with file names in the nav
        return
    if PagesManager.uses_pages_directory:
        from ui.nav import navigation_pages

        st.navigation(navigation_pages(current_lang()))


# While a rerun is under way Streamlit marks every element not yet redrawn as stale and fades it to
# a third of its opacity (a 1 s transition after 0.5 s). Glassbox keeps it steady instead: a slider
# move redraws the page within about a second, so the fade was a flicker on the projector, and its
# ~50 running transitions cost Chromium's renderer and GPU process CPU while the server was building
# the model on the same two cores (a 0.6 s wait on the Attention page: renderer 1.6-1.8 -> 1.5 CPU-s,
# GPU process 0.11-0.13 -> 0.07-0.08). The running indicator at the top right still shows a rerun.
# Fixed stylesheet, no user text; a style-only st.html goes to the event container and takes no space.
STEADY_RERUN_CSS = (
    '<style>[data-testid="stElementContainer"][data-stale="true"] '
    "{ opacity: 1 !important; transition: none !important; }</style>"
)
# Tab labels (Attention's views, Positional's schemes, the Full model's sections) at the body text's
# size: Streamlit draws them at 14 px, small on a projector for what picks the section on screen.
TAB_LABEL_CSS = (
    '<style>[data-testid="stTab"] [data-testid="stMarkdownContainer"] p { font-size: 1rem; }</style>'
)


def page_setup(title: str, icon: str | None = None) -> Settings:
    """Call first in every page script: page config, sidebar, URL sync; returns valid Settings.

    ``title`` is the page's i18n key (``"nav.attention.title"``) or, for a page without one, its
    literal title. With trained weights the returned sizes are the checkpoint's, not the sidebar's.
    """
    state = st.session_state
    if STORE not in state:
        _read_url()
    title = t(title) if title.startswith("nav.") else title
    st.set_page_config(page_title=f"{title} · Glassbox", page_icon=icon, layout="wide")
    st.html(STEADY_RERUN_CSS + TAB_LABEL_CSS)
    _ensure_navigation()
    settings: Settings = state[STORE]
    if settings.weights == "session":
        if not _has_session_model():  # e.g. the session was reset: back to the default weights
            state[STORE] = settings = replace(settings, weights=DEFAULTS.weights)
            if not state.get(SENTENCE_OWN):
                state[STORE] = settings = replace(settings, sentence=default_sentence(DEFAULTS.weights))
        else:
            settings = replace(settings, session_tag=state[SESSION_TAG])

    # The pipeline (cached) names the weights really on screen: "trained" falls back to random
    # weights, with a warning, when the checkpoint cannot be used.
    from ui.cache import get_pipeline

    pipe = get_pipeline(settings, quiet=True)
    trained_config = None
    label = getattr(pipe, "label", None)
    # trained and pretrained weights fix the sizes: the sidebar shows the model's own (disabled)
    if pipe is not None and getattr(pipe, "kind", settings.weights) in ("trained", "pretrained"):
        trained_config = pipe.config
        settings = replace(
            settings,
            d_model=pipe.config.d_model,
            num_heads=pipe.config.num_heads,
            num_layers=pipe.config.num_layers,
            d_ff=pipe.config.d_ff,
            norm=pipe.config.norm,
            positions=pipe.config.positions,
        )
    elif settings.weights in ("trained", "minilm"):
        settings = replace(settings, weights="random")  # what is on screen (a warning says why)

    # With trained weights the size widgets show the checkpoint's sizes (disabled); the stored ones
    # come back when the user switches to random weights.
    _sidebar(settings if trained_config is not None else state[STORE], trained_config)
    _write_url(state[STORE])

    st.title(title)
    # The badge is short (it is cut at one line); the pipeline's details go in a caption under it.
    text = badge_text(pipe, settings) if label else weights_caption(settings)
    text = text.replace("[", "(").replace("]", ")")  # the badge is Markdown
    badge, _, details = text.replace("；", "; ").partition("; ")
    if getattr(pipe, "kind", settings.weights) != "random":
        st.badge(badge, icon=":material/school:", color="green")
    else:
        st.badge(badge, icon=":material/casino:", color="orange")
    if details:
        st.caption(details[:1].upper() + details[1:] + ".")
    if pipe is not None and getattr(pipe, "warning", None):
        st.warning(
            t(
                "minilm.fallback" if settings.weights == "minilm" else "weights.fallback",
                detail=getattr(pipe, "problem", "") or pipe.warning,
            ),
            icon=":material/warning:",
        )
    for notice in state.get(NOTICES, []):
        st.warning(notice, icon=":material/warning:")
    return settings


def reset_settings() -> None:
    """Forget this session's settings (tests; a "reset" button could use it)."""
    st.session_state[STORE] = DEFAULTS
    st.session_state[NOTICES] = []
