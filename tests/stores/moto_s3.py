"""A moto S3 server on 127.0.0.1 that records every request (tests/stores/conftest.py starts
one per test session as the ``s3`` fixture)."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

BUCKET = "zarrkit-test"


class Recorder:
    """WSGI middleware: record every request; optionally slow down object GETs.

    ``serial`` (default True): the server answers one request at a time, as atomic as S3.
    moto checks ``If-Match``/``If-None-Match`` and stores the object in two steps without a
    lock, so two racing conditional PUTs could both succeed on a threaded moto server, where S3
    lets one.  (The slowed-down GETs wait before they are answered, outside that lock, so they
    still overlap.)
    """

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()
        self.serial = True
        self._serial_lock = threading.Lock()
        self.requests: list[tuple[str, str, str, str | None]] = []
        self.get_delay = 0.0
        self.in_flight = 0
        self.max_in_flight = 0  # most slowed-down GETs the server was answering at once

    def __call__(self, environ, start_response):
        method = environ["REQUEST_METHOD"]
        path = environ.get("PATH_INFO", "")
        query = environ.get("QUERY_STRING", "")
        with self.lock:
            self.requests.append((method, path, query, environ.get("HTTP_RANGE")))
            delay = self.get_delay
        if delay and method == "GET" and path.count("/") >= 2 and not query:
            with self.lock:
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                time.sleep(delay)
            finally:
                with self.lock:
                    self.in_flight -= 1
        if not self.serial:
            return self.app(environ, start_response)
        with self._serial_lock:
            return list(self.app(environ, start_response))

    def object_gets(self, prefix: str) -> list[tuple[str, str, str, str | None]]:
        """GetObject requests below ``/BUCKET/prefix``."""
        with self.lock:
            return [r for r in self.requests
                    if r[0] == "GET" and r[1].startswith(f"/{BUCKET}/{prefix}") and not r[2]]

    def below(self, prefix: str) -> list[tuple[str, str, str, str | None]]:
        with self.lock:
            return [r for r in self.requests
                    if r[1].startswith(f"/{BUCKET}/{prefix}") or prefix in r[2]]

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.max_in_flight = 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server():
    """A running moto server whose ``recorder`` sees every request, and its endpoint URL."""
    from moto import server as moto_server
    from werkzeug.serving import make_server

    class RecordingMotoServer(moto_server.ThreadedMotoServer):
        def _server_entry(self) -> None:
            from moto.moto_server.werkzeug_app import (
                DomainDispatcherApplication,
                MotoRequestHandler,
                create_backend_app,
            )

            class QuietHandler(MotoRequestHandler):
                def log_request(self, *args, **kwargs):
                    pass

            self.recorder = Recorder(DomainDispatcherApplication(create_backend_app))
            self._server = make_server(self._ip_address, self._port, self.recorder, True,
                                       request_handler=QuietHandler)
            self._server_ready_event.set()
            self._server.serve_forever()

    port = free_port()
    server = RecordingMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    return server, f"http://127.0.0.1:{port}"


class FaultyProxy(ThreadingHTTPServer):
    """An HTTP proxy on 127.0.0.1 in front of an S3 endpoint that loses answers: while
    ``drop`` is above zero, a conditional PUT (``If-Match`` / ``If-None-Match``) is forwarded
    and stored, then the connection is closed without its answer (``drop`` counts down, and
    ``dropped`` lists the keys) -- what a client sees when a response is lost on the way, and
    retries."""

    daemon_threads = True

    def __init__(self, upstream: str):
        self.upstream = urlsplit(upstream)
        self.drop = 0
        self.dropped: list[str] = []
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def take_drop(self, method: str, headers) -> bool:
        conditional = headers.get("If-Match") or headers.get("If-None-Match")
        if method != "PUT" or not conditional:
            return False
        with self.lock:
            if self.drop <= 0:
                return False
            self.drop -= 1
            return True

    def close(self) -> None:
        self.shutdown()
        self.server_close()


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FaultyProxy

    def log_message(self, *args) -> None:
        pass

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _forward(self) -> None:
        body = self._body()
        skip = {"host", "transfer-encoding", "expect", "connection", "content-length"}
        headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
        if body or self.command in ("PUT", "POST"):
            headers["Content-Length"] = str(len(body))
        up = self.server.upstream
        conn = http.client.HTTPConnection(up.hostname, up.port, timeout=30)
        try:
            headers["Host"] = f"{up.hostname}:{up.port}"
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            answer = (resp.status, resp.reason, resp.getheaders())
        finally:
            conn.close()
        if self.server.take_drop(self.command, self.headers):
            with self.server.lock:
                self.server.dropped.append(self.path)
            self.close_connection = True  # stored upstream; the answer is lost
            return
        status, reason, resp_headers = answer
        self.send_response(status, reason)
        for k, v in resp_headers:
            if k.lower() not in ("transfer-encoding", "connection", "content-length", "date", "server"):
                self.send_header(k, v)
        length = {k.lower(): v for k, v in resp_headers}.get("content-length")
        self.send_header("Content-Length", length if self.command == "HEAD" and length else str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward
