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

One module per protocol behind this face: ``_pcp``, ``_natpmp``, ``_upnp`` (SSDP, XML,
SOAP) over ``_http``; ``_mapping`` is the public API, ``_common`` what they share.
"""

from __future__ import annotations

from ._common import (
    MAX_DESCRIPTION,
    PROTOCOLS,
    Gateway,
    Mapping,
    PortmapError,
    UpnpFault,
    default_gateway,
)
from ._http import parse_http
from ._mapping import confirmed, map_port, mapped_port, renew, unmap
from ._natpmp import parse_natpmp
from ._pcp import parse_pcp, pcp_request
from ._upnp import control_urls, discover_igd, parse_soap, parse_ssdp

__all__ = [
    "MAX_DESCRIPTION", "PROTOCOLS", "Gateway", "Mapping", "PortmapError", "UpnpFault", "confirmed", "control_urls",
    "default_gateway", "discover_igd", "map_port", "mapped_port", "parse_http", "parse_natpmp", "parse_pcp",
    "parse_soap", "parse_ssdp", "pcp_request", "renew", "unmap",
]
