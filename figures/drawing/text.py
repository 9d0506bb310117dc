"""Values put into Markdown messages safely: shared by figures (URL checks) and ui (notices).

No plotly and no Streamlit here, so ``ui.page.settings`` can use it without loading either.
"""

from __future__ import annotations


def literal(value: object, limit: int = 40) -> str:
    """A value for a message that Streamlit renders as Markdown: shortened, inside a code span.

    In a code span Markdown is inert: no links, no emphasis, no $math$, no HTML. A backtick would
    end the span, so it is shown as a lookalike (ˋ).

    >>> literal("[click](http://x)")
    '`[click](http://x)`'
    """
    shown = str(value)
    if len(shown) > limit:
        shown = shown[:limit] + "…"
    shown = "".join(ch if ch.isprintable() else "�" for ch in shown).replace("`", "ˋ")
    return f"`{shown}`" if shown.strip() else "`(empty)`"
