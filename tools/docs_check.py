"""Serve the built documentation site locally and screenshot it with headless Chromium.

Used by ``make docs-check`` after ``make docs``: checks that the home page and an API reference
page are served, renders both to PNG files and fails when a page or a screenshot is missing or
too small to hold a rendered page.  It also writes ``array-repr.html``, what Jupyter shows for
a few arrays and a group (their ``_repr_html_()``), and screenshots it the same way.
"""

from __future__ import annotations

import argparse
import html
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

PAGES = {"home.png": "", "api.png": "api/array/", "array-repr.png": "array-repr.html"}
#: the page of HTML reprs: the code that makes the nodes, and a heading for each node shown
REPR_CODE = """import zarrkit
root = zarrkit.group(store=zarrkit.MemoryStore(), zarr_format=3)
obs = root.create_group("observations")
obs.create_array("temperature", shape=(365, 720, 1440), chunks=(30, 90, 90), shards=(90, 360, 360), dtype="f4")
obs.create_array("station_ids", shape=(5000,), chunks=(250,), dtype="i4")
root.create_array("mask", shape=(720, 1440), chunks=(180, 180), dtype="bool")
root = zarrkit.consolidate_metadata(root.store)  # a group's view lists members from it"""
REPR_NODES = {"A sharded 3-d array": "observations/temperature", "A 1-d array": "observations/station_ids",
              "A 2-d array": "mask", "A group": "observations"}
REPR_STYLE = """body { font-family: sans-serif; margin: 2em; } section { margin-bottom: 2.5em; }
table.zarrkit-info th, table.zarrkit-info td { padding: 2px 10px; font-size: 13px; }
figure { margin: 0; } figcaption { font-size: 12px; color: #555; }"""
MIN_HTML_BYTES = 5_000
MIN_PNG_BYTES = 30_000
WINDOW = (1280, 1600)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("docs-check: no chromium found (Debian: apt-get install -y chromium)")


def wait_for(url: str, seconds: float = 10.0) -> bytes:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return response.read()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    if header[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG file")
    return struct.unpack(">II", header[16:24])


def write_repr_page(out: Path) -> None:
    """``array-repr.html``: the ``_repr_html_()`` of the nodes :data:`REPR_CODE` makes."""
    names: dict[str, object] = {}
    exec(REPR_CODE, names)  # the code shown on the page, run as shown
    root = names["root"]
    sections = "\n".join(
        f"<section><h2>{html.escape(title)}</h2>{root[path]._repr_html_()}</section>"  # type: ignore[index]
        for title, path in REPR_NODES.items())
    out.write_text(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>zarrkit: what Jupyter shows for arrays and groups</title>\n"
        f"<style>{REPR_STYLE}</style></head>\n<body><h1>What Jupyter shows for arrays and groups</h1>\n"
        "<p>The output of <code>_repr_html_()</code> for the nodes this code makes:</p>\n"
        f"<pre>{html.escape(REPR_CODE)}</pre>\n{sections}\n</body></html>\n", encoding="utf-8")


def screenshot(chromium: str, url: str, out: Path) -> None:
    out.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="docs-check-profile-") as profile:
        command = [
            chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--hide-scrollbars", f"--user-data-dir={profile}",
            f"--window-size={WINDOW[0]},{WINDOW[1]}", "--virtual-time-budget=3000",
            f"--screenshot={out}", url,
        ]
        subprocess.run(command, check=True, timeout=120,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--site", type=Path, default=Path("site"))
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    parser.add_argument("--page", action="append", choices=sorted(PAGES),
                        help="take only this screenshot (repeatable; default: all of them)")
    args = parser.parse_args()
    if not (args.site / "index.html").is_file():
        sys.exit(f"docs-check: {args.site}/index.html not found: run `make docs` first")
    chromium = find_chromium()
    args.out.mkdir(parents=True, exist_ok=True)
    write_repr_page(args.out / "array-repr.html")
    shutil.copy(args.out / "array-repr.html", args.site / "array-repr.html")  # served beside the site
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
         "--directory", str(args.site)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    failures = []
    try:
        for name, page in PAGES.items():
            if args.page and name not in args.page:
                continue
            url = f"http://127.0.0.1:{port}/{page}"
            html = wait_for(url)
            if len(html) < MIN_HTML_BYTES:
                failures.append(f"{url}: {len(html)} bytes of HTML, expected a full page")
                continue
            out = args.out / name
            screenshot(chromium, url, out)
            if not out.is_file():
                failures.append(f"{url}: no screenshot written to {out}")
                continue
            size, (width, height) = out.stat().st_size, png_size(out)
            print(f"{url} -> {out}: {width}x{height}, {size:,} bytes")
            if size < MIN_PNG_BYTES or (width, height) != WINDOW:
                failures.append(f"{out}: {width}x{height}, {size:,} bytes: "
                                f"expected {WINDOW[0]}x{WINDOW[1]} and at least "
                                f"{MIN_PNG_BYTES:,} bytes (a blank or broken page?)")
    finally:
        server.terminate()
        server.wait(timeout=10)
    for failure in failures:
        print(f"docs-check: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
