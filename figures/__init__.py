"""Plotly figures: pure functions from arrays (or a trace) to ``go.Figure``; no Streamlit here.

Shared style and the safety helpers for user text are in :mod:`figures.style`.
"""
