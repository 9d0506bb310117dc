"""Glassbox's Streamlit script: navigation only (``app.py`` serves it, with the lecture hall's routes).

The sidebar is drawn by each page (``ui.page_setup``), not here: a page opened by its URL can run
without this file (Streamlit's ``pages/`` folder mode), and drawing it twice would duplicate keys.
"""

import streamlit as st

from ui.page.lang import current_lang
from ui.page.nav import FAVICON, navigation_pages

st.set_page_config(page_icon=FAVICON)  # before the navigation, or the page's Material icon is fetched
st.navigation(navigation_pages(current_lang())).run()
