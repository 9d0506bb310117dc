"""The Training page (pages/training.py), its figures (figures/training.py) and ui/training_jobs.py.

Texts with plotly's ``%{...}`` are hover templates, used as they are (never formatted with values).
"""

STRINGS = {
    "training.intro": (
        "A Transformer learns by **teacher forcing**: the decoder reads the right answer shifted by one "
        "(`[BOS] y₁ … yₙ`) and is scored, token by token, on predicting `y₁ … yₙ [EOS]` with cross-entropy. "
        "After every batch, Adam nudges every weight so that the loss gets a little smaller."
    ),
    "training.sizes": (
        "The model has the sidebar's sizes: d_model={d_model}, {h} heads, {n} layers, d_ff={d_ff}, "
        "{norm}-norm, seed {seed}. Training runs on this server's CPU, at most one per browser session "
        "and {limit} per server."
    ),
    "training.task": "Task",
    "training.task.reverse": "Reverse a digit sequence (learns in a minute or two)",
    "training.task.copy": "Copy a digit sequence",
    "training.task.pinyin": "汉字 → 拼音: Chinese characters to pinyin (needs minutes, not seconds)",
    "training.steps": "Steps (at most)",
    "training.minutes": "Time limit (minutes)",
    "training.start": "Start training",
    "training.stop": "Stop",
    "training.use": "Use this model on every page",
    "training.busy": (
        "The server is already running {n} trainings (its limit): try again in a minute, or use the "
        "shipped checkpoint."
    ),
    "training.none": "No training in this session yet: choose a task and press Start.",
    "training.starting": "starting…",
    "training.stopping": "stopping: after this step the model trained so far is measured on the test set…",
    "training.measuring": "the step or time limit is reached: measuring the trained model on the test set…",
    "training.owner": (
        "A training belongs to this tab: closing it stops the training {seconds} s later (the time the "
        "server waits for a tab that reconnects) and frees its place for another student."
    ),
    "training.progress": "step {step}: loss {loss}, accuracy {acc}, {speed} tokens/s, {seconds} s",
    "training.failed": "Training failed: {error}",
    "training.done.finished": (
        "Training finished after {steps} steps ({seconds} s): test token accuracy {acc}, "
        "whole sequences right {exact}."
    ),
    "training.done.stopped": (
        "Training stopped by you after {steps} steps ({seconds} s): test token accuracy {acc}, "
        "whole sequences right {exact}."
    ),
    # the loss
    "training.loss.header": "The loss: cross-entropy with label smoothing",
    "training.loss.text": (
        "At every position *t* the model gives each of the *V* tokens of its vocabulary a probability "
        "p(w). Cross-entropy punishes a small probability for the right token yₜ: −log p is 0 when "
        "p = 1 and grows without limit as p → 0. *N* counts the real target tokens ([PAD] is skipped).\n\n"
        "**Label smoothing** (ε = 0.1, as in the paper): the target q is not 100 % on yₜ but 90 %, and "
        "0.1/V on every token, so the model is never pushed to total certainty. That is why the loss "
        "stays above 0 even when every answer is right.\n\n"
        "**Accuracy**: how often the most probable token is the right one — in training with the right "
        "answer as input (teacher forcing), in validation by greedy decoding of sequences the model has "
        "never seen."
    ),
    # the learning rate
    "training.lr.header": "The learning rate: warm-up, then decay",
    "training.lr.text": (
        "Adam (β₁ = 0.9, β₂ = 0.98, ε = 10⁻⁹, as in the paper) moves every weight a little against its "
        "gradient; the learning rate sets how big these steps are. The paper's schedule **warms up**: "
        "the rate grows linearly for the first *warmup* steps ({warmup} for this task; the paper used "
        "4,000), while the gradients of a random start are still unreliable, then shrinks like "
        "1/√step.\n\n"
        "A run here has a fixed budget, so the app adds a **cooldown**: over the last {cooldown} of the "
        "budget (steps or time, whichever runs out first; *s* is the fraction spent) the rate falls linearly to 0, and the model "
        "ends calm rather than mid-descent. The gradient's total length is also capped at 1 (clipping)."
    ),
    "training.lr.caption": (
        "Planned for “{task}”: {steps} steps, warmup = {warmup}, d_model = {d_model}. If the time limit "
        "comes first, the cooldown starts earlier. After a run with these settings, its dots show the "
        "rates it really used."
    ),
    # trained vs random
    "training.compare.header": "Trained vs random weights, side by side",
    "training.compare.text": (
        "The same sizes, the same input: on the left a trained model, on the right a random initialisation. "
        "Each row is one decoder position; a trained 汉字→拼音 model looks at the character it is spelling "
        "(a diagonal), the random one spreads its attention without meaning."
    ),
    "training.compare.none": (
        "No trained model yet: train one above (and press “Use this model”), or ship assets/pinyin.pt."
    ),
    "training.compare.input": "Input for both models",
    "training.compare.title.trained": "trained weights",
    "training.compare.title.random": "random weights",
    "training.compare.predicts.trained": "What the trained model predicts at each position",
    "training.compare.predicts.random": "What the random model predicts at each position",
    # figures/training.py
    "training.fig.loss_title": "training loss",
    "training.fig.acc_title": "accuracy",
    "training.fig.loss": "loss",
    "training.fig.train_acc": "train token acc",
    "training.fig.val_acc": "validation token acc (greedy)",
    "training.fig.step": "step",
    "training.fig.lr": "learning rate",
    "training.fig.lr_planned": "planned rate",
    "training.fig.lr_used": "rate used by your run",
    "training.fig.lr_warmup": "warmup = {warmup}",
    "training.fig.lr_hover": "step %{x}<br>rate %{y:.3e}",
    "training.fig.cross_subtitle": "last decoder layer, heads averaged",
    "training.fig.weight": "weight",
    "training.fig.cross_x": "source token (key)",
    "training.fig.cross_y": "decoder input (query)",
}
