#!/usr/bin/env python
"""A local S3 for the remote benchmarks: a moto server behind a proxy that delays every request.

``python benchmarks/s3proxy.py [--latency S]`` starts ``moto.server`` on 127.0.0.1 (in a
process of its own, so that the proxy and moto do not share one interpreter lock) and an
HTTP/1.1 proxy in front of it, then prints one JSON line ``{"endpoint": ..., "moto": ...}`` and
serves until killed.  Nothing leaves the machine.

The proxy holds each request for ``latency`` seconds before passing it on (a round trip to a
distant object store, added once per request, whatever its size), keeps client connections
alive, and counts requests by method.  Its own control requests, under ``/__proxy__/``, are
neither delayed nor counted:

* ``GET /__proxy__/stats`` -> ``{"requests": n, "by_method": {...}, "max_in_flight": m}``
* ``POST /__proxy__/reset`` zeroes the counters;
* ``POST /__proxy__/latency?seconds=S`` sets the delay.

moto spends several milliseconds of CPU on every request (6 ms here), which would hide the
latency being measured and make every row a measurement of moto.  So the proxy keeps moto's
answers to GET and HEAD requests (by method, path, query and Range header) and answers repeated
ones itself, until the next request that writes (PUT, POST, DELETE) clears what it kept: every
object is still read from moto once, and every request still pays the latency and is counted.

Requests signed for the proxy's address (SigV4 signs the Host header) reach moto with their
headers unchanged; moto does not check signatures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from urllib.parse import parse_qs, urlsplit

#: headers that belong to one connection and are not passed on
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te",
              "trailer", "upgrade"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Counters:
    def __init__(self, latency: float):
        self.latency = latency
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.requests = 0
            self.by_method: dict[str, int] = {}
            self.in_flight = 0
            self.max_in_flight = 0
            self.served_from_cache = 0

    def enter(self, method: str) -> None:
        with self.lock:
            self.requests += 1
            self.by_method[method] = self.by_method.get(method, 0) + 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self) -> None:
        with self.lock:
            self.in_flight -= 1

    def stats(self) -> dict:
        with self.lock:
            return {"requests": self.requests, "by_method": dict(self.by_method),
                    "max_in_flight": self.max_in_flight, "latency": self.latency,
                    "served_from_cache": self.served_from_cache}


class Proxy:
    """The proxy: asyncio, one event loop, HTTP/1.1 with kept-alive connections both ways."""

    def __init__(self, upstream: tuple[str, int], counters: Counters, cache: bool = True):
        self.upstream = upstream
        self.counters = counters
        self.cache: dict | None = {} if cache else None
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    method, target, headers = await read_head(reader)
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lower = {k.lower(): v for k, v in headers}
                if lower.get("expect", "").lower() == "100-continue":
                    writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                body = await read_body(reader, lower, method, request=True)
                if target.startswith("/__proxy__/"):
                    status, reason, out_headers, data = self.control(target)
                else:
                    status, reason, out_headers, data = await self.forward(
                        method, target, headers, lower, body)
                lines = [f"HTTP/1.1 {status} {reason}"]
                length = None
                for k, v in out_headers:
                    kl = k.lower()
                    if kl == "content-length":
                        length = v
                    elif kl not in HOP_BY_HOP:
                        lines.append(f"{k}: {v}")
                lines.append(f"Content-Length: {length or 0 if method == 'HEAD' else len(data)}")
                writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
                if method != "HEAD" and data:
                    writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    def control(self, target: str) -> tuple:
        url = urlsplit(target)
        if url.path.endswith("/reset"):
            self.counters.reset()
        elif url.path.endswith("/latency"):
            self.counters.latency = float(parse_qs(url.query)["seconds"][0])
        body = json.dumps(self.counters.stats()).encode()
        return 200, "OK", [("Content-Type", "application/json")], body

    async def forward(self, method, target, headers, lower, body) -> tuple:
        c = self.counters
        c.enter(method)
        try:
            if c.latency:
                await asyncio.sleep(c.latency)
            key = (method, target, lower.get("range"))
            if self.cache is not None:
                if method in ("GET", "HEAD"):
                    kept = self.cache.get(key)
                    if kept is not None:
                        c.served_from_cache += 1
                        return kept
                else:
                    self.cache.clear()
            answer = await self.upstream_request(method, target, headers, body)
            if self.cache is not None and method in ("GET", "HEAD") and answer[0] < 500:
                self.cache[key] = answer
            return answer
        finally:
            c.leave()

    async def upstream_request(self, method, target, headers, body) -> tuple:
        out = [f"{method} {target} HTTP/1.1"]
        out += [f"{k}: {v}" for k, v in headers
                if k.lower() not in HOP_BY_HOP and k.lower() not in ("content-length", "expect")]
        if body or method in ("PUT", "POST"):
            out.append(f"Content-Length: {len(body)}")
        raw = ("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body
        for attempt in range(2):  # a kept-alive connection may have been closed by moto
            if self.idle:
                r, w = self.idle.pop()
            else:
                r, w = await asyncio.open_connection(*self.upstream)
            try:
                w.write(raw)
                await w.drain()
                line, resp_headers = await read_status(r)
                lower = {k.lower(): v for k, v in resp_headers}
                _, status, reason = (line.split(" ", 2) + [""])[:3]
                data = await read_body(r, lower, method, request=False, status=int(status))
            except (ConnectionError, asyncio.IncompleteReadError):
                w.close()
                if attempt:
                    raise
                continue
            if lower.get("connection", "").lower() == "close" or data is None:
                w.close()
            else:
                self.idle.append((r, w))
            return int(status), reason, resp_headers, data or b""
        raise AssertionError("unreachable")


async def read_head(reader: asyncio.StreamReader) -> tuple[str, str, list]:
    line, headers = await read_status(reader)
    method, target, _ = line.split(" ", 2)
    return method, target, headers


async def read_status(reader: asyncio.StreamReader) -> tuple[str, list]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = []
    for text in lines[1:]:
        if text:
            k, _, v = text.partition(":")
            headers.append((k.strip(), v.strip()))
    return lines[0], headers


async def read_body(reader, lower: dict, method: str, request: bool, status: int = 200):
    """The body of a message: by its Content-Length, chunked, or (a response with neither) up
    to the end of the connection, which is then returned as None's sign to close it."""
    if "chunked" in lower.get("transfer-encoding", "").lower():
        parts = []
        while True:
            size = int((await reader.readline()).split(b";")[0].strip(), 16)
            if size == 0:
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(parts)
            parts.append(await reader.readexactly(size))
            await reader.readline()
    if "content-length" in lower:
        n = int(lower["content-length"])
        if not request and (method == "HEAD" or status in (204, 304)):
            return b""
        return await reader.readexactly(n) if n else b""
    if request or method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return b""
    return (await reader.read()) or None


def start_moto(port: int) -> subprocess.Popen:
    exe = os.path.join(os.path.dirname(sys.executable), "moto_server")
    cmd = ([exe] if os.path.exists(exe) else [sys.executable, "-m", "moto.server"])
    proc = subprocess.Popen(cmd + ["-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/moto-api/", timeout=1).read()
            return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("moto_server exited at start") from None
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("moto_server did not start within 60 s")


def serve(latency: float, cache: bool = True) -> None:
    moto_port = free_port()
    moto = start_moto(moto_port)
    try:
        proxy = Proxy(("127.0.0.1", moto_port), Counters(latency), cache)

        async def main() -> None:
            server = await asyncio.start_server(proxy.client, "127.0.0.1", 0, backlog=1024)
            port = server.sockets[0].getsockname()[1]
            print(json.dumps({"endpoint": f"http://127.0.0.1:{port}",
                              "moto": f"http://127.0.0.1:{moto_port}"}), flush=True)
            async with server:
                await server.serve_forever()

        asyncio.run(main())
    finally:
        moto.kill()
        moto.wait()


class S3Service:
    """The proxy + moto pair in a child process, for the parent of the benchmark runs."""

    def __init__(self, latency: float = 0.0):
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__),
                                      "--latency", str(latency)],
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the S3 proxy did not start")
        info = json.loads(line)
        self.endpoint, self.moto = info["endpoint"], info["moto"]

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def control(endpoint: str, what: str = "stats", **query) -> dict:
    """Ask the proxy at ``endpoint``: ``stats``, ``reset`` or ``latency`` (``seconds=``)."""
    q = "&".join(f"{k}={v}" for k, v in query.items())
    req = urllib.request.Request(f"{endpoint}/__proxy__/{what}{'?' + q if q else ''}",
                                 method="GET" if what == "stats" else "POST", data=None)
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency", type=float, default=0.0, help="seconds added to each request")
    ap.add_argument("--no-cache", action="store_true", help="send every request on to moto")
    args = ap.parse_args(argv)
    serve(args.latency, cache=not args.no_cache)
    return 0


if __name__ == "__main__":
    sys.exit(main())
