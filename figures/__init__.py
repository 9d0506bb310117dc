"""Plotly figures: pure functions from arrays (or a trace) to ``go.Figure``; no Streamlit here.

One module per stage of the paper (tokenization, embeddings, positional, attention, masks, model,
training) and per view of it (overview, attention views, the classroom's tally). How every figure is
drawn — style, builders, safe text, CSV export, one drawing per rerun, the presenter's restyle —
is in :mod:`figures.drawing`.
"""
