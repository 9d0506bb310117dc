"""The Embeddings page (pages/embeddings.py) and its figures (figures/embeddings.py)."""

STRINGS = {
    "embeddings.caption": (
        "Each token id picks one row of a learned table E (vocabulary × d_model). That row, multiplied "
        "by √d_model, plus the positional encoding, is the vector the encoder reads."
    ),
    "embeddings.caption.learned": (
        "Each token id picks one row of a learned table E (vocabulary × d_model). That row, multiplied "
        "by √d_model, plus a learned position row P[pos] (a second table, one row per position), is the "
        "vector the encoder reads."
    ),
    "embeddings.caption.rope": (
        "Each token id picks one row of a learned table E (vocabulary × d_model). That row, multiplied "
        "by √d_model, is the vector the encoder reads: this model (RoPE) adds no position to it. It "
        "rotates the queries and keys of every self-attention by their positions instead."
    ),
    "embeddings.caption.alibi": (
        "Each token id picks one row of a learned table E (vocabulary × d_model). That row, multiplied "
        "by √d_model, is the vector the encoder reads: this model (ALiBi) adds no position to it. Every "
        "self-attention lowers its scores by a penalty that grows with the distance between the two "
        "tokens instead."
    ),
    "embeddings.caption.bert": (
        "Each token id picks one row of a learned table E (vocabulary × d_model). This pretrained model "
        "adds a learned position row and a token-type row to it, then a LayerNorm: that is the vector the "
        "encoder reads (no √d_model here)."
    ),
    # 1. the lookup
    "embeddings.lookup.header": "1 · The lookup: token → id → row of E",
    "embeddings.lookup.explain": (
        "No arithmetic happens here: the id is just a row number. The table is a weight matrix like "
        "any other, so training moves the rows of tokens used in similar ways closer together."
    ),
    "embeddings.metric.rows": "Rows in the table (source vocabulary)",
    "embeddings.metric.width": "Width of each row (d_model)",
    "embeddings.lookup.table": "The first {shown} of the sentence's {n} tokens and the first entries of their rows:",
    "embeddings.rows.header": "The sentence's rows, tokens × dimensions",
    "embeddings.rows.trained": "Trained weights: these rows were learned while translating characters into pinyin.",
    "embeddings.rows.trained_task": "Trained weights ({task!r} task): these rows were learned during training.",
    "embeddings.rows.pretrained": (
        "Pretrained weights (all-MiniLM-L6-v2): these rows were learned from a very large amount of English "
        "text; the table has {vocab} WordPiece rows, [CLS] and [SEP] included."
    ),
    "embeddings.rows.random": (
        "Random weights: these rows are random numbers (seed {seed}) — no pattern to find here; change the "
        "seed and every row changes."
    ),
    "embeddings.many_tokens": (
        "{n} tokens: beyond {limit} the axes name only some of them. Hover over a cell to see its token, "
        "or drag to zoom in."
    ),
    # 2. the × √d_model scaling
    "embeddings.scale.header": "2 · Why multiply by √d_model?",
    "embeddings.scale.explain": (
        "The paper (section 3.4) multiplies the embedding by √d_model. Table entries are small (they are "
        "initialised with a spread that shrinks as the table grows; here their typical size is {rms}), "
        "while every positional-encoding entry is a sine or cosine in [−1, 1] and a PE row has length "
        "√(d_model/2). Without the factor the position would drown the token; with it both have a "
        "comparable size."
    ),
    "embeddings.scale.explain.learned": (
        "The paper (section 3.4) multiplies the embedding by √d_model so that the token row is not "
        "drowned by its sine/cosine position row, whose entries lie in [−1, 1]. This model keeps the factor "
        "but learns its position table P instead. P is initialised like E, with small random entries "
        "(their typical size here is {rms_pe}, the token rows' {rms}), so the factor makes the token part "
        "the larger one, and training sets the balance between the two tables."
    ),
    "embeddings.scale.explain.in_attention": (
        "The paper (section 3.4) multiplies the embedding by √d_model so that the token row and the "
        "sine/cosine position row added to it have comparable sizes. This model adds no position row "
        "({scheme} acts inside every self-attention), so here the factor balances nothing: it only makes "
        "every input vector √d_model times longer (the table's entries have a typical size of {rms}). "
        "Glassbox's Transformer keeps the paper's factor whichever way positions are encoded."
    ),
    "embeddings.metric.norm_lookup": "Mean ‖E[id]‖ (row as stored)",
    "embeddings.metric.norm_scaled": "Mean ‖E[id]·√{d}‖ (scaled)",
    "embeddings.metric.norm_pe": "‖PE(pos)‖ = √(d_model/2)",
    "embeddings.metric.norm_learned_pe": "Mean ‖P[pos]‖ (learned position)",
    "embeddings.metric.norm_normed": "Mean ‖LayerNorm output‖ (what the encoder reads)",
    "embeddings.scale.share": (
        "Share of the summed vector's length that is position: {without} without scaling, {with_} with it "
        "(mean lengths, this sentence)."
    ),
    # 2'. BERT: no scaling, learned positions, token type, LayerNorm
    "embeddings.bert.header": "2 · No √d_model here: BERT adds three rows, then normalises",
    "embeddings.bert.explain": (
        "The paper multiplies the table row by √d_model and adds a fixed sine/cosine encoding. This "
        "pretrained model (BERT-style) does neither. It adds a **learned** position row P[pos] (a second "
        "table, one row per position, up to 512) and a token-type row T[0] (BERT can read two sentences, "
        "A and B; here there is always one, so type 0). Then a **LayerNorm** gives every summed vector "
        "mean 0 and spread 1, followed by a learned scale γ and shift β."
    ),
    "embeddings.bert.why": (
        "Why no √d_model? The paper needs the factor because its table E is learned while its PE is fixed, "
        "with entries in [−1, 1]: a fixed factor brings the two to comparable sizes. Here the position "
        "table is learned together with the token table (and T), so training sets their scales against "
        "each other and no fixed factor is needed to balance them. The LayerNorm could not do that job: it "
        "rescales the sum as a whole, not the shares of the token and the position inside it."
    ),
    "embeddings.bert.share": (
        "Share of ‖E[id]‖ + ‖P[pos]‖ that is position: {share} (mean lengths, this sentence). After the "
        "LayerNorm the vectors are longer (mean length {normed}): the learned γ sets their size, not √d_model."
    ),
    "embeddings.norms.title": "**Length of each token's vectors**",
    "embeddings.hist.title": "**All their entries**",
    # 3. similarity
    "embeddings.similarity.header": "3 · Which tokens have similar vectors?",
    "embeddings.similarity.explain": (
        "The cosine compares directions only: 1 = the same direction, 0 = unrelated (at a right angle), "
        "−1 = opposite. Scaling a vector does not change it."
    ),
    "embeddings.similarity.trained": (
        "Trained weights: similarity reflects how the model learned to use the characters: characters it "
        "treats alike end up with similar rows. [UNK] tokens (English, emoji…) all share one row, so "
        "their cosine is 1."
    ),
    "embeddings.similarity.trained_task": (
        "Trained weights ({task!r} task): similarity reflects how the model learned to use its tokens: "
        "tokens it treats alike end up with similar rows. [UNK] tokens (characters outside the task's "
        "vocabulary) all share one row, so their cosine is 1."
    ),
    "embeddings.similarity.pretrained": (
        "Pretrained weights: rows of word pieces used in similar contexts tend to point in similar "
        "directions, so related words often have a clearly positive cosine. Every [UNK] token (a character "
        "missing from the English vocabulary) uses the same row, and a repeated token shows 1."
    ),
    "embeddings.similarity.random": (
        "Random weights: these similarities are meaningless. Random vectors in many dimensions are "
        "almost orthogonal, so off-diagonal cosines sit near 0 (spread about 1/√{d} ≈ {spread}). "
        "That is the starting point training has to move away from. Only a repeated token shows 1."
    ),
    "embeddings.cosine.title": "**Cosine similarity of the rows**",
    "embeddings.pca.title": "**The rows in 2-D (PCA)**",
    "embeddings.pca.caption": (
        "PCA: the {d}-dimensional rows projected onto the two directions along which these tokens differ "
        "most (the axes' percentages say how much of the spread each keeps). Close points = similar rows."
    ),
    "embeddings.pca.one_token": "With one token there is nothing to compare.",
    # figures: table columns, axis titles, legends, hovers
    "embeddings.table.position": "position",
    "embeddings.table.token": "token",
    "embeddings.table.id": "id",
    "embeddings.axis.token": "token",
    "embeddings.axis.dimension": "dimension",
    "embeddings.axis.dimension_j": "dimension j",
    "embeddings.axis.value": "value",
    "embeddings.axis.norm": "vector length (L2 norm)",
    "embeddings.axis.entry": "entry value",
    "embeddings.axis.count": "count",
    "embeddings.axis.cosine": "cosine",
    "embeddings.axis.pc": "PC{n} ({share} of the variance)",
    "embeddings.series.lookup": "E[id], the table row",
    "embeddings.series.scaled": "E[id]·√{d}, scaled",
    "embeddings.series.normed": "LayerNorm(E + P + T), the encoder's input",
    "embeddings.series.pe": "PE(pos), the position",
    "embeddings.series.learned_pe": "P[pos], the learned position",
    "embeddings.hist.lookup": "E[id] entries",
    "embeddings.hist.scaled": "E[id]·√{d} entries",
    "embeddings.hist.normed": "LayerNorm output entries",
    "embeddings.hist.pe": "PE entries (in [-1, 1])",
    "embeddings.hist.learned_pe": "P[pos] entries",
    "embeddings.hist.range": "value",
    # a model folder (hf:<name>): its configuration says what it does; whether it was trained, nothing does
    "embeddings.this_model": "This model",
    "embeddings.caption.folder.bert": (
        "Each token id picks one row of the table E (vocabulary × d_model). {model} adds a position row "
        "P[pos] (a second table, {rows} rows) and a token-type row to it, then a LayerNorm: that is the "
        "vector the encoder reads (no √d_model here)."
    ),
    "embeddings.caption.unscaled.learned": (
        "Each token id picks one row of the table E (vocabulary × d_model). {model} does not multiply it by "
        "√d_model: it adds a position row P[pos] from a second table ({rows} rows, one per position it can "
        "read), and E[id] + P[pos] is the vector its first layer reads."
    ),
    "embeddings.caption.unscaled.in_attention": (
        "Each token id picks one row of the table E (vocabulary × d_model). {model} neither multiplies it by "
        "√d_model nor adds a position to it: the row itself is the vector its first layer reads. "
        "{scheme} brings the positions in inside every self-attention instead."
    ),
    "embeddings.rows.folder": (
        "Weights loaded from the model folder {model}. Glassbox cannot know whether they were trained (then "
        "these rows hold what training put there) or are random numbers saved to the folder."
    ),
    "embeddings.unscaled.header.learned": "2 · No √d_model here: the row plus a position row",
    "embeddings.unscaled.header.in_attention": "2 · No √d_model and no position here: the row as it is",
    "embeddings.unscaled.explain.learned": (
        "The paper multiplies the table row by √d_model because its position encoding is fixed, with "
        "entries in [−1, 1], and the factor brings the two to comparable sizes. {model} has no such factor: "
        "its position rows P[pos] are a second table of weights ({rows} rows), sized against the token "
        "table by training rather than by a fixed factor, and their sum goes into the first layer without a "
        "LayerNorm. Typical entry size here: {rms} in E, {rms_pe} in P."
    ),
    "embeddings.unscaled.explain.in_attention": (
        "The paper multiplies the table row by √d_model so that it and the sine/cosine position row added "
        "to it have comparable sizes. {model} adds no position row ({scheme} acts inside every "
        "self-attention), so there is nothing to balance: it reads the row as it is, with no factor and no "
        "LayerNorm (the table's entries have a typical size of {rms})."
    ),
    "embeddings.metric.norm_input": "Mean ‖E[id] + P[pos]‖ (what the first layer reads)",
    "embeddings.unscaled.share": (
        "Share of ‖E[id]‖ + ‖P[pos]‖ that is position: {share} (mean lengths, this sentence)."
    ),
    "embeddings.bert.explain.folder": (
        "The paper multiplies the table row by √d_model and adds a fixed sine/cosine encoding. {model} "
        "(BERT family) does neither. It adds a position row P[pos] from a second table of weights ({rows} "
        "rows, one per position) and a token-type row T[0] (BERT can read two sentences, A and B; here "
        "there is always one, so type 0). Then a **LayerNorm** gives every summed vector mean 0 and spread "
        "1, followed by its scale γ and shift β."
    ),
    "embeddings.similarity.folder": (
        "Weights loaded from the model folder {model}: Glassbox cannot know whether they were trained. If "
        "they were, rows of tokens used in similar contexts tend to point in similar directions; if they "
        "are random numbers, off-diagonal cosines sit near 0 (spread about 1/√{d} ≈ {spread}). A repeated "
        "token shows 1 either way."
    ),
    "embeddings.series.input": "what the first layer reads (no √d_model)",
    "embeddings.hist.input": "entries of the first layer's input",
    # a language model trained here (task "lm": the small GPT, or one trained on the Training page)
    "embeddings.rows.lm": (
        "Trained weights: these rows were learned here, while the model learned to predict the next token of "
        "its training text (English and Chinese quotations, poems and songs from Debian's fortune files)."
    ),
    "embeddings.similarity.lm": (
        "Trained weights (a language model): similarity reflects how the model learned to use its tokens: "
        "tokens that appear in similar contexts tend to end up with similar rows. Its byte-level BPE has no "
        "[UNK]: every character it has no token for is spelled in bytes. Only a repeated token shows exactly 1."
    ),
    "embeddings.dims_from_0": "Positions and dimensions count from 0, as in the paper's PE(pos, 2i): E[id, 0] is the first number of a row.",
}
