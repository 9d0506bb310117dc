"""Induction heads on the Attention page (ui/sections/induction.py): each head's role and scores, the repeated
sequence that shows them."""

STRINGS = {
    "induction.title": "Induction heads: what each head does",
    "induction.explain": (
        "An **induction head** completes a pattern it has seen: at a token B it looks back to the token "
        "that followed the previous occurrence of B, and copies it (“… Harry Potter … Harry → Potter”). "
        "A **previous-token head** looks at the token just before; the two work together. Each head of "
        "this model was measured on {batch} sequences of {length} tokens drawn by lot from its vocabulary, each "
        "written twice "
        "(Olsson et al., 2022): **prefix matching** (PM) is the share of a head's attention, from each "
        "token of the second copy, on the token after its first occurrence (1: all of it); "
        "**previous token** (PT) the share on the token just before; **copying** a number from −1 to 1 "
        "read from the head's weights alone (its OV circuit): positive when what the head reads raises "
        "the same token's score at the output."
    ),
    "induction.rule": (
        "Roles: induction when PM ≥ {pm} and copying > {copying}; else previous-token when PT ≥ {pt}; else other."
    ),
    "induction.loss": (
        "In-context learning: the model's loss is {first} nats per token on the first copy and {second} on "
        "the second — {verdict}."
    ),
    "induction.loss.better": "the repeat is predicted better, from the first copy alone",
    "induction.loss.same": "no better: this model does not yet use the first copy",
    "induction.none": "No head of this model reaches prefix matching ≥ {pm} with a positive copying score.",
    "induction.found": "Induction heads: {heads}.",
    "induction.failed": "The heads of this model could not be measured: {error}",
    "induction.decoder_only": "Induction heads are measured in decoder-only (GPT-like) models.",
    "induction.role.induction": "induction",
    "induction.role.previous-token": "previous-token",
    "induction.role.other": "other",
    "induction.head_label": "{n} · {role} (PM {pm})",
    "induction.head_title": "head {n} · {role}",
    "induction.where": "layer {layer} head {head}",
    "induction.table.layer": "layer",
    "induction.table.head": "head",
    "induction.table.role": "role",
    "induction.table.pm": "prefix matching",
    "induction.table.pt": "previous token",
    "induction.table.copying": "copying",
    "induction.repeat": "Repeat a sequence",
    "induction.repeat.help": (
        "Fills the sentence with {n} tokens of this model drawn by lot (English words and 汉字), written twice. "
        "In the second copy an induction head looks from each token to the one after its first occurrence: "
        "a stripe just below the diagonal, {n} − 1 positions to its left."
    ),
    "induction.repeat.none": "This model's vocabulary has no whole words and single 汉字 to repeat.",
    "induction.repeat.shown": (
        "The sentence is a sequence of {n} tokens written twice: choose an induction head (its label says "
        "so) and look for the stripe from each token of the second copy to the token after its first occurrence."
    ),
    "induction.show_gpt": "Show induction heads with the small GPT",
    "induction.show_gpt.why": "Induction heads are found in decoder-only language models, such as the small GPT that comes with this app.",
}
