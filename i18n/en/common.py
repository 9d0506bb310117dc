"""Texts shared by every page: navigation, the weights badge, run messages."""

STRINGS = {
    # navigation: (title, one-line description) per page
    "nav.overview.title": "Overview",
    "nav.overview.desc": "The whole pipeline with its tensor shapes",
    "nav.tokenization.title": "Tokenization",
    "nav.tokenization.desc": "Text → tokens → ids (BPE)",
    "nav.embeddings.title": "Embeddings",
    "nav.embeddings.desc": "ids → vectors, scaled by √d_model",
    "nav.positional.title": "Positional encoding",
    "nav.positional.desc": "sin/cos of position, learned, RoPE, ALiBi",
    "nav.attention.title": "Attention",
    "nav.attention.desc": "softmax(QKᵀ/√d_k)·V, per head",
    "nav.masks.title": "Masks",
    "nav.masks.desc": "Padding and causal masks",
    "nav.model.title": "Full model",
    "nav.model.desc": "Encoder, decoder and the next-token probabilities",
    "nav.interventions.title": "Interventions",
    "nav.interventions.desc": "Switch heads off, patch one sentence into another, every layer's guess",
    "nav.training.title": "Training",
    "nav.training.desc": "Train a small model live, then use it",
    "common.page_suffix": "Glassbox",
    "common.empty": "(empty)",
    "common.no_tokens": "(no tokens)",
    "answer.greedy": "**The model's answer** (greedy decoding: the most probable token, fed back, until [EOS]):",
    "answer.teacher": "**The model's prediction** after each position of the given target (teacher forcing: the most probable next token):",
    "answer.next": "**The model's prediction** after each token of the sentence (the most probable next token):",
    "answer.sentence": "**What these random weights predict** after each token of the sentence (the most probable next token): noise, nothing was trained",
    # the weights badge
    "weights.badge.trained": "Weights: {label}",
    "weights.badge.trained_default": "trained 汉字→拼音 checkpoint",
    "weights.badge.random": "Weights: random initialisation (seed {seed}) — attention patterns are noise",
    # run messages (ui/caches/cache.py)
    "run.building": "Building the model…",
    "run.running": "Running the model…",
    "run.no_pipeline": "The model pipeline (core/tracing/pipeline.py) is not in this build yet: model views are empty.",
    "run.build_failed": "The model could not be built: {error}",
    "run.empty_sentence": (
        "The sentence is empty: type a sentence in the sidebar (any language) to see the model at work."
    ),
    "run.no_tokens": "The sentence is empty for the model (it has no tokens): type some text in the sidebar.",
    "run.failed": "The model could not run on this text: {error}",
    "run.truncated": (
        "The sentence has {total} tokens; the model sees only the first {shown} "
        "(at most {limit}; raise “Tokens shown” in the sidebar to see more)."
    ),
    "run.encoder_only": (
        "{model} is an encoder only: it has no decoder, so this page has nothing to show. "
        "Choose other weights in the sidebar, or open the encoder pages (tokenization, embeddings, "
        "positions, attention)."
    ),
}
STRINGS.update(
    {
        # what core/tracing/pipeline.py's labels say, for the badge ("badge; details")
        "weights.label.random": (
            "Weights: random initialisation (seed {seed}), untrained — attention patterns are noise; "
            "vocabulary: byte-level BPE, {merges} merges on the shipped corpus"
        ),
        "weights.label.trained": "Weights: trained 汉字→拼音 (characters → pinyin) checkpoint, test syllable accuracy {acc}",
        "weights.label.session": (
            "Weights: trained in this session on the {task!r} task ({steps} steps, test token accuracy {acc})"
        ),
        "weights.fallback": "The trained checkpoint could not be used, showing random weights instead. {detail}",
    }
)
