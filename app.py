"""Glassbox: ``streamlit run app.py`` serves the Streamlit app (``streamlit_app.py``: the pages) and,
beside it on the same port, the lecture hall's own routes (``ui.hall.routes``): a student following a
room opens ``/r/CODE``, a light page that receives each slide as it is shown instead of running a
Streamlit session of its own; ``/lecture?room=CODE``, the address of earlier sessions, forwards there."""

import streamlit as st
from starlette.middleware import Middleware

from ui.hall.routes import ROUTES, Forward, lifespan

app = st.App("streamlit_app.py", routes=ROUTES, middleware=[Middleware(Forward)], lifespan=lifespan)
