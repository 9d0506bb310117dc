"""Glassbox: ``streamlit run app.py`` serves the Streamlit app (``streamlit_app.py``: the pages) and,
beside it on the same port, the lecture hall's own routes (``ui.hall.routes``): a student following a
room opens ``/r/CODE``, a light page that receives each slide as it is shown instead of running a
Streamlit session of its own."""

import streamlit as st

from ui.hall.routes import ROUTES, lifespan

app = st.App("streamlit_app.py", routes=ROUTES, lifespan=lifespan)
