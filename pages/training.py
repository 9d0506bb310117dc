"""Training page: train any task live with the sidebar's sizes, watch the curves, use the result."""

from dataclasses import replace

import streamlit as st

import ui
from figures import training as fig
from ui.settings import checkpoint_available, literal
from ui.sidebar import SESSION_MODEL, SESSION_TAG, use_session_model
from ui.training_jobs import MAX_CONCURRENT_TRAININGS, ServerBusy, start_training

TASKS = {
    "reverse": "Reverse a digit sequence (learns in a minute or two)",
    "copy": "Copy a digit sequence",
    "pinyin": "汉字 → 拼音: Chinese characters to pinyin (needs minutes, not seconds)",
}
COMPARE_DEFAULT = {"pinyin": "中华人民共和国", "copy": "3 1 4 1 5 9", "reverse": "3 1 4 1 5 9"}

settings = ui.page_setup("nav.training.title")
st.markdown(
    "A Transformer learns by **teacher forcing**: the decoder reads the right answer shifted by one "
    "(`[BOS] y₁ … yₙ`) and is scored, token by token, on predicting `y₁ … yₙ [EOS]` with cross-entropy. "
    "Adam follows the paper's warm-up schedule:"
)
st.latex(r"lrate = d_{model}^{-0.5}\cdot\min(step^{-0.5},\ step\cdot warmup^{-1.5})")
st.caption(
    f"The model has the sidebar's sizes: d_model={settings.d_model}, {settings.num_heads} heads, "
    f"{settings.num_layers} layers, d_ff={settings.d_ff_value}, {settings.norm}-norm, seed {settings.seed}. "
    f"Training runs on this server's CPU, at most one per browser session and {MAX_CONCURRENT_TRAININGS} "
    "per server."
)

task = st.radio("Task", list(TASKS), format_func=TASKS.get, key="train_task")
left, right = st.columns(2)
steps = left.slider("Steps (at most)", 50, 5000, 400, step=50, key="train_steps")
minutes = right.slider("Time limit (minutes)", 1, 15, 2, key="train_minutes")

job = st.session_state.get("train_job")
start_col, stop_col, use_col = st.columns(3)
busy = job is not None and job.running
if start_col.button("Start training", type="primary", disabled=busy, key="train_start"):
    config = dict(d_model=settings.d_model, num_heads=settings.num_heads, num_layers=settings.num_layers,
                  d_ff=settings.d_ff_value, norm=settings.norm, seed=settings.seed,
                  dropout=0.1 if task == "pinyin" else 0.0)
    try:
        job = st.session_state["train_job"] = start_training(task, config, steps, minutes)
    except ServerBusy as busy:
        st.warning(str(busy))
if stop_col.button("Stop", disabled=job is None or not job.running, key="train_stop"):
    job.stop()
    job.wait(timeout=30)  # the callback sees the flag within one step; the model so far is kept


def show_job() -> None:
    job = st.session_state.get("train_job")
    if job is None:
        st.info("No training in this session yet: choose a task and press Start.")
        return
    last = job.history[-1] if job.history else None
    if job.running:
        fraction = last["fraction"] if last else 0.0
        text = "starting…" if last is None else (
            f"step {last['step']}: loss {last['loss']:.3f}, accuracy {last['acc']:.1%}, "
            f"{last['tokens_per_s']:,.0f} tokens/s, {last['elapsed']:.0f} s"
        )
        st.progress(min(max(fraction, 0.0), 1.0), text=text)
    if job.history:
        st.plotly_chart(fig.curves(job.history), width="stretch", theme=None, key="train_curves")
    if job.running:
        return
    if job.error:
        st.error(f"Training failed: {literal(job.error, 300)}")
    elif job.result is not None:
        m = job.result.metrics
        how = "stopped by you" if job.stopped_by_user else "finished"
        st.success(
            f"Training {how} after {m.get('steps', 0)} steps ({m.get('seconds', 0)} s): "
            f"test token accuracy {m.get('test_token_acc', 0):.1%}, "
            f"whole sequences right {m.get('test_exact_acc', 0):.1%}."
        )
    if st.session_state.get("train_was_running"):
        st.session_state["train_was_running"] = False
        st.rerun(scope="app")  # the buttons above change once the job is over


running = job is not None and job.running
st.session_state["train_was_running"] = running
st.fragment(run_every=1.0 if running else None)(show_job)()

if job is not None and not job.running and job.result is not None:
    if use_col.button("Use this model on every page", key="train_use"):
        use_session_model(job.result)
        st.rerun()  # the sidebar and the badge now show the session's model

st.header("Trained vs random weights, side by side")
st.markdown(
    "The same sizes, the same input: on the left a trained model, on the right a random initialisation. "
    "Each row is one decoder position; a trained 汉字→拼音 model looks at the character it is spelling "
    "(a diagonal), the random one spreads its attention without meaning."
)
trained_settings, trained_task = None, "pinyin"
if st.session_state.get(SESSION_MODEL) is not None:
    trained_settings = replace(settings, weights="session", session_tag=st.session_state[SESSION_TAG])
    trained_task = st.session_state[SESSION_MODEL].task
elif checkpoint_available():
    trained_settings = replace(settings, weights="trained")
if trained_settings is None:
    st.info("No trained model yet: train one above (and press “Use this model”), or ship assets/pinyin.pt.")
else:
    trained_pipe = ui.get_pipeline(trained_settings)
    text = st.text_input("Input for both models", value=COMPARE_DEFAULT[trained_task], max_chars=200,
                         key="train_compare")
    if trained_pipe is not None:
        cfg = trained_pipe.config
        random_settings = replace(settings, weights="random", session_tag="", d_model=cfg.d_model,
                                  num_heads=cfg.num_heads, num_layers=cfg.num_layers, d_ff=cfg.d_ff,
                                  norm=cfg.norm)
        columns = st.columns(2)
        for column, chosen, name in ((columns[0], trained_settings, "trained"),
                                     (columns[1], random_settings, "random")):
            with column:
                run = ui.get_run(replace(chosen, sentence=text, target=""))
                if run is None:
                    continue
                st.plotly_chart(
                    fig.cross_attention(fig.last_cross_attention(run.trace), run.tgt_tokens, run.src_tokens,
                                        f"{name} weights: last decoder layer, heads averaged"),
                    width="stretch", theme=None, key=f"train_compare_{name}",
                )
                ui.show_tokens(run.predicted, f"What the {name} model predicts at each position")
