"""Training page: train any task live (the small tasks with the sidebar's sizes, the language model with
its own), watch the curves, use the result. The sections: ui/sections/training.py."""

import streamlit as st

import ui
from figures import training as fig
from ui.page.sidebar import SESSION_MODEL, use_session_model
from ui.sections.training import (
    BUDGET,
    TASKS,
    compare_section,
    show_job,
    start_job,
    stop_job,
    suggest_budget,
)
from ui.sections.training_jobs import (
    COOLDOWN,
    LM_BUDGET,
    LM_LIVE,
    MAX_CONCURRENT_TRAININGS,
    lm_live_config,
)

settings = ui.page_setup("nav.training.title")
lang = settings.lang
intro = st.container()  # how the task chosen below learns: filled once it is chosen

# Labels computed now: a format_func that looked the language up later could run outside this session.
task_labels = {name: ui.t(f"training.task.{name}") for name in TASKS}
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

# Start and Stop act in their on_click callbacks, before the script: the buttons are drawn from the job
# as it is after the click, and the fragment below reruns the page when the job ends.
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
st.header(ui.t("training.compare.header"))
session_model = st.session_state.get(SESSION_MODEL)
if session_model is not None and session_model.task == "lm":
    # a language model has no cross-attention to compare: say where its heads are shown instead
    st.info(ui.t("training.compare.lm", page=ui.t("nav.attention.title"), button=ui.t("induction.repeat")))
else:
    compare_section(settings)
