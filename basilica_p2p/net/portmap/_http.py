"""A minimal HTTP/1.1 client for the router's description and SOAP calls: capped, checked, with a deadline."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from urllib.parse import urlsplit

import trio

from ...printable import printable
from ._common import (
    DESCRIPTION,
    MAX_HTTP_HEAD,
    Deadline,
    PortmapError,
)
from ..hostport import host_port


def check_url(url: str, host: str | None = None) -> str:
    """A plain http URL, on ``host`` when given: the router must not send us elsewhere."""
    if not 0 < len(url) <= 1024 or any(not 0x21 <= ord(c) <= 0x7E for c in url):
        raise PortmapError("URL from the gateway is empty, too long, or holds spaces or control characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError("not an http URL")
        ipaddress.ip_address(parts.hostname)
        if host is not None and ipaddress.ip_address(parts.hostname) != ipaddress.ip_address(host):
            raise ValueError(f"it is not on {host}")
    except ValueError as e:
        raise PortmapError(f"unusable URL from the gateway {printable(url, 80, bad=' ', one_line=True)}: "
                           f"{printable(str(e), 80, bad=' ', one_line=True)}") from None
    return url


def parse_head(text: str) -> tuple[str, dict[str, str]]:
    """The first line and the headers (lower-case names, first occurrence) of an HTTP head."""
    lines = text.split("\r\n") if "\r\n" in text else text.split("\n")
    headers: dict[str, str] = {}
    for line in lines[1:101]:
        name, colon, value = line.partition(":")
        if colon:
            headers.setdefault(name.strip().lower(), value.strip())
    return lines[0], headers


def _dechunk(body: bytes, cap: int) -> bytes | None:
    """A chunked body decoded, or None while incomplete."""
    out = bytearray()
    at = 0
    while True:
        end = body.find(b"\r\n", at)
        if end < 0:
            if len(body) - at > 64:
                raise PortmapError("HTTP chunk size line is too long")
            return None
        size_text = body[at:end].split(b";", 1)[0].strip()
        if not size_text or len(size_text) > 8 or not all(c in b"0123456789abcdefABCDEF" for c in size_text):
            raise PortmapError("HTTP chunk size is not a hex number")
        size = int(size_text, 16)
        if size == 0:
            return bytes(out)  # trailers, if any, are not needed
        if len(out) + size > cap:
            raise PortmapError(f"HTTP answer is over the {cap}-byte cap")
        start = end + 2
        if len(body) < start + size + 2:
            return None
        if body[start + size:start + size + 2] != b"\r\n":
            raise PortmapError("HTTP chunk does not end where its size says")
        out += body[start:start + size]
        at = start + size + 2


def parse_http(raw: bytes, eof: bool, cap: int) -> tuple[int, bytes] | None:
    """(status, body) of an HTTP/1.x answer, or None while more may come."""
    split = raw.find(b"\r\n\r\n")
    if split < 0:
        if len(raw) > MAX_HTTP_HEAD:
            raise PortmapError(f"HTTP head is over the {MAX_HTTP_HEAD}-byte cap")
        if eof:
            raise PortmapError("HTTP answer cut short in its head")
        return None
    first, headers = parse_head(raw[:split].decode("latin-1"))
    status = re.fullmatch(r"HTTP/1\.[01] ([1-5][0-9][0-9])( .*)?", first)
    if status is None:
        raise PortmapError(f"not an HTTP answer: {printable(first, 80, bad=' ', one_line=True)}")
    body = raw[split + 4:]
    coding = headers.get("transfer-encoding", "").lower()
    if coding and coding != "chunked":
        raise PortmapError(f"HTTP transfer encoding {printable(coding, 80, bad=' ', one_line=True)} is not supported")
    if coding:
        got = _dechunk(body, cap)
    elif "content-length" in headers:
        length = headers["content-length"]
        if not re.fullmatch(r"[0-9]{1,12}", length):
            raise PortmapError(f"HTTP content length {printable(length, 80, bad=' ', one_line=True)} is not a number")
        if int(length) > cap:
            raise PortmapError(f"HTTP answer of {length} bytes is over the {cap}-byte cap")
        got = body[:int(length)] if len(body) >= int(length) else None
    else:
        got = bytes(body) if eof else None  # the end of the connection ends the body
    if got is None and eof:
        raise PortmapError("HTTP answer cut short in its body")
    if got is not None and len(got) > cap:
        raise PortmapError(f"HTTP answer is over the {cap}-byte cap")
    return None if got is None else (int(status.group(1)), got)


async def http_request(url: str, d: Deadline, *, cap: int, method: str = "GET", body: bytes = b"",
                       headers: Sequence[tuple[str, str]] = ()) -> tuple[int, bytes]:
    """One HTTP/1.1 exchange on its own connection (``Connection: close``), at most ``cap``
    bytes of body, within the deadline."""
    parts = urlsplit(check_url(url))
    host, port = str(parts.hostname), parts.port or 80
    hostport = host_port(host, port)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    head = "".join(f"{k}: {v}\r\n" for k, v in (("Host", hostport), ("Connection", "close"),
                                                ("User-Agent", DESCRIPTION), *headers,
                                                ("Content-Length", str(len(body)))))
    with trio.move_on_at(d.at):
        try:
            stream = await trio.open_tcp_stream(host, port)
            async with stream:
                await stream.send_all(f"{method} {target} HTTP/1.1\r\n{head}\r\n".encode("ascii") + body)
                raw = bytearray()
                while True:
                    chunk = await stream.receive_some(65536)
                    raw += chunk
                    if len(raw) > cap + MAX_HTTP_HEAD:
                        raise PortmapError(f"HTTP answer from {hostport} is over the {cap}-byte cap")
                    got = parse_http(bytes(raw), not chunk, cap)
                    if got is not None:
                        return got
        except (OSError, trio.BrokenResourceError) as e:
            raise PortmapError(f"HTTP to {hostport} failed: {printable(str(e), 80, bad=' ', one_line=True)}") from None
    raise PortmapError(f"no whole HTTP answer from {hostport} in {d.seconds:g} s")
