"""The Overview page (pages/overview.py) and its diagram (figures/overview.py)."""

STRINGS = {
    "overview.caption": (
        "“Attention Is All You Need” (Vaswani et al., 2017): an encoder reads the sentence, a decoder "
        "writes the output one token at a time while attending to the encoder's memory."
    ),
    "overview.target.none": "(none: this model is an encoder only, it has no decoder to feed)",
    "overview.target.sentence": (
        "(empty: random weights have no output worth feeding back, so the decoder reads the sentence)"
    ),
    "overview.target.greedy": "(empty: the decoder is fed the model's own greedy output)",
    "overview.sentence": "Sentence (as typed)",
    "overview.source_tokens": "{n} source tokens",
    "overview.target": "Target",
    "overview.target_tokens": "{n} target tokens",
    "overview.stages": "The stages, one page each",
    # the explanation beside the diagram
    "overview.explain.title": "The diagram as equations",
    "overview.explain.encoder": (
        "**Encoder (top row).** Each token id picks a row of the table E; the position is added, so the "
        "model knows the order. The N encoder layers then let every token look at every other token "
        "(self-attention) and refine its vector. The result, one vector per token, is the **memory**."
    ),
    "overview.explain.bert_embedding": (
        "This pretrained model (BERT-style) does not multiply by √d_model: it adds a learned position row "
        "P[pos] and a token-type row T[0], then a LayerNorm."
    ),
    "overview.explain.sublayer": (
        "Every layer has sub-layers (attention, then a small feed-forward network), each wrapped in a "
        "residual connection and a LayerNorm:"
    ),
    "overview.explain.pre_norm": (
        "The sidebar chose “pre” LayerNorm: the normalisation comes before each sub-layer (the paper puts "
        "it after). Most modern models do this; it trains more easily."
    ),
    "overview.explain.decoder": (
        "**Decoder (bottom row).** It reads the output written so far, y₁ … y_t. Its self-attention is "
        "masked so no position sees the future; its cross-attention looks at the encoder's memory. A "
        "linear layer W then gives one score per vocabulary entry, and softmax turns the scores into "
        "probabilities for the next token:"
    ),
    "overview.explain.softmax": (
        "softmax(z)ᵢ = exp(zᵢ) / Σⱼ exp(zⱼ): every probability is positive and they sum to 1. "
        "Writing a sentence means picking a token, appending it to y and running the decoder again."
    ),
    "overview.explain.no_decoder": (
        "This model is an encoder only: there is no decoder and no next-token probabilities. Its output is "
        "the memory itself, one vector per token; sentence-transformers averages these vectors into one "
        "sentence vector, used to compare the meaning of sentences."
    ),
    # the diagram (figures/overview.py); plotly text: <b>, <br> are markup of ours
    "overview.diagram.sentence": "Sentence",
    "overview.diagram.encoder_input": "encoder input",
    "overview.diagram.n_tokens": "{n} tokens",
    "overview.diagram.tokens_ids": "Tokens → ids",
    "overview.diagram.vocab": "vocab {n}",
    "overview.diagram.embedding": "Embedding + PE",
    "overview.diagram.learned_pos": "learned pos",
    "overview.diagram.token_type": "type",
    "overview.diagram.layer_norm": "LayerNorm",
    "overview.diagram.encoder": "{n}× Encoder layer",
    "overview.diagram.encoder_detail": "self-attn<br>h={h}, d_k={d_k}<br>FFN d_ff={d_ff}",
    "overview.diagram.target": "Target",
    "overview.diagram.target.given": "given target",
    "overview.diagram.target.greedy": "greedy output",
    "overview.diagram.target.sentence": "the sentence",
    "overview.diagram.decoder": "{n}× Decoder layer",
    "overview.diagram.decoder_detail": "masked self-attn,<br>cross-attn, FFN",
    "overview.diagram.output": "Linear + softmax",
    "overview.diagram.output_detail": "next-token probs",
    "overview.diagram.memory": "memory {shape}",
    "overview.diagram.key": (
        "<b>S</b> = {S} source tokens<br><b>T</b> = {T} target tokens<br>"
        "d_model = {d_model}<br>h = {h}, N = {N}<br>d_ff = {d_ff}"
    ),
    "overview.diagram.key_encoder": (
        "<b>S</b> = {S} tokens<br>d_model = {d_model}<br>h = {h}, N = {N}<br>d_ff = {d_ff}"
    ),
    "overview.diagram.vectors": "Token vectors",
    "overview.diagram.vectors_detail": "one per token",
    "overview.diagram.no_decoder": "No decoder: this model is an encoder only.<br>Its output is one vector per token.",
}
