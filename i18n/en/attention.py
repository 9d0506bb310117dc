"""The Attention page (pages/attention.py) and its figures (figures/attention.py, figures/attention_views.py)."""

STRINGS = {
    # the three attentions of the model (also the radio labels, so they are in the URL: keep them short)
    "attention.kind.encoder": "Encoder self-attention",
    "attention.kind.decoder": "Decoder masked self-attention",
    "attention.kind.cross": "Decoder cross-attention",
    "attention.kind_layer": "{kind}, layer {layer}:",
    "attention.where.encoder": "Queries, keys and values all come from the source sentence.",
    "attention.where.decoder": (
        "Queries, keys and values all come from the decoder's input; the causal mask hides the "
        "future: position t sees positions 0…t only (positions count from 0)."
    ),
    "attention.where.cross": (
        "Queries come from the decoder (target tokens), keys and values from the encoder's output, "
        "the memory (source tokens)."
    ),
    # page-level texts
    "attention.intro": (
        "Attention lets every token collect information from the other tokens. Each token asks a "
        "question (its **query** q), shows a label (its **key** k) and offers a content (its **value** v); "
        "all three are the token's vector multiplied by learned matrices. How well a query fits a key is "
        "their dot product q·k, divided by √d_k so the numbers stay moderate. **Softmax** turns one "
        "query's scores into positive weights that add up to 1, and the token's new vector is the "
        "weighted sum of the values. The model does this h = {h} times side by side (h **heads**), each "
        "in its own space of d_k = {d_model}/{h} = {d_k} numbers, so each head can look for something else."
    ),
    "attention.encoder_only": (
        "{model} is an encoder only (like BERT): it has encoder self-attention, but no decoder, so "
        "decoder masked self-attention and cross-attention do not exist for it. Choose other weights "
        "in the sidebar to see them."
    ),
    "attention.long": (
        "{n} tokens: the big heatmaps below are overviews — they draw blocks of neighbouring tokens "
        "(hover a cell to see which). Drag on a chart to zoom in; the head view scrolls, and the "
        "neuron view and the one-query bars always show exact numbers."
    ),
    "attention.noise": (
        "Random weights: these patterns are noise — the model has learned nothing yet. "
        "Switch to the trained checkpoint in the sidebar to see attention that means something."
    ),
    # widgets (labels) and what a notice calls their values
    "attention.widget.kind": "Which attention",
    "attention.widget.layer": "Layer (1…{n})",
    "attention.widget.head": "Head (1…{n})",
    "attention.widget.query": "Query token",
    "attention.widget.key": "Key token",
    "attention.widget.bars": "Bars",
    "attention.what.layer": "layer",
    "attention.what.head": "head",
    "attention.what.position": "position",
    "attention.choice.one_of": "one of: {options}",
    "attention.choice.unavailable": "{key}={value} is not available ({allowed}): showing {showing}.",
    # head view
    "attention.hv.title": "Head view: who looks at whom",
    "attention.hv.explain": (
        "Left: the tokens that ask (queries). Right: the tokens they look at (keys). Each line is one "
        "attention weight α, a number between 0 and 1: the darker the line, the more of that key's "
        "value the query takes. One colour per head. **Hover a token** (or click it to keep the "
        "selection) to see only its lines; the coloured boxes on the other side show its weights per "
        "head. Tick the boxes to show or hide heads."
    ),
    "attention.hv.sparse": (
        "{n} tokens: to keep the view fluid, each query draws only its {k} strongest lines per head, "
        "and faint lines are stretched (opacity = weight ÷ the row's largest weight; untick “stretch” "
        "for the plain weights). Scroll inside the view; a smaller row height gives an overview (then "
        "hover a row to read its token)."
    ),
    "attention.hv.js.title": "{kind}, layer {layer}",
    "attention.hv.js.heads": "Heads:",
    "attention.hv.js.all": "all",
    "attention.hv.js.none": "none",
    "attention.hv.js.stretch": "stretch faint lines (÷ the row's largest weight)",
    "attention.hv.js.zoom": "Row height",
    "attention.hv.js.hint": "Hover or click a token to see only its lines (Esc: all lines).",
    "attention.hv.js.queries": "queries (ask)",
    "attention.hv.js.keys": "keys (are looked at)",
    "attention.hv.js.status_query": "Query “{token}” (position {pos}) looks at the keys.",
    "attention.hv.js.status_key": "Key “{token}” (position {pos}) is looked at by these queries.",
    "attention.hv.js.strongest": "Strongest: “{token}” (position {pos}), weight {weight}, {head}.",
    "attention.hv.js.nothing": "No line: every weight here is 0 (masked).",
    # neuron view
    "attention.nv.title": "Neuron view: one weight, number by number",
    "attention.nv.explain": (
        "Choose a query token and a key token. In one head each of them is a vector of d_k = {d_k} "
        "numbers: q for the query, k for the key. Multiply them number by number (q⊙k): a blue bar "
        "adds to the match, a red one takes away. The sum of all products is the dot product q·k. "
        "Divided by √d_k it is the score s, and softmax over all the keys of this query turns the "
        "score into the weight α."
    ),
    "attention.nv.fig.q": "q: the query vector of “{token}” (position {pos})",
    "attention.nv.fig.k": "k: the key vector of “{token}” (position {pos})",
    "attention.nv.fig.product": "q⊙k: the products q_i·k_i; they add up to q·k = {dot}",
    "attention.nv.fig.dim": "dimension",
    "attention.nv.fig.dims": "dimension i of the head (0…{last})",
    "attention.nv.fig.summary": "q·k = {dot}   →   s = q·k / √{d_k} = {score}   →   α = {weight}",
    "attention.nv.softmax": (
        "The weight does not depend on this score alone: softmax compares it with the scores of all "
        "{n} keys this query may see (e^s of each, divided by their sum), so the weights of one query "
        "add up to 1. The numbers are the model's own: s is the trace's score, α its weight."
    ),
    "attention.nv.masked": (
        "This key comes after the query: the causal mask replaces its score by −∞ before softmax, so "
        "its weight is exactly 0 (the decoder may not look at the future)."
    ),
    # one head step by step
    "attention.steps.choose": "One head, step by step",
    "attention.steps.title": "Head {head}, step by step (real numbers)",
    "attention.steps.explain": (
        "Every matrix below is the model's own tensor for this sentence. Hover a cell for its exact "
        "value; values are written in the cells of small matrices (up to {n} × {n})."
    ),
    "attention.steps.pooled": (
        "Long axes (more than {max}) are shown in blocks: a cell is the mean of its block (weights: the "
        "largest weight in it). The hover names the block's positions."
    ),
    "attention.steps.input": "**1. The input.** Each row is one token's vector from the previous layer.",
    "attention.steps.projections": "**2. This head's projections** ({d_model} → {d_k} numbers per token).",
    "attention.steps.scores": (
        "**3. Scores: how well each query matches each key,** scaled so that softmax does not saturate."
    ),
    "attention.steps.softmax": (
        "**4. Mask, then softmax.** Masked cells (0 in the mask) get −∞ before softmax, so their weight "
        "is exactly 0; every row of weights sums to 1."
    ),
    "attention.steps.heads": "**5. Weighted sum of the values, then all heads together.**",
    "attention.steps.frame": "The orange frame in the concatenation is head {head}'s block of {d_k} columns.",
    "attention.step.x": "X: the layer input",
    "attention.step.memory": "memory: the encoder output",
    "attention.step.w_q": "W_Q, head {head}",
    "attention.step.w_k": "W_K, head {head}",
    "attention.step.w_v": "W_V, head {head}",
    "attention.step.mask": "mask (1 = may attend)",
    "attention.step.weights": "softmax → weights",
    "attention.step.head_out": "head {head} = weights · V",
    "attention.step.concat": "Concat(head 1…{h})",
    "attention.step.output": "output = Concat · W_O + b_O",
    "attention.step.w_o_all": "W_O (all heads)",
    "attention.step.w_o_rows": "W_O rows {first}…{last}: head {head}'s share",
    "attention.axis.token": "token",
    "attention.axis.dimension": "dimension",
    "attention.axis.dk_dim": "d_k dim",
    "attention.axis.d_model_dim": "d_model dim",
    "attention.axis.concat_dim": "concat dim",
    "attention.axis.output_dim": "output dim",
    "attention.axis.query": "query",
    "attention.axis.key": "key",
    "attention.axis.weight": "weight",
    "attention.axis.key_token": "key token",
    "attention.axis.attention_weight": "attention weight",
    "attention.hover.value": "value",
    "attention.hover.block_mean": "mean of the block",
    "attention.hover.block_max": "largest weight in the block",
    "attention.head_n": "head {n}",
    "attention.layer_n": "layer {n}",
    "attention.layer_head": "layer {layer}, head {head}",
    "attention.step_by_step_mark": " (step by step)",
    # every head, every layer
    "attention.all_heads.title": "All {h} heads of layer {layer}",
    "attention.all_heads.explain": (
        "{kind}: rows are queries, columns are keys; each row sums to 1. Hover for exact weights."
    ),
    "attention.trained.cross.pinyin": (
        "Trained 汉字→拼音: each pinyin syllable is read from its own character, so a head that found the "
        "alignment looks at that character — a bright diagonal (clearest in the last decoder layer). "
        "(Positions count from 0; decoder position 0 reads [BOS] and writes the syllable of character 0, so "
        "position t should look at character t.) In layer {layer}, head {head}, {share} of the rows have "
        "their strongest weight on the diagonal."
    ),
    "attention.trained.cross.copy": (
        "Trained to copy digits: each output digit is the input digit at the same position, so a head that "
        "found the alignment looks there — a bright diagonal. (Positions count from 0; decoder position t "
        "writes input digit t.) In layer {layer}, head {head}, {share} of the rows have their strongest "
        "weight on the diagonal."
    ),
    "attention.trained.cross.reverse": (
        "Trained to reverse digits: each output digit is an input digit read from the end, so a head that "
        "found the alignment looks there — a bright anti-diagonal. (Positions count from 0; with S input "
        "digits, decoder position t writes input digit S − 1 − t.) In layer {layer}, head {head}, {share} of "
        "the rows have their strongest weight on the anti-diagonal."
    ),
    "attention.trained.cross.task": (
        "Trained on the “{task}” task: compare the heads of the cross-attention — which source tokens does "
        "each output position look at?"
    ),
    "attention.trained.one_stack": (
        "Trained weights: compare the heads — some look at the token just before, some rest on the first "
        "token, some (induction heads, named in the table above) at the token after an earlier occurrence "
        "of the current one. Repeat a sequence to see them."
    ),
    "attention.trained.other": (
        "Trained weights: compare heads — some look at the previous or the same position, some spread "
        "out. The clearest pattern is in the decoder cross-attention (choose it above)."
    ),
    "attention.trained.compare": "Trained weights: compare the heads — some look at the previous or the next token, some at the same one, some spread out.",
    "attention.trained.bert": "In BERT-like models many heads also rest on [CLS] or [SEP] when they find nothing to look for.",
    "attention.table.input": "decoder input",
    "attention.table.writes": "writes",
    "attention.table.looks_at": "looks most at",
    "attention.table.weight": "weight",
    # the three views below the step-by-step section (tabs; the label is kept in the URL)
    "attention.tab.head_view": "Head view",
    "attention.tab.neuron_view": "Neuron view",
    "attention.tab.heads": "All heads of this layer",
    "attention.tab.grid": "Every layer × head",
    "attention.tab.query": "Where one token looks",
    "attention.grid.title": "Every layer × every head: {n} × {h}",
    "attention.grid.explain": (
        "{kind} of all layers at a glance (rows: layers, columns: heads). "
        "The head shown step by step above is layer {layer}, head {head}."
    ),
    # one query
    "attention.query.title": "Where does one token look?",
    "attention.query.causal": (
        "Keys after the query token get weight 0: the causal mask keeps the decoder from peeking ahead."
    ),
    "attention.bars.head": "the selected head",
    "attention.bars.mean": "average of all heads",
    "attention.bars.all": "every head",
    "attention.bars.mean_of": "mean of {h} heads",
    "attention.formula.alibi": "B: this model's ALiBi bias, added to the scores of every self-attention (never to cross-attention); m_h is head h's slope.",
    "attention.formula.rope.one": "R: this model's RoPE rotation of every query and key by its position, in every self-attention.",
    "attention.formula.alibi.one": "B: this model's ALiBi bias, added to the scores of every self-attention; m_h is head h's slope.",
    "attention.formula.rope": "R: this model's RoPE rotation of every query and key by its position, in every self-attention (never in cross-attention).",
    "attention.step.alibi_bias": "ALiBi bias",
    "attention.steps.open": "Open: X → Q, K, V → QKᵀ → /√d_k → mask → softmax → ·V → concat → W_O with the real numbers",
    # ALiBi: the position bias, a term of the score of its own (neuron view and step by step)
    "attention.nv.explain_alibi": (
        "Choose a query token and a key token. In one head each of them is a vector of d_k = {d_k} "
        "numbers: q for the query, k for the key. Multiply them number by number (q⊙k): a blue bar "
        "adds to the match, a red one takes away. The sum of all products is the dot product q·k. "
        "Divided by √d_k, plus the ALiBi position bias b (this model's self-attention adds it: the "
        "farther the key from the query, the lower), it is the score s; softmax over all the keys of "
        "this query turns the score into the weight α."
    ),
    "attention.nv.alibi": (
        "b is ALiBi's position bias for this pair: head {head} has the slope m = {m}, and the key is "
        "|i − j| = {distance} positions from the query, so b = −m·|i − j| = {bias}. The model adds it to "
        "q·k/√d_k before softmax: s is the trace's score, bias included."
    ),
    "attention.nv.alibi_causal": (
        "b is ALiBi's position bias for this pair: head {head} has the slope m = {m}, and the decoder uses "
        "b = −m·(i − j) with i − j = {distance} here, so b = {bias} (wherever the causal mask lets the "
        "query look, this equals −m·|i − j|). The model adds it to q·k/√d_k before softmax: s is the "
        "trace's score, bias included."
    ),
    "attention.nv.fig.summary_bias": (
        "q·k = {dot}   →   s = q·k / √{d_k} + b = {scaled} + ({bias}) = {score}   →   α = {weight}"
    ),
    "attention.steps.scores_alibi": (
        "**3. Scores: how well each query matches each key,** scaled so that softmax does not saturate; "
        "then this model (ALiBi) adds its position bias B, which lowers the scores of distant keys: "
        "head {head} has the slope m = {m}. Q Kᵀ/√d_k + B is the score softmax reads."
    ),
    "attention.step.bias": "B = −m·|i − j|: ALiBi bias, m = {m}",
    "attention.step.bias_causal": "B = −m·(i − j): ALiBi bias, m = {m}",
    "attention.steps.open_alibi": (
        "Open: X → Q, K, V → QKᵀ → /√d_k → + ALiBi bias → mask → softmax → ·V → concat → W_O with the real numbers"
    ),
    # a model with one causal stack (GPT-2, Llama, Qwen2), weights loaded from a model folder
    "attention.this_model": "This model",
    "attention.decoder_only": (
        "{model} is a decoder only: one causal stack of {n} layers that reads the sentence itself. Its "
        "attention is masked (causal) self-attention — each token sees itself and the tokens before it, "
        "never a later one. It has no encoder, so encoder self-attention and cross-attention do not exist "
        "for it."
    ),
    "attention.where.causal": (
        "Queries, keys and values all come from the sentence's tokens, the input of the model's one stack; "
        "the causal mask hides the future: position t sees positions 0…t only (positions count from 0)."
    ),
    "attention.loaded.compare": (
        "Weights loaded from the model folder {name}: compare the heads — which tokens does each one look at?"
    ),
    # grouped-query attention (Llama, Qwen2): fewer key/value heads than query heads
    "attention.gqa.explain": (
        "Grouped-query attention: this model has {h} query heads but only {kv} key/value heads, so "
        "{groups}. Heads that share a key/value head have the same keys k and values v (the same W_K and "
        "W_V); only their queries q are their own."
    ),
    "attention.gqa.one": (
        "Multi-query attention: this model's {h} query heads all share one key/value head. They have the "
        "same keys k and values v (the same W_K and W_V); only their queries q are their own."
    ),
    "attention.gqa.group": "heads {first}–{last} share key/value head {kv}",
    "attention.gqa.sep": "; ",
    "attention.nv.fig.k_shared": (
        "k: the key vector of “{token}” (position {pos}), key/value head {kv}, shared by heads {first}–{last}"
    ),
    "attention.nv.shared": (
        "Heads {first}–{last} share key/value head {kv}: they have the same k for every token (choose "
        "another of these heads: the k row stays the same, only q changes)."
    ),
    "attention.nv.rope": (
        "RoPE: q and k are shown after their rotation by their positions — the vectors the model multiplies."
    ),
    "attention.steps.shared": (
        "Head {head} reads key/value head {kv}, which heads {first}–{last} share: W_K, W_V, K and V below "
        "are that key/value head's, the same for all of them; W_Q and Q are head {head}'s own."
    ),
    "attention.steps.rope": (
        "R: RoPE rotates each query and key by its position before Q Kᵀ; Q and K below are the rotated ones "
        "(V is not rotated)."
    ),
    "attention.step.w_k_shared": "W_K, key/value head {kv} (heads {first}–{last})",
    "attention.step.w_v_shared": "W_V, key/value head {kv} (heads {first}–{last})",
    "attention.step.output_nobias": "output = Concat · W_O (this model has no b_O)",
    "attention.dims_from_0": "Positions and dimensions count from 0, as in the paper's PE(pos, 2i); layers and heads count from 1, as head₁ … head_h do.",
}
