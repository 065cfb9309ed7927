"""Static files over HTTP on 127.0.0.1 with ``Range`` support, and a server that fails on
purpose (tests/stores/conftest.py serves them as the ``http_serve`` fixture)."""

from __future__ import annotations

import http.server
import io
import os
import re
import socket


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with single-range ``Range`` support (incl. suffix ranges), quiet logs."""

    log: list[tuple[str, str, str | None, int]]  # set per server

    def log_message(self, format, *args):
        pass

    def _record(self, status: int) -> None:
        self.log.append((self.command, self.path, self.headers.get("Range"), status))

    def send_response(self, code, message=None):
        self._record(code)
        super().send_response(code, message)

    def send_head(self):
        rng = self.headers.get("Range")
        path = self.translate_path(self.path)
        if rng is None or os.path.isdir(path):
            return super().send_head()
        if not os.path.isfile(path):
            self.send_error(404, "File not found")
            return None
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", rng.strip())
        if not m or m.groups() == ("", ""):
            return super().send_head()
        size = os.path.getsize(path)
        first, last = m.groups()
        if first == "":
            n = int(last)
            start, end = max(size - n, 0), size - 1
            ok = n > 0 and size > 0
        else:
            start = int(first)
            end = min(int(last), size - 1) if last else size - 1
            ok = start < size and end >= start
        if not ok:
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        with open(path, "rb") as f:
            f.seek(start)
            body = f.read(end - start + 1)
        self.send_response(206)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


class FaultyHandler(RangeHandler):
    """Fails the first ``fail_first`` requests of each path (``fail_first < 0``: always), with a
    503 or (``drop=True``) by closing the connection without an answer."""

    fail_first = 0
    drop = False
    status = 503
    only = ""  # a regex: fail only paths it matches
    counts: dict[str, int]

    def _maybe_fail(self) -> bool:
        if self.only and not re.search(self.only, self.path):
            return False
        with self.lock:
            n = self.counts.get(self.path, 0)
            self.counts[self.path] = n + 1
        if self.fail_first >= 0 and n >= self.fail_first:
            return False
        if self.drop:
            self._record(0)
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return True
        self.send_error(self.status)
        return True

    def do_GET(self):
        if not self._maybe_fail():
            super().do_GET()

    def do_HEAD(self):
        if not self._maybe_fail():
            super().do_HEAD()


class QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):  # dropped connections are on purpose
        pass
