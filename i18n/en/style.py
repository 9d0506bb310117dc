"""Words the shared figure helpers (figures/style.py) put in hovers."""

STRINGS = {
    "style.row": "row",
    "style.column": "column",
    "style.value": "value",
}
