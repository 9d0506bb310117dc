"""Every chart of the app goes through :func:`show_figure`: one place for the chart's toolbar
(PNG download at projector resolution) and its downloads (SVG, and the data as CSV).

    ui.show_figure(fig, key="attn_heatmap", name="attention-layer1-head2")
"""

from __future__ import annotations

import streamlit as st


def plot_config(name: str) -> dict:
    """plotly's config: no logo; the camera button saves a PNG named after the figure, 2× scale."""
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": name, "scale": 2},
    }


def show_figure(fig, key: str, name: str | None = None, *, downloads: bool = True, **kwargs):
    """Draw ``fig`` full width; ``name`` (default: ``key``) names the downloaded files.

    Extra keyword arguments go to ``st.plotly_chart`` (``on_select``, ``selection_mode`` ...);
    its return value is returned.
    """
    name = name or key
    kwargs.setdefault("width", "stretch")
    shown = st.plotly_chart(fig, key=key, config=plot_config(name), **kwargs)
    return shown
