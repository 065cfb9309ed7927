"""The command line never prints a stranger's control characters.

Node names, attribute keys and values, chunk keys and error messages come from the store: ESC
and BEL sequences in them would drive the terminal (clear it, set its title, write the
clipboard through OSC 52) and a line break in a name would forge a line of ``tree``.  Every
command's output escapes them (``\\x1b``, ``\\n``), as ``ls`` and ``git`` do.
"""

from __future__ import annotations

import contextlib
import io
import unicodedata

import numpy as np
import pytest

import zarrkit
from zarrkit.cli import main

CLEAR_AND_TITLE = "\x1b[2J\x1b]0;owned\x07"
CLIPBOARD = "\x1b]52;c;ZWNobyBvd25lZA==\x07"
FORGED = "a\n└── forged (9,) int8"
RIGHT_TO_LEFT = "evil\u202etxt.exe"
NAMES = [CLEAR_AND_TITLE, CLIPBOARD, FORGED, RIGHT_TO_LEFT]


def cli(*args: object) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue() + err.getvalue()


def assert_inert(text: str) -> None:
    for ch in text:
        assert ch == "\n" or unicodedata.category(ch) not in ("Cc", "Zl", "Zp"), repr(text)
        assert ch != "\u202e", repr(text)


@pytest.fixture
def hostile(tmp_path):
    path = tmp_path / "h.zarr"
    group = zarrkit.open_group(str(path), mode="w")
    for name in NAMES:
        group.create_array(name, shape=(2,), chunks=(2,), dtype="i1")[:] = 1
    group.attrs[CLEAR_AND_TITLE] = CLIPBOARD
    group[CLIPBOARD].attrs["k"] = CLEAR_AND_TITLE
    return path


@pytest.mark.parametrize("command", [("tree",), ("ls",), ("info",), ("info", "--json"), ("ls", "--json")])
def test_listings_escape_control_characters(hostile, command):
    code, out = cli(*command, hostile)
    assert code == 0, out
    assert_inert(out)
    if command == ("tree",):
        assert len(out.splitlines()) == 1 + len(NAMES)  # no forged line
        assert "a\\n└── forged" in out and "\\x1b]52;c;" in out and "\\u202e" in out
    if command == ("ls",):
        assert len(out.splitlines()) == len(NAMES)


def test_a_lone_array_and_its_info_escape_its_name(hostile):
    for command in ("tree", "info", "ls"):
        code, out = cli(command, hostile, "--path", CLIPBOARD)
        assert code == 0, out
        assert_inert(out)
        assert "\\x1b]52" in out or command == "info"


def test_verify_escapes_keys_and_reasons(hostile):
    chunk = hostile / FORGED / "c" / "0"
    chunk.write_bytes(b"\x1b]0;x\x07 not a chunk")
    code, out = cli("verify", hostile)
    assert code == 1, out
    assert_inert(out)
    corrupt = [line for line in out.splitlines() if line.startswith("corrupt: ")]
    assert len(corrupt) == 1 and "a\\n└── forged" in corrupt[0], out


def test_error_messages_escape_what_they_quote(tmp_path):
    path = tmp_path / "h.zarr"
    group = zarrkit.open_group(str(path), mode="w")
    group.create_array("x", shape=(2,), dtype="i1")
    (path / "x" / "zarr.json").write_text('{"zarr_format": 3, "node_type": "array\\u001b]0;t\\u0007"}')
    code, out = cli("info", path, "--path", "x")
    assert code == 5, out  # a data error: the metadata document does not read
    assert_inert(out)
    code, out = cli("ls", path, "--path", CLIPBOARD)
    assert code == 4, out  # not found
    assert_inert(out)


def test_plain_names_are_shown_as_they_are(tmp_path):
    path = tmp_path / "p.zarr"
    group = zarrkit.open_group(str(path), mode="w")
    group.create_array("température", data=np.arange(3, dtype="i1"))
    code, out = cli("tree", path)
    assert code == 0 and "température (3,) int8" in out


class _Failing(zarrkit.MemoryStore):
    """A store whose chunk reads fail with errors that carry no message."""

    def __init__(self, error: BaseException):
        super().__init__()
        self.error = error

    def get(self, key, byte_range=None):
        if key.startswith("c/"):
            raise self.error
        return super().get(key, byte_range)


@pytest.mark.parametrize("error", [MemoryError(), ValueError(""), zarrkit.errors.ChunkDecodeError("")])
def test_every_corrupt_object_reported_carries_its_reason(error):
    from zarrkit.cli.inspect import _verify_array

    store = _Failing(error)
    zarrkit.create_array(store, shape=(4,), chunks=(4,), dtype="i1")[:] = 1
    _, _, corrupt, _, lines = _verify_array(store, "", None)
    assert corrupt == 1
    (line,) = lines
    prefix = "corrupt: c/0: "
    assert line.startswith(prefix) and line[len(prefix):].strip(), line
