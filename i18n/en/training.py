"""The Training page (pages/training.py), its figures (figures/training.py) and ui/sections/training_jobs.py.

Texts with plotly's ``%{...}`` are hover templates, used as they are (never formatted with values).
"""

STRINGS = {
    "training.intro.lm": (
        "A language model learns by predicting the **next token**: one causal stack reads a window of text "
        "`x₁ … x_T` and is scored, at every position t, on the token that comes next, `xₜ₊₁`, with "
        "cross-entropy (no target sentence, no teacher forcing of a second input). "
        "After every batch, AdamW nudges every weight so that the loss gets a little smaller."
    ),
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
    # the language model ("lm"): its own sizes, loss, schedule, curves and badge
    "training.task.lm": "Language model (a small GPT, English + 中文 fortunes): watch induction heads form",
    "training.sizes.lm": (
        "The language model has its own sizes, chosen so that induction heads form within minutes (the "
        "sidebar's sizes do not apply): d_model={d_model}, {h} heads, {n} layers, d_ff={d_ff}, positions "
        "{positions}, windows of {context} tokens, a byte-level BPE of {merges} merges learned on the training text first, seed "
        "{seed}. Its heads need a few thousand steps: choosing it sets the limits to {steps} steps and "
        "{minutes} minutes. Training runs on this server's CPU, at most one per browser session and {limit} "
        "per server."
    ),
    "training.starting.lm": "learning the byte-level BPE on the training text, then the first steps…",
    "training.progress.lm": (
        "step {step}: loss {loss}, validation perplexity {ppl}, best prefix-matching score {pm}, "
        "{speed} tokens/s, {seconds} s"
    ),
    "training.done.lm.finished": (
        "Training finished after {steps} steps ({seconds} s): test perplexity {ppl}; best prefix-matching "
        "score {pm} ({head})."
    ),
    "training.done.lm.stopped": (
        "Training stopped by you after {steps} steps ({seconds} s): test perplexity {ppl}; best "
        "prefix-matching score {pm} ({head})."
    ),
    "training.lm.missing": "The language model cannot be trained here: {error}",
    "training.lm.curves": (
        "**Prefix-matching** (Olsson et al., 2022): the model reads random tokens repeated twice; at each "
        "token of the second copy, the share of a head's attention on the token that *followed* the same "
        "token in the first copy — the look-back of an **induction head** (… A B … A → B). The middle "
        "chart shows the best head's score, measured every {every} steps on the model being trained "
        "(about 0.02 when attention is spread evenly). For a long while nothing happens; when an induction "
        "head forms, the score leaves 0 and climbs — the **phase change** of the paper — and the training "
        "loss, whose windows hold repeated passages, drops with it, while the validation perplexity (text "
        "as it is) hardly moves. A run that stops before that stays near 0. Measured, not drawn."
    ),
    "training.loss.header.lm": "The loss: cross-entropy of the next token",
    "training.loss.text.lm": (
        "A language model reads a text x₁ … x_T and, at every position *t*, gives each of the *V* tokens "
        "of its vocabulary a probability of coming next, seeing only x₁ … xₜ (a causal mask hides the "
        "rest). The loss is −log of the probability it gave the token that really came next, averaged "
        "over the *T* positions: no source sentence, no label smoothing.\n\n"
        "**Perplexity** = exp(loss): the model is as unsure as if it chose among that many tokens; a "
        "random model's perplexity is about the vocabulary's size.\n\n"
        "In {share} of the training windows a passage of the window is written a second time further on "
        "(refrains, quotations and poems repeat too): predicting the second copy pays only by looking "
        "back, the job of an induction head."
    ),
    "training.lr.text.lm": (
        "AdamW (β₁ = 0.9, β₂ = 0.95, weight decay 0.1 on the weight matrices) moves every weight a "
        "little against its gradient. The rate **warms up** linearly to lr = {lr} over the first "
        "{warmup} steps, then falls along a **cosine** to lr/10 over the rest of the budget (steps or "
        "time, whichever runs out first; *s* is the fraction spent). The gradient's total length is "
        "capped at 1 (clipping)."
    ),
    "training.lr.caption.lm": (
        "Planned for “{task}”: {steps} steps, warmup = {warmup}, lr = {lr}. If the time limit comes first, "
        "the cosine ends earlier. After a run with these settings, its dots show the rates it really used."
    ),
    "training.compare.lm": (
        "A language model has no source sentence and no cross-attention, so there is no grid to compare "
        "here: open the {page} page, press “{button}”, and find the induction heads the "
        "model you trained grew."
    ),
    "training.badge.session_lm": (
        "Weights: a small GPT trained in this session ({steps} steps, test perplexity {ppl})"
    ),
    "training.fig.pm_title": "best prefix-matching score",
    "training.fig.ppl_title": "validation perplexity",
    "training.fig.val_loss": "validation loss",
    "training.fig.best_pm": "best prefix-matching (any head)",
    "training.fig.val_ppl": "validation perplexity",
}
