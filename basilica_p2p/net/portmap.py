"""A TCP port opened on the home router: PCP, then NAT-PMP, then UPnP-IGD.

``basilica host`` asks its router to forward a public port to its own, so a
joiner behind another router can connect without anyone configuring anything:

- PCP (RFC 6887): one UDP packet to the gateway's port 5351, a MAP request
  named by a 12-byte nonce, which renewal and deletion repeat;
- NAT-PMP (RFC 6886), PCP's predecessor on the same port: the external address
  (opcode 0), then a TCP mapping (opcode 2);
- UPnP-IGD: an SSDP search (multicast UDP) finds the router's description URL,
  HTTP fetches it, and SOAP calls its WANIPConnection (or WANPPPConnection)
  service: GetExternalIPAddress, AddPortMapping, DeletePortMapping.

The router is on the LAN but its answers are still hostile input: every
datagram, HTTP answer and XML document is size-capped and checked, and a
failure is a `PortmapError` with one line.  Every wait has a deadline; the
retransmission schedules of the RFCs are shortened to fit a few seconds.

A mapping is trusted only once `confirmed`: a router whose own external
address is private (another NAT in front of it) or differs from what STUN
servers see opens a port nobody on the internet can reach.

`mapped_port` holds a mapping for the length of a block: renewed at half its
lifetime, removed on the way out (also on cancellation, shielded, briefly).
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
import struct
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import TypeVar
from urllib.parse import urljoin, urlsplit
from xml.sax.saxutils import escape

import trio

from ._tasks import background_tasks

T = TypeVar("T")

PCP_PORT = 5351  # PCP and NAT-PMP share it
SSDP_GROUP = ("239.255.255.250", 1900)
PROTOCOLS = ("pcp", "natpmp", "upnp")
TCP = 6
MAX_UDP = 1100  # RFC 6887's largest PCP message; NAT-PMP's are smaller
MAX_SSDP = 4096
MAX_HTTP_HEAD = 8192
MAX_DESCRIPTION = 64 * 1024
MAX_SOAP = 16 * 1024
DESCRIPTION = "basilica-p2p"  # how the mapping is named in the router's table

IGD_TARGETS = (
    "urn:schemas-upnp-org:device:InternetGatewayDevice:1",
    "urn:schemas-upnp-org:service:WANIPConnection:1",
    "urn:schemas-upnp-org:device:InternetGatewayDevice:2",
)
# In the order tried: a router may list a PPP connection that is down beside the IP one in use.
IGD_SERVICES = (
    "urn:schemas-upnp-org:service:WANIPConnection:2",
    "urn:schemas-upnp-org:service:WANIPConnection:1",
    "urn:schemas-upnp-org:service:WANPPPConnection:1",
)


class PortmapError(Exception):
    """A port mapping could not be made, renewed or removed (one line says why)."""


class UpnpFault(PortmapError):
    """The router answered a SOAP call with a UPnP error code."""

    def __init__(self, action: str, code: int, description: str) -> None:
        super().__init__(f"{action}: UPnP error {code} {description}".rstrip())
        self.code = code


@dataclass(frozen=True)
class Gateway:
    """Where the router answers.  Found (default route, SSDP) unless given: tests and the lab
    give them, and a user can when discovery picks the wrong box."""

    address: str | None = None  # PCP and NAT-PMP server; None: the default route's next hop
    port: int = PCP_PORT
    upnp_location: str | None = None  # the IGD description's URL; None: ask by SSDP
    ssdp: tuple[str, int] = SSDP_GROUP
    route_file: str = "/proc/net/route"


@dataclass(frozen=True)
class Mapping:
    """A port forwarded by the router: external_host:external_port -> internal_host:internal_port."""

    protocol: str  # "pcp", "natpmp" or "upnp"
    external_host: str  # the router's external address, as it reports it (see `confirmed`)
    external_port: int
    internal_port: int
    lifetime: int  # seconds granted; 0: until deleted (a UPnP router that grants no lease)
    gateway: str  # the router's address
    internal_host: str = ""  # our address on the router's side
    requested: int = 0  # the lifetime asked for, asked again at each renewal
    gateway_port: int = PCP_PORT  # PCP, NAT-PMP
    nonce: bytes = b""  # PCP: names the mapping for renewal and deletion
    control_url: str = ""  # UPnP
    service: str = ""  # UPnP: the service type at control_url

    def __str__(self) -> str:
        return (f"{self.external_host}:{self.external_port} -> {self.internal_host}:{self.internal_port} "
                f"by {self.protocol} on {self.gateway}")


@dataclass(frozen=True)
class _Deadline:
    at: float
    seconds: float

    @classmethod
    def after(cls, seconds: float) -> _Deadline:
        return cls(trio.current_time() + seconds, seconds)


def _one_line(text: str, limit: int = 80) -> str:
    """Text from the router, made safe to print on one line."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())[:limit]


def _retries() -> Iterator[float]:
    """Waits between UDP retransmissions: RFC 6886's 250 ms doubling (RFC 6887 starts at 3 s,
    too slow here); the caller's deadline ends it."""
    wait = 0.25
    while True:
        yield wait
        wait *= 2


# ---- the default gateway


def default_gateway(route_file: str = "/proc/net/route") -> str:
    """The IPv4 next hop of the default route with the lowest metric (Linux)."""
    best: tuple[int, str] | None = None
    try:
        with open(route_file, encoding="ascii", errors="replace") as f:
            lines = f.read(1 << 20).splitlines()[1:]
    except OSError as e:
        raise PortmapError(f"cannot read {route_file}: {e.strerror or e}") from None
    for line in lines:
        fields = line.split()
        if len(fields) < 8 or fields[1] != "00000000" or fields[7] != "00000000":
            continue
        try:
            gateway, flags, metric = int(fields[2], 16), int(fields[3], 16), int(fields[6])
        except ValueError:
            continue
        if flags & 0x3 != 0x3 or not 0 < gateway <= 0xFFFFFFFF:  # RTF_UP | RTF_GATEWAY
            continue
        # The kernel prints the address as a number in host byte order.
        address = socket.inet_ntoa(struct.pack("=I", gateway))
        if best is None or metric < best[0]:
            best = (metric, address)
    if best is None:
        raise PortmapError(f"no default route through a gateway in {route_file}")
    return best[1]


def _source_toward(host: str, port: int) -> str:
    """Our address on the route to ``host``: a UDP connect sends nothing, it only picks a route."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.connect((host, port))
            return str(s.getsockname()[0])
    except OSError as e:
        raise PortmapError(f"no route to {host}: {e.strerror or e}") from None


async def _udp_exchange(gateway: str, port: int, local_host: str, build: Callable[[str], bytes],
                        accept: Callable[[bytes], T | None], d: _Deadline) -> T:
    """Send ``build(our address)`` until ``accept`` makes something of an answer (None: not an
    answer to this request, keep waiting; PortmapError: a bad one) or the deadline passes."""
    family = socket.AF_INET6 if ":" in gateway else socket.AF_INET
    with trio.socket.socket(family, socket.SOCK_DGRAM) as sock:
        try:
            if local_host:
                await sock.bind((local_host, 0))
            await sock.connect((gateway, port))  # the kernel then drops datagrams from anyone else
            request = build(sock.getsockname()[0])
            with trio.move_on_at(d.at):
                for wait in _retries():
                    await sock.send(request)
                    with trio.move_on_after(wait):
                        while True:
                            got = accept(await sock.recv(MAX_UDP + 1))
                            if got is not None:
                                return got
        except ConnectionRefusedError:
            raise PortmapError(f"{gateway}:{port} refused: nothing listens there") from None
        except OSError as e:
            raise PortmapError(f"{gateway}:{port}: {e.strerror or e}") from None
    raise PortmapError(f"no answer from {gateway}:{port} in {d.seconds:g} s")


# ---- PCP (RFC 6887)

PCP_VERSION = 2
PCP_MAP = 1
PCP_RESULTS = {
    1: "UNSUPP_VERSION: the gateway does not speak PCP version 2",
    2: "NOT_AUTHORIZED: the gateway refuses port mappings",
    3: "MALFORMED_REQUEST: the gateway could not read the request",
    4: "UNSUPP_OPCODE: the gateway does not support MAP",
    5: "UNSUPP_OPTION: the gateway does not support an option sent",
    6: "MALFORMED_OPTION: the gateway could not read an option",
    7: "NETWORK_FAILURE: the gateway has no working external address",
    8: "NO_RESOURCES: the gateway has no mapping left",
    9: "UNSUPP_PROTOCOL: the gateway cannot map TCP",
    10: "USER_EX_QUOTA: the gateway's mapping quota for us is used up",
    11: "CANNOT_PROVIDE_EXTERNAL: the gateway cannot give the external port or address asked for",
    12: "ADDRESS_MISMATCH: the gateway sees us from another address (another NAT between us)",
    13: "EXCESSIVE_REMOTE_PEERS: the gateway cannot hold that many peers",
}


def _pcp_address(host: str) -> bytes:
    """An address as PCP carries it: IPv6, or IPv4 mapped into IPv6; "" is IPv4's any."""
    ip = ipaddress.ip_address(host or "0.0.0.0")
    if ip.version == 4:
        return b"\0" * 10 + b"\xff\xff" + ip.packed
    return ip.packed


def _from_pcp_address(raw: bytes) -> str:
    ip = ipaddress.IPv6Address(raw)
    return str(ip.ipv4_mapped or ip)


def pcp_request(client: str, nonce: bytes, internal_port: int, lifetime: int,
                suggest: tuple[str, int] = ("", 0)) -> bytes:
    """A MAP request for TCP; lifetime 0 deletes the mapping that ``nonce`` names."""
    host, port = suggest
    if not host and ":" in client:
        host = "::"
    return (struct.pack(">BBHI16s", PCP_VERSION, PCP_MAP, 0, lifetime, _pcp_address(client))
            + struct.pack(">12sB3xHH16s", nonce, TCP, internal_port, port, _pcp_address(host)))


def parse_pcp(data: bytes, nonce: bytes, internal_port: int) -> tuple[str, int, int] | None:
    """(external host, external port, lifetime) of a MAP success response to ``nonce``; None
    for a message that is not that response (another request's, an announcement)."""
    if len(data) > MAX_UDP:
        raise PortmapError(f"PCP answer of {len(data)} bytes is over the {MAX_UDP}-byte cap")
    if len(data) < 4:
        raise PortmapError(f"PCP answer of {len(data)} bytes is too short")
    version, opcode, result = data[0], data[1], data[3]
    if version == 0:  # a NAT-PMP server answers PCP with its own "unsupported version"
        raise PortmapError("the gateway speaks NAT-PMP, not PCP")
    if version != PCP_VERSION:
        raise PortmapError(f"PCP answer of version {version}")
    if opcode != 0x80 | PCP_MAP:
        return None
    if len(data) % 4 or len(data) < 24:
        raise PortmapError(f"PCP answer of {len(data)} bytes is not a whole message")
    if result != 0 and (len(data) < 60 or data[24:36] == nonce):
        raise PortmapError(f"PCP result {result} {PCP_RESULTS.get(result, 'unknown to RFC 6887')}")
    if len(data) < 60:
        raise PortmapError(f"PCP MAP answer of {len(data)} bytes is cut short")
    (lifetime,) = struct.unpack_from(">I", data, 4)
    got_nonce, protocol, got_port, external_port, external = struct.unpack_from(">12sB3xHH16s", data, 24)
    if got_nonce != nonce:
        return None
    if protocol != TCP or got_port != internal_port:
        raise PortmapError(f"PCP answer maps protocol {protocol} port {got_port}, not TCP port {internal_port}")
    return _from_pcp_address(external), external_port, lifetime


async def _pcp(gateway: str, port: int, internal_host: str, internal_port: int, lifetime: int, nonce: bytes,
               suggest: tuple[str, int], d: _Deadline) -> Mapping:
    client: list[str] = []

    def build(source: str) -> bytes:
        client.append(source)
        return pcp_request(source, nonce, internal_port, lifetime, suggest)

    host, external_port, granted = await _udp_exchange(
        gateway, port, internal_host, build, lambda data: parse_pcp(data, nonce, internal_port), d)
    if lifetime and (external_port == 0 or granted == 0):
        raise PortmapError(f"PCP success that maps nothing (port {external_port}, lifetime {granted} s)")
    return Mapping("pcp", host, external_port, internal_port, granted, gateway, client[0], lifetime, port, nonce)


# ---- NAT-PMP (RFC 6886)

NATPMP_RESULTS = {
    1: "unsupported version",
    2: "not authorized: port mapping is disabled on the gateway",
    3: "network failure: the gateway has no external address yet",
    4: "out of resources: the gateway has no mapping left",
    5: "unsupported opcode",
}
_NATPMP_SIZES = {0: 12, 2: 16}  # a success response's size, by request opcode


def parse_natpmp(data: bytes, opcode: int) -> tuple[int, ...] | None:
    """The fields after the epoch of a success response to ``opcode``: (external IPv4 as an
    int,) for 0, (internal port, external port, lifetime) for 2.  None: another opcode's."""
    if len(data) > MAX_UDP:
        raise PortmapError(f"NAT-PMP answer of {len(data)} bytes is over the {MAX_UDP}-byte cap")
    if len(data) < 4:
        raise PortmapError(f"NAT-PMP answer of {len(data)} bytes is too short")
    version, got, result = data[0], data[1], int.from_bytes(data[2:4], "big")
    if version != 0:
        raise PortmapError(f"NAT-PMP answer of version {version} (the gateway may speak PCP only)")
    if got != 0x80 | opcode:
        return None
    if result:
        raise PortmapError(f"NAT-PMP result {result}: {NATPMP_RESULTS.get(result, 'unknown to RFC 6886')}")
    if len(data) != _NATPMP_SIZES[opcode]:
        raise PortmapError(f"NAT-PMP answer to opcode {opcode} of {len(data)} bytes, not {_NATPMP_SIZES[opcode]}")
    return struct.unpack_from(">I" if opcode == 0 else ">HHI", data, 8)


async def _natpmp_external(gateway: str, port: int, internal_host: str, d: _Deadline) -> str:
    (raw,) = await _udp_exchange(gateway, port, internal_host, lambda _: b"\0\0",
                                 lambda data: parse_natpmp(data, 0), d)
    return str(ipaddress.IPv4Address(raw))


async def _natpmp_map(gateway: str, port: int, internal_host: str, internal_port: int, lifetime: int,
                      suggest_port: int, d: _Deadline) -> tuple[str, int, int]:
    """(our address, external port, lifetime granted) of opcode 2 (TCP)."""
    client: list[str] = []

    def build(source: str) -> bytes:
        client.append(source)
        return struct.pack(">BBHHHI", 0, 2, 0, internal_port, suggest_port, lifetime)

    got_port, external_port, granted = await _udp_exchange(
        gateway, port, internal_host, build, lambda data: parse_natpmp(data, 2), d)
    if got_port != internal_port:
        raise PortmapError(f"NAT-PMP answer maps port {got_port}, not {internal_port}")
    if lifetime and (external_port == 0 or granted == 0):
        raise PortmapError(f"NAT-PMP success that maps nothing (port {external_port}, lifetime {granted} s)")
    return client[0], external_port, granted


async def _natpmp(gateway: str, port: int, internal_host: str, internal_port: int, lifetime: int,
                  suggest_port: int, d: _Deadline) -> Mapping:
    external = await _natpmp_external(gateway, port, internal_host, d)
    client, external_port, granted = await _natpmp_map(gateway, port, internal_host, internal_port, lifetime,
                                                       suggest_port, d)
    return Mapping("natpmp", external, external_port, internal_port, granted, gateway, client, lifetime, port)


# ---- UPnP-IGD: SSDP, a minimal HTTP/1.1 client, XML, SOAP


def _check_url(url: str, host: str | None = None) -> str:
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
        raise PortmapError(f"unusable URL from the gateway {_one_line(url)}: {_one_line(str(e))}") from None
    return url


def _msearch(target: str) -> bytes:
    return (f'M-SEARCH * HTTP/1.1\r\nHOST: {SSDP_GROUP[0]}:{SSDP_GROUP[1]}\r\nMAN: "ssdp:discover"\r\n'
            f"MX: 1\r\nST: {target}\r\n\r\n").encode("ascii")


def _head(text: str) -> tuple[str, dict[str, str]]:
    """The first line and the headers (lower-case names, first occurrence) of an HTTP head."""
    lines = text.split("\r\n") if "\r\n" in text else text.split("\n")
    headers: dict[str, str] = {}
    for line in lines[1:101]:
        name, colon, value = line.partition(":")
        if colon:
            headers.setdefault(name.strip().lower(), value.strip())
    return lines[0], headers


def parse_ssdp(data: bytes, source: str) -> str:
    """The LOCATION of an SSDP answer from ``source`` that names an internet gateway."""
    if len(data) > MAX_SSDP:
        raise PortmapError(f"SSDP answer of {len(data)} bytes is over the {MAX_SSDP}-byte cap")
    first, headers = _head(data.decode("latin-1"))
    if not re.fullmatch(r"HTTP/1\.[01] 200( .*)?", first):
        raise PortmapError(f"SSDP answer is not a 200 response: {_one_line(first)}")
    target = headers.get("st", "")
    if not any(word in target for word in ("InternetGatewayDevice", "WANIPConnection", "WANPPPConnection")):
        raise PortmapError(f"SSDP answer for another device type: {_one_line(target)}")
    return _check_url(headers.get("location", ""), source)


async def discover_igd(timeout: float, *, local_host: str = "", prefer: str | None = None,
                       target: tuple[str, int] = SSDP_GROUP) -> str:
    """An internet gateway's description URL, by SSDP: the answer from ``prefer`` (the default
    gateway) as soon as it comes, else the first good one after ``timeout``."""
    with trio.socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        first: str | None = None
        try:
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 2)
            if local_host:  # multicast leaves by this interface, not the default route's
                sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(local_host))
                await sock.bind((local_host, 0))
            with trio.move_on_after(timeout):
                for wait in _retries():
                    for st in IGD_TARGETS:
                        await sock.sendto(_msearch(st), target)
                    with trio.move_on_after(wait * 4):  # devices answer within MX = 1 s
                        while True:
                            data, addr = await sock.recvfrom(MAX_SSDP + 1)
                            try:
                                location = parse_ssdp(data, addr[0])
                            except PortmapError:
                                continue  # one bad device on the LAN must not hide the router
                            if prefer is None or addr[0] == prefer:
                                return location
                            first = first or location
        except OSError as e:
            raise PortmapError(f"SSDP search failed: {e.strerror or e}") from None
    if first is None:
        raise PortmapError(f"no UPnP gateway answered the SSDP search in {timeout:g} s")
    return first


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
    first, headers = _head(raw[:split].decode("latin-1"))
    status = re.fullmatch(r"HTTP/1\.[01] ([1-5][0-9][0-9])( .*)?", first)
    if status is None:
        raise PortmapError(f"not an HTTP answer: {_one_line(first)}")
    body = raw[split + 4:]
    coding = headers.get("transfer-encoding", "").lower()
    if coding and coding != "chunked":
        raise PortmapError(f"HTTP transfer encoding {_one_line(coding)} is not supported")
    if coding:
        got = _dechunk(body, cap)
    elif "content-length" in headers:
        length = headers["content-length"]
        if not re.fullmatch(r"[0-9]{1,12}", length):
            raise PortmapError(f"HTTP content length {_one_line(length)} is not a number")
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


async def _http(url: str, d: _Deadline, *, cap: int, method: str = "GET", body: bytes = b"",
                       headers: Sequence[tuple[str, str]] = ()) -> tuple[int, bytes]:
    """One HTTP/1.1 exchange on its own connection (``Connection: close``), at most ``cap``
    bytes of body, within the deadline."""
    parts = urlsplit(_check_url(url))
    host, port = str(parts.hostname), parts.port or 80
    hostport = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
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
            raise PortmapError(f"HTTP to {hostport} failed: {_one_line(str(e))}") from None
    raise PortmapError(f"no whole HTTP answer from {hostport} in {d.seconds:g} s")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _parse_xml(data: bytes) -> ET.Element:
    """An XML document from the router.  No DTD: UPnP never needs one, and entities are the
    way to make a small document expand into a huge one."""
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise PortmapError("XML from the gateway holds a DTD, which UPnP never needs")
    try:
        return ET.fromstring(data)
    except (ET.ParseError, ValueError, LookupError) as e:
        raise PortmapError(f"malformed XML from the gateway: {_one_line(str(e))}") from None


def control_urls(description: bytes, location: str) -> list[tuple[str, str]]:
    """(service type, control URL) of the WAN connection services of a device description,
    in the order of IGD_SERVICES; URLs on another host than the description's are dropped."""
    root = _parse_xml(description)
    host = urlsplit(location).hostname
    base = location
    for child in root:
        if _local(child.tag) == "URLBase" and child.text:
            base = child.text.strip()
    found: dict[str, str] = {}
    for el in root.iter():
        if _local(el.tag) != "service":
            continue
        fields = {_local(c.tag): (c.text or "").strip() for c in el}
        service, control = fields.get("serviceType", ""), fields.get("controlURL", "")
        if service not in IGD_SERVICES or not control or service in found:
            continue
        try:
            found[service] = _check_url(urljoin(base, control), host)
        except (PortmapError, ValueError):
            continue
    return [(s, found[s]) for s in IGD_SERVICES if s in found]


def _soap_envelope(service: str, action: str, args: Sequence[tuple[str, str]]) -> bytes:
    inner = "".join(f"<{k}>{escape(v)}</{k}>" for k, v in args)
    return ('<?xml version="1.0"?>\r\n<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" '
            's:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"><s:Body>'
            f'<u:{action} xmlns:u="{escape(service)}">{inner}</u:{action}></s:Body></s:Envelope>\r\n'
            ).encode("utf-8")


def parse_soap(status: int, body: bytes, action: str) -> dict[str, str]:
    """The output arguments of a SOAP answer; a fault raises UpnpFault."""
    try:
        root = _parse_xml(body)
    except PortmapError:
        if status != 200:
            raise PortmapError(f"{action}: HTTP status {status}") from None
        raise
    texts = {_local(el.tag): (el.text or "").strip() for el in root.iter()}
    if status != 200 or "Fault" in texts:
        code = texts.get("errorCode", "")
        if not re.fullmatch(r"[0-9]{1,4}", code):
            raise PortmapError(f"{action}: HTTP status {status} without a UPnP error code")
        raise UpnpFault(action, int(code), _one_line(texts.get("errorDescription", "")))
    for el in root.iter():
        if _local(el.tag) == f"{action}Response":
            return {_local(c.tag): (c.text or "").strip() for c in el}
    raise PortmapError(f"{action}: the answer holds no {action}Response")


async def _soap(control_url: str, service: str, action: str, args: Sequence[tuple[str, str]],
               d: _Deadline) -> dict[str, str]:
    status, body = await _http(
        control_url, d, cap=MAX_SOAP, method="POST", body=_soap_envelope(service, action, args),
        headers=(("Content-Type", 'text/xml; charset="utf-8"'), ("SOAPAction", f'"{service}#{action}"')))
    return parse_soap(status, body, action)


async def _upnp_external(control_url: str, service: str, d: _Deadline) -> str:
    answer = await _soap(control_url, service, "GetExternalIPAddress", (), d)
    external = answer.get("NewExternalIPAddress", "")
    try:
        return str(ipaddress.ip_address(external))
    except ValueError:
        raise PortmapError(f"the gateway reports no usable external address ({_one_line(external) or 'empty'})") from None


async def _upnp_add(control_url: str, service: str, client: str, internal_port: int, external_port: int,
                    lifetime: int, d: _Deadline) -> tuple[int, int]:
    """(external port, lease) of an AddPortMapping, with the usual fallbacks: a permanent lease
    where the router grants no other (725), another external port where it is taken (718)."""
    for attempt in range(4):
        args = (
            ("NewRemoteHost", ""),  # empty: any remote host; "0.0.0.0" is taken by miniupnpd as a filter
            ("NewExternalPort", str(external_port)),
            ("NewProtocol", "TCP"),
            ("NewInternalPort", str(internal_port)),
            ("NewInternalClient", client),
            ("NewEnabled", "1"),
            ("NewPortMappingDescription", DESCRIPTION),
            ("NewLeaseDuration", str(lifetime)),
        )
        try:
            await _soap(control_url, service, "AddPortMapping", args, d)
            return external_port, lifetime
        except UpnpFault as e:
            if e.code == 725 and lifetime:
                lifetime = 0
            elif e.code == 718 and attempt < 3:
                external_port = 1024 + int.from_bytes(os.urandom(2), "big") % (65536 - 1024)
            else:
                raise
    raise PortmapError("AddPortMapping: no external port was free")


async def _upnp(location: str, internal_host: str, internal_port: int, lifetime: int, d: _Deadline) -> Mapping:
    status, description = await _http(location, d, cap=MAX_DESCRIPTION)
    if status != 200:
        raise PortmapError(f"the gateway's description {_one_line(location)} answered HTTP status {status}")
    services = control_urls(description, location)
    if not services:
        raise PortmapError("the gateway's description lists no WANIPConnection or WANPPPConnection service")
    failed = []
    for service, control_url in services:
        parts = urlsplit(control_url)
        client = internal_host or _source_toward(str(parts.hostname), parts.port or 80)
        try:
            external = await _upnp_external(control_url, service, d)
            port, granted = await _upnp_add(control_url, service, client, internal_port, internal_port, lifetime, d)
        except PortmapError as e:
            failed.append(f"{service.rsplit(':', 2)[-2]}: {e}")
            continue
        return Mapping("upnp", external, port, internal_port, granted, str(parts.hostname), client, lifetime,
                       control_url=control_url, service=service)
    raise PortmapError("; ".join(failed))


# ---- the public API


async def _map_with(protocol: str, internal_port: int, internal_host: str, lifetime: int, gateway: Gateway,
                    d: _Deadline) -> Mapping:
    if protocol == "upnp":
        location = gateway.upnp_location
        if location is None:
            try:
                prefer: str | None = gateway.address or default_gateway(gateway.route_file)
            except PortmapError:
                prefer = None  # SSDP finds the router without a default route
            # Half the time at most, so that the HTTP and SOAP exchanges have the rest.
            location = await discover_igd(d.seconds / 2, local_host=internal_host, prefer=prefer,
                                          target=gateway.ssdp)
        return await _upnp(location, internal_host, internal_port, lifetime, d)
    address = gateway.address or default_gateway(gateway.route_file)
    if protocol == "pcp":
        return await _pcp(address, gateway.port, internal_host, internal_port, lifetime, os.urandom(12), ("", 0), d)
    return await _natpmp(address, gateway.port, internal_host, internal_port, lifetime, internal_port, d)


async def map_port(internal_port: int, *, internal_host: str, lifetime: int = 3600,
                   protocols: Sequence[str] = PROTOCOLS, timeout: float = 3.0,
                   log: Callable[[str], None] = lambda s: None, gateway: Gateway = Gateway()) -> Mapping | None:
    """Forward a public TCP port to ``internal_host:internal_port`` by the first protocol that
    works; None if none does, after one log line each saying why.

    ``internal_host`` is our LAN address ("" for the one on the route to the router); each
    protocol has ``timeout`` seconds.  The mapping is not yet trusted: see `confirmed`.
    """
    unknown = set(protocols) - set(PROTOCOLS)
    if unknown:
        raise ValueError(f"unknown port mapping protocols {sorted(unknown)}: the known are {PROTOCOLS}")
    if not 0 < internal_port < 65536 or lifetime < 1:  # lifetime 0 would ask PCP and NAT-PMP to delete
        raise ValueError("a port mapping needs a port from 1 to 65535 and a lifetime of 1 s or more")
    for protocol in protocols:
        try:
            return await _map_with(protocol, internal_port, internal_host, lifetime, gateway,
                                   _Deadline.after(timeout))
        except PortmapError as e:
            log(f"{protocol}: {e}")
    return None


async def renew(m: Mapping, *, timeout: float = 3.0) -> Mapping:
    """Ask again for the same mapping (same external port, PCP nonce); the router may still
    move it, and its external address may have changed: use the mapping returned."""
    d = _Deadline.after(timeout)
    if m.protocol == "pcp":
        return await _pcp(m.gateway, m.gateway_port, m.internal_host, m.internal_port, m.requested, m.nonce,
                          (m.external_host, m.external_port), d)
    if m.protocol == "natpmp":
        return await _natpmp(m.gateway, m.gateway_port, m.internal_host, m.internal_port, m.requested,
                             m.external_port, d)
    external = await _upnp_external(m.control_url, m.service, d)
    port, granted = await _upnp_add(m.control_url, m.service, m.internal_host, m.internal_port, m.external_port,
                                    m.requested, d)
    return replace(m, external_host=external, external_port=port, lifetime=granted)


async def unmap(m: Mapping, *, timeout: float = 3.0) -> None:
    """Remove the mapping from the router."""
    d = _Deadline.after(timeout)
    if m.protocol == "pcp":
        await _pcp(m.gateway, m.gateway_port, m.internal_host, m.internal_port, 0, m.nonce, ("", 0), d)
    elif m.protocol == "natpmp":
        await _natpmp_map(m.gateway, m.gateway_port, m.internal_host, m.internal_port, 0, 0, d)
    else:
        try:
            await _soap(m.control_url, m.service, "DeletePortMapping",
                       (("NewRemoteHost", ""), ("NewExternalPort", str(m.external_port)), ("NewProtocol", "TCP")), d)
        except UpnpFault as e:
            if e.code != 714:  # NoSuchEntryInArray: already gone, which is what we wanted
                raise


async def _keep_renewing(held: list[Mapping], timeout: float, log: Callable[[str], None]) -> None:
    """Renew at half the time left: half the lifetime after a success, sooner after each failure."""
    expires = trio.current_time() + held[-1].lifetime
    floor = max(2.0, held[-1].lifetime / 16)  # after failures, retry no faster than this
    while held[-1].lifetime > 0:  # 0: a permanent UPnP mapping, nothing to renew
        await trio.sleep(max((expires - trio.current_time()) / 2, floor))
        old = held[-1]
        try:
            new = await renew(old, timeout=timeout)
        except PortmapError as e:
            late = " (it has expired)" if trio.current_time() >= expires else ""
            log(f"{old.protocol}: renewing the mapping failed{late}: {e}")
            continue
        if (new.external_host, new.external_port) != (old.external_host, old.external_port):
            log(f"{new.protocol}: the router moved the mapping to {new.external_host}:{new.external_port}")
        held.append(new)
        del held[:-1]
        expires = trio.current_time() + new.lifetime


@asynccontextmanager
async def mapped_port(internal_port: int, *, internal_host: str, lifetime: int = 3600,
                      protocols: Sequence[str] = PROTOCOLS, timeout: float = 3.0,
                      log: Callable[[str], None] = lambda s: None,
                      gateway: Gateway = Gateway()) -> AsyncIterator[Mapping | None]:
    """`map_port` for the length of the block (None if no protocol worked), renewed in the
    background, and removed on the way out, whatever way that is."""
    m = await map_port(internal_port, internal_host=internal_host, lifetime=lifetime, protocols=protocols,
                       timeout=timeout, log=log, gateway=gateway)
    if m is None:
        yield None
        return
    held = [m]
    try:
        async with background_tasks() as nursery:  # the renewal raises nothing: errors are the block's
            nursery.start_soon(_keep_renewing, held, timeout, log)
            yield m
    finally:
        # Shielded: a cancelled block still removes its mapping.  unmap has its own deadline;
        # this one is a backstop, so that the way out is never held long.
        with trio.move_on_after(timeout + 1, shield=True) as scope:
            try:
                await unmap(held[-1], timeout=timeout)
            except PortmapError as e:
                log(f"{held[-1].protocol}: removing the mapping failed: {e}")
        if scope.cancelled_caught:
            log(f"{held[-1].protocol}: removing the mapping took over {timeout:g} s; it expires by itself")


CGNAT = ipaddress.ip_network("100.64.0.0/10")
# What a router behind another home router gets on its WAN side (RFC 1918, and IPv6's ULA).
PRIVATE = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"))


def confirmed(m: Mapping, stun_seen: Sequence[str] = ()) -> tuple[bool, str]:
    """Whether the internet can reach the mapping: its external address is global unicast and,
    when STUN answers are given, one of the addresses they saw.  The reason either way."""
    where = f"the router's external address {m.external_host}"
    try:
        ip = ipaddress.ip_address(m.external_host)
    except ValueError:
        return False, f"{where} is not an IP address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_unspecified or ip.is_loopback or ip.is_link_local or ip.is_multicast:
        return False, f"{where} is not a global unicast address"
    if ip in CGNAT:
        return False, (f"{where} is in {CGNAT}, carrier-grade NAT: the provider's NAT is in front of it "
                       "and the mapped port is not reachable from the internet")
    if any(ip in n for n in PRIVATE):
        return False, f"{where} is private: another NAT is in front of it (double NAT)"
    if not ip.is_global:
        return False, f"{where} is reserved, not routed on the internet"
    seen = set()
    for text in stun_seen:
        try:
            seen.add(ipaddress.ip_address(text))
        except ValueError:
            continue
    if stun_seen and ip not in seen:
        return False, (f"{where} is not the address STUN servers see ({', '.join(sorted(set(stun_seen)))}): "
                       "another NAT is in front of the router")
    if stun_seen:
        return True, f"{where} is the address STUN servers see"
    return True, f"{where} is a global address (no STUN answer to compare it with)"
