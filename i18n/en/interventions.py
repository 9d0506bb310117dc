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
    "interventions.compare.title": "With and without the parts switched off",
    "interventions.compare.intact": "Intact model",
    "interventions.compare.ablated": "With {parts} off",
    "interventions.compare.answer": "Answer",
    "interventions.compare.prob": "Probability of each answer token",
    "interventions.compare.loss": "Loss on the second copy of a repeated random sequence",
    "interventions.compare.loss.value": "{loss:.2f} nats (first copy {first:.2f})",
    "interventions.compare.loss.help": (
        "A random sequence of {n} tokens, then the same tokens again: a model with working induction "
        "heads predicts the second copy from the first, so its loss there falls far below the first's."
    ),
    "interventions.compare.generated": "What it writes after the sentence (greedy, {n} tokens):",
    "interventions.compare.same": "The answer is the same with and without them.",
    "interventions.compare.differs": "The answer changes at {n} of {total} positions.",
}
