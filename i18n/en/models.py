"""Model folders from disk (weights="hf:<name>", ui/folders/models.py, ui/folders/hf_pipeline.py): choosing, loading,
the badge, and what such a model lacks of the paper's (ui/page/sidebar.py)."""

STRINGS = {
    # why a weights value naming a model folder is refused (settings.ignored's {why})
    "models.why.type": "a model is named by text",
    "models.why.long": "too long to be a model's name",
    "models.why.control": "it holds control characters",
    "models.why.path": "it looks like a path; a model is chosen by its name in the list (hf:<name>), never by where it is",
    "models.why.unknown": "no model of that name was found; found: {found}",
    "models.why.none_found": "none (set GLASSBOX_MODELS to folders holding models)",
    "models.why.unsupported": "{detail}",
    "models.why.too_big": (
        "it needs {need} MB in float32 ({params} parameters) and the server allows {limit} MB "
        "(GLASSBOX_CACHE_MB)"
    ),
    "models.why.no_tokenizer": "it has no tokenizer files (vocab.json + merges.txt, vocab.txt or tokenizer.json)",
    "models.why.unreadable": "its files could not be read: {detail}",
    "models.failed": "{name} could not be used ({why}); showing {fallback} weights instead.",
    "models.loading": "Loading {name}: {what}",
    # the sidebar
    "models.fixed_sizes": "Sizes are fixed by the model folder: d_model={d_model}, h={h}, N={n}, d_ff={d_ff}, norm={norm}.",
    "models.sentence.decoder": "Sentence (the model's input)",
    "models.target.unread": "Not read: this model has one stack, which reads the sentence alone",
    "models.num_layers": "Layers N (of its one stack)",
    "models.option": "{name} (model folder, {params})",
    "models.unsupported_found": "Model folders found but not usable: {names}.",
    # the badge ("badge; details")
    "models.label": (
        "Weights: loaded from the model folder {name} ({architecture}); {stack}: {layers} layers × {heads}, "
        "d_model {d_model}; vocabulary: {tokenizer}"
    ),
    "models.stack.decoder": "a decoder only",
    "models.stack.encoder": "an encoder only",
    "models.heads": "{h} heads",
    "models.heads.gqa": "{h} query heads ({kv} key/value)",
    # what it lacks of (or does otherwise than) the paper's model, from its configuration
    "models.paper": "Compared with the paper's Transformer, {name} has {parts}.",
    "models.paper.decoder": "no encoder and no cross-attention (one causal stack reads the text and predicts the next token)",
    "models.paper.encoder": "no decoder: no masked self-attention, no cross-attention and no output layer",
    "models.paper.pre": "each sublayer's normalisation before it (pre-norm), not after the residual sum",
    "models.paper.rms": "RMSNorm (no mean subtracted, no bias) instead of LayerNorm",
    "models.paper.gelu": "GELU instead of ReLU in the feed-forward network",
    "models.paper.swiglu": "a gated feed-forward network (SwiGLU: three matrices) instead of ReLU",
    "models.paper.learned": "learned position embeddings instead of sinusoids",
    "models.paper.rope": "rotary positions (RoPE) turning queries and keys, instead of sinusoids added to the embeddings",
    "models.paper.no_scale": "no × √d_model on the embeddings",
    "models.paper.embed_norm": "a LayerNorm on the embeddings",
    "models.paper.gqa": "grouped-query attention ({h} query heads, {kv} key/value)",
    "models.paper.untied": "an output layer with a matrix of its own (the paper reuses the embedding matrix there)",
    "models.paper.no_ffn_bias": "no biases in the feed-forward network (the paper's b₁ and b₂)",
    "models.paper.and": ", ",
}
