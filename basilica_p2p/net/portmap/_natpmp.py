"""NAT-PMP (RFC 6886), PCP's predecessor on the same port: the external address, then a TCP mapping."""

from __future__ import annotations

import ipaddress
import struct

from ._common import MAX_UDP, Deadline, Mapping, PortmapError, udp_exchange

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


async def natpmp_external(gateway: str, port: int, internal_host: str, d: Deadline) -> str:
    (raw,) = await udp_exchange(gateway, port, internal_host, lambda _: b"\0\0",
                                 lambda data: parse_natpmp(data, 0), d)
    return str(ipaddress.IPv4Address(raw))


async def natpmp_map(gateway: str, port: int, internal_host: str, internal_port: int, lifetime: int,
                      suggest_port: int, d: Deadline) -> tuple[str, int, int]:
    """(our address, external port, lifetime granted) of opcode 2 (TCP)."""
    client: list[str] = []

    def build(source: str) -> bytes:
        client.append(source)
        return struct.pack(">BBHHHI", 0, 2, 0, internal_port, suggest_port, lifetime)

    got_port, external_port, granted = await udp_exchange(
        gateway, port, internal_host, build, lambda data: parse_natpmp(data, 2), d)
    if got_port != internal_port:
        raise PortmapError(f"NAT-PMP answer maps port {got_port}, not {internal_port}")
    if lifetime and (external_port == 0 or granted == 0):
        raise PortmapError(f"NAT-PMP success that maps nothing (port {external_port}, lifetime {granted} s)")
    return client[0], external_port, granted


async def natpmp(gateway: str, port: int, internal_host: str, internal_port: int, lifetime: int,
                  suggest_port: int, d: Deadline) -> Mapping:
    external = await natpmp_external(gateway, port, internal_host, d)
    client, external_port, granted = await natpmp_map(gateway, port, internal_host, internal_port, lifetime,
                                                       suggest_port, d)
    return Mapping("natpmp", external, external_port, internal_port, granted, gateway, client, lifetime, port)
