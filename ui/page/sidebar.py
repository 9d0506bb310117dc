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

import logging
from dataclasses import replace

import streamlit as st

from core.names import Weights
from i18n import LANG_NAMES, LANGS
from i18n import strings as _strings
from i18n import t as _t
from ui.caches.cache import get_pipeline, model_failure
from ui.interventions import switches as ablation
from ui.page.lang import STORE, current_lang, t
from ui.page.nav import FAVICON, navigation_pages
from ui.page.settings import (
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
    ablation_problems,
    checkpoint_available,
    default_sentence,
    gpt_available,
    head_choices,
    is_model_value,
    literal,
    minilm_available,
    to_query,
    validate,
)

log = logging.getLogger("glassbox.ui")

NOTICES = "_glassbox_notices"  # messages about values that were changed; shown until the next change

# core.training.loop.TrainResult chosen with "Use this model" (this browser only)
SESSION_MODEL = "session_model"
SESSION_TAG = "session_model_tag"
# True once the user typed a sentence or a URL named one: it is then never replaced. Until then the
# sentence is the default of the weights on screen (ui.page.settings.default_sentence) and follows them.
SENTENCE_OWN = "_glassbox_sentence_own"


def use_session_model(result) -> None:
    """Show ``result`` (a core.training.loop.TrainResult) on every page of this session."""
    import uuid

    state = st.session_state
    state[SESSION_MODEL] = result
    state[SESSION_TAG] = uuid.uuid4().hex
    state[STORE] = replace(state[STORE], weights=Weights.SESSION)
    if not state.get(SENTENCE_OWN):
        state[STORE] = replace(state[STORE], sentence=default_sentence(Weights.SESSION, result.task))
    state[NOTICES] = []


def _has_session_model() -> bool:
    return SESSION_MODEL in st.session_state


def _session_task() -> str:
    """The task of the model trained in this session ("" without one)."""
    return getattr(st.session_state.get(SESSION_MODEL), "task", "") or ""


def _on_change(key: str) -> None:
    """A widget changed: validate the new value with the others and store the result."""
    state = st.session_state
    values = state[STORE].to_dict()
    values[key] = state[key]
    if key == ablation.PICK:  # the multiselect's list of ids is ``ablate``'s value
        values["ablate"] = ",".join(values.pop(key))
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
    if settings.weights == Weights.TRAINED:
        return _t("weights.badge.trained", lang, label=label or _t("weights.badge.trained_default", lang))
    return _t("weights.badge.random", lang, seed=settings.seed)


def badge_text(pipe, settings: Settings) -> str:
    """The weights on screen, in the session's language: "short badge; details for a caption".

    ``core`` (no i18n there) labels its pipelines in English; the texts here say the same from the
    pipeline's weights and metrics, so the badge follows the language switch.
    """
    lang, m = settings.lang, pipe.metrics or {}
    acc = m.get("test_token_acc")
    acc = f"{acc:.1%}" if isinstance(acc, float) else "?"
    if settings.weights == Weights.SESSION and pipe.task == "lm":
        ppl = (m.get("test") or {}).get("perplexity")
        return _t("training.badge.session_lm", lang, steps=m.get("steps", "?"),
                  ppl=f"{ppl:.1f}" if isinstance(ppl, float) else "?")
    if settings.weights == Weights.SESSION:
        return _t(
            "weights.label.session", lang, task=pipe.task, steps=m.get("steps", "?"), acc=acc
        )
    weights = pipe.weights
    if weights == Weights.HF:
        return folder_label(pipe, lang)
    if weights == Weights.RANDOM:
        return _t("weights.label.random", lang, seed=settings.seed, merges=pipe.merges)
    if weights == Weights.TRAINED:
        return _t("weights.label.trained", lang, acc=acc)
    if weights == Weights.GPT:
        c, ppl, merges = pipe.config, (m.get("test") or {}).get("perplexity"), m.get("merges")
        return _t("weights.label.gpt", lang, layers=c.num_layers, heads=c.num_heads, d_model=c.d_model,
                  ppl=f"{ppl:.1f}" if isinstance(ppl, float) else "?",
                  merges=f"{merges:,}" if isinstance(merges, int) else "?")
    key = "weights.label.pretrained" if weights == Weights.MINILM else f"weights.label.{weights}"
    return _t(key, lang) if key in _strings(lang) else pipe.label


def folder_label(pipe, lang: str) -> str:
    """A model folder's badge, from its configuration (``core.tracing.pipeline.folder_pipeline`` says the
    same)."""
    c = pipe.config
    kv = c.num_kv_heads or c.num_heads
    heads = _t("models.heads", lang, h=c.num_heads) if kv == c.num_heads else _t(
        "models.heads.gqa", lang, h=c.num_heads, kv=kv)
    return _t("models.label", lang, name=pipe.name.removeprefix("hf:"), architecture=pipe.architecture,
              stack=_t(f"models.stack.{c.stack}", lang), layers=c.num_layers, heads=heads, d_model=c.d_model,
              tokenizer=pipe.tokenizer_kind)


def paper_differences(config, name: str, lang: str) -> str:
    """What a model lacks of the paper's Transformer, or does otherwise, said from its configuration."""
    parts = [f"models.paper.{config.stack}"] if config.stack != "encoder_decoder" else []
    parts += ["models.paper.pre"] if config.norm == "pre" else []
    parts += ["models.paper.rms"] if config.norm_kind == "rms" else []
    if config.activation in ("gelu", "gelu_tanh", "swiglu"):
        parts.append("models.paper.swiglu" if config.activation == "swiglu" else "models.paper.gelu")
    parts += [f"models.paper.{config.positions}"] if config.positions in ("learned", "rope") else []
    parts += ["models.paper.no_scale"] if not config.scale_embeddings else []
    parts += ["models.paper.embed_norm"] if config.embed_norm else []
    kv = config.num_kv_heads or config.num_heads
    values = {"h": config.num_heads, "kv": kv}
    parts += ["models.paper.gqa"] if kv != config.num_heads else []
    # the paper shares the embedding matrix with the pre-softmax linear layer (its section 3.4)
    parts += ["models.paper.untied"] if config.stack != "encoder" and not config.tie_embeddings else []
    parts += ["models.paper.no_ffn_bias"] if not config.ffn_bias else []  # its equation (2): b₁, b₂
    joined = _t("models.paper.and", lang).join(_t(key, lang, **values) for key in parts)
    return _t("models.paper", lang, name=name, parts=joined)


def _sidebar(settings: Settings, trained_config, config=None) -> None:
    """Every setting, in the order of ``KEYS``; sizes fixed (and disabled) when the weights fix them.
    ``config``: the model on screen's (its parts can be switched off)."""
    state = st.session_state
    # A widget keyed K shows st.session_state[K]; setting it before the widget is drawn makes every
    # page draw the stored settings, whichever page drew the widget last.
    for key in KEYS:
        state[key] = getattr(settings, key)
    _text_widgets(trained_config)
    _weights_widget(settings)
    _size_widgets(settings, trained_config)
    ablation.sidebar_widgets(settings, config, _bound)
    st.sidebar.caption(t("sidebar.url"))


def _bound(key: str) -> dict:
    """A sidebar widget's key and its change handler (which validates the new value with the others)."""
    return {"key": key, "on_change": _on_change, "args": (key,)}


def _text_widgets(config) -> None:
    """Language, sentence and target; labelled from the model on screen (``config``: None for random
    weights, an encoder-decoder): a model with one stack reads the sentence alone, so its target box
    is disabled and says so."""
    sb = st.sidebar
    sb.segmented_control(t("sidebar.lang"), LANGS, required=True, format_func=LANG_NAMES.__getitem__,
                         **_bound("lang"))
    one_stack = config is not None and config.stack != "encoder_decoder"
    label = "models.sentence.decoder" if one_stack and config.stack == "decoder" else "sidebar.sentence"
    sb.text_area(t(label), height=90, help=t("sidebar.sentence.help"), **_bound("sentence"))
    placeholder = t("models.target.unread") if one_stack else t("sidebar.target.placeholder")
    sb.text_area(t("sidebar.target"), height=68, placeholder=placeholder, disabled=one_stack,
                 **_bound("target"))


def _weights_widget(settings: Settings) -> None:
    """The weights on offer: random always; the others when they can be used (or are asked for)."""
    sb = st.sidebar
    options = [Weights.RANDOM]
    if checkpoint_available() or settings.weights == Weights.TRAINED:
        options.append(Weights.TRAINED)
    if gpt_available() or settings.weights == Weights.GPT:
        options.append(Weights.GPT)
    if _has_session_model():
        options.append(Weights.SESSION)
    if minilm_available() or settings.weights == Weights.MINILM:
        options.append(Weights.MINILM)
    folders, unusable = _model_folders()
    options += [value for value in folders if value not in options]
    if is_model_value(settings.weights) and settings.weights not in options:
        options.append(settings.weights)
    # format_func is also called outside the run (AppTest): bind the language now
    sb.radio(t("sidebar.weights"), options,
             format_func=lambda w, lang=settings.lang: _weights_option(w, folders, lang), **_bound("weights"))
    if not checkpoint_available():
        sb.caption(t("sidebar.no_checkpoint"))
    if not minilm_available():
        sb.caption(t("sidebar.no_minilm"))
    if not gpt_available():
        sb.caption(t("sidebar.no_gpt"))
    if unusable:
        sb.caption(t("models.unsupported_found", names=", ".join(unusable)))


def _model_folders() -> tuple[dict, list[str]]:
    """The model folders on offer ({value: FoundModel}, supported ones) and the names of the others."""
    from ui.folders.models import find_models

    try:
        found = find_models()
    except OSError:  # an unreadable root: the other weights are still there
        log.exception("looking for model folders failed")
        return {}, []
    usable = {value: m for value, m in found.items() if m.family is not None}
    return usable, [literal(value, 40) for value, m in found.items() if m.family is None]


def _count(params: int) -> str:
    """A parameter count as people say it: 124.4M, 1.5B; a small one in full (60,512)."""
    for size, unit in ((1e9, "B"), (1e6, "M")):
        if params >= size:
            return f"{params / size:,.1f}{unit}"
    return f"{params:,}"


def _weights_option(value: str, folders: dict, lang: str) -> str:
    """The sidebar's label of a weights choice: a model folder's name and size, the others' text."""
    if is_model_value(value):
        found = folders.get(value)
        params = _count(found.params) if found is not None and found.params else "?"
        return _t("models.option", lang, name=value.removeprefix("hf:"), params=params)
    return _t(f"sidebar.weights.{value}", lang)


def _size_widgets(settings: Settings, trained_config) -> None:
    """The model's sizes, seed, norm and positions (one value, disabled, when the weights fix them),
    and how many tokens the model reads."""
    sb, lang = st.sidebar, settings.lang
    fixed = trained_config is not None
    if fixed:
        c = trained_config
        key = "models.fixed_sizes" if is_model_value(settings.weights) else "sidebar.fixed_sizes"
        sb.info(t(key, d_model=c.d_model, h=c.num_heads, n=c.num_layers, d_ff=c.d_ff, norm=c.norm))
    sb.selectbox(t("sidebar.d_model"), (settings.d_model,) if fixed else D_MODEL_CHOICES, disabled=fixed,
                 **_bound("d_model"))
    heads = (settings.num_heads,) if fixed else head_choices(settings.d_model)
    sb.select_slider(t("sidebar.num_heads"), heads, disabled=fixed, help=t("sidebar.num_heads.help"),
                     **_bound("num_heads"))
    top = max(NUM_LAYERS_RANGE[1], settings.num_layers)  # a model folder's own depth (GPT-2 small: 12)
    one_stack = fixed and trained_config.stack != "encoder_decoder"
    sb.slider(t("models.num_layers" if one_stack else "sidebar.num_layers"), NUM_LAYERS_RANGE[0], top,
              disabled=fixed, **_bound("num_layers"))
    sb.selectbox(t("sidebar.d_ff"), (settings.d_ff,) if fixed else D_FF_CHOICES, disabled=fixed,
                 format_func=lambda v, lang=lang: (
                     _t("sidebar.d_ff.default", lang, value=4 * settings.d_model) if v == 0 else str(v)),
                 **_bound("d_ff"))
    sb.number_input(t("sidebar.seed"), min_value=SEED_RANGE[0], max_value=SEED_RANGE[1], step=1,
                    disabled=fixed, **_bound("seed"))
    sb.radio(t("sidebar.norm"), NORM_CHOICES, horizontal=True, disabled=fixed,
             format_func=lambda v, lang=lang: _t(f"sidebar.norm.{v}", lang), **_bound("norm"))
    sb.selectbox(t("sidebar.positions"), (settings.positions,) if fixed else POSITIONS_CHOICES,
                 disabled=fixed, help=t("sidebar.positions.help"),
                 format_func=lambda v, lang=lang: _t(f"sidebar.positions.{v}", lang), **_bound("positions"))
    if settings.positions == "rope" and settings.d_k == 1:  # RoPE turns pairs of dimensions: none here
        sb.caption(t("positional.rope.no_pair.sidebar"))
    sb.select_slider(t("sidebar.max_tokens"), MAX_TOKENS_CHOICES, help=t("sidebar.max_tokens.help"),
                     **_bound("max_tokens"))


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
        st.navigation(navigation_pages(current_lang()))


# While a rerun is under way Streamlit marks every element not yet redrawn as stale and fades it to
# a third of its opacity (a 1 s transition after 0.5 s). Glassbox keeps it steady instead: a slider
# move redraws the page within about a second, so the fade was a flicker on the projector, and its
# ~50 running transitions cost Chromium's renderer and GPU process CPU while the server was building
# the model on the same two cores (docs/performance.md). The running indicator at the top right still
# shows a rerun.
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
    st.set_page_config(page_title=f"{title} · Glassbox", page_icon=icon or FAVICON, layout="wide")
    st.html(STEADY_RERUN_CSS + TAB_LABEL_CSS)
    _ensure_navigation()
    settings = _with_session_model(state[STORE])
    # The pipeline (cached) names the weights really on screen: "trained" falls back to random
    # weights, with a warning, when the checkpoint cannot be used.
    pipe = get_pipeline(replace(settings, ablate=""), quiet=True)  # intact: which parts it has
    if pipe is None and is_model_value(settings.weights):  # a model folder that could not be loaded
        settings = _model_folder_failed(settings)
        pipe = get_pipeline(replace(settings, ablate=""), quiet=True)
    settings, fixed_config = _on_screen(settings, pipe)
    settings = _parts_it_has(settings, pipe)
    if settings.ablate and pipe is not None:  # the same weights with those parts off
        pipe = get_pipeline(settings, quiet=True)
    # With fixed sizes the size widgets show the model's own (disabled); the stored ones come back
    # when the user switches to random weights.
    _sidebar(settings if fixed_config is not None else state[STORE], fixed_config,
             None if pipe is None else pipe.config)
    _write_url(state[STORE])
    st.title(title)
    _weights_badge(pipe, settings)
    ablation.badge(settings, pipe)
    for notice in state.get(NOTICES, []):
        st.warning(notice, icon=":material/warning:")
    return settings


def _parts_it_has(settings: Settings, pipe) -> Settings:
    """Only the parts switched off that the model on screen has: the others are dropped from the stored
    settings (and so from the URL), each with a notice (a URL made for another model)."""
    kept, notices = ablation_problems(settings, None if pipe is None else pipe.config)
    if notices:
        state = st.session_state
        state[STORE] = replace(state[STORE], ablate=kept.ablate)
        state[NOTICES] = [*state.get(NOTICES, []), *notices]
    return kept


def _model_folder_failed(settings: Settings) -> Settings:
    """The model folder asked for could not be loaded: the stored settings fall back to the weights the
    app starts with, and a notice says why (as for a bad URL value)."""
    state, fallback = st.session_state, DEFAULTS.weights if checkpoint_available() else Weights.RANDOM
    why = model_failure(settings.weights, settings.lang) or "?"
    notice = t("models.failed", name=literal(settings.weights, 60), why=why,
               fallback=_t(f"sidebar.weights.{fallback}", settings.lang))
    state[STORE] = settings = replace(settings, weights=fallback)
    if not state.get(SENTENCE_OWN):
        state[STORE] = settings = replace(settings, sentence=default_sentence(fallback))
    state[NOTICES] = [*state.get(NOTICES, []), notice]
    return settings


def _with_session_model(settings: Settings) -> Settings:
    """Session weights name this session's model (``session_tag``); without one (the session was
    reset), the default weights."""
    state = st.session_state
    if settings.weights != Weights.SESSION:
        return settings
    if _has_session_model():
        return replace(settings, session_tag=state[SESSION_TAG])
    state[STORE] = settings = replace(settings, weights=DEFAULTS.weights)
    if not state.get(SENTENCE_OWN):
        state[STORE] = settings = replace(settings, sentence=default_sentence(DEFAULTS.weights))
    return settings


def _on_screen(settings: Settings, pipe) -> tuple[Settings, object]:
    """The settings of the model really on screen, and its config when its weights fix the sizes
    (trained and pretrained weights: the sidebar shows the model's own, disabled)."""
    if pipe is not None and pipe.weights != Weights.RANDOM:
        c = pipe.config
        return replace(settings, d_model=c.d_model, num_heads=c.num_heads, num_layers=c.num_layers,
                       d_ff=c.d_ff, norm=c.norm, positions=c.positions), c
    if settings.weights in (Weights.TRAINED, Weights.MINILM, Weights.GPT) or is_model_value(settings.weights):
        return replace(settings, weights=Weights.RANDOM), None  # a fallback (a warning says why)
    return settings, None


def _weights_badge(pipe, settings: Settings) -> None:
    """Which weights are on screen, on every page: a short badge, its details in a caption under it
    (the badge is cut at one line), and why the weights asked for could not be used."""
    text = badge_text(pipe, settings) if pipe is not None and pipe.label else weights_caption(settings)
    text = text.replace("[", "(").replace("]", ")")  # the badge is Markdown
    badge, _, details = text.replace("；", "; ").partition("; ")
    if (settings.weights if pipe is None else pipe.weights) != Weights.RANDOM:
        st.badge(badge, icon=":material/school:", color="green")
    else:
        st.badge(badge, icon=":material/casino:", color="orange")
    if details:
        st.caption(details[:1].upper() + details[1:] + ("。" if settings.lang == "zh" else "."))
    if pipe is not None and pipe.weights == Weights.HF:  # what it lacks of the paper's model
        st.caption(paper_differences(pipe.config, pipe.name.removeprefix("hf:"), settings.lang))
    if pipe is not None and pipe.warning:
        st.warning(
            t(
                {Weights.MINILM: "minilm.fallback", Weights.GPT: "gpt.fallback"}.get(settings.weights,
                                                                                       "weights.fallback"),
                detail=pipe.problem or pipe.warning,
            ),
            icon=":material/warning:",
        )
