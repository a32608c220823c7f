"""What the three protocols share: limits, errors, the mapping value, deadlines, the gateway, UDP."""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

import trio

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
class Deadline:
    at: float
    seconds: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(trio.current_time() + seconds, seconds)


def retries() -> Iterator[float]:
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


def source_toward(host: str, port: int) -> str:
    """Our address on the route to ``host``: a UDP connect sends nothing, it only picks a route."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.connect((host, port))
            return str(s.getsockname()[0])
    except OSError as e:
        raise PortmapError(f"no route to {host}: {e.strerror or e}") from None


async def udp_exchange(gateway: str, port: int, local_host: str, build: Callable[[str], bytes],
                        accept: Callable[[bytes], T | None], d: Deadline) -> T:
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
                for wait in retries():
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
