"""The browser's messages, mended before Streamlit reads them: a lone surrogate in a text box.

A JavaScript string can hold a lone surrogate (half of a UTF-16 pair). Streamlit's browser code writes
it as three bytes, ``ED A0..BF 80..BF``, which are not UTF-8, and the server's protobuf parser refuses
the whole message: the rerun never happens, and the page script cannot see why.

So the parse of a browser message (``BackMsg``) that fails is tried once more with each such
three-byte sequence replaced by U+FFFD (``EF BF BD``), what the browser's ``TextEncoder`` writes for
a lone surrogate: three bytes for three, so every length prefix stays right. A message that parses is
never touched. The sentence arrives with a ``�`` where the broken half was, and the page shows it
(``ui.page.settings.clean_text`` keeps U+FFFD).

Decisions: docs/decisions.md, ui/page/transport.py.
"""

from __future__ import annotations

import re

# A surrogate code point (U+D800..U+DFFF) written as if it were a character: the bytes ED A0..BF 80..BF.
_SURROGATE = re.compile(rb"\xed[\xa0-\xbf][\x80-\xbf]")
REPLACEMENT = "\ufffd".encode("utf-8")


def mend(data: bytes) -> bytes:
    """``data`` with every encoded lone surrogate replaced by U+FFFD, the same length.

    >>> mend(b"ab\\xed\\xa0\\x80cd").decode("utf-8")
    'ab�cd'
    >>> len(mend(b"\\xed\\xb0\\x80")) == 3
    True
    """
    return _SURROGATE.sub(REPLACEMENT, data)


def install() -> None:
    """Make ``BackMsg.ParseFromString`` mend a message it refuses (once per process)."""
    from google.protobuf.message import DecodeError
    from streamlit.proto.BackMsg_pb2 import BackMsg

    parse = BackMsg.ParseFromString
    if getattr(parse, "mends_surrogates", False):
        return

    def parse_mended(self, data):
        try:
            return parse(self, data)
        except DecodeError:
            mended = mend(bytes(data))
            if mended == data:
                raise
            self.Clear()
            return parse(self, mended)

    parse_mended.mends_surrogates = True
    BackMsg.ParseFromString = parse_mended


install()
