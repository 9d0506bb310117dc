"""Notes under tables (st.dataframe) that more than one page shows."""

STRINGS = {
    "tables.formula_note": (
        "A cell that starts with =, +, -, @ (or a tab) is shown with a ' in front: a spreadsheet opening "
        "this table (its Download as CSV, or a copy) would otherwise run it as a formula."
    ),
}
