"""Training page: train any task live with the sidebar's sizes, watch the curves, use the result."""

from dataclasses import replace

import streamlit as st

import ui
from core.names import Weights
from figures import training as fig
from ui.settings import checkpoint_available, literal
from ui.sidebar import SESSION_MODEL, SESSION_TAG, use_session_model
from ui.training_jobs import COOLDOWN, MAX_CONCURRENT_TRAININGS, ServerBusy, session_watch, start_training

TASKS = ("reverse", "copy", "pinyin")
COMPARE_DEFAULT = {"pinyin": "中华人民共和国", "copy": "3 1 4 1 5 9", "reverse": "3 1 4 1 5 9"}


settings = ui.page_setup("nav.training.title")
lang = settings.lang
st.markdown(ui.t("training.intro"))
st.caption(
    ui.t("training.sizes", d_model=settings.d_model, h=settings.num_heads, n=settings.num_layers,
         d_ff=settings.d_ff_value, norm=settings.norm, seed=settings.seed, limit=MAX_CONCURRENT_TRAININGS)
    + " " + ui.t("training.owner", seconds=st.get_option("server.disconnectedSessionTTL"))
)

# Labels computed now: a format_func that looked the language up later could run outside this session.
task_labels = {name: ui.t(f"training.task.{name}") for name in TASKS}
task = st.radio(ui.t("training.task"), list(TASKS), format_func=task_labels.__getitem__, key="train_task")
left, right = st.columns(2)
steps = left.slider(ui.t("training.steps"), 50, 5000, 400, step=50, key="train_steps")
minutes = right.slider(ui.t("training.minutes"), 1, 15, 2, key="train_minutes")


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

st.header(ui.t("training.loss.header"))
left, right = st.columns([1, 1])
with left:
    st.latex(r"\mathcal{L} = -\frac{1}{N}\sum_{t=1}^{N}\sum_{w=1}^{V} q_t(w)\,"
             r"\log p_\theta(w \mid y_{<t},\, x)")
    st.latex(r"q_t(w) = (1-\varepsilon)\,[\,w = y_t\,] + \frac{\varepsilon}{V},\qquad \varepsilon = 0.1")
with right:
    st.markdown(ui.t("training.loss.text"))


def show_job(lang: str) -> None:
    job = st.session_state.get("train_job")
    if job is None:
        st.info(ui.t("training.none"))
        return
    last = job.history[-1] if job.history else None
    if job.running:
        fraction = last["fraction"] if last else 0.0
        if job.stopping:
            text = ui.t("training.stopping")
        elif fraction >= 1.0:
            text = ui.t("training.measuring")
        elif last is None:
            text = ui.t("training.starting")
        else:
            text = ui.t("training.progress", step=last["step"], loss=f"{last['loss']:.3f}",
                        acc=f"{last['acc']:.1%}", speed=f"{last['tokens_per_s']:,.0f}",
                        seconds=f"{last['elapsed']:.0f}")
        st.progress(min(max(fraction, 0.0), 1.0), text=text)
    if job.history:
        ui.show_figure(fig.curves(job.history, lang=lang), "train_curves", f"training-curves-{job.task}")
    if job.running:
        return
    if job.error:
        st.error(ui.t("training.failed", error=literal(job.error, 300)))
    elif job.result is not None:
        m = job.result.metrics
        st.success(ui.t(
            "training.done.stopped" if job.stopped_by_user else "training.done.finished",
            steps=m.get("steps", 0), seconds=m.get("seconds", 0),
            acc=f"{m.get('test_token_acc', 0):.1%}", exact=f"{m.get('test_exact_acc', 0):.1%}",
        ))
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
warmup = fig.task_warmup(task)
left, right = st.columns([1, 1])
with left:
    st.latex(r"lrate = d_{model}^{-0.5}\cdot\min(step^{-0.5},\ step\cdot warmup^{-1.5})")
    st.latex(r"lrate \times \min\!\Big(1,\ \frac{1 - s}{" + f"{COOLDOWN:g}" + r"}\Big)")
    st.markdown(ui.t("training.lr.text", warmup=warmup, cooldown=f"{COOLDOWN:.0%}"))
with right:
    same_run = job is not None and (job.task, job.steps, job.config.get("d_model")) == (
        task, steps, settings.d_model)
    history = list(job.history) if same_run else None  # the rates that run really used
    ui.show_figure(fig.lr_schedule(steps, settings.d_model, warmup, COOLDOWN, history, lang=lang), "train_lr",
                   f"learning-rate-{task}", column=0.5)
    st.caption(ui.t("training.lr.caption", task=task_labels[task], steps=steps, warmup=warmup,
                    d_model=settings.d_model))

# -- trained vs random -----------------------------------------------------------------------------

st.header(ui.t("training.compare.header"))
st.markdown(ui.t("training.compare.text"))
trained_settings, trained_task = None, "pinyin"
if st.session_state.get(SESSION_MODEL) is not None:
    trained_settings = replace(settings, weights=Weights.SESSION, session_tag=st.session_state[SESSION_TAG])
    trained_task = st.session_state[SESSION_MODEL].task
elif checkpoint_available():
    trained_settings = replace(settings, weights=Weights.TRAINED)
if trained_settings is None:
    st.info(ui.t("training.compare.none"))
else:
    trained_pipe = ui.get_pipeline(trained_settings)
    text = st.text_input(ui.t("training.compare.input"), value=COMPARE_DEFAULT[trained_task], max_chars=200,
                         key="train_compare")
    if trained_pipe is not None:
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
