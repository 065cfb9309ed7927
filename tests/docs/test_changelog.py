"""CHANGELOG.md is release notes in the Keep a Changelog form: each release has at most one
section of each kind, only the kinds that form defines, and the documentation site shows it."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def releases() -> dict[str, list[str]]:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    found: dict[str, list[str]] = {}
    release = None
    for line in text.splitlines():
        if line.startswith("## "):
            release = line[3:].strip()
            assert release not in found, f"release {release} listed twice"
            found[release] = []
        elif line.startswith("### "):
            assert release is not None, f"{line!r} before any release"
            found[release].append(line[4:].strip())
    return found


def test_one_section_of_each_kind_per_release():
    found = releases()
    assert found, "no release in CHANGELOG.md"
    assert re.fullmatch(r"\[Unreleased\]|\[\d+\.\d+\.\d+\] - \d{4}-\d\d-\d\d", next(iter(found)))
    for release, sections in found.items():
        assert set(sections) <= KINDS, (release, set(sections) - KINDS)
        repeated = [kind for kind, n in Counter(sections).items() if n > 1]
        assert not repeated, f"{release}: more than one ### {', '.join(repeated)}"


def test_the_site_includes_the_changelog():
    page = (ROOT / "docs" / "changelog.md").read_text(encoding="utf-8")
    assert page.strip() == '--8<-- "CHANGELOG.md"'
