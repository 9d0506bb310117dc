"""Small offline HTML/JS components drawn in an iframe (no CDN, no external script).

``head_view``: bertviz-style lines from every query token to the key tokens, one colour per head.
"""
