"""The small GPT trained here (weights="gpt", core/training/language.py): its choice, badge and fallbacks."""

STRINGS = {
    "sidebar.weights.gpt": "Small GPT trained here (English + 中文)",
    # the badge (ui/page/sidebar.py badge_text: "short badge; details for a caption")
    "weights.label.gpt": (
        "Weights: the small GPT trained here; a decoder only, {layers} layers × {heads} heads, d_model {d_model}, "
        "trained on English and Chinese quotations, poems and songs (Debian's fortune files), "
        "test perplexity {ppl}; vocabulary: byte-level BPE, {merges} merges learned on its training text"
    ),
    "gpt.fallback": "The small GPT could not be used, showing random weights instead. {detail}",
    "settings.why.no_gpt": "no small GPT at assets/gpt.pt",
    "sidebar.no_gpt": "The small GPT (assets/gpt.pt) is missing: `python -m core.training --task lm --out assets/gpt.pt` trains it.",
}
