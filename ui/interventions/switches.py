"""Parts switched off (``ablate=``), on every page: the sidebar's control, the badge naming them, and
the switches the Attention and Full model pages put beside a head or a layer.

The parts live in the settings (``Settings.ablate``, canonical ids: core/interventions/parts.py), so
they are in the URL, survive page switches and key every cached run; ``ui.caches.cache.get_pipeline``
hands every page the pipeline with them off.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from core.interventions.parts import MODES, WHOLE, Part, format_ablation, read_ids, stacks_of
from i18n import t as _t
from ui.page.lang import STORE, t
from ui.page.settings import Settings

PICK = "ablate_pick"  # the sidebar's multiselect (its value is a list; ``ablate`` is the ids joined)
CLEAR = "ablate_clear"


def parts_of(settings) -> list[Part]:
    """The parts switched off in ``settings`` (the app's ``Settings`` or a pipeline's)."""
    return read_ids(settings.ablate)[0]


def all_parts(config) -> list[Part]:
    """Every part of a model that can be switched off, in the order of the stack (layer by layer)."""
    parts = []
    for layer in range(1, config.num_layers + 1):
        for stack in stacks_of(config):
            parts += [Part(stack, layer, str(h)) for h in range(1, config.num_heads + 1)]
            parts += [Part(stack, layer, what) for what in WHOLE if not (stack == "cross" and what == "ffn")]
    return parts


def part_label(part: Part, config, lang: str) -> str:
    """A part as the screen names it: "head 2.1 (decoder self-attention)", "cross-attention, layer 1"."""
    stack = "interventions.stack.dec.only" if config.stack == "decoder" and part.stack == "dec" else (
        f"interventions.stack.{part.stack}")
    if part.head is not None:
        return _t("interventions.part.head", lang, layer=part.layer, head=part.head, stack=_t(stack, lang))
    if part.what == "ffn":
        where = _t(f"interventions.ffn.{part.stack}", lang)
        return _t("interventions.part.ffn", lang, layer=part.layer, stack=where)
    return _t("interventions.part.attn", lang, layer=part.layer, stack=_t(stack, lang))


def parts_text(settings: Settings, config) -> str:
    """The parts switched off, named for the screen and joined: "head 2.1 (…), head 2.3 (…)"."""
    sep = "、" if settings.lang == "zh" else ", "
    return sep.join(part_label(p, config, settings.lang) for p in parts_of(settings))


def set_parts(parts, mode: str | None = None) -> None:
    """Switch exactly ``parts`` off (in a widget's callback: the rerun that follows shows them off)."""
    state = st.session_state
    settings = state[STORE]
    state[STORE] = replace(settings, ablate=format_ablation(parts), ablate_mode=mode or settings.ablate_mode)


def toggle(part: Part) -> None:
    """Switch ``part`` off, or back on if it is off."""
    parts = set(parts_of(st.session_state[STORE]))
    set_parts(parts ^ {part})


def sidebar_widgets(settings: Settings, config, bound) -> None:
    """The sidebar's "Switch parts off": which parts (every head and sublayer of the model on screen)
    and what off means (``ablate_mode``). ``bound(key)``: the sidebar's widget key and change handler."""
    if config is None:
        return
    state = st.session_state
    on = parts_of(settings)
    state[PICK] = [p.id for p in on]
    by_id = {p.id: p for p in all_parts(config)}
    with st.sidebar.expander(t("interventions.sidebar.title"), expanded=bool(on)):
        def label(i: str, lang: str = settings.lang) -> str:
            return f"{i} · {part_label(by_id[i], config, lang)}"

        st.multiselect(t("interventions.sidebar.pick"), list(by_id), format_func=label,
                       help=t("interventions.sidebar.pick.help"), **bound(PICK))
        st.radio(t("interventions.sidebar.mode"), MODES, horizontal=True,
                 format_func=lambda m, lang=settings.lang: _t(f"interventions.sidebar.mode.{m}", lang),
                 **bound("ablate_mode"))


def badge(settings: Settings, pipe) -> None:
    """On every page with parts off: a badge naming them, what off means, and a button that switches
    them all back on."""
    if not settings.ablate or pipe is None:
        return
    from core.interventions.runs import REFERENCE_SIZE

    with st.container(key="ablation_badge"):
        st.badge(t("interventions.badge", parts=parts_text(settings, pipe.config)),
                 icon=":material/power_off:", color="red")
        st.caption(t(f"interventions.caption.{settings.ablate_mode}", n=REFERENCE_SIZE))
        st.button(t("interventions.clear"), key=CLEAR, on_click=set_parts, args=((),),
                  icon=":material/power:")


STACK_OF_KIND = {"encoder": "enc", "decoder": "dec", "cross": "cross"}  # figures' attention kinds


def head_part(attn_kind: str, layer: int, head: int) -> Part:
    """The part of head ``head`` of layer ``layer`` (both from 0) of the attention ``attn_kind``."""
    return Part(STACK_OF_KIND[attn_kind], layer + 1, str(head + 1))


def is_off(settings, part: Part) -> bool:
    return part in parts_of(settings)


def switch(settings, part: Part, label: str, key: str) -> None:
    """A toggle that switches ``part`` off (on: the part is off) on every page."""
    st.session_state[key] = is_off(settings, part)
    st.toggle(label, key=key, on_change=toggle, args=(part,), help=t("interventions.sidebar.pick.help"))


def switches(settings, options: list[Part], config, label: str, key: str, lang: str, short=None) -> None:
    """Pills, one per part of ``options``, selected when it is off; a click switches it off or on.
    ``settings``: anything with the ``ablate`` on screen (a run's ``pipe.settings``); ``short(part)``: a
    pill's label (default: the part's full name)."""
    on = parts_of(settings)
    st.session_state[key] = [p.id for p in options if p in on]
    names = {p.id: (short(p) if short else part_label(p, config, lang)) for p in options}
    st.pills(label, list(names), selection_mode="multi", format_func=names.__getitem__, key=key,
             on_change=_chosen, args=(key, tuple(options)), help=t("interventions.sidebar.pick.help"))


def _chosen(key: str, options: tuple[Part, ...]) -> None:
    chosen = set(st.session_state[key] or [])
    others = set(parts_of(st.session_state[STORE])) - set(options)
    set_parts(others | {p for p in options if p.id in chosen})


def pick_parts(settings: Settings, config, key: str) -> None:
    """A multiselect of every part of the model, the ones off selected (the sidebar's, on a page)."""
    by_id = {p.id: p for p in all_parts(config)}
    st.session_state[key] = [p.id for p in parts_of(settings) if p.id in by_id]

    def label(i: str, lang: str = settings.lang) -> str:
        return f"{i} · {part_label(by_id[i], config, lang)}"

    st.multiselect(t("interventions.sidebar.pick"), list(by_id), format_func=label, key=key,
                   on_change=_picked, args=(key,), help=t("interventions.sidebar.pick.help"))


def _picked(key: str) -> None:
    set_parts(read_ids(",".join(st.session_state[key] or []))[0])
