"""Docstrings name other objects with reStructuredText roles (``:func:`zarrkit.open```), which
numpy-style docstrings use and Python's own help() shows as they are; on the site they become
plain code, ``~`` (show the last name only) honoured."""

from __future__ import annotations

import re

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|data|exc|obj|const):<code>(~?)([^<]*)</code>")


def _code(match: re.Match) -> str:
    tilde, target = match.groups()
    return f"<code>{target.rpartition('.')[2] if tilde else target}</code>"


def on_page_content(html: str, **kwargs: object) -> str:
    return _ROLE.sub(_code, html)
