"""PCP (RFC 6887): a MAP request named by a 12-byte nonce, one UDP packet to the gateway's port 5351."""

from __future__ import annotations

import ipaddress
import struct

from ._common import MAX_UDP, TCP, Deadline, Mapping, PortmapError, udp_exchange

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


async def pcp(gateway: str, port: int, internal_host: str, internal_port: int, lifetime: int, nonce: bytes,
               suggest: tuple[str, int], d: Deadline) -> Mapping:
    client: list[str] = []

    def build(source: str) -> bytes:
        client.append(source)
        return pcp_request(source, nonce, internal_port, lifetime, suggest)

    host, external_port, granted = await udp_exchange(
        gateway, port, internal_host, build, lambda data: parse_pcp(data, nonce, internal_port), d)
    if lifetime and (external_port == 0 or granted == 0):
        raise PortmapError(f"PCP success that maps nothing (port {external_port}, lifetime {granted} s)")
    return Mapping("pcp", host, external_port, internal_port, granted, gateway, client[0], lifetime, port, nonce)
