"""Text from a store made safe to show on a terminal.

A node name, an attribute value or a key quoted in an error message is a stranger's text: with
control characters in it, printing it raw lets the store drive the terminal (ESC and BEL
sequences clear the screen, set the window title, write the clipboard through OSC 52), and a
line break in a name forges a line of a listing.  :func:`printable` escapes them, as ``ls``
and ``git`` do; everything the command line prints and every text tree goes through it.
"""

from __future__ import annotations

import unicodedata

__all__ = ["printable"]

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: characters that reorder the text shown after them (the "Trojan Source" controls)
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def printable(text: str, keep: str = "") -> str:
    """``text`` with every control character escaped (``\\n``, ``\\x1b``, ``\\u202e``...), but
    those in ``keep`` (a whole report keeps its own line breaks: ``keep='\\n'``).

    Escaped: the C0 and C1 controls and DEL, the line and paragraph separators, and the
    bidirectional controls.  Other text, non-ASCII included, is shown as it is.

    Examples
    --------
    >>> from zarrkit.core.printable import printable
    >>> printable('a\\x1b]52;c;ZWNobw==\\x07b')
    'a\\\\x1b]52;c;ZWNobw==\\\\x07b'
    >>> printable('two\\nlines'), printable('two\\nlines', keep='\\n')
    ('two\\\\nlines', 'two\\nlines')
    """
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch in keep or not _unsafe(ch):
            out.append(ch)
        elif ch in _NAMED:
            out.append(_NAMED[ch])
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    return "".join(out)


def _unsafe(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Zl", "Zp") or ch in _BIDI
