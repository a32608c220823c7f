"""This machine's own addresses, as candidates for an invite (Linux; elsewhere what the OS tells).

IPv4 addresses come from each interface (``SIOCGIFADDR``); IPv6 ones from
``/proc/net/if_inet6``.  Loopback and link-local addresses are left out:
the first never reaches another machine, the second needs a zone id that
another machine cannot know.  A private or carrier-grade address is a
``lan`` candidate (it works from the same network), a global IPv4 one is
``public``, a global IPv6 one ``ipv6``.
"""

from __future__ import annotations

import fcntl
import ipaddress
import socket
import struct
from pathlib import Path

from .invite import Candidate

_SIOCGIFADDR = 0x8915
_IF_INET6 = Path("/proc/net/if_inet6")
_CGNAT = ipaddress.ip_network("100.64.0.0/10")


def _ipv4_addresses() -> list[ipaddress.IPv4Address]:
    found = []
    try:
        names = [name for _, name in socket.if_nameindex()]
    except OSError:
        return []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for name in names:
            try:
                packed = fcntl.ioctl(s.fileno(), _SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
            except OSError:  # an interface without IPv4
                continue
            found.append(ipaddress.IPv4Address(packed[20:24]))
    return found


def _ipv6_addresses(table: Path = _IF_INET6) -> list[ipaddress.IPv6Address]:
    found = []
    try:
        lines = table.read_text(encoding="ascii").splitlines()
    except OSError:
        return []
    for line in lines:
        fields = line.split()
        if len(fields) >= 6 and len(fields[0]) == 32:
            try:
                found.append(ipaddress.IPv6Address(bytes.fromhex(fields[0])))
            except ValueError:
                continue
    return found


def classify(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """The candidate kind of one of our addresses, or None when no other machine can use it."""
    if address.is_loopback or address.is_link_local or address.is_multicast or address.is_unspecified:
        return None
    if address.version == 6:
        return "ipv6" if address.is_global else None  # ULA and site-local: rare at home, left out
    if address.is_private or address in _CGNAT:
        return "lan"
    return "public"


def local_candidates(port: int) -> list[Candidate]:
    """Candidates for every usable address of this machine at ``port``: LAN first, then public, then IPv6."""
    order = {"lan": 0, "public": 1, "ipv6": 2}
    seen: set[str] = set()
    out: list[Candidate] = []
    addresses: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = [*_ipv4_addresses(), *_ipv6_addresses()]
    for address in addresses:
        kind = classify(address)
        if kind is None or str(address) in seen:
            continue
        seen.add(str(address))
        out.append(Candidate(kind, str(address), port))
    return sorted(out, key=lambda c: order[c.kind])
