"""Training page: train any task live (the small tasks with the sidebar's sizes, the language model with
its own), watch the curves, use the result."""

from dataclasses import replace

import streamlit as st

import ui
from core.names import Weights
from figures import training as fig
from ui.settings import checkpoint_available, literal
from ui.sidebar import SESSION_MODEL, SESSION_TAG, use_session_model
from ui.training_jobs import (
    COOLDOWN,
    LM_BUDGET,
    LM_LIVE,
    MAX_CONCURRENT_TRAININGS,
    ServerBusy,
    lm_live_config,
    session_watch,
    start_training,
)

TASKS = ("reverse", "copy", "pinyin", "lm")
BUDGET = (400, 2)  # steps, minutes: the sliders' defaults
COMPARE_DEFAULT = {"pinyin": "中华人民共和国", "copy": "3 1 4 1 5 9", "reverse": "3 1 4 1 5 9"}


settings = ui.page_setup("nav.training.title")
lang = settings.lang
intro = st.container()  # how the task chosen below learns: filled once it is chosen

# Labels computed now: a format_func that looked the language up later could run outside this session.
task_labels = {name: ui.t(f"training.task.{name}") for name in TASKS}


def suggest_budget() -> None:
    """Moving to or from the language model: the step and time limits its heads need, or the usual."""
    state = st.session_state
    if state["train_task"] == "lm" or state.get("_train_budget_lm"):
        steps, minutes = LM_BUDGET if state["train_task"] == "lm" else BUDGET
        state["train_steps"], state["train_minutes"] = steps, minutes
    state["_train_budget_lm"] = state["train_task"] == "lm"


task = st.radio(ui.t("training.task"), list(TASKS), format_func=task_labels.__getitem__, key="train_task",
                on_change=suggest_budget)
intro.markdown(ui.t("training.intro.lm" if task == "lm" else "training.intro"))
if task == "lm":  # the sizes the run will have: the language model's own, not the sidebar's
    live = lm_live_config()
    sizes_text = ui.t("training.sizes.lm", d_model=live["d_model"], h=live["num_heads"], n=live["num_layers"],
                      d_ff=live["d_ff"], positions=ui.t(f"sidebar.positions.{live['positions']}"),
                      context=live["context"], merges=live["merges"], seed=settings.seed,
                      steps=LM_BUDGET[0], minutes=LM_BUDGET[1], limit=MAX_CONCURRENT_TRAININGS)
else:
    sizes_text = ui.t("training.sizes", d_model=settings.d_model, h=settings.num_heads, n=settings.num_layers,
                      d_ff=settings.d_ff_value, norm=settings.norm, seed=settings.seed,
                      limit=MAX_CONCURRENT_TRAININGS)
st.caption(sizes_text + " " + ui.t("training.owner", seconds=st.get_option("server.disconnectedSessionTTL")))
left, right = st.columns(2)
steps = left.slider(ui.t("training.steps"), 50, 5000, BUDGET[0], step=50, key="train_steps")
minutes = right.slider(ui.t("training.minutes"), 1, 15, BUDGET[1], key="train_minutes")


# Start and Stop act in their on_click callbacks, which run before the script: the buttons are then
# drawn from the job as it is after the click (Start disabled as soon as a job runs, Stop disabled
# once pressed), and the fragment below reruns the page when the job ends.
def start_job(sizes: dict) -> None:
    state = st.session_state
    task = state["train_task"]
    config = dict(sizes, dropout=0.1 if task == "pinyin" else 0.0)
    try:
        state["train_job"] = start_training(task, config, state["train_steps"], state["train_minutes"],
                                            owner_alive=session_watch())
    except ServerBusy:
        state["train_refused"] = True


def stop_job() -> None:
    if st.session_state.get("train_job") is not None:
        st.session_state["train_job"].stop()  # seen after the current step; the model so far is kept


sizes = dict(d_model=settings.d_model, num_heads=settings.num_heads, num_layers=settings.num_layers,
             d_ff=settings.d_ff_value, norm=settings.norm, seed=settings.seed)  # those the caption states
job = st.session_state.get("train_job")
running = job is not None and job.running
start_col, stop_col, use_col = st.columns(3)
start_col.button(ui.t("training.start"), type="primary", disabled=running, key="train_start",
                 on_click=start_job, args=(sizes,))
stop_col.button(ui.t("training.stop"), disabled=not running or job.stopping, key="train_stop",
                on_click=stop_job)
if st.session_state.pop("train_refused", False):
    st.warning(ui.t("training.busy", n=MAX_CONCURRENT_TRAININGS))

# -- the loss, next to its curves -------------------------------------------------------------------

# the loss of the task chosen: the language model has no source x and no label smoothing
lm = task == "lm"
st.header(ui.t("training.loss.header.lm" if lm else "training.loss.header"))
left, right = st.columns([1, 1])
with left:
    if lm:
        st.latex(r"\mathcal{L} = -\frac{1}{T}\sum_{t=1}^{T}\log p_\theta(x_{t+1} \mid x_{\le t})")
        st.latex(r"\text{perplexity} = e^{\mathcal{L}}")
    else:
        st.latex(r"\mathcal{L} = -\frac{1}{N}\sum_{t=1}^{N}\sum_{w=1}^{V} q_t(w)\,"
                 r"\log p_\theta(w \mid y_{<t},\, x)")
        st.latex(r"q_t(w) = (1-\varepsilon)\,[\,w = y_t\,] + \frac{\varepsilon}{V},\qquad \varepsilon = 0.1")
with right:
    if lm:
        st.markdown(ui.t("training.loss.text.lm", share=f"{LM_LIVE.repeat:.0%}"))
    else:
        st.markdown(ui.t("training.loss.text"))


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


st.session_state["train_was_running"] = running
st.fragment(run_every=1.0 if running else None)(show_job)(lang)

if job is not None and not job.running and job.result is not None:
    if use_col.button(ui.t("training.use"), key="train_use"):
        use_session_model(job.result)
        st.rerun()  # the sidebar and the badge now show the session's model

# -- the learning rate, next to its schedule ------------------------------------------------------

st.header(ui.t("training.lr.header"))
# the dots of a run are drawn only on the schedule they followed: same task, budget (and d_model)
same_run = job is not None and job.task == task and job.steps == steps and (
    lm or job.config.get("d_model") == settings.d_model)
history = list(job.history) if same_run else None
left, right = st.columns([1, 1])
if lm:  # the language model's schedule: linear warm-up, then a cosine to lr/10
    train = LM_LIVE
    with left:
        st.latex(r"lrate = lr\cdot\frac{step}{warmup}\qquad (step \le warmup)")
        st.latex(r"lrate = lr\cdot\Big(0.1 + 0.9\cdot\tfrac{1}{2}\big(1 + \cos \pi s\big)\Big)")
        st.markdown(ui.t("training.lr.text.lm", lr=f"{train.lr:g}", warmup=train.warmup))
    with right:
        ui.show_figure(fig.lm_lr_schedule(steps, train, history, lang=lang), "train_lr", "learning-rate-lm",
                       column=0.5)
        st.caption(ui.t("training.lr.caption.lm", task=task_labels[task], steps=steps, warmup=train.warmup,
                        lr=f"{train.lr:g}"))
else:  # the seq2seq tasks': the paper's warm-up and 1/√step, then the app's cooldown
    warmup = fig.task_warmup(task)
    with left:
        st.latex(r"lrate = d_{model}^{-0.5}\cdot\min(step^{-0.5},\ step\cdot warmup^{-1.5})")
        st.latex(r"lrate \times \min\!\Big(1,\ \frac{1 - s}{" + f"{COOLDOWN:g}" + r"}\Big)")
        st.markdown(ui.t("training.lr.text", warmup=warmup, cooldown=f"{COOLDOWN:.0%}"))
    with right:
        ui.show_figure(fig.lr_schedule(steps, settings.d_model, warmup, COOLDOWN, history, lang=lang),
                       "train_lr", f"learning-rate-{task}", column=0.5)
        st.caption(ui.t("training.lr.caption", task=task_labels[task], steps=steps, warmup=warmup,
                        d_model=settings.d_model))

# -- trained vs random -----------------------------------------------------------------------------


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
                                    ui.t(f"training.compare.title.{name}"), lang=lang),
                f"train_compare_{name}", f"cross-attention-{name}",
            )
            ui.show_tokens(run.predicted, ui.t(f"training.compare.predicts.{name}"))


st.header(ui.t("training.compare.header"))
if getattr(st.session_state.get(SESSION_MODEL), "task", "") == "lm":
    # a language model has no cross-attention to compare: say where its heads are shown instead
    st.info(ui.t("training.compare.lm", page=ui.t("nav.attention.title"), button=ui.t("induction.repeat")))
else:
    compare_section(settings)
