"""Streamlit helpers shared by every page. A page script starts with::

import ui
settings = ui.page_setup("Attention")   # page config, sidebar, URL sync, weights badge
run = ui.get_run(settings)              # cached; None (with a message shown) if nothing to show
if run is None:
    st.stop()
"""

import ui.page.preload  # noqa: F401  (first: heavy imports and process settings before any session draws)
import ui.page.transport  # noqa: F401  (the browser's messages: a lone surrogate no longer drops a rerun)
from ui.caches.cache import get_pipeline, get_run, pipeline_available
from ui.page.figure import memo_figure, shared_view, show_figure, show_themed_figure
from ui.page.lang import current_lang, t
from ui.page.nav import PAGES, page_links
from ui.page.safe import show_answer, show_text, show_tokens
from ui.page.settings import DEFAULT_SENTENCE, DEFAULTS, MAX_CHARS, MAX_TOKENS, Settings
from ui.page.sidebar import page_setup, weights_caption

__all__ = [
    "DEFAULTS",
    "DEFAULT_SENTENCE",
    "MAX_CHARS",
    "MAX_TOKENS",
    "PAGES",
    "Settings",
    "current_lang",
    "memo_figure",
    "shared_view",
    "show_figure",
    "show_themed_figure",
    "t",
    "get_pipeline",
    "get_run",
    "page_links",
    "page_setup",
    "pipeline_available",
    "show_answer",
    "show_text",
    "show_tokens",
    "weights_caption",
]
