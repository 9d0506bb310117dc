"""How every figure is drawn: the projector style and safe user text (``style``, ``text``), the
shared builders (``toolbox``), the CSV under each chart (``export``), one drawing per rerun
(``redraw``) and the lecture hall's restyle (``presenter``). Pure: no Streamlit."""
