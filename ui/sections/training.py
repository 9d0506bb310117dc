"""The Training page's sections: the task's budget, Start and Stop (in their on_click callbacks), the
live progress and curves of a training in the background, and the trained model beside random weights."""

from dataclasses import replace

import streamlit as st

import ui
from core.names import Weights
from figures import training as fig
from ui.page.settings import checkpoint_available, literal
from ui.page.sidebar import SESSION_MODEL, SESSION_TAG
from ui.sections import training_jobs
from ui.sections.training_jobs import LM_BUDGET, ServerBusy, session_watch

TASKS = ("reverse", "copy", "pinyin", "lm")
BUDGET = (400, 2)  # steps, minutes: the sliders' defaults
COMPARE_DEFAULT = {"pinyin": "中华人民共和国", "copy": "3 1 4 1 5 9", "reverse": "3 1 4 1 5 9"}


def suggest_budget() -> None:
    """Moving to or from the language model: the step and time limits its heads need, or the usual."""
    state = st.session_state
    if state["train_task"] == "lm" or state.get("_train_budget_lm"):
        steps, minutes = LM_BUDGET if state["train_task"] == "lm" else BUDGET
        state["train_steps"], state["train_minutes"] = steps, minutes
    state["_train_budget_lm"] = state["train_task"] == "lm"


# Start and Stop act in their on_click callbacks, which run before the script: the buttons are then
# drawn from the job as it is after the click (Start disabled as soon as a job runs, Stop disabled
# once pressed), and the fragment below reruns the page when the job ends.
def start_job(sizes: dict) -> None:
    state = st.session_state
    task = state["train_task"]
    config = dict(sizes, dropout=0.1 if task == "pinyin" else 0.0)
    try:
        # looked up when Start is pressed, as the page script did on each run: the module's own starter
        state["train_job"] = training_jobs.start_training(task, config, state["train_steps"],
                                                          state["train_minutes"], owner_alive=session_watch())
    except ServerBusy:
        state["train_refused"] = True


def stop_job() -> None:
    if st.session_state.get("train_job") is not None:
        st.session_state["train_job"].stop()  # seen after the current step; the model so far is kept


def progress_text(job, last: dict | None) -> str:
    """The progress bar's line: what the run is doing now."""
    if job.stopping:
        return ui.t("training.stopping")
    if last is not None and last["fraction"] >= 1.0:
        return ui.t("training.measuring")
    if last is None:
        return ui.t("training.starting.lm" if job.task == "lm" else "training.starting")
    common = dict(step=last["step"], loss=f"{last['loss']:.3f}", speed=f"{last['tokens_per_s']:,.0f}",
                  seconds=f"{last['elapsed']:.0f}")
    if job.task != "lm":
        return ui.t("training.progress", acc=f"{last['acc']:.1%}", **common)
    probed = [h for h in job.history if h.get("val")]  # the last measured perplexity and score
    ppl = f"{probed[-1]['val']['perplexity']:.1f}" if probed else "…"
    pm = f"{probed[-1]['heads']['best_pm']:.2f}" if probed else "…"
    return ui.t("training.progress.lm", ppl=ppl, pm=pm, **common)


def done_text(job) -> str:
    """The line under the curves once the run has ended and its model was measured on the test set."""
    m, ending = job.result.metrics, "stopped" if job.stopped_by_user else "finished"
    steps, seconds = m.get("steps", 0), m.get("seconds", 0)
    if job.task != "lm":
        return ui.t(f"training.done.{ending}", steps=steps, seconds=seconds,
                    acc=f"{m.get('test_token_acc', 0):.1%}", exact=f"{m.get('test_exact_acc', 0):.1%}")
    pm = m["induction"]["prefix_matching"]  # (layers × heads)
    # layers and heads counted from 1, in the Attention page's words
    best, (i, h) = max((score, (i, h)) for i, row in enumerate(pm) for h, score in enumerate(row))
    head = ui.t("induction.where", layer=i + 1, head=h + 1)
    return ui.t(f"training.done.lm.{ending}", steps=steps, seconds=seconds,
                ppl=f"{m['test']['perplexity']:.1f}", pm=f"{best:.2f}", head=head)


def show_job(lang: str) -> None:
    job = st.session_state.get("train_job")
    if job is None:
        st.info(ui.t("training.none"))
        return
    last = job.history[-1] if job.history else None
    if job.running:
        fraction = last["fraction"] if last else 0.0
        st.progress(min(max(fraction, 0.0), 1.0), text=progress_text(job, last))
    if job.history and job.task == "lm":
        ui.show_figure(fig.lm_curves(job.history, lang=lang), "train_curves", "training-curves-lm")
        st.caption(ui.t("training.lm.curves", every=job.config["eval_every"]))
    elif job.history:
        ui.show_figure(fig.curves(job.history, lang=lang), "train_curves", f"training-curves-{job.task}")
    if job.running:
        return
    if job.missing_corpus:
        st.error(ui.t("training.lm.missing", error=literal(job.error, 300)))
    elif job.error:
        st.error(ui.t("training.failed", error=literal(job.error, 300)))
    elif job.result is not None:
        st.success(done_text(job))
    if st.session_state.get("train_was_running"):
        st.session_state["train_was_running"] = False
        st.rerun(scope="app")  # the buttons above change once the job is over


def compare_section(settings) -> None:
    """The session's (or the shipped) encoder-decoder next to random weights: last cross-attention."""
    st.markdown(ui.t("training.compare.text"))
    trained_settings, trained_task = None, "pinyin"
    if st.session_state.get(SESSION_MODEL) is not None:
        trained_settings = replace(settings, weights=Weights.SESSION,
                                   session_tag=st.session_state[SESSION_TAG])
        trained_task = st.session_state[SESSION_MODEL].task
    elif checkpoint_available():
        trained_settings = replace(settings, weights=Weights.TRAINED)
    if trained_settings is None:
        st.info(ui.t("training.compare.none"))
        return
    trained_pipe = ui.get_pipeline(trained_settings)
    text = st.text_input(ui.t("training.compare.input"), value=COMPARE_DEFAULT[trained_task], max_chars=200,
                         key="train_compare")
    if trained_pipe is None:
        return
    cfg = trained_pipe.config
    random_settings = replace(settings, weights=Weights.RANDOM, session_tag="", d_model=cfg.d_model,
                              num_heads=cfg.num_heads, num_layers=cfg.num_layers, d_ff=cfg.d_ff,
                              norm=cfg.norm)
    columns = st.columns(2)
    for column, chosen, name in ((columns[0], trained_settings, "trained"),
                                 (columns[1], random_settings, "random")):
        with column:
            run = ui.get_run(replace(chosen, sentence=text, target=""), needs_decoder=True)
            if run is None:
                continue
            ui.show_figure(
                fig.cross_attention(fig.last_cross_attention(run.trace), run.tgt_tokens, run.src_tokens,
                                    ui.t(f"training.compare.title.{name}"), lang=settings.lang),
                f"train_compare_{name}", f"cross-attention-{name}",
            )
            ui.show_tokens(run.predicted, ui.t(f"training.compare.predicts.{name}"))
