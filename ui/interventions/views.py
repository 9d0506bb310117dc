"""Interventions on the pages: the model with parts switched off beside the intact one (the Overview).

The parts are the settings' (``ablate=``); the intact run is the same sentence with nothing off, from
the same caches (the weights are loaded once: ``ui.caches.cache.get_pipeline``).
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from core.interventions.runs import answer_probs, copy_losses
from figures.interventions import (
    heads_patching_figure,
    lens_figure,
    patch_row_label,
    residual_patching_figure,
)
from i18n import t as _t
from ui.caches.budget import cached
from ui.caches.cache import cache_key, get_pipeline, get_run
from ui.interventions import switches as ablation
from ui.interventions.switches import parts_text
from ui.page import widgets
from ui.page.figure import show_figure
from ui.page.lang import t
from ui.page.safe import show_tokens
from ui.page.settings import Settings, literal


@cached(max_entries=8)
def _copy_losses(_pipe, key):
    """``core.interventions.runs.copy_losses`` of a pipeline, by its settings (parts off included)."""
    return copy_losses(_pipe)


def intact_settings(settings: Settings) -> Settings:
    return replace(settings, ablate="", ablate_mode="zero")


def compare_with_intact(settings: Settings, run) -> None:
    """With parts switched off: the intact model's answer beside this one's, token by token with the
    probability each gave, the continuation a language model writes, and a language model's loss on
    the second copy of a repeated random sequence. In a container keyed ``ablation_compare``."""
    if not settings.ablate or run is None or run.config.stack == "encoder":
        return
    intact = get_run(intact_settings(settings))
    if intact is None:
        return
    with st.container(key="ablation_compare"):
        st.subheader(t("interventions.compare.title"))
        mine, theirs = answer_probs(run), answer_probs(intact)
        changed = sum(a[0] != b[0] for a, b in zip(mine, theirs, strict=False)) + abs(len(mine) - len(theirs))
        st.caption(
            t("interventions.compare.same")
            if not changed
            else t("interventions.compare.differs", n=changed, total=max(len(mine), len(theirs)))
        )
        off = t("interventions.compare.ablated", parts=parts_text(settings, run.config))
        left, right = st.columns(2)
        for column, title, answer, whole in (
            (left, t("interventions.compare.intact"), theirs, intact),
            (right, off, mine, run),
        ):
            with column:
                st.markdown(f"**{title}**")
                _answer_table(answer, whole)
        _copy_loss_rows(settings, run)


def _answer_table(answer: list[tuple[str, float]], run) -> None:
    """The answer, written out, then each token with its probability (a table: user text is never HTML)."""
    st.code(" ".join(token for token, _ in answer) or "∅", language=None, wrap_lines=True)
    if run.answer_kind == "next":
        decoding = run.decoding
        if decoding is not None:
            start = len(run.src_tokens)
            written = [run.pipe.tgt_labels[i] for i in decoding.tokens[0, start:].tolist()]
            st.caption(t("interventions.compare.generated", n=len(written)))
            st.code(
                "".join(written).replace("␣", " ").replace("⏎", "\n") or "∅", language=None, wrap_lines=True
            )
    st.dataframe(
        {
            t("interventions.compare.answer"): [token for token, _ in answer],
            t("interventions.compare.prob"): [round(p, 4) for _, p in answer],
        },
        hide_index=False,
        width="stretch",
    )


def _copy_loss_rows(settings: Settings, run) -> None:
    """A language model's loss on each copy of a random sequence written twice, intact and with parts off."""
    pipe = get_pipeline(settings, quiet=True)
    intact_pipe = get_pipeline(intact_settings(settings), quiet=True)
    if pipe is None or intact_pipe is None or pipe.config.stack != "decoder":
        return
    with st.spinner(t("run.running")):
        ours = _copy_losses(pipe, cache_key(settings))
        theirs = _copy_losses(intact_pipe, cache_key(intact_settings(settings)))
    from core.training.language import PROBE

    st.markdown(
        f"**{t('interventions.compare.loss')}**", help=t("interventions.compare.loss.help", n=PROBE["length"])
    )
    left, right = st.columns(2)
    left.metric(t("interventions.compare.intact"), t("interventions.compare.loss.value", loss=theirs[1]))
    left.caption(t("interventions.compare.loss.first", first=theirs[0]))
    right.metric(
        t("interventions.compare.ablated", parts=parts_text(settings, run.config)),
        t("interventions.compare.loss.value", loss=ours[1]),
        delta=f"{ours[1] - theirs[1]:+.2f}",
        delta_color="inverse",
    )
    right.caption(t("interventions.compare.loss.first", first=ours[0]))


# -- the Interventions page ------------------------------------------------------------------------------

VIEWS = ("patch", "lens", "switch")  # ?iv_view=<view>: the page's tabs; a cold URL opens a chart


def switch_section(settings: Settings, run) -> None:
    """Switch parts off here (the same parts as the sidebar's), a few that teach, and the comparison."""
    encoder_only = run.config.stack == "encoder"
    st.markdown(t("interventions.switch.intro"))
    if encoder_only:  # its parts can be switched off; there is no answer to compare
        model = run.pipe.name or "all-MiniLM-L6-v2"
        st.info(t("interventions.encoder_only", model=model), icon=":material/info:")
    ablation.pick_parts(settings, run.config, "iv_parts")
    preset = ready_parts(run.pipe)
    if preset is not None:
        name, parts = preset
        st.button(t(f"interventions.preset.{name}"), key=f"iv_preset_{name}", on_click=ablation.set_parts,
                  args=(parts,), help=", ".join(p.id for p in parts))
    if not settings.ablate:
        st.info(t("interventions.switch.none"), icon=":material/info:")
    elif not encoder_only:
        compare_with_intact(settings, run)


def ready_parts(pipe) -> tuple[str, tuple] | None:
    """The parts worth switching off together on this model, named for its button: the small GPT's two
    induction heads, the pinyin model's last cross-attention layer (``default_parts``); None for others."""
    from core.interventions.runs import default_parts
    from core.names import Weights

    if pipe.weights == Weights.GPT:
        return "induction", default_parts(pipe)
    if pipe.task == "pinyin":
        return "cross2", default_parts(pipe)
    return None


@cached(max_entries=16)
def _patched(_pipe, key, pair: str, clean: str, corrupted: str, position: int | None):
    """``patch_ids`` of a ready-made pair (``pair``) or ``patch_texts`` of two texts; a PatchError is
    returned, not raised (it is an answer: this pair cannot be patched)."""
    from core.interventions.patching import PatchError
    from core.interventions.runs import patch_ids, patch_texts, ready_pairs

    try:
        if pair != "own":
            clean_ids, corrupted_ids, default = ready_pairs(_pipe)[pair]
            return patch_ids(_pipe, clean_ids, corrupted_ids, default if position is None else position)
        return patch_texts(_pipe, clean, corrupted, position)
    except PatchError as exc:
        return exc


def patch_section(settings: Settings, run) -> None:
    """Patch a clean input's run into a corrupted one's: the pair (ready-made or the user's own), the
    answer and its foil, then the share restored per head and per layer and position."""
    from core.interventions.runs import ready_pairs

    pipe, lang = run.pipe, settings.lang
    st.markdown(t("interventions.patch.intro"))
    names = ("restored", "patched", "corrupted", "clean")
    w = {k: rf"\text{{{t(f'interventions.patch.word.{k}')}}}" for k in names}
    st.latex(
        rf"{w['restored']} = \frac{{m({w['patched']}) - m({w['corrupted']})}}"
        rf"{{m({w['clean']}) - m({w['corrupted']})}},"
        r"\quad m = \text{logit}_a - \text{logit}_f"
    )
    if run.config.stack == "encoder":
        st.info(
            t("interventions.encoder_only", model=pipe.name or "all-MiniLM-L6-v2"), icon=":material/info:"
        )
        return
    pairs = list(ready_pairs(pipe)) + ["own"]
    notices: list[str] = []
    pair = widgets.choose(
        st.radio,
        t("interventions.patch.pair"),
        "patch_pair",
        pairs,
        pairs[0],
        notices,
        fmt=lambda p, lang=lang: _t(f"interventions.pair.{p}", lang),
        horizontal=True,
    )
    widgets.warn(notices)
    clean = corrupted = ""
    if pair == "own":
        left, right = st.columns(2)
        with left:
            clean = widgets.text_in_url(t("interventions.patch.clean"), "patch_clean", settings.sentence)
        with right:
            corrupted = widgets.text_in_url(
                t("interventions.patch.corrupted"),
                "patch_corrupt",
                "",
                placeholder=t("interventions.patch.corrupted.placeholder"),
            )
        if not clean.strip() or not corrupted.strip():
            st.info(t("interventions.patch.need_two"), icon=":material/info:")
            return
    else:
        st.caption(t(f"interventions.pair.{pair}.explain"))
    one_stack = run.config.stack == "decoder"
    with st.spinner(t("run.running")):
        result = _patched(pipe, cache_key(settings), pair, clean, corrupted, None)
    if isinstance(result, Exception):
        st.warning(_patch_refusal(result, pipe, clean, corrupted, lang), icon=":material/warning:")
        return
    tokens_box = st.columns(2)
    with tokens_box[0]:
        show_tokens(result.clean_tokens, t("interventions.patch.clean.tokens"))
    with tokens_box[1]:
        show_tokens(result.corrupted_tokens, t("interventions.patch.corrupted.tokens"))
    p = result.patching
    where = (
        t("interventions.patch.where.next", token=result.decoder_tokens[p.position])
        if one_stack
        else t("interventions.patch.where.output", n=p.position + 1)
    )
    foil = result.foil if result.foil is not None else t("interventions.patch.no_foil")
    st.markdown(
        t(
            "interventions.patch.answer",
            answer=literal(result.answer),
            foil=literal(foil),
            where=where,
            clean=f"{p.clean:.2f}",
            corrupted=f"{p.corrupted:.2f}",
        )
    )
    rows = [patch_row_label(stack, layer + 1, lang, one_stack) for stack, layer in p.head_rows]
    st.markdown(f"**{t('interventions.patch.heads.title')}**")
    show_figure(
        heads_patching_figure(p.heads.numpy(), rows, lang=lang),
        key="patch_heads",
        name="patching-heads",
    )
    st.caption(t("interventions.patch.heads.reading"))
    st.markdown(f"**{t(f'interventions.patch.resid.title.{p.resid_stack}')}**")
    show_figure(
        residual_patching_figure(
            p.resid.numpy(),
            result.clean_tokens,
            lang=lang,
        ),
        key="patch_resid",
        name="patching-residual",
    )
    st.caption(t("interventions.patch.resid.reading"))


def _patch_refusal(exc: Exception, pipe, clean: str, corrupted: str, lang: str) -> str:
    """Why a pair cannot be patched, in ``lang``: different token counts, nothing to restore, …"""
    if clean or corrupted:
        n = len(pipe.src_encode(clean)[1]) if clean.strip() else 0
        m = len(pipe.src_encode(corrupted)[1]) if corrupted.strip() else 0
        if n != m:
            return t("interventions.patch.refused.lengths", n=n, m=m)
    if "nothing to restore" in str(exc):
        return t("interventions.patch.refused.same")
    return t("interventions.patch.refused", why=literal(exc, 200))


@cached(max_entries=16)
def _lens(_pipe, key, sentence: str, target: str, max_tokens: int, _run):
    from core.interventions.runs import lens_of

    return lens_of(_pipe, _run)


def lens_section(settings: Settings, run) -> None:
    """Every layer's guess: the decoder's stream after each layer read through the final norm and the
    unembedding, as the probability of the model's final answer at each position."""
    st.markdown(t("interventions.lens.intro"))
    if run.config.stack == "encoder":
        st.info(
            t("interventions.encoder_only", model=run.pipe.name or "all-MiniLM-L6-v2"), icon=":material/info:"
        )
        return
    with st.spinner(t("run.running")):
        lens = _lens(run.pipe, cache_key(settings), settings.sentence, run.target, settings.max_tokens, run)
    labels = run.pipe.tgt_labels
    st.caption(t(f"interventions.lens.norm.{lens.norm}", norm=lens.norm))
    top = [[[labels[i] for i in cell] for cell in row] for row in lens.top_ids.tolist()]
    answers = [labels[i] for i in lens.answer.tolist()]
    tokens = run.tgt_tokens[: len(answers)]
    st.markdown(f"**{t('interventions.lens.title')}**")
    show_figure(
        lens_figure(
            lens.answer_prob.numpy(),
            top,
            lens.top_probs.numpy(),
            tokens,
            answers,
            lang=settings.lang,
        ),
        key="lens_figure",
        name="logit-lens",
    )
    st.caption(t("interventions.lens.reading"))
