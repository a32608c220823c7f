"""UPnP-IGD: an SSDP search finds the description, whose XML names the service SOAP calls map the port."""

from __future__ import annotations

import ipaddress
import os
import re
import socket
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from urllib.parse import urljoin, urlsplit
from xml.sax.saxutils import escape

import trio

from ...printable import printable
from ._common import (
    DESCRIPTION,
    IGD_SERVICES,
    IGD_TARGETS,
    MAX_DESCRIPTION,
    MAX_SOAP,
    MAX_SSDP,
    SSDP_GROUP,
    Deadline,
    Mapping,
    PortmapError,
    UpnpFault,
    retries,
    source_toward,
)
from ._http import check_url, http_request, parse_head


def _msearch(target: str) -> bytes:
    return (f'M-SEARCH * HTTP/1.1\r\nHOST: {SSDP_GROUP[0]}:{SSDP_GROUP[1]}\r\nMAN: "ssdp:discover"\r\n'
            f"MX: 1\r\nST: {target}\r\n\r\n").encode("ascii")


def parse_ssdp(data: bytes, source: str) -> str:
    """The LOCATION of an SSDP answer from ``source`` that names an internet gateway."""
    if len(data) > MAX_SSDP:
        raise PortmapError(f"SSDP answer of {len(data)} bytes is over the {MAX_SSDP}-byte cap")
    first, headers = parse_head(data.decode("latin-1"))
    if not re.fullmatch(r"HTTP/1\.[01] 200( .*)?", first):
        raise PortmapError(f"SSDP answer is not a 200 response: {printable(first, 80, bad=' ', one_line=True)}")
    target = headers.get("st", "")
    if not any(word in target for word in ("InternetGatewayDevice", "WANIPConnection", "WANPPPConnection")):
        raise PortmapError(f"SSDP answer for another device type: {printable(target, 80, bad=' ', one_line=True)}")
    return check_url(headers.get("location", ""), source)


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
                for wait in retries():
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
        raise PortmapError(f"malformed XML from the gateway: {printable(str(e), 80, bad=' ', one_line=True)}") from None


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
            found[service] = check_url(urljoin(base, control), host)
        except (PortmapError, ValueError):
            continue
    return [(s, found[s]) for s in IGD_SERVICES if s in found]


def _soap_envelope(service: str, action: str, args: Sequence[tuple[str, str]]) -> bytes:
    inner = "".join(f"<{k}>{escape(v)}</{k}>" for k, v in args)
    return ('<?xml version="1.0"?>\r\n<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" '
            's:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"><s:Body>'
            f'<u:{action} xmlns:u="{escape(service)}">{inner}</u:{action}></s:Body></s:Envelope>\r\n'
            ).encode()


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
        raise UpnpFault(action, int(code), printable(texts.get("errorDescription", ""), 80, bad=" ", one_line=True))
    for el in root.iter():
        if _local(el.tag) == f"{action}Response":
            return {_local(c.tag): (c.text or "").strip() for c in el}
    raise PortmapError(f"{action}: the answer holds no {action}Response")


async def soap(control_url: str, service: str, action: str, args: Sequence[tuple[str, str]],
               d: Deadline) -> dict[str, str]:
    status, body = await http_request(
        control_url, d, cap=MAX_SOAP, method="POST", body=_soap_envelope(service, action, args),
        headers=(("Content-Type", 'text/xml; charset="utf-8"'), ("SOAPAction", f'"{service}#{action}"')))
    return parse_soap(status, body, action)


async def upnp_external(control_url: str, service: str, d: Deadline) -> str:
    answer = await soap(control_url, service, "GetExternalIPAddress", (), d)
    external = answer.get("NewExternalIPAddress", "")
    try:
        return str(ipaddress.ip_address(external))
    except ValueError:
        shown = printable(external, 80, bad=" ", one_line=True) or "empty"
        raise PortmapError(f"the gateway reports no usable external address ({shown})") from None


async def upnp_add(control_url: str, service: str, client: str, internal_port: int, external_port: int,
                    lifetime: int, d: Deadline) -> tuple[int, int]:
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
            await soap(control_url, service, "AddPortMapping", args, d)
            return external_port, lifetime
        except UpnpFault as e:
            if e.code == 725 and lifetime:
                lifetime = 0
            elif e.code == 718 and attempt < 3:
                external_port = 1024 + int.from_bytes(os.urandom(2), "big") % (65536 - 1024)
            else:
                raise
    raise PortmapError("AddPortMapping: no external port was free")


async def upnp(location: str, internal_host: str, internal_port: int, lifetime: int, d: Deadline) -> Mapping:
    status, description = await http_request(location, d, cap=MAX_DESCRIPTION)
    if status != 200:
        raise PortmapError(f"the gateway's description {printable(location, 80, bad=' ', one_line=True)} "
                           f"answered HTTP status {status}")
    services = control_urls(description, location)
    if not services:
        raise PortmapError("the gateway's description lists no WANIPConnection or WANPPPConnection service")
    failed = []
    for service, control_url in services:
        parts = urlsplit(control_url)
        client = internal_host or source_toward(str(parts.hostname), parts.port or 80)
        try:
            external = await upnp_external(control_url, service, d)
            port, granted = await upnp_add(control_url, service, client, internal_port, internal_port, lifetime, d)
        except PortmapError as e:
            failed.append(f"{service.rsplit(':', 2)[-2]}: {e}")
            continue
        return Mapping("upnp", external, port, internal_port, granted, str(parts.hostname), client, lifetime,
                       control_url=control_url, service=service)
    raise PortmapError("; ".join(failed))
