"""The lecture hall: students follow a room through the app's own routes, not Streamlit sessions.

``routes`` serves ``/r/CODE`` (a light page), its event stream and its answers beside the Streamlit
app (``app.py``'s ``st.App``); ``broadcast`` keeps one channel per followed room and sends each new
slide to every follower, built once per language (``slides``). No Streamlit session per student.
"""
