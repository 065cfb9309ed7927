"""A moto S3 server on 127.0.0.1 that records every request (tests/stores/conftest.py starts
one per test session as the ``s3`` fixture)."""

from __future__ import annotations

import socket
import threading
import time

BUCKET = "zarrkit-test"


class Recorder:
    """WSGI middleware: record every request; optionally slow down object GETs."""

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()
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
        return self.app(environ, start_response)

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
