"""The Masks page (pages/masks.py) and its figures (figures/masks.py)."""

STRINGS = {
    "masks.this_model": "This model",
    "masks.convention": (
        "Convention: everywhere in Glassbox a mask value **True (1, blue) = may attend**, False (0, grey) = "
        "hidden. PyTorch's `nn.MultiheadAttention` uses the opposite: there `True` means *masked out*."
    ),
    "masks.intro": (
        "Sentences of different lengths share one tensor only if the short ones are filled with [PAD]. "
        "Masks make sure the filler changes nothing, and that the decoder cannot peek at the next token."
    ),
    # 1. a padded batch
    "masks.batch.header": "1. A padded batch",
    "masks.batch.sentence_n": "Sentence {n}",
    "masks.batch.left_out": "Empty sentences are left out of the batch.",
    "masks.batch.running": "Running the batch…",
    "masks.batch.cannot_run": "This batch cannot run: one of the sentences has no token the model can read. Type some text.",
    "masks.batch.truncated": "Sentences longer than {n} tokens are cut to {n} on this page.",
    "masks.batch.explain.filler": (
        "A computer is fastest when it works on a whole table at once, so several sentences go through the "
        "model together as one batch: a table with one row per sentence. Rows must be equally long, so the "
        "shorter sentences are filled up with a filler token (which one, and why it changes nothing: below)."
    ),
    "masks.batch.explain": (
        "A computer is fastest when it works on a whole table at once, so several sentences go through the "
        "model together as one batch: a table with one row per sentence. Rows must be equally long, so the "
        "shorter sentences are filled up with the token [PAD]."
    ),
    "masks.batch.source": (
        "Source ids (B, S) = ({B}, {S}): every row is padded with [PAD] (id {pad_id}) to the longest. "
        "Row 1 is the sidebar sentence."
    ),
    "masks.batch.decoder": "Decoder input (B, T) = ({B}, {T}): {what}, padded the same way.",
    "masks.batch.decoder_random": (
        "[BOS] + the sentence itself (random weights: the model's own output would be noise)"
    ),
    "masks.batch.decoder_trained": "[BOS] + the model's greedy output for that sentence",
    "masks.encoder_only.batch": (
        "{model} is an encoder only: it has no decoder, so there is no decoder input, no causal mask and "
        "no cross-attention. Its attention uses the key-padding mask alone."
    ),
    "masks.encoder_only.causal": (
        "{model} has no decoder, so it needs no causal mask: every token may look at every real token, "
        "before and after it."
    ),
    "masks.encoder_only.kinds": "{model} is an encoder only: the decoder's two attentions do not exist.",
    # 2. the two masks
    "masks.two.header": "2. The two masks",
    "masks.padding.explain.filler": (
        "**Key padding**: no query may look at a filler key. The mask is True where sentence b still has "
        "tokens: the first n_b positions (the filler's id may be a real token, so the id alone cannot say)."
    ),
    "masks.padding.explain": (
        "**Key padding**: no query may look at a [PAD] key. The mask is True where the id is a real token."
    ),
    "masks.causal.explain": (
        "**Causal (look-ahead)**: query t sees keys 0…t only. While learning to write, the decoder must not "
        "see the answer it is about to produce."
    ),
    # 3. merged
    "masks.merged.header": "3. Merged and broadcast to [B, h, q, k]",
    "masks.merged.explain": (
        "In the decoder's self-attention a query may look at a key only if both masks allow it "
        "(∧ = “and”); the encoder and the cross-attention use the padding mask alone. The size-1 axes are "
        "then repeated (broadcast): the same mask for every head h and, for padding, for every query."
    ),
    "masks.kind.label": "Which attention",
    "masks.kind.encoder": "Encoder self-attention (padding)",
    "masks.kind.decoder": "Decoder masked self-attention (padding ∧ causal)",
    "masks.kind.cross": "Decoder cross-attention (source padding)",
    "masks.merged.caption": (
        "The mask this attention really used, {shape}: one picture per sentence; all {h} heads share it. "
        "Rows are queries, columns keys; [PAD] rows are computed too, but nothing reads them."
    ),
    # 4. the effect
    "masks.effect.header": "4. What masking does to the weights",
    "masks.effect.explain": (
        "Before the softmax, every hidden cell gets −∞ added. Since e^(−∞) = 0, its weight becomes exactly "
        "0, and the softmax shares the whole weight, 1 per row, among the allowed keys only."
    ),
    "masks.effect.alibi": (
        "This model uses ALiBi: in its self-attention the scores already include the position bias B, "
        "−m_h·|q − k| for the query at position q and the key at position k ({form}; head {head}: m = {m}). "
        "Hover a cell of the scores for both terms. "
        "Cross-attention gets no bias."
    ),
    "masks.effect.alibi.encoder": "the encoder's symmetric form",
    "masks.effect.alibi.decoder": "the decoder uses −m_h·(q − k), equal wherever the causal mask lets a query look",
    "masks.effect.sentence": "Sentence",
    "masks.effect.head": "Head (layer 1)",
    "masks.what.sentence": "sentence",
    "masks.what.head": "head",
    "masks.effect.check": (
        "Sentence {row}, head {head}: the largest weight on a masked cell is {masked} (exactly 0), and every "
        "row sums to 1 (largest deviation {error}, float rounding). Without the mask, [PAD] keys and future "
        "tokens would take a share of every row."
    ),
    "masks.effect.random": "Random weights: the scores themselves are noise; what the mask does to them is not.",
    # figures
    "masks.table.row": "row",
    "masks.fig.sentence": "sentence {n}",
    "masks.fig.position": "position",
    "masks.fig.token": "token",
    "masks.fig.id": "id",
    "masks.fig.real_token": "real token",
    "masks.fig.real": "1 real",
    "masks.fig.may_attend": "may attend",
    "masks.fig.false": "0 False",
    "masks.fig.true": "1 True",
    "masks.fig.key_position": "key position",
    "masks.fig.query_position": "query position",
    "masks.fig.query": "query",
    "masks.fig.key": "key",
    "masks.fig.score": "score",
    "masks.fig.weight": "weight",
    "masks.fig.panel.scores": "scores QKᵀ/√d_k<br>(× = masked)",
    "masks.fig.panel.scores_alibi": "scores QKᵀ/√d_k + B<br>(B: ALiBi bias; × = masked)",
    "masks.fig.alibi_bias": "ALiBi bias B",
    "masks.fig.panel.without": "softmax<br>without mask",
    "masks.fig.panel.with": "softmax with mask<br>(the model's weights)",
    "masks.fig.padding_title": "key-padding mask (B, 1, 1, S)",
    "masks.fig.causal_title": "causal mask (1, 1, T, T)",
    "masks.fig.source_ids": "source ids ({B}, {S})",
    "masks.fig.target_ids": "target ids ({B}, {T})",
    "masks.fig.source_padding": "source key padding ({B}, 1, 1, {S})",
    "masks.fig.causal": "causal (1, 1, {T}, {T})",
    # a decoder-only model (GPT-2, Llama): one input, one attention (padding ∧ causal)
    "masks.intro.one_stack": (
        "Sentences of different lengths share one tensor only if the short ones are filled up. Masks make "
        "sure the filler changes nothing, and that no token can look at the tokens after it: {model} "
        "predicts the next token at every position."
    ),
    "masks.batch.input": (
        "Input ids (B, L) = ({B}, {L}): {model} reads the sentences themselves with its one causal stack. "
        "Every row is filled up to the longest with id {pad_id}, shown as [PAD]: {filler} Row 1 is the "
        "sidebar sentence."
    ),
    "masks.batch.filler_pad": "the model's padding token.",
    "masks.batch.filler_eos": (
        "the model has no padding token, so its end-of-text token fills (no sentence here uses it). The id "
        "does not matter: the mask below says which cells are filling."
    ),
    "masks.batch.filler_other": (
        "the model has no padding token of its own that no sentence here uses, so the batch fills with an "
        "id none of its real tokens has. The id does not matter: the mask below says which cells are filling."
    ),
    "masks.one_stack.batch": (
        "{model} is a decoder only: the ids above are the input of its one stack. There is no second "
        "(decoder) input and no cross-attention; its self-attention uses padding ∧ causal."
    ),
    "masks.causal.explain.one_stack": (
        "**Causal (look-ahead)**: query t sees keys 0…t only. The model predicts the token after each "
        "position: if position t could see token t + 1, it would read the answer instead of predicting it."
    ),
    "masks.one_stack.kinds": (
        "{model} is a decoder only: the encoder's self-attention and the cross-attention do not exist."
    ),
    "masks.merged.explain.one_stack": (
        "In {model}'s self-attention a query may look at a key only if both masks allow it (∧ = “and”). "
        "The size-1 axes are then repeated (broadcast): the same mask for every head h and, for padding, "
        "for every query."
    ),
    "masks.fig.input_ids": "input ids ({B}, {S})",
    "masks.fig.key_padding": "key padding ({B}, 1, 1, {S})",
}
