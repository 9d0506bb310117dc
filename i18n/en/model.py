"""The Full model page (pages/model.py) and its figures (figures/model.py).

Texts under ``model.fig.`` are chart texts; those with plotly's ``%{...}`` are hover templates,
used as they are (never formatted with values).
"""

STRINGS = {
    "model.intro": (
        "Attention is one sublayer. Around it: a residual connection and LayerNorm, a feed-forward "
        "network, and at the end a softmax over the vocabulary that the decoder reads one token at a time."
    ),
    "model.noise": "Random weights: these numbers are real but the pattern is noise — no meaning yet.",
    # values of model_… in the URL
    "model.url.invalid": "an invalid value",
    "model.url.whole": "must be a whole number from {lo} to {hi}",
    "model.url.number": "must be a number from {lo} to {hi}",
    "model.url.range": "must be from {lo} to {hi} for this sentence and these sizes",
    "model.url.ignored": "Ignored {key}={raw} in the URL ({why}); showing {value}.",
    "model.spinner.other_norm": "Running the other LayerNorm placement…",
    "model.spinner.greedy": "Decoding greedily…",
    # the tabs (?model_view=<label>): one section at a time
    "model.tab.residual_ffn": "1–2 · Residual + LayerNorm, feed-forward",
    "model.tab.stream": "3 · Through the layers",
    "model.tab.output": "4 · Output probabilities",
    "model.tab.decoding": "5 · Greedy decoding",
    # 1. residual + LayerNorm
    "model.residual.header": "1 · Residual connection + LayerNorm",
    "model.residual.intro": (
        "Every sublayer (self-attention, feed-forward) is wrapped the same way: its output is "
        "**added** to its input (the *residual stream*) and a **LayerNorm** rescales each vector to "
        "mean 0, variance 1 (then a learned scale γ and shift β).\n\n"
        "Think of the residual stream as a running sum: a sublayer only adds a correction, so what "
        "came in is never lost, and during training the error signal has a direct path back to the "
        "first layers."
    ),
    "model.residual.post": "**post-norm** (the paper, section 3.1): normalise the sum.",
    "model.residual.pre": "**pre-norm** (later models, e.g. GPT-2): normalise the branch input only.",
    "model.residual.layer": "Encoder layer",
    "model.residual.token": "Source token (position)",
    "model.residual.token.help": "Which token's vector to follow through the layer.",
    "model.residual.caption": (
        "One vector through encoder layer {layer} of {n} ({norm}-norm), the token at position {token}:"
    ),
    "model.residual.reading": (
        "Read top to bottom: blue rows are the residual stream, orange rows what a sublayer adds, green "
        "rows a LayerNorm's output. Mean 0 and variance 1 over d = {d} numbers means a length of "
        "√{d} = {root} before γ and β: watch the green bars."
    ),
    # 2. feed-forward
    "model.ffn.header": "2 · Position-wise feed-forward network",
    "model.ffn.relu": (
        "Attention lets the tokens exchange information; the feed-forward network then works on each "
        "token **on its own**. The same two-layer network is applied to every token separately: "
        "d_model = {d_model} → d_ff = {d_ff} → d_model. The heatmap shows the hidden layer "
        "max(0, xW₁ + b₁) of encoder layer {layer}; white cells are units the ReLU switched off (exactly 0)."
    ),
    "model.ffn.gelu": (
        "Attention lets the tokens exchange information; the feed-forward network then works on each "
        "token **on its own**: d_model = {d_model} → d_ff = {d_ff} → d_model, the same network for "
        "every token. This model (like BERT) uses GELU instead of the paper's ReLU: a smooth ReLU that "
        "lets small negative values through (Φ(z): the probability that a standard normal random number is at most z). The heatmap shows GELU(xW₁ + b₁) of encoder layer {layer} "
        "(orange: negative, blue: positive)."
    ),
    "model.ffn.metric": "Hidden units switched off (exactly 0)",
    "model.ffn.metric.help": "Fraction of the tokens × d_ff hidden activations that are exactly 0.",
    "model.ffn.random_half": "With random weights about half the units are off: xW₁ + b₁ is symmetric around 0.",
    "model.ffn.gelu_zero": "GELU is 0 only at exactly 0: it squeezes negative inputs towards 0 instead of cutting them.",
    "model.ffn.part": (
        "{n} tokens × {d_ff} units would be too many cells to draw: the heatmap shows the first {units} "
        "units (zoom in to read single cells)."
    ),
    # 3. the stream through the layers
    "model.stream.header": "3 · The residual stream through the layers: post- vs pre-norm",
    "model.stream.intro": (
        "The same picture for the whole encoder: the average length ‖x‖ of the token vectors after "
        "every half-layer. With **post-norm** every sublayer ends in a LayerNorm, which pulls the "
        "length back to √d_model (the dotted line) before its learned scale γ and shift β, which trained "
        "weights move away from 1 and 0. With **pre-norm** the LayerNorm only sees "
        "the branch's input, so the stream itself keeps growing."
    ),
    "model.stream.trained": (
        "Trained weights: the LayerNorm placement is fixed by the checkpoint ({norm}-norm). "
        "Switch the sidebar to random weights to compare post- and pre-norm side by side."
    ),
    "model.stream.pretrained": (
        "Pretrained weights: the LayerNorm placement is fixed by the model ({norm}-norm, like the paper). "
        "Its learned γ need not keep the length at √d_model. Switch the sidebar to random weights to "
        "compare post- and pre-norm side by side."
    ),
    "model.stream.random": (
        "The same random weights (seed {seed}) with LayerNorm after (post) and before (pre) "
        "each sublayer. Post-norm brings the stream back to about √d_model after every sublayer; "
        "pre-norm keeps adding to it, so it grows with depth (try 6 layers)."
    ),
    "model.stream.final_norm": (
        "The last step, LayerNorm → memory, is the encoder's final LayerNorm, applied once after its last "
        "layer: the convention of torch.nn.Transformer and of the Annotated Transformer, which this model "
        "follows. Pre-norm needs it (its stream is otherwise never normalised); the paper's post-norm model "
        "has none, so there the memory is the last layer's output."
    ),
    # 4. output probabilities
    "model.output.header": "4 · Output probabilities",
    "model.encoder_only": (
        "{model} is an encoder only: it has no decoder and no output layer, so there are no next-token "
        "probabilities and nothing to decode (sections 4–5). The tabs below show its encoder. Choose random or "
        "trained weights in the sidebar to see the decoder at work."
    ),
    "model.output.intro": (
        "The decoder's last vector at position *i* goes through a linear layer (one score, a *logit*, "
        "per target token) and a softmax, which turns any list of scores into positive numbers that add "
        "up to 1. The temperature *T* divides the logits first: *T* < 1 sharpens, *T* > 1 flattens. "
        "**Greedy decoding takes the argmax, which no temperature changes**; sampling would draw from "
        "these bars, so it depends on *T*."
    ),
    "model.output.position": "Decoder position",
    "model.output.topk": "Top-k tokens shown",
    "model.output.temperature": "Temperature T",
    "model.output.reads.target": "the target sentence given in the sidebar (teacher forcing)",
    "model.output.reads.own": "the model's own greedy output",
    "model.output.reads.sentence": "the sentence itself (random weights: their own output is not worth feeding back)",
    "model.output.caption": (
        "The decoder reads {reads}. Position {position} has seen these tokens and proposes the next one:"
    ),
    # 5. greedy decoding
    "model.greedy.header": "5 · Greedy decoding, step by step",
    "model.greedy.intro": (
        "The decoder writes one token at a time. It starts from [BOS]; at every step it reads everything "
        "written so far (and the encoder's memory), takes the most probable next token and appends it, "
        "until it writes [EOS]. The paper uses beam search instead, which keeps the 4 best unfinished "
        "outputs rather than only the best one."
    ),
    "model.greedy.own": "The decoder started from [BOS] and fed each chosen token back in as its next input.",
    "model.greedy.on_demand_target": (
        "Decoded here on demand (the sidebar gives a target, so the other views are teacher-forced)."
    ),
    "model.greedy.on_demand_random": (
        "Decoded here on demand (the sidebar has random weights, so the other views read the sentence)."
    ),
    "model.greedy.noise": "Random weights: an untrained model's output is noise (often one token repeated).",
    "model.greedy.capped": "Decoding stops here after {steps} steps (one trace per step would not fit in memory).",
    "model.greedy.step": "Step t",
    "model.greedy.step.help": "Step t generates the t-th token from the prefix [BOS] y₁ … yₜ₋₁.",
    "model.greedy.head": "Cross-attention head (0 = average of the {h})",
    "model.greedy.prefix": "Step {step} of {n}: the prefix so far",
    "model.greedy.chosen": "the chosen (most probable) next token",
    "model.greedy.bars_title": "next token at step {step} (T = 1)",
    "model.greedy.heads_mean": "average of the heads",
    "model.greedy.head_no": "head {head}",
    "model.greedy.cross_caption": (
        "Cross-attention at step {step}, last decoder layer ({which}): "
        "rows = decoder positions so far, columns = source tokens"
    ),
    "model.greedy.rows": (
        "Each row is one decoder position of this step; the last row is the one that chose the token."
    ),
    "model.greedy.diagonal": "A trained 汉字→拼音 model looks at the character it is reading aloud: a diagonal.",
    "model.greedy.output.header": "Decoded output",
    "model.greedy.source": "Source tokens ({n}; unknown characters are [UNK])",
    "model.greedy.output": "Greedy output ({n} tokens)",
    "model.greedy.output_eos": "Greedy output ({n} tokens, stopped at [EOS])",
    "model.greedy.nothing": "(nothing before [EOS])",
    # figures/model.py
    "model.fig.stage.input": "x (layer input)",
    "model.fig.stage.output": "{formula} (output)",
    "model.fig.kind.stream": "residual stream",
    "model.fig.kind.sublayer": "sublayer output",
    "model.fig.kind.normed": "after LayerNorm",
    "model.fig.residual.length": "length ‖v‖",
    "model.fig.residual.dims": "first {dims} of {d} dimensions",
    "model.fig.value": "value",
    "model.fig.dimension": "dimension",
    "model.fig.weight": "weight",
    "model.fig.probability": "probability",
    "model.fig.stream.embedded": "embedded",
    "model.fig.stream.attn": "L{i} attn",
    "model.fig.stream.ffn": "L{i} FFN",
    "model.fig.stream.memory": "memory",
    "model.fig.stream.memory_norm": "LayerNorm → memory",
    "model.fig.stream.line": "{norm}-norm",
    "model.fig.stream.hover": "mean ‖x‖ = %{y:.4f}<br>min %{customdata[0]:.4f}, max %{customdata[1]:.4f}",
    "model.fig.stream.x": "encoder, stage by stage",
    "model.fig.stream.y": "mean ‖x‖ over tokens",
    "model.fig.ffn.hover": "token #%{y}<br>unit %{x}<br>value %{z:.4f}",
    "model.fig.ffn.x": "hidden unit (d_ff = {d_ff})",
    "model.fig.ffn.x_part": "hidden unit (the first {units} of d_ff = {d_ff})",
    "model.fig.zero.hover": "%{customdata} #%{y}<br>%{x:.1%} of units are 0",
    "model.fig.zero.all": "all: {share}",
    "model.fig.zero.x": "units off (= 0)",
    "model.fig.cross.x": "source token (memory)",
    "model.fig.cross.y": "decoder position",
    "model.fig.blocks": "{title}, mean over blocks of {k}",
    # -- a model's own variants (ui/sections/model.py: Model.key): "<key>.rms" for an RMSNorm model, "<key>.one"
    # for a decoder-only model (one causal stack); chosen from its configuration
    "model.intro.one": (
        "Attention is one sublayer. Around it: a residual connection with a normalisation ({kind}), a feed-forward network, "
        "and at the end a softmax over the vocabulary that gives the next token, which the model appends "
        "before it reads again."
    ),
    "model.decoder_only": (
        "{model} is decoder-only: one causal stack reads the sentence, with no encoder and no "
        "cross-attention. The tabs follow that stack ({norm}-norm with {kind}, as its "
        "configuration says), its next-token probabilities and generation."
    ),
    "model.tab.residual_ffn.rms": "1–2 · Residual + RMSNorm, feed-forward",
    "model.tab.decoding.one": "5 · Generation, step by step",
    "model.residual.header.rms": "1 · Residual connection + RMSNorm",
    "model.residual.intro.rms": (
        "Every sublayer (self-attention, feed-forward) is wrapped the same way: its output is "
        "**added** to its input (the *residual stream*), and an **RMSNorm** rescales a vector to root "
        "mean square 1 (then a learned scale g). Unlike LayerNorm it subtracts no mean and adds no shift.\n\n"
        "Think of the residual stream as a running sum: a sublayer only adds a correction, so what "
        "came in is never lost, and during training the error signal has a direct path back to the "
        "first layers."
    ),
    "model.residual.layer.one": "Layer",
    "model.residual.token.one": "Token (position)",
    "model.residual.caption.one": (
        "One vector through layer {layer} of {n} ({norm}-norm, {kind}), the token at position {token}:"
    ),
    "model.residual.reading.pre": (
        "Read top to bottom: blue rows are the residual stream, orange rows what a sublayer adds. In "
        "pre-norm the {kind} sits inside each branch (it normalises what the sublayer reads), so no row of "
        "the stream is normalised: its length grows as the sublayers add to it."
    ),
    "model.ffn.gelu_tanh": (
        "Attention lets the tokens exchange information; the feed-forward network then works on each "
        "token **on its own**: d_model = {d_model} → d_ff = {d_ff} → d_model, the same network for "
        "every token. This model uses GELU (its tanh approximation, GPT-2's) instead of the paper's ReLU: a "
        "smooth ReLU that lets small negative values through. The heatmap shows GELU(xW₁ + b₁) of layer "
        "{layer} (orange: negative, blue: positive)."
    ),
    "model.ffn.swiglu": (
        "Attention lets the tokens exchange information; the feed-forward network then works on each "
        "token **on its own**: d_model = {d_model} → d_ff = {d_ff} → d_model, the same network for "
        "every token. This model uses SwiGLU instead of the paper's ReLU: a third matrix W_g makes a gate, "
        "SiLU(xW_g), that scales each hidden unit of xW₁. The heatmap shows that product, "
        "SiLU(xW_g) ⊙ xW₁, of layer {layer} (orange: negative, blue: positive)."
    ),
    "model.ffn.swiglu_zero": (
        "A SwiGLU unit is 0 only where the gate or xW₁ is exactly 0: the gate squeezes rather than cuts, "
        "and the product can be negative."
    ),
    "model.stream.header.one": "3 · The residual stream through the layers",
    "model.stream.intro.one": (
        "The average length ‖x‖ of the token vectors after every half-layer of the one stack. Where the "
        "{kind} sits decides what happens to it: after each sublayer (post-norm) it pulls the length back "
        "to √d_model (the dotted line, before its learned scale); before each sublayer (pre-norm) it only "
        "sees the branch's input, so the stream itself keeps growing."
    ),
    "model.stream.folder": (
        "Weights loaded from the model folder {name}: the placement is fixed by its configuration "
        "({norm}-norm, {kind}). Switch the sidebar to random weights to compare post- and pre-norm side by "
        "side."
    ),
    "model.stream.final_norm.one": (
        "The last step is the stack's final {kind}, applied once after its last layer: h, what the output "
        "layer reads."
    ),
    "model.output.intro.one": (
        "The stack's last vector at position *i* goes through a linear layer (one score, a *logit*, per "
        "vocabulary token) and a softmax, which turns any list of scores into positive numbers that add up "
        "to 1: the probability of each token coming next. The temperature *T* divides the logits first: "
        "*T* < 1 sharpens, *T* > 1 flattens. Greedy generation takes the argmax, which no temperature "
        "changes; sampling (tab 5) draws from these bars, after top-k and top-p where they are chosen."
    ),
    "model.output.position.one": "Position",
    "model.output.reads.prompt": "the sentence itself",
    "model.output.caption.one": (
        "This model's one stack reads {reads}. Position {position} has seen these tokens and proposes the "
        "next one:"
    ),
    "model.output.table.header": "The next token after every position",
    "model.output.table.caption": (
        "Each position predicts the token after it (T = 1, all positions from one run): the most probable "
        "one, and the probability the model gave the token that really follows in the sentence."
    ),
    # 5. generation (a decoder-only model)
    "model.gen.header": "5 · Generation, step by step",
    "model.gen.intro": (
        "The model writes by appending one token at a time: it reads the sentence and everything written "
        "so far, and the last position's logits *z* give the next token's distribution. The "
        "**temperature** *T* divides the logits (*T* = 0: always the most probable token, greedy); "
        "**top-k** keeps only the *k* most probable tokens; **top-p** keeps the most probable tokens until "
        "their probabilities add up to *p*. The token is drawn from what is left by a random generator "
        "started from the **seed**: the same seed gives the same text."
    ),
    "model.gen.spinner": "Generating…",
    "model.gen.none": (
        "Nothing was generated: the sentence already fills every position this model has."
    ),
    "model.gen.temperature": "Temperature T (0 = greedy)",
    "model.gen.temperature.help": "0 takes the most probable token at every step (top-k and top-p then change nothing).",
    "model.gen.top_k": "Top-k (0 = off)",
    "model.gen.top_k.help": "Keep only the k most probable tokens before drawing.",
    "model.gen.top_p": "Top-p (1 = off)",
    "model.gen.top_p.help": (
        "Keep the most probable tokens until their probabilities add up to p (the most probable one "
        "always stays)."
    ),
    "model.gen.seed": "Seed",
    "model.gen.seed.help": "Starts the random generator that draws each token: the same seed, the same text.",
    "model.gen.tokens": "New tokens (at most)",
    "model.gen.greedy": "greedy",
    "model.gen.sampled": "sampled with seed {seed}",
    "model.gen.prompt": "The sentence ({n} tokens)",
    "model.gen.output": "What the model wrote after it ({n} tokens, {how})",
    "model.gen.output_eos": "What the model wrote after it ({n} tokens, {how}; it stopped at its end-of-text token)",
    "model.gen.step": "Step t",
    "model.gen.step.help": "Step t chooses the t-th new token from the sentence and the t − 1 tokens before it.",
    "model.gen.step_prefix": "Step {step} of {n}: what the model reads",
    "model.gen.chosen": "the token chosen",
    "model.gen.unfiltered": "T = 1, nothing filtered",
    "model.gen.bars_title": "next token at step {step}",
    "model.gen.bars_caption": (
        "Bars: the distribution the token was drawn from (after temperature, top-k and top-p; green: the "
        "token chosen). Ticks: the same tokens at T = 1 before any filtering."
    ),
    "model.gen.table": "Every step: the token chosen, its probability where it was drawn, and how many tokens that distribution kept.",
    # figures/model.py, a decoder-only model
    "model.fig.stream.h": "h",
    "model.fig.stream.h_layer": "LayerNorm → h",
    "model.fig.stream.h_rms": "RMSNorm → h",
    "model.fig.stream.x_one": "the stack, stage by stage",
    "model.fig.next.position": "position",
    "model.fig.next.token": "token",
    "model.fig.next.best": "most probable next",
    "model.fig.next.best_p": "its probability",
    "model.fig.next.actual": "really next",
    "model.fig.next.actual_p": "its probability (really next)",
    "model.fig.gen.step": "step",
    "model.fig.gen.chosen": "token chosen",
    "model.fig.gen.p": "probability (drawn from)",
    "model.fig.gen.kept": "tokens kept",
    "model.gen.as_text": "The same tokens read as text (a character split across tokens is whole again):",
    "model.gen.no_text": "(nothing: it wrote only its end-of-text token)",
    "model.dims_from_0": "Positions and dimensions count from 0, as in the paper's PE(pos, 2i); layers count from 1.",
}
