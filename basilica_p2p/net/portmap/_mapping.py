"""The public API: map, renew and remove a port, hold one for a block, and judge whether it is reachable."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace

import trio

from .._tasks import background_tasks
from ._common import (
    PROTOCOLS,
    Deadline,
    Gateway,
    Mapping,
    PortmapError,
    UpnpFault,
    default_gateway,
)
from ._natpmp import natpmp, natpmp_map
from ._pcp import pcp
from ._upnp import discover_igd, soap, upnp, upnp_add, upnp_external


async def _map_with(protocol: str, internal_port: int, internal_host: str, lifetime: int, gateway: Gateway,
                    d: Deadline) -> Mapping:
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
        return await upnp(location, internal_host, internal_port, lifetime, d)
    address = gateway.address or default_gateway(gateway.route_file)
    if protocol == "pcp":
        return await pcp(address, gateway.port, internal_host, internal_port, lifetime, os.urandom(12), ("", 0), d)
    return await natpmp(address, gateway.port, internal_host, internal_port, lifetime, internal_port, d)


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
                                   Deadline.after(timeout))
        except PortmapError as e:
            log(f"{protocol}: {e}")
    return None


async def renew(m: Mapping, *, timeout: float = 3.0) -> Mapping:
    """Ask again for the same mapping (same external port, PCP nonce); the router may still
    move it, and its external address may have changed: use the mapping returned."""
    d = Deadline.after(timeout)
    if m.protocol == "pcp":
        return await pcp(m.gateway, m.gateway_port, m.internal_host, m.internal_port, m.requested, m.nonce,
                          (m.external_host, m.external_port), d)
    if m.protocol == "natpmp":
        return await natpmp(m.gateway, m.gateway_port, m.internal_host, m.internal_port, m.requested,
                             m.external_port, d)
    external = await upnp_external(m.control_url, m.service, d)
    port, granted = await upnp_add(m.control_url, m.service, m.internal_host, m.internal_port, m.external_port,
                                    m.requested, d)
    return replace(m, external_host=external, external_port=port, lifetime=granted)


async def unmap(m: Mapping, *, timeout: float = 3.0) -> None:
    """Remove the mapping from the router."""
    d = Deadline.after(timeout)
    if m.protocol == "pcp":
        await pcp(m.gateway, m.gateway_port, m.internal_host, m.internal_port, 0, m.nonce, ("", 0), d)
    elif m.protocol == "natpmp":
        await natpmp_map(m.gateway, m.gateway_port, m.internal_host, m.internal_port, 0, 0, d)
    else:
        try:
            await soap(m.control_url, m.service, "DeletePortMapping",
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
