"""The interface language of this session, and its texts: the one thing every ui/ module needs.

Its own module so that the modules that draw (ui/caches/cache.py, ui/page/figure.py, ui/page/widgets.py …)
and the
sidebar that sets the language do not import each other.
"""

from __future__ import annotations

import streamlit as st

from i18n import LANGS
from i18n import t as _t
from ui.page.settings import DEFAULTS

# the validated ui.page.settings.Settings of this session (ui/page/sidebar.py keeps it)
STORE = "_glassbox_settings"


def current_lang() -> str:
    """The interface language of this session ("en" before the settings are read)."""
    settings = st.session_state.get(STORE)
    lang = getattr(settings, "lang", None)
    if lang in LANGS:
        return lang
    raw = st.query_params.get("lang")
    return raw if raw in LANGS else DEFAULTS.lang


def t(key: str, /, **values: object) -> str:
    """The text for ``key`` in this session's language (see i18n/)."""
    return _t(key, current_lang(), **values)
