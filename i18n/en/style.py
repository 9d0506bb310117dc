"""Words the shared figure helpers (figures/drawing/style.py) put in hovers."""

STRINGS = {
    "style.row": "row",
    "style.column": "column",
    "style.value": "value",
}
