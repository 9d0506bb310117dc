"""Interventions: parts switched off (ablation), one sentence patched into another, every layer's guess."""

STRINGS = {
    # -- what is off, on every page (ui/page/ablation.py) --------------------------------------------
    "interventions.badge": "Switched off: {parts}",
    "interventions.caption.zero": (
        "Every view shows the changed model: each part named here adds zero (a head's output is set to "
        "0 before W_O; a whole layer adds nothing to the residual stream)."
    ),
    "interventions.caption.mean": (
        "Every view shows the changed model: each part named here says its mean over {n} reference "
        "sentences at every position, whatever the sentence (what it says about this sentence is gone)."
    ),
    "interventions.clear": "Switch everything back on",
    "interventions.part.head": "head {layer}.{head} ({stack})",
    "interventions.part.attn": "{stack}, layer {layer}",
    "interventions.part.ffn": "feed-forward, layer {layer} ({stack})",
    "interventions.stack.enc": "encoder self-attention",
    "interventions.stack.dec": "decoder self-attention",
    "interventions.stack.dec.only": "self-attention",
    "interventions.stack.cross": "cross-attention",
    "interventions.ffn.enc": "encoder",
    "interventions.ffn.dec": "decoder",
    "interventions.mode.zero": "zero",
    "interventions.mode.mean": "mean",
    # -- the sidebar's control ------------------------------------------------------------------------
    "interventions.sidebar.title": "Switch parts off",
    "interventions.sidebar.pick": "Parts switched off",
    "interventions.sidebar.pick.help": (
        "Every page then shows the model without them. A head: its output; a layer's attention or "
        "feed-forward: the whole sublayer."
    ),
    "interventions.sidebar.mode": "Switched off means",
    "interventions.sidebar.mode.zero": "zero",
    "interventions.sidebar.mode.mean": "its mean over reference sentences",
    # -- bad ablate= values (core/interventions/parts.py: Problem.reason) -----------------------------
    "interventions.ignored": "Ignored {piece} in ablate= ({why}).",
    "interventions.why.format": "not <stack>.<layer>.<head|attn|ffn>, e.g. dec.2.1",
    "interventions.why.stack": "this model has no such stack; it has {limit}",
    "interventions.why.layer": "the layer must be a number from 1 to {limit}",
    "interventions.why.head": "the head must be a number from 1 to {limit}, attn or ffn",
    "interventions.why.cross_ffn": "cross-attention has no feed-forward layer of its own: that is {limit}",
    "interventions.why.too_many": "at most {limit} parts can be switched off",
    "interventions.why.too_long": "at most {limit} characters are read",
    # -- intact beside switched off (the Overview) ----------------------------------------------------
    # -- switches beside a head or a layer (Attention, Full model) -----------------------------------
    "interventions.switch.head": "Switch head {layer}.{head} off",
    "interventions.switch.heads": "Heads of layer {layer} switched off",
    "interventions.switch.grid": "Heads switched off ({kind})",
    "interventions.switch.layer": "Parts of layer {layer} switched off",
    "interventions.head.off": "{title} · off",
    "interventions.grid.off": "off",
    # -- patching and the logit lens (figures/interventions.py) -------------------------------------
    "interventions.row.enc": "encoder {layer}",
    "interventions.row.dec": "decoder {layer}",
    "interventions.row.cross": "cross {layer}",
    "interventions.row.layer": "layer {layer}",
    "interventions.row.into": "into layer {layer}",
    "interventions.patch.restored": "restored",
    "interventions.axis.head": "head",
    "interventions.axis.attention": "attention",
    "interventions.axis.position": "position (clean input)",
    "interventions.axis.reads": "output position (≠: the answer changes there)",
    "interventions.axis.reads_token": "the token read (≠: the prediction after it changes)",
    "interventions.prob.short": "probability",
    "interventions.axis.stream": "residual stream",
    "interventions.lens.row0": "embeddings",
    "interventions.lens.row": "after layer {layer}",
    "interventions.lens.prob": "P(final answer)",
    "interventions.lens.x": "position: reads → finally writes",
    "interventions.lens.y": "read through the final norm",
    "interventions.lens.top": "this layer's top tokens:",
    "interventions.compare.title": "With and without the parts switched off",
    "interventions.compare.intact": "Intact model",
    "interventions.compare.ablated": "With {parts} off",
    "interventions.compare.answer": "Answer",
    "interventions.compare.prob": "Probability of each answer token",
    "interventions.compare.loss": "Loss on the second copy of a repeated random sequence",
    "interventions.compare.loss.value": "{loss:.2f} nats",
    "interventions.compare.loss.first": "On the first copy: {first:.2f} nats (nothing to copy from yet).",
    "interventions.compare.loss.help": (
        "A random sequence of {n} tokens, then the same tokens again: a model with working induction "
        "heads predicts the second copy from the first, so its loss there falls far below the first's."
    ),
    "interventions.compare.generated": "What it writes after the sentence (greedy, {n} tokens):",
    "interventions.compare.same": "The answer is the same with and without them.",
    "interventions.compare.differs": "The answer changes at {n} of {total} positions.",
    # -- the Interventions page (pages/interventions.py, ui/sections/interventions.py) ----------------
    "interventions.intro": (
        "Attention shows where a head looks; these views ask whether it matters: switch parts of the "
        "model off and see what it writes then, patch one sentence's run into another's, and read what "
        "each layer would answer if the model stopped there."
    ),
    "interventions.tab.switch": "Switch parts off",
    "interventions.tab.patch": "Patch one sentence into another",
    "interventions.tab.lens": "Every layer's guess",
    "interventions.encoder_only": (
        "{model} is an encoder only: it writes no token, so there is no answer to change, patch or read "
        "layer by layer. Its parts can still be switched off: every page then shows the changed encoder."
    ),
    "interventions.switch.intro": (
        "Choose parts to switch off: a head (its output), a layer's attention, a layer's feed-forward. "
        "They stay off on every page (and in the link) until switched back on."
    ),
    "interventions.switch.none": (
        "Nothing is switched off. Choose parts above, in the sidebar, beside a head on the Attention page, "
        "or beside a layer on the Full model page."
    ),
    "interventions.preset.induction": "Switch both induction heads off (2.1 and 2.3)",
    "interventions.preset.cross2": "Switch layer 2's cross-attention off (all four heads)",
    "interventions.patch.intro": (
        "Two inputs of the same length: a **clean** one and a **corrupted** one that leads to another "
        "answer. Run the corrupted one again with one part's output taken from the clean run: how much "
        "of the clean answer comes back? 0: nothing (the part does not carry the difference), 1: all of it."
    ),
    "interventions.patch.word.restored": "restored",
    "interventions.patch.word.patched": "patched",
    "interventions.patch.word.corrupted": "corrupted",
    "interventions.patch.word.clean": "clean",
    "interventions.patch.pair": "Pair",
    "interventions.pair.pinyin": "重庆 / 重要 (how is 重 read?)",
    "interventions.pair.induction": "A repeated sequence / its first copy changed (induction)",
    "interventions.pair.own": "Your own pair",
    "interventions.pair.pinyin.explain": (
        "重 is chóng in 重庆 and zhòng in 重要: the only difference is the second character. The answer "
        "is the first syllable: which heads carry the context from 庆 or 要 to 重?"
    ),
    "interventions.pair.induction.explain": (
        "Random tokens written once and then again up to the middle: the clean run can predict the next "
        "token from the first copy; in the corrupted run the first copy is other tokens, so it cannot. "
        "Which heads carry the copy?"
    ),
    "interventions.patch.clean": "Clean input",
    "interventions.patch.corrupted": "Corrupted input (the same number of tokens)",
    "interventions.patch.corrupted.placeholder": "e.g. the clean input with one word changed",
    "interventions.patch.need_two": "Type a clean and a corrupted input of the same number of tokens.",
    "interventions.patch.clean.tokens": "Clean input's tokens",
    "interventions.patch.corrupted.tokens": "Corrupted input's tokens",
    "interventions.patch.where.next": "the next token after {token}",
    "interventions.patch.where.output": "output token {n}",
    "interventions.patch.no_foil": "(the same: the logit of the answer alone is compared)",
    "interventions.patch.answer": (
        "Answer a = {answer} (the clean run's {where}); foil f = {foil} (the corrupted run's). "
        "m = logit_a − logit_f: {clean} on the clean run, {corrupted} on the corrupted run."
    ),
    "interventions.patch.heads.title": "Patching each head's output (every position)",
    "interventions.patch.heads.reading": (
        "Each cell: the corrupted run with that one head's output taken from the clean run. Red: it "
        "brings the clean answer back; blue: it pushes the other way; white: it carries none of it."
    ),
    "interventions.patch.resid.title.enc": "Patching the encoder's residual stream at one position",
    "interventions.patch.resid.title.dec": "Patching the residual stream at one position",
    "interventions.patch.resid.reading": (
        "Each cell: the stream entering that layer, at that position only, taken from the clean run. "
        "Where the 1s sit shows where the deciding information is, layer by layer: it moves from the "
        "token that differs to the position that answers."
    ),
    "interventions.patch.refused.lengths": (
        "These two inputs have {n} and {m} tokens: patching needs the same number (a part's output at "
        "each position is taken from the other run)."
    ),
    "interventions.patch.refused.same": (
        "Both inputs give the answer the same logit difference: there is nothing to restore. Change the "
        "corrupted input so that the model answers differently."
    ),
    "interventions.patch.refused": "This pair cannot be patched: {why}",
    "interventions.lens.intro": (
        "What would the model answer if it stopped after layer l? Each layer's residual stream, read "
        "through the model's own final norm and output layer: P_l(y) = softmax(Norm(x_l) W_U)."
    ),
    "interventions.lens.norm.LayerNorm": "Read through the model's final {norm}, then its output layer.",
    "interventions.lens.norm.RMSNorm": "Read through the model's final {norm} (Llama, Qwen2), then its output layer.",
    "interventions.lens.norm.none": "This model has no final norm: each stream goes straight to its output layer.",
    "interventions.lens.title": "Every layer's guess (the logit lens)",
    "interventions.lens.reading": (
        "Colour: the probability each layer gives the model's final answer at that position; the cell "
        "writes that layer's own top token (hover for its top five). The last row is the model's output."
    ),
}
