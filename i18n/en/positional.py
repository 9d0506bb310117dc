"""The Positional encoding page (pages/positional.py) and its figures (figures/positional.py)."""

STRINGS = {
    # -- the figures ---------------------------------------------------------------------------------
    "positional.fig.dim_label": "dim {dim} ({kind}, period {period:,.1f})",
    "positional.fig.seen_in_training": "seen in training (0–{last})",
    "positional.fig.example_training": "if trained on {n} positions (an example)",
    "positional.fig.sentence_end": "end of this sentence ({n} tokens)",
    "positional.fig.no_rows": "no row from position {n} on: an error",
    "positional.fig.axis.pos": "position pos",
    "positional.fig.axis.position": "position",
    "positional.fig.axis.dimension": "dimension",
    "positional.fig.axis.position_p": "position p",
    "positional.fig.axis.position_q": "position q",
    "positional.fig.axis.offset": "offset k",
    "positional.fig.axis.distance": "distance k = i − j",
    "positional.fig.axis.query_i": "query position i",
    "positional.fig.axis.key_j": "key position j",
    "positional.fig.hover.pos": "pos",
    "positional.fig.hover.dim": "dim",
    "positional.fig.hover.token": "token",
    "positional.fig.value": "value",
    "positional.fig.dot": "dot",
    "positional.fig.bias": "bias added to the score",
    "positional.fig.sum.input": "sum = encoder input",
    "positional.fig.rope.pair_title": "pair {i}: θ = {theta:.3g} rad per position",
    "positional.fig.hover.position": "position",
    "positional.fig.hover.angle": "angle",
    "positional.fig.hover.head": "head {h}",
    "positional.fig.hover.query_i": "query i",
    "positional.fig.hover.key_j": "key j",
    "positional.fig.hover.bias": "bias",
    "positional.fig.rope.turn_name": "pair {i} (one turn every {period:,.0f} positions)",
    "positional.fig.rope.angle_axis": "angle p·θ_i (mod 2π)",
    "positional.fig.rope.highest": "highest angle of pair {i} seen in training",
    "positional.fig.rope.score_axis": "score (R_p x)·(R_(p+k) x)/√d_k",
    "positional.fig.alibi.head_title": "head {h}<br>m = {m}",
    "positional.fig.alibi.line_name": "head {h} (m = {m})",
    "positional.fig.alibi.offset_axis": "bias(p, p+k), head 1",
    "positional.fig.learned.dim_name": "dim {dim}",
    # -- URL checks ----------------------------------------------------------------------------------
    "positional.notice.too_many_dims": "pe_dims had {n} dimensions; only the first {limit} are shown.",
    "positional.notice.bad_dims": (
        "Ignored pe_dims={values} (a dimension must be a whole number from 0 to {last}); "
        "showing dimensions {dims}."
    ),
    "positional.notice.bad_max_pos": (
        "Ignored pe_max_pos={value} (must be a whole number from {lo} to {hi}); using {default}."
    ),
    "positional.notice.dims_removed": (
        "d_model is now {d}: dimension(s) {dropped} no longer exist and were removed."
    ),
    # -- the page ------------------------------------------------------------------------------------
    "positional.caption": (
        "Attention compares every token with every other one and by itself ignores order: “dog bites man” "
        "and “man bites dog” would look the same. So the model must be told where each token is. "
        "Sections 1–4: the paper's way, a vector per position added to the token's. "
        "Section 5: three other ways used by today's models."
    ),
    "positional.not_sinusoidal": (
        "This model ({model}) does not use the paper's sinusoids: its positions are “{scheme}”. "
        "Sections 1–3 explain the sinusoids anyway; section 5 shows this model's own scheme."
    ),
    "positional.curves.header": "1 · A sine and a cosine per pair of dimensions",
    "positional.curves.explain": (
        "Each pair of dimensions (2i, 2i+1) turns at its own speed ω_i = 1/10000^(2i/d_model): the first "
        "pair repeats every 2π ≈ 6.3 positions, the last of the {d} dimensions only every {slowest:,.0f} "
        "positions. Like the hands of a clock, fast and slow together give every position a distinct pattern."
    ),
    "positional.curves.dims": "Dimensions to plot (0 … {last}, at most {limit})",
    "positional.curves.max_pos": "Positions to draw",
    "positional.curves.max_pos.help": (
        "Default {default}. The formula is defined for every position, far beyond any sentence."
    ),
    "positional.curves.none": "No dimension selected: pick one or more above to see its curve.",
    "positional.curves.trained": (
        "Trained weights: the model was trained on short phrases (at most {chars} characters; "
        "positions 0–{last}, shaded). The curves go on smoothly for any position, but the model has never "
        "seen attention patterns at larger offsets, so do not expect it to handle long inputs."
    ),
    "positional.curves.trained_digits": (
        "Trained weights: the model was trained on digit sequences of at most {chars} digits (positions "
        "0–{last}, shaded). The curves go on smoothly for any position, but the model has never seen "
        "attention patterns at larger offsets, so do not expect it to handle long inputs."
    ),
    "positional.curves.random": (
        "Random weights: nothing was trained, so no position is “familiar” to the model. (The shipped "
        "trained model only saw short phrases of a few characters.) The encoding itself needs no training: "
        "it is a fixed formula, defined for every position."
    ),
    "positional.curves.pretrained": (
        "This pretrained model does not add these curves: it learned its own table of {rows} rows "
        "(section 5, “Learned”). The curves are shown for comparison."
    ),
    "positional.table.header": "2 · The whole table: positions × dimensions",
    "positional.table.caption": (
        "Rows are positions 0–{last}, columns the {d} dimensions. Left columns flip quickly from row to "
        "row (fast pairs), right columns barely change (slow pairs): nearby positions get similar rows."
    ),
    "positional.shift.header": "3 · Why it works: a shift by k is a rotation",
    "positional.shift.explain": (
        "Each 2×2 block turns one (sin, cos) pair by the angle k·ω_i. M_k depends on the offset k, not on "
        "p: a layer can learn “look k tokens back” once and use it at every position. And the dot product "
        "of two positions depends only on how far apart they are:"
    ),
    "positional.shift.even": (
        "This needs an even d_model: every sine needs its cosine partner. With an odd d_model the last "
        "dimension is a lone sine and the dot product would depend on p. The sidebar only offers even sizes."
    ),
    "positional.shift.metric": "max |M₅·PE(p) − PE(p+5)| over p < 64",
    "positional.shift.metric.help": "Computed here with the model's own table: zero up to float32 rounding.",
    "positional.shift.gram": (
        "PE·PEᵀ for positions 0–63: every diagonal (same offset p − q) has one colour. "
        "Section 5 (“Sinusoidal”, b) draws the same numbers as curves."
    ),
    "positional.sum.header": "4 · The encoder input",
    "positional.sum.no_sentence": (
        "Type a sentence in the sidebar to see its tokens' embeddings, their PE rows and the sum."
    ),
    "positional.sum.caption": (
        "Left: the token's scaled row (see the Embeddings page); middle: the row of the table above for its "
        "position; right: their sum, exactly the model's input (trace.src_embedded). One colour scale for "
        "all three."
    ),
    "positional.sum.caption.random": " Random weights: the left panel is random numbers; the PE panel is exact anyway.",
    "positional.sum.caption.learned": (
        "Left: the token's row (not scaled); middle: the learned position row P[pos]; right: what the "
        "encoder reads, LayerNorm(E + P + T[0]) (T: the token-type row), exactly trace.src_embedded."
    ),
    "positional.sum.caption.learned_scaled": (
        "Left: the token's scaled row E[id]·√d_model; middle: this model's learned position row P[pos] (not "
        "the sinusoid table above); right: their sum, exactly the model's input (trace.src_embedded). "
        "Random weights: both rows are random numbers until trained."
    ),
    "positional.sum.title.lookup": "E[id]",
    "positional.sum.title.learned": "P[pos] (learned)",
    "positional.sum.title.normed": "LayerNorm(E + P + T) = encoder input",
    "positional.sum.in_attention": (
        "This model adds nothing to the embeddings (positions “{scheme}” act inside attention): "
        "the encoder input is the scaled lookup alone."
    ),
    "positional.sum.no_positions": (
        "This model adds nothing to the embeddings, and with d_k = 1 its RoPE rotates nothing either: the "
        "encoder input is the scaled lookup alone, and no position information reaches the encoder."
    ),
    "positional.many_tokens": (
        "{n} tokens: only every {step}th is labelled on the axis; hover a row to see its token, drag to zoom."
    ),
    # -- section 5: four schemes ---------------------------------------------------------------------
    "positional.schemes.header": "5 · Four ways to tell the model where a token is",
    "positional.schemes.intro": (
        "The paper adds a fixed vector to each token. Later models changed where the position enters: "
        "BERT and GPT-2 learn the vectors (“Learned”); LLaMA, Qwen and most recent models rotate the queries "
        "and keys inside attention (“RoPE”); BLOOM adds a penalty that grows with distance to the scores "
        "(“ALiBi”). For each: (a) how it reaches the attention scores, (b) whether a score depends only on "
        "the distance between two tokens, (c) what happens after the longest sequence seen in training."
    ),
    "positional.schemes.sizes": (
        "Drawn for this model's head size: d_model = {d}, h = {h} heads, d_k = {d_k}; "
        "training length L = {L}{example}."
    ),
    "positional.schemes.example": " (an example: these weights were not trained on sentences)",
    "positional.table.col.scheme": "scheme",
    "positional.table.col.where": "where it enters",
    "positional.table.col.relative": "score depends only on i − j?",
    "positional.table.col.beyond": "longer than max_len",
    "positional.table.where.added": "added to the embedding, once",
    "positional.table.where.rotate": "rotates q and k in every self-attention",
    "positional.table.where.bias": "adds −m·|i − j| to every self-attention score",
    "positional.table.relative.sinusoidal": "for PE·PE yes; the full score mixes in absolute positions",
    "positional.table.relative.learned": "not guaranteed",
    "positional.table.relative.yes": "yes, exactly",
    "positional.table.beyond.formula": "runs (the formula has every position)",
    "positional.table.beyond.error": "error: no row",
    "positional.table.beyond.runs": "runs",
    "positional.tab.sinusoidal": "Sinusoidal",
    "positional.tab.learned": "Learned",
    "positional.tab.rope": "RoPE",
    "positional.tab.alibi": "ALiBi",
    "positional.tab.current": "{name} ✓ this model",
    "positional.part.reach": "(a) How it reaches the scores",
    "positional.part.relative": "(b) Does a score depend only on the distance?",
    "positional.part.beyond": "(c) Past the training length",
    "positional.metric.spread": "largest difference between the curves",
    "positional.metric.spread.help": (
        "For each offset k: the largest minus the smallest value over the starting positions p; "
        "the largest of these. 0 means: only the distance k matters."
    ),
    # sinusoidal
    "positional.sin.reach": (
        "The position vector is added once, at the bottom, to the token's vector. Every layer then sees "
        "token and position mixed in one vector. In the first layer's score the product of two sums gives "
        "four terms: content·content, content·position, position·content and position·position. "
        "Sections 1–4 above show the vectors themselves."
    ),
    "positional.sin.relative": (
        "The position·position part depends only on the offset k: the curves for different starting "
        "positions p lie exactly on top of each other. (The other three terms still carry absolute "
        "positions, which the model must learn to ignore or use.)"
    ),
    "positional.sin.beyond": (
        "The formula gives a vector for every position, so a longer input runs (the model computes the "
        "table for the longer length). But past the shaded part the slow dimensions take values the "
        "trained layers never saw: the model runs, but often badly."
    ),
    # learned
    "positional.learned.reach": (
        "Same place as the sinusoids: a row of a table P is added to the token's vector. But P is not a "
        "formula: it is a weight matrix with one row per position 0 … max_len − 1, learned by "
        "backpropagation like the token table E."
    ),
    "positional.learned.reach.minilm": (
        "This is the real table of all-MiniLM-L6-v2: {rows} rows × {d} dimensions (every {step}th row "
        "drawn). The first rows, used by every sentence, were trained the most."
    ),
    "positional.learned.reach.random": (
        "A table of {rows} rows as it starts, before any training: random numbers, no pattern. "
        "(Choose the MiniLM weights in the sidebar to see a table learned from real text.)"
    ),
    "positional.learned.relative": (
        "Nothing in a learned table forces P[p]·P[p+k] to depend on k only: it is whatever training left. "
        "The curves for different starting positions p do not coincide."
    ),
    "positional.learned.relative.minilm": (
        " In MiniLM's table they are similar near k = 0 (nearby positions got similar rows), "
        "but not equal."
    ),
    "positional.learned.beyond": (
        "There is simply no row for position max_len or later: the model refuses a longer input "
        "with an error (“sequence length … exceeds max_len=…”). BERT-like models cut long texts at 512 tokens "
        "for this reason."
    ),
    # RoPE
    "positional.rope.reach": (
        "Nothing is added to the embeddings. Inside every self-attention head, the query and the key of a "
        "token are turned by an angle that grows with its position: pair of dimensions (2i, 2i+1) turns by "
        "p·θ_i. A rotation keeps a vector's length, so only angles carry the position."
    ),
    "positional.rope.reach.panels": (
        "The panels turn the same 2-D vector for positions 0–7: a fast pair (1 radian per position) and "
        "slower ones."
    ),
    # RoPE with d_k = 1 (d_model 16, 16 heads): no pair of dimensions to rotate
    "positional.rope.no_pair.model": (
        "This model cannot tell where a source token is. RoPE turns pairs of dimensions, and with "
        "d_model = {d_model} and {h} heads each head has d_k = 1 dimension: there is no pair, so RoPE rotates "
        "nothing, and nothing is added to the embeddings either. Reorder the sentence and the encoder's "
        "outputs are only reordered the same way, and the decoder reads the same thing (only its causal "
        "mask still separates earlier target tokens from later ones). Choose fewer heads (d_k ≥ 2) to "
        "give RoPE a pair to rotate."
    ),
    "positional.rope.no_pair.other": (
        "At this head size, d_k = 1, RoPE would rotate nothing: it turns pairs of dimensions, and a head "
        "of one dimension has none, so a RoPE model of these sizes could not tell positions apart. "
        "(This model puts its positions in another way: see its own tab.)"
    ),
    "positional.rope.no_pair.sidebar": (
        "d_k = 1: a head has no pair of dimensions to rotate, so RoPE does nothing and this model "
        "cannot tell positions apart. Choose fewer heads."
    ),
    "positional.rope.no_pair.relative": (
        "With d_k = 1 nothing turns: the score of the same vector is the same at every offset and every "
        "position (flat lines)."
    ),
    "positional.rope.no_pair.beyond": (
        "No pair turns, so a longer input brings no new angle: every position looks the same as every "
        "other, within the training length and past it."
    ),
    "positional.rope.cross": (
        "Cross-attention gets no rotation here: decoder and encoder positions belong to two different "
        "sentences, so their difference means nothing. The encoder's output already carries positions."
    ),
    "positional.rope.relative": (
        "Turning the query by m·θ and the key by n·θ is like turning the key alone by (n − m)·θ: the score "
        "depends on the distance n − m only. The curves (the same vector as query and key, at positions p "
        "and p + k) lie exactly on top of each other."
    ),
    "positional.rope.beyond": (
        "Any position has an angle, so a longer input runs. A pair that turns once within the training "
        "length has shown every angle of its circle, so later positions bring nothing new for it. A slower "
        "pair has not: past the training length it climbs above the highest angle seen in training (dotted "
        "line), into angles the trained layers never met. That is why plain RoPE degrades on longer inputs, "
        "and why long-context models stretch the angles (position interpolation, NTK, YaRN)."
    ),
    # ALiBi
    "positional.alibi.reach": (
        "Nothing is added to the embeddings and q, k are left alone. Each head adds a penalty to the score: "
        "−m_h times the distance between query and key. Each head has its own slope m_h: steep heads "
        "look at close neighbours, flat heads look far."
    ),
    "positional.alibi.rule.power": (
        "H = {H} heads, a power of two: the slopes are the geometric series m_h = 2^(−8h/{H}), "
        "h = 1 … {H}. Here: m = {slopes}."
    ),
    "positional.alibi.rule.other": (
        "H = {H} heads, not a power of two: the slopes are not one geometric series. As in Press "
        "et al.'s code (and BLOOM's), heads 1–{low} take the slopes of a model of {low} heads, "
        "2^(−8h/{low}), and the heads after them (here {rest}) take every other slope of a model of "
        "{high} heads (2^(−8h/{high}) for h = 1, 3, 5, …). Here: m = {slopes}."
    ),
    "positional.alibi.causal": "Decoder (causal) form: −m·(i − j)",
    "positional.alibi.causal.help": (
        "In the decoder a query only sees earlier keys (j ≤ i), where −m·(i − j) and −m·|i − j| are equal; "
        "the cells the causal mask hides are left empty."
    ),
    "positional.alibi.cross": (
        "Only self-attention gets the bias; cross-attention gets none here (decoder and encoder positions are "
        "in two different sentences, so i − j means nothing). The decoder uses −m·(i − j), which is the same "
        "wherever its causal mask lets a token look."
    ),
    "positional.alibi.relative": (
        "The bias is a function of i − j only: the curves for every starting position coincide exactly "
        "(a straight line: the penalty grows by m for each step of distance)."
    ),
    "positional.alibi.beyond": (
        "A longer input runs, and nothing new appears: the lines just continue, so farther tokens only get "
        "smaller weights. Press et al. (“Train Short, Test Long”) trained on 1,024 tokens and tested on "
        "longer ones with little loss, which the other schemes could not do."
    ),
    # a model folder (hf:<name>): its configuration says what it does; whether it was trained, nothing does
    "positional.curves.folder": (
        "{model} does not add these curves: its positions are “{scheme}” (section 5). The curves are shown "
        "for comparison."
    ),
    "positional.curves.folder.rows": " Its position table has {rows} rows, one per position it can read.",
    "positional.sum.header.one_stack": "4 · The first layer's input",
    "positional.sum.in_attention.unscaled": (
        "This model adds nothing to the embeddings (positions “{scheme}” act inside attention) and does not "
        "multiply them by √d_model: its first layer reads the lookup E[id] alone."
    ),
    "positional.sum.title.input": "E + P = first layer's input",
    "positional.sum.caption.unscaled": (
        "Left: the token's row E[id] (not scaled); middle: its position's row P[pos] of the model's position "
        "table (not the sinusoid table above); right: their sum, exactly what the first layer reads (no "
        "LayerNorm)."
    ),
    "positional.schemes.sizes.folder": (
        "Drawn for this model's head size: d_model = {d}, h = {h} heads, d_k = {d_k}; L = {L}, the number "
        "of positions its configuration allows (max_position_embeddings), drawn as the training length."
    ),
    "positional.learned.reach.folder": (
        "This is the table of {model}, loaded from its folder: {rows} rows × {d} dimensions (every {step}th "
        "row drawn)."
    ),
    "positional.rope.reach.half": (
        "Nothing is added to the embeddings. Inside every self-attention head, the query and the key of a "
        "token are turned by an angle that grows with its position: this model turns dimension i together "
        "with dimension i + d_k/2 (the head's first half with its second half) by p·θ_i. A rotation keeps a "
        "vector's length, so only angles carry the position."
    ),
    "positional.rope.folder": (
        "{model} uses the base θ = {theta} and turns the pairs {pairs}. The charts below draw the RoPE "
        "paper's form (base 10000, pairs (2i, 2i+1)): another base changes how fast each pair turns, another "
        "pairing which dimensions go together, not what a rotation does."
    ),
    "positional.rope.pairs.half": "(i, i + d_k/2)",
    "positional.rope.pairs.interleaved": "(2i, 2i+1)",
    "positional.rope.cross.one_stack": (
        "This model has no cross-attention: RoPE turns the queries and keys of its one self-attention, in "
        "every layer."
    ),
    # a language model trained here (task "lm": the small GPT, or one trained on the Training page)
    "positional.curves.trained_lm": (
        "Trained weights: this language model was trained here on windows of {n} tokens of its training "
        "text (positions 0–{last}, shaded)."
    ),
    "positional.curves.lm_own": (
        " It does not add these curves: its positions are “{scheme}” (section 5). The curves are shown for "
        "comparison."
    ),
    "positional.learned.reach.lm": (
        "This is the real table of this model, learned here on its training text: {rows} rows × {d} "
        "dimensions (every {step}th row drawn). Its training windows were {n} tokens long, so only rows "
        "0–{last} were ever read in training."
    ),
    "positional.schemes.sizes.lm": (
        "Drawn for this model's head size: d_model = {d}, h = {h} heads, d_k = {d_k}; training length L = {L}, "
        "the window of tokens it was trained on."
    ),
    "positional.dims_from_0": "Positions and dimensions count from 0, as in the paper's PE(pos, 2i): dimension 0 is the first sine, dimension 1 the first cosine.",
}
