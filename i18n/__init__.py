"""Every user-visible string of the app, per language: ``i18n/en/`` and ``i18n/zh/``.

A language is a package; each of its modules (one per part of the app: ``common``, ``sidebar``,
``positional`` ...) holds a dict ``STRINGS`` of ``key -> text``. Keys are dotted, starting with the
module's name (``"positional.rope.title"``). Texts are ``str.format`` templates::

    from i18n import t
    t("common.tokens", "zh", n=3)   # '3 个词元'

No Streamlit or plotly here: figures (pure functions) and pages both call :func:`t`.
``tests/app/test_i18n.py`` fails when a key (or a ``{placeholder}``) is missing in either language.
A key missing at run time falls back to English, then to the key itself: never a traceback.
"""

from __future__ import annotations

import functools
import importlib
import logging
import pkgutil
import string
from pathlib import Path

LANGS = ("en", "zh")
DEFAULT_LANG = "en"
LANG_NAMES = {"en": "English", "zh": "中文"}

log = logging.getLogger("glassbox.i18n")


@functools.cache
def strings(lang: str) -> dict[str, str]:
    """All texts of one language, merged from the modules of its package; duplicate keys raise."""
    if lang not in LANGS:
        raise ValueError(f"lang={lang!r} must be one of {LANGS}")
    merged: dict[str, str] = {}
    folder = Path(__file__).parent / lang
    for info in sorted(pkgutil.iter_modules([str(folder)]), key=lambda m: m.name):
        module = importlib.import_module(f"i18n.{lang}.{info.name}")
        for key, text in module.STRINGS.items():
            if key in merged:
                raise ValueError(f"i18n/{lang}: key {key!r} is defined twice")
            merged[key] = text
    return merged


def placeholders(text: str) -> set[str]:
    """The ``{names}`` a template expects (format specs and conversions stripped)."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def t(key: str, lang: str = DEFAULT_LANG, /, **values: object) -> str:
    """The text for ``key`` in ``lang``, formatted with ``values``."""
    table = strings(lang if lang in LANGS else DEFAULT_LANG)
    text = table.get(key)
    if text is None:
        log.warning("i18n: no %r text for %r", lang, key)
        text = strings(DEFAULT_LANG).get(key, key)
    if not values:
        return text
    try:
        return text.format(**values)
    except (KeyError, IndexError, ValueError):
        log.warning("i18n: could not format %r (%r) with %r", key, lang, sorted(values))
        return text
