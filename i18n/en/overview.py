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
        "**Encoder (top row).** Each token id picks a row of the table E. {positions} The N encoder layers "
        "then let every token look at every other token (self-attention) and refine its vector. The result, "
        "one vector per token, is the **memory**."
    ),
    # how this model's positions enter ({positions} above): chosen by config.positions
    "overview.explain.positions.sinusoidal": (
        "The sine/cosine vector PE of its position is added, so the model knows the order."
    ),
    "overview.explain.positions.learned": (
        "A learned row P[pos] of its position is added, so the model knows the order."
    ),
    "overview.explain.positions.rope": (
        "Nothing is added for the position (RoPE): the order enters inside every self-attention, which "
        "rotates the queries and keys by their positions."
    ),
    "overview.explain.positions.alibi": (
        "Nothing is added for the position (ALiBi): the order enters inside every self-attention, whose "
        "scores get a penalty that grows with the distance between the two tokens."
    ),
    "overview.explain.in_attention.rope": (
        "RoPE, in every self-attention (the encoder's and the decoder's masked one; never in "
        "cross-attention): each head turns pair i of its query's and key's dimensions by the angle "
        "pos·θ_i before q·k, so the score depends on how far apart the two tokens are."
    ),
    "overview.explain.in_attention.alibi": (
        "ALiBi, in every self-attention (the encoder's and the decoder's masked one; never in "
        "cross-attention): −m_h·|i − j| is added to the score of query i and key j, with one slope m_h per "
        "head. The decoder adds −m_h·(i − j), the same wherever its mask lets it look."
    ),
    "overview.explain.final_norm": (
        "This model ends each stack with one more LayerNorm (the encoder's gives the memory, the "
        "decoder's gives h): the convention of torch.nn.Transformer and of the Annotated Transformer. "
        "Pre-norm needs it, since its stream is otherwise never normalised; the paper's post-norm model "
        "has none."
    ),
    "overview.explain.bert_embedding": (
        "This model (BERT-style) does not multiply by √d_model: it adds a learned position row "
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
    "overview.diagram.embedding.learned": "Embedding + P[pos]",
    "overview.diagram.embedding.only": "Embedding",
    "overview.diagram.learned_pos": "learned pos",
    "overview.diagram.in_attention.rope": "RoPE: in self-attn",
    "overview.diagram.in_attention.alibi": "ALiBi: in self-attn",
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
    "overview.diagram.decoder_detail.final_norm": "masked self-attn,<br>cross-attn, FFN<br>→ LayerNorm",
    "overview.diagram.output": "Linear + softmax",
    "overview.diagram.output_detail": "next-token probs",
    "overview.diagram.memory": "memory {shape}",
    "overview.diagram.memory_norm": "LayerNorm →<br>memory {shape}",
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
    # a decoder-only model (GPT-2, Llama): one causal stack, drawn and written from its configuration
    "overview.target.one_stack": "(none: this model is decoder-only, its one stack reads the sentence)",
    "overview.stack_tokens": "{n} tokens (the stack reads them all)",
    "overview.explain.stack": (
        "**One causal stack (one row).** Each token id picks a row of the table E. {positions} The N layers "
        "then let every token look at itself and the tokens before it (masked self-attention; there is no "
        "encoder and no cross-attention) and refine its vector."
    ),
    "overview.explain.in_attention.rope.one": (
        "RoPE, in every self-attention: each head turns pair i of its query's and key's dimensions by the "
        "angle pos·θ_i before q·k, so the score depends on how far apart the two tokens are."
    ),
    "overview.explain.in_attention.alibi.one": (
        "ALiBi, in every self-attention: −m_h·(i − j) is added to the score of query i and key j, with one "
        "slope m_h per head."
    ),
    "overview.explain.mqa": (
        "Multi-query attention: the {h} query heads all share one key/value head (every head reads the "
        "same keys and values)."
    ),
    "overview.explain.gqa": (
        "Grouped-query attention: the {h} query heads share {kv} key/value heads ({g} query heads read the "
        "same keys and values)."
    ),
    "overview.explain.sublayer.one": (
        "Every layer has two sub-layers (masked self-attention, then a feed-forward network with {act}), "
        "each wrapped in a residual connection and a {kind}:"
    ),
    "overview.explain.placement.pre": (
        "This model's configuration puts the {kind} before each sub-layer (pre-norm; the paper puts it after)."
    ),
    "overview.explain.placement.post": (
        "This model's configuration puts the {kind} after each sub-layer (post-norm, as the paper)."
    ),
    "overview.explain.rms": (
        "RMSNorm is LayerNorm without subtracting the mean and without a shift: only a learned scale g."
    ),
    "overview.explain.output.one": (
        "**Output.** A linear layer W gives one score per vocabulary entry at every position, and softmax "
        "turns the scores into probabilities for the token that comes next. Writing text means picking a "
        "token, appending it to the sentence and running the stack again."
    ),
    "overview.explain.tied": (
        "This model's output matrix is its embedding table, transposed (tied embeddings): a token is "
        "likely next when h_t points the way its embedding row does."
    ),
    "overview.diagram.stack_input": "the stack's input",
    "overview.diagram.layer": "{n}× Layer",
    "overview.diagram.masked_self_attn": "masked self-attn",
    "overview.diagram.ffn": "FFN: {act}",
    "overview.diagram.no_encoder": "No encoder, no cross-attention:<br>one causal stack reads the sentence.",
    "overview.diagram.gqa": "h = {h} ({kv} key/value)",
    "overview.diagram.key_decoder": (
        "<b>T</b> = {T} tokens<br>d_model = {d_model}<br>{heads}, N = {N}<br>d_ff = {d_ff}"
    ),
}
