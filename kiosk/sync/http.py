"""One HTTP GET of the site sync, bounded every way a server can stretch it.

The venue's web server is input from outside the appliance, so a request here is bounded in
time as a whole (every socket wait is cut to what is left of the request's deadline, so a body
trickled a byte at a time ends like a stalled one), in size after decoding (a compressed body is
inflated a bounded piece at a time, and stacked or unknown encodings are refused), and in what
it follows (nothing: redirects are the crawler's to check, hop by hop). httpcore is used
directly, through its public network-backend interface, for the one hook a deadline needs.
"""

from __future__ import annotations

import base64
import math
import ssl
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import httpcore

ACCEPT_ENCODING = "gzip, deflate"


class FetchError(Exception):
    """The request did not complete (network, protocol, deadline): worth a retry."""


class Refused(Exception):
    """The answer came, but in a form this sync does not read (e.g. a stacked encoding): a
    retry would get the same."""


@dataclass(frozen=True)
class Response:
    url: str
    status: int
    headers: Mapping[str, str]  # lower-case names; values as sent (latin-1)
    body: bytes
    cut: bool  # the body went past max_bytes: what is here is its start


# ------------------------------------------------------------------ decoding (pure)


class _Identity:
    pending = b""

    def feed(self, data: bytes, limit: int) -> bytes:
        return data[:limit]


class _Inflate:
    """gzip or deflate (zlib-wrapped, or raw as some servers send it), inflated at most
    `limit` bytes at a time: a small body cannot become a large allocation."""

    def __init__(self, gzip: bool) -> None:
        self._gzip = gzip
        self._z = zlib.decompressobj(31 if gzip else 15)
        self._first = True

    def feed(self, data: bytes, limit: int) -> bytes:
        try:
            out = self._z.decompress(data, max(limit, 1))
        except zlib.error:
            if self._gzip or not self._first:
                raise
            self._z = zlib.decompressobj(-zlib.MAX_WBITS)  # deflate without its zlib header
            out = self._z.decompress(data, max(limit, 1))
        self._first = False
        return out

    @property
    def pending(self) -> bytes:
        """Input not yet inflated because the last feed reached its limit."""
        return self._z.unconsumed_tail


def body_decoder(content_encoding: str) -> _Identity | _Inflate:
    """The decoder for a Content-Encoding header; Refused for a stacked or unknown one
    (`gzip, gzip` turned a 1.8 KB body into 1 GB before the size cap could see it)."""
    codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
    codings = [c for c in codings if c != "identity"]
    if not codings:
        return _Identity()
    if len(codings) > 1:
        raise Refused(f"Content-Encoding {content_encoding!r} stacks encodings")
    if codings[0] in ("gzip", "x-gzip"):
        return _Inflate(gzip=True)
    if codings[0] == "deflate":
        return _Inflate(gzip=False)
    raise Refused(f"Content-Encoding {content_encoding!r} is not one the sync asks for "
                  f"({ACCEPT_ENCODING})")


def read_body(chunks: Iterable[bytes], content_encoding: str, max_bytes: int
              ) -> tuple[bytes, bool]:
    """The decoded body, at most max_bytes of it, and whether there was more."""
    decoder = body_decoder(content_encoding)
    body = bytearray()
    try:
        for chunk in chunks:
            data = chunk
            while data:
                body += decoder.feed(data, max_bytes + 1 - len(body))
                if len(body) > max_bytes:
                    return bytes(body[:max_bytes]), True
                data = decoder.pending
    except zlib.error as exc:
        raise FetchError(f"a broken {content_encoding} body ({exc})") from None
    return bytes(body), False


def validator(value: str) -> str:
    """An ETag or Last-Modified as it may be sent back: printable ASCII, else nothing (a
    non-ASCII one, stored and sent back, broke every later sync)."""
    if len(value) <= 512 and all(" " <= ch <= "~" for ch in value):
        return value
    return ""


# ------------------------------------------------------------------ the deadline


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, owner: _DeadlineBackend) -> None:
        self._inner = inner
        self._owner = owner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._owner.bound(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._owner.bound(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname,
                                      self._owner.bound(timeout, httpcore.ConnectTimeout))
        return _DeadlineStream(inner, self._owner)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """Every wait on the socket is cut to what is left before `deadline` (a monotonic time)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._inner = httpcore.SyncBackend()
        self._clock = clock
        self.deadline = math.inf

    def bound(self, timeout: float | None, error: type[Exception]) -> float | None:
        left = self.deadline - self._clock()
        if left <= 0:
            raise error("the request's time limit was reached")
        return left if timeout is None else min(timeout, left)

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(host, port, self.bound(timeout, httpcore.ConnectTimeout),
                                         local_address, socket_options)
        return _DeadlineStream(stream, self)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None
                            ) -> httpcore.NetworkStream:
        raise httpcore.UnsupportedProtocol("the site sync speaks TCP only")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


# ------------------------------------------------------------------ the client


class Fetcher:
    """GETs, one hop each, on a small connection pool."""

    def __init__(self, *, timeout_s: float, user_agent: str, auth: tuple[str, str] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._timeout_s = timeout_s
        self._clock = clock
        self._backend = _DeadlineBackend(clock)
        self._pool = httpcore.ConnectionPool(ssl_context=ssl.create_default_context(),
                                             network_backend=self._backend,
                                             max_connections=2, keepalive_expiry=5.0)
        self._headers = {"User-Agent": user_agent, "Accept-Encoding": ACCEPT_ENCODING}
        if auth is not None:
            token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode("ascii")
            self._headers["Authorization"] = f"Basic {token}"

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.close()

    def get(self, url: str, headers: Mapping[str, str], max_bytes: int,
            deadline_s: float) -> Response:
        """One GET within min(timeout_s, deadline_s) in all. FetchError when it does not
        complete; Refused for a body in a form the sync does not read."""
        wanted = {**self._headers, **headers}
        self._backend.deadline = self._clock() + min(self._timeout_s, deadline_s)
        timeouts = {"connect": self._timeout_s, "read": self._timeout_s,
                    "write": self._timeout_s, "pool": self._timeout_s}
        try:
            with self._pool.stream("GET", url, headers=list(wanted.items()),
                                   extensions={"timeout": timeouts}) as response:
                fields = {k.decode("latin-1").lower(): v.decode("latin-1")
                          for k, v in response.headers}
                chunks = response.iter_stream()
                assert isinstance(chunks, Iterable)
                body, cut = read_body(chunks, fields.get("content-encoding", ""), max_bytes)
                return Response(url, response.status, fields, body, cut)
        except httpcore.TimeoutException as exc:
            raise FetchError(f"timed out ({exc or type(exc).__name__})") from None
        except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.PoolTimeout,
                httpcore.UnsupportedProtocol, httpcore.ProxyError, ssl.SSLError) as exc:
            raise FetchError(f"{type(exc).__name__}: {exc}" if str(exc)
                             else type(exc).__name__) from None
        finally:
            self._backend.deadline = math.inf
