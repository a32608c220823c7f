"""Port mapping (basilica_p2p/net/portmap/) against a fake router on the loopback.

The fake router speaks PCP and NAT-PMP on one UDP port and UPnP-IGD over
HTTP (an SSDP responder too, at a unicast address): it encodes its answers
here, from the RFCs, independently of the client.  Waits run on a MockClock
that jumps once the loopback has been quiet for 10 ms of real time: a timeout
or an hour of renewals costs nothing, and an answer in flight arrives first.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import struct
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable
from functools import partial
from pathlib import Path
from urllib.parse import urljoin
from xml.sax.saxutils import escape

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from basilica_p2p.net.portmap import (
    MAX_DESCRIPTION,
    Gateway,
    Mapping,
    PortmapError,
    UpnpFault,
    confirmed,
    control_urls,
    default_gateway,
    discover_igd,
    map_port,
    mapped_port,
    parse_http,
    parse_natpmp,
    parse_pcp,
    parse_soap,
    parse_ssdp,
    pcp_request,
    renew,
    unmap,
)

LOOP = "127.0.0.1"
EXTERNAL = "11.0.0.2"  # the lab's fake internet: global as far as ipaddress knows
WANIP1 = "urn:schemas-upnp-org:service:WANIPConnection:1"
WANPPP1 = "urn:schemas-upnp-org:service:WANPPPConnection:1"


@pytest.fixture
def clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0.01)


def pcp_address(host: str) -> bytes:
    ip = ipaddress.ip_address(host)
    return (b"\0" * 10 + b"\xff\xff" + ip.packed) if ip.version == 4 else ip.packed


# ---- a fake PCP and NAT-PMP server


class Router:
    """PCP and NAT-PMP on one UDP port, as miniupnpd has them.

    ``pcp_result``/``natpmp_result`` force a result code; ``pcp`` False makes it a NAT-PMP
    server (answering PCP with NAT-PMP's "unsupported version"); ``silent`` answers nothing;
    ``before`` gives datagrams sent ahead of each answer; ``ports`` the external ports it
    assigns, in turn (else the port suggested, else the internal one).
    """

    def __init__(self, *, pcp: bool = True, pcp_result: int = 0, natpmp_result: int = 0, silent: bool = False,
                 max_lifetime: int = 7200, before: Callable[[bytes], list[bytes]] = lambda r: [],
                 ports: list[int] | None = None, external: str = EXTERNAL) -> None:
        self.pcp, self.pcp_result, self.natpmp_result = pcp, pcp_result, natpmp_result
        self.silent, self.max_lifetime, self.before, self.external = silent, max_lifetime, before, external
        self.ports = ports or []
        self.requests: list[bytes] = []
        self.maps: list[tuple[str, int, int, int]] = []  # (protocol, internal port, external port, lifetime)
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((LOOP, 0))
        self.sock = trio.socket.from_stdlib_socket(sock)
        self.gateway = Gateway(LOOP, port=sock.getsockname()[1])

    async def serve(self) -> None:
        with self.sock:
            while True:
                data, addr = await self.sock.recvfrom(2048)
                self.requests.append(data)
                if self.silent:
                    continue
                for extra in self.before(data):
                    await self.sock.sendto(extra, addr)
                answer = self.answer(data, addr)
                if answer is not None:
                    await self.sock.sendto(answer, addr)

    def assign(self, suggested: int, internal: int) -> int:
        return self.ports.pop(0) if self.ports else suggested or internal

    def answer(self, data: bytes, addr: tuple[str, int]) -> bytes | None:
        if data[0] == 2 and self.pcp:
            lifetime, client = struct.unpack_from(">I16s", data, 4)
            nonce, protocol, internal, suggested, _ = struct.unpack_from(">12sB3xHH16s", data, 24)
            assert (len(data), data[1], protocol, client) == (60, 1, 6, pcp_address(addr[0]))
            head = struct.pack(">BBBBII12x", 2, 0x81, 0, self.pcp_result, lifetime, 1234)
            if self.pcp_result:
                return head + data[24:]
            external = self.assign(suggested, internal) if lifetime else 0
            granted = min(lifetime, self.max_lifetime)
            self.maps.append(("pcp", internal, external, granted))
            return (struct.pack(">BBBBII12x", 2, 0x81, 0, 0, granted, 1234)
                    + struct.pack(">12sB3xHH16s", nonce, 6, internal, external, pcp_address(self.external)))
        if data[0] == 2 or data[0] == 0 and data[1] not in (0, 2):
            return struct.pack(">BBHI", 0, 0x80 | data[1], 1 if data[0] else 5, 1234)
        if data[1] == 0:
            assert data == b"\0\0"
            return struct.pack(">BBHI4s", 0, 128, self.natpmp_result, 1234, ipaddress.ip_address(self.external).packed)
        internal, suggested, lifetime = struct.unpack(">4xHHI", data)
        if self.natpmp_result:
            return struct.pack(">BBHI", 0, 130, self.natpmp_result, 1234)
        external = self.assign(suggested, internal) if lifetime else 0
        granted = min(lifetime, self.max_lifetime)
        self.maps.append(("natpmp", internal, external, granted))
        return struct.pack(">BBHIHHI", 0, 130, 0, 1234, internal, external, granted)


async def router(nursery: trio.Nursery, **kwargs: object) -> Router:
    r = Router(**kwargs)  # type: ignore[arg-type]
    nursery.start_soon(r.serve)
    return r


# ---- a fake UPnP internet gateway device


def description(services: list[tuple[str, str]], base: str | None = None) -> bytes:
    listed = "".join(f"<service><serviceType>{t}</serviceType><serviceId>urn:upnp-org:serviceId:x</serviceId>"
                     f"<controlURL>{url}</controlURL><eventSubURL>/evt</eventSubURL><SCPDURL>/s.xml</SCPDURL>"
                     f"</service>" for t, url in services)
    url_base = f"<URLBase>{base}</URLBase>" if base else ""
    return (f'<?xml version="1.0"?><root xmlns="urn:schemas-upnp-org:device-1-0">{url_base}'
            "<specVersion><major>1</major><minor>0</minor></specVersion><device>"
            "<deviceType>urn:schemas-upnp-org:device:InternetGatewayDevice:1</deviceType>"
            "<serviceList><service><serviceType>urn:schemas-upnp-org:service:Layer3Forwarding:1</serviceType>"
            "<controlURL>/l3f</controlURL></service></serviceList><deviceList><device>"
            "<deviceType>urn:schemas-upnp-org:device:WANDevice:1</deviceType><deviceList><device>"
            "<deviceType>urn:schemas-upnp-org:device:WANConnectionDevice:1</deviceType>"
            f"<serviceList>{listed}</serviceList></device></deviceList></device></deviceList>"
            "</device></root>").encode()


def soap_answer(service: str, action: str, args: dict[str, str]) -> bytes:
    inner = "".join(f"<{k}>{escape(v)}</{k}>" for k, v in args.items())
    return ('<?xml version="1.0"?><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" '
            's:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"><s:Body>'
            f'<u:{action}Response xmlns:u="{service}">{inner}</u:{action}Response></s:Body></s:Envelope>').encode()


def soap_fault(code: int, text: str) -> bytes:
    return ('<?xml version="1.0"?><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>'
            "<s:Fault><faultcode>s:Client</faultcode><faultstring>UPnPError</faultstring><detail>"
            '<UPnPError xmlns="urn:schemas-upnp-org:control-1-0">'
            f"<errorCode>{code}</errorCode><errorDescription>{escape(text)}</errorDescription>"
            "</UPnPError></detail></s:Fault></s:Body></s:Envelope>").encode()


class Igd:
    """An internet gateway device over HTTP: its description at /desc.xml, its services' SOAP
    actions at their control URLs.  ``faults`` gives, by action, error codes answered in turn."""

    def __init__(self, *, services: list[tuple[str, str]] | None = None, external: str = EXTERNAL,
                 faults: dict[str, list[int]] | None = None, chunked: bool = False,
                 desc: bytes | None = None) -> None:
        self.services = services if services is not None else [(WANIP1, "/ctl/IPConn")]
        self.external, self.faults, self.chunked, self.desc = external, faults or {}, chunked, desc
        self.calls: list[tuple[str, str, dict[str, str]]] = []  # (path, action, arguments)
        self.heads: list[str] = []
        self.port = 0

    @property
    def location(self) -> str:
        return f"http://{LOOP}:{self.port}/desc.xml"

    async def start(self, nursery: trio.Nursery) -> Igd:
        (listener,) = await nursery.start(partial(trio.serve_tcp, self.handle, 0, host=LOOP))
        self.port = listener.socket.getsockname()[1]
        return self

    async def handle(self, stream: trio.SocketStream) -> None:
        raw = b""
        while b"\r\n\r\n" not in raw:
            chunk = await stream.receive_some(4096)
            if not chunk:
                return
            raw += chunk
        head, body = raw.split(b"\r\n\r\n", 1)
        self.heads.append(head.decode())
        length = int(re.search(rb"Content-Length: (\d+)", head).group(1))  # type: ignore[union-attr]
        while len(body) < length:
            body += await stream.receive_some(4096)
        method, path, _ = head.split(b"\r\n")[0].decode().split(" ")
        status, answer = self.route(method, path, head.decode(), body)
        if self.chunked:
            pieces = b"".join(b"%x\r\n%s\r\n" % (len(answer[i:i + 100]), answer[i:i + 100])
                              for i in range(0, len(answer), 100))
            out = b"HTTP/1.1 %d X\r\nTransfer-Encoding: chunked\r\n\r\n%s0\r\n\r\n" % (status, pieces)
        else:
            out = b"HTTP/1.1 %d X\r\nContent-Type: text/xml\r\nContent-Length: %d\r\n\r\n%s" % (status, len(answer), answer)
        try:
            await stream.send_all(out)
        except trio.BrokenResourceError:
            pass
        await stream.aclose()

    def route(self, method: str, path: str, head: str, body: bytes) -> tuple[int, bytes]:
        if method == "GET" and path == "/desc.xml":
            return 200, self.desc if self.desc is not None else description(self.services)
        service = next((t for t, url in self.services if url == path), None)
        action_header = re.search(r'SOAPAction: "([^"#]+)#(\w+)"', head)
        if method != "POST" or service is None or action_header is None or action_header.group(1) != service:
            return 404, b"not here"
        action = action_header.group(2)
        (call,) = [el for el in ET.fromstring(body).iter() if el.tag == f"{{{service}}}{action}"]
        args = {c.tag: c.text or "" for c in call}
        self.calls.append((path, action, args))
        if self.faults.get(action):
            return 500, soap_fault(self.faults[action].pop(0), "Refused")
        if action == "GetExternalIPAddress":
            return 200, soap_answer(service, action, {"NewExternalIPAddress": self.external})
        return 200, soap_answer(service, action, {})

    def actions(self) -> list[str]:
        return [action for _, action, _ in self.calls]


async def ssdp_responder(nursery: trio.Nursery, answers: Callable[[bytes], list[bytes]]) -> tuple[str, int]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((LOOP, 0))
    tsock = trio.socket.from_stdlib_socket(sock)

    async def serve() -> None:
        with tsock:
            while True:
                data, addr = await tsock.recvfrom(2048)
                for answer in answers(data):
                    await tsock.sendto(answer, addr)

    nursery.start_soon(serve)
    return sock.getsockname()


def ssdp_answer(location: str, target: str = "urn:schemas-upnp-org:device:InternetGatewayDevice:1") -> bytes:
    return (f"HTTP/1.1 200 OK\r\nCACHE-CONTROL: max-age=120\r\nST: {target}\r\nUSN: uuid:x::{target}\r\n"
            f"EXT:\r\nSERVER: fake UPnP/1.1\r\nLOCATION: {location}\r\n\r\n").encode()


def mapping_lines() -> tuple[list[str], Callable[[str], None]]:
    lines: list[str] = []
    return lines, lines.append


# ---- PCP


@pytest.mark.trio
async def test_pcp_maps_a_port(nursery: trio.Nursery) -> None:
    r = await router(nursery, max_lifetime=600)
    m = await map_port(4000, internal_host=LOOP, protocols=("pcp",), gateway=r.gateway)
    assert m is not None
    assert (m.protocol, m.external_host, m.external_port, m.internal_port, m.lifetime, m.gateway, m.internal_host,
            m.requested) == ("pcp", EXTERNAL, 4000, 4000, 600, LOOP, LOOP, 3600)
    assert len(m.nonce) == 12 and r.requests[0][24:36] == m.nonce
    assert str(m) == f"{EXTERNAL}:4000 -> {LOOP}:4000 by pcp on {LOOP}"


@pytest.mark.trio
async def test_pcp_renews_with_the_same_nonce_and_port_and_deletes(nursery: trio.Nursery) -> None:
    r = await router(nursery, ports=[4100])
    m = await map_port(4000, internal_host="", lifetime=100, protocols=("pcp",), gateway=r.gateway)
    assert m is not None and m.external_port == 4100 and m.internal_host == LOOP
    again = await renew(m)
    assert again == m
    assert r.requests[1][24:36] == m.nonce and struct.unpack_from(">H", r.requests[1], 42) == (4100,)
    assert r.requests[1][44:60] == pcp_address(EXTERNAL)
    await unmap(m)
    assert r.maps == [("pcp", 4000, 4100, 100)] * 2 + [("pcp", 4000, 0, 0)]
    assert r.requests[2][24:36] == m.nonce


@pytest.mark.trio
async def test_pcp_ignores_answers_to_other_requests(nursery: trio.Nursery) -> None:
    def before(request: bytes) -> list[bytes]:
        other = bytes(a ^ 0xFF for a in request[24:36])  # another request's nonce
        body = struct.pack(">12sB3xHH16s", other, 6, 4000, 5555, pcp_address("6.6.6.6"))
        return [struct.pack(">BBBBII12x", 2, 0x81, 0, 0, 600, 1) + body,
                struct.pack(">BBBBII12x", 2, 0x81, 0, 2, 600, 1) + body,  # its error too
                struct.pack(">BBBBII12x", 2, 0x80, 0, 0, 0, 99)]  # an ANNOUNCE

    r = await router(nursery, before=before)
    m = await map_port(4000, internal_host=LOOP, protocols=("pcp",), gateway=r.gateway)
    assert m is not None and m.external_port == 4000


@pytest.mark.parametrize("code, words", [
    (2, "PCP result 2 NOT_AUTHORIZED: the gateway refuses port mappings"),
    (8, "PCP result 8 NO_RESOURCES"),
    (12, "ADDRESS_MISMATCH"),
    (99, "PCP result 99 unknown to RFC 6887"),
])
@pytest.mark.trio
async def test_pcp_result_codes_are_one_line_errors(nursery: trio.Nursery, code: int, words: str) -> None:
    r = await router(nursery, pcp_result=code)
    lines, log = mapping_lines()
    assert await map_port(4000, internal_host=LOOP, protocols=("pcp",), gateway=r.gateway, log=log) is None
    assert len(lines) == 1 and lines[0].startswith("pcp: ") and words in lines[0]


@pytest.mark.trio
async def test_a_nat_pmp_gateway_refuses_pcp_and_nat_pmp_takes_over(nursery: trio.Nursery) -> None:
    r = await router(nursery, pcp=False)
    lines, log = mapping_lines()
    m = await map_port(4000, internal_host=LOOP, gateway=r.gateway, log=log)
    assert m is not None and m.protocol == "natpmp"
    assert lines == ["pcp: the gateway speaks NAT-PMP, not PCP"]


@pytest.mark.trio
async def test_silence_is_a_timeout_for_each_protocol(nursery: trio.Nursery, clock: trio.testing.MockClock) -> None:
    r = await router(nursery, silent=True)
    lines, log = mapping_lines()
    start = trio.current_time()
    assert await map_port(4000, internal_host=LOOP, protocols=("pcp", "natpmp"), gateway=r.gateway,
                          timeout=3.0, log=log) is None
    assert trio.current_time() - start == pytest.approx(6.0)
    assert lines == [f"pcp: no answer from {LOOP}:{r.gateway.port} in 3 s",
                     f"natpmp: no answer from {LOOP}:{r.gateway.port} in 3 s"]
    # Retransmitted at 0, 0.25, 0.75 and 1.75 s: the RFCs' doubling, cut short.
    assert len(r.requests) == 8


@pytest.mark.trio
async def test_nobody_listening_fails_at_once() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind((LOOP, 0))
        port = probe.getsockname()[1]
    lines, log = mapping_lines()
    assert await map_port(4000, internal_host=LOOP, protocols=("pcp", "natpmp"), gateway=Gateway(LOOP, port=port),
                          log=log) is None
    assert lines == [f"{p}: {LOOP}:{port} refused: nothing listens there" for p in ("pcp", "natpmp")]


# ---- NAT-PMP


@pytest.mark.trio
async def test_nat_pmp_asks_the_external_address_then_maps(nursery: trio.Nursery) -> None:
    r = await router(nursery, pcp=False, max_lifetime=900, ports=[4001, 4002])
    m = await map_port(4000, internal_host=LOOP, protocols=("natpmp",), gateway=r.gateway)
    assert m is not None
    assert (m.protocol, m.external_host, m.external_port, m.lifetime, m.internal_host) == (
        "natpmp", EXTERNAL, 4001, 900, LOOP)
    assert r.requests[0] == b"\0\0"
    assert r.requests[1] == struct.pack(">BBHHHI", 0, 2, 0, 4000, 4000, 3600)
    moved = await renew(m)
    assert r.requests[3] == struct.pack(">BBHHHI", 0, 2, 0, 4000, 4001, 3600)  # asks for the same port
    assert moved.external_port == 4002
    await unmap(moved)
    assert r.requests[-1] == struct.pack(">BBHHHI", 0, 2, 0, 4000, 0, 0)


@pytest.mark.parametrize("code, words", [(2, "not authorized"), (3, "no external address yet"), (4, "out of resources")])
@pytest.mark.trio
async def test_nat_pmp_result_codes(nursery: trio.Nursery, code: int, words: str) -> None:
    r = await router(nursery, pcp=False, natpmp_result=code)
    lines, log = mapping_lines()
    assert await map_port(4000, internal_host=LOOP, protocols=("natpmp",), gateway=r.gateway, log=log) is None
    assert len(lines) == 1 and lines[0].startswith(f"natpmp: NAT-PMP result {code}: ") and words in lines[0]


@pytest.mark.trio
async def test_nat_pmp_truncated_answer(nursery: trio.Nursery) -> None:
    r = await router(nursery, pcp=False)
    r.answer = lambda data, addr: struct.pack(">BBHI", 0, 128, 0, 1)  # type: ignore[method-assign]
    lines, log = mapping_lines()
    assert await map_port(4000, internal_host=LOOP, protocols=("natpmp",), gateway=r.gateway, log=log) is None
    assert lines == ["natpmp: NAT-PMP answer to opcode 0 of 8 bytes, not 12"]


# ---- UPnP-IGD


@pytest.mark.trio
async def test_upnp_maps_with_an_empty_remote_host(nursery: trio.Nursery) -> None:
    igd = await Igd().start(nursery)
    m = await map_port(4000, internal_host=LOOP, protocols=("upnp",), gateway=Gateway(upnp_location=igd.location))
    assert m is not None
    assert (m.protocol, m.external_host, m.external_port, m.internal_port, m.lifetime, m.gateway, m.internal_host,
            m.service, m.control_url) == ("upnp", EXTERNAL, 4000, 4000, 3600, LOOP, LOOP, WANIP1,
                                          f"http://{LOOP}:{igd.port}/ctl/IPConn")
    assert igd.actions() == ["GetExternalIPAddress", "AddPortMapping"]
    assert igd.calls[1][2] == {
        "NewRemoteHost": "", "NewExternalPort": "4000", "NewProtocol": "TCP", "NewInternalPort": "4000",
        "NewInternalClient": LOOP, "NewEnabled": "1", "NewPortMappingDescription": "basilica-p2p",
        "NewLeaseDuration": "3600"}
    assert f"Host: {LOOP}:{igd.port}" in igd.heads[0] and igd.heads[0].startswith("GET /desc.xml HTTP/1.1")
    assert f'SOAPAction: "{WANIP1}#AddPortMapping"' in igd.heads[2]
    renewed = await renew(m)
    assert renewed == m and igd.calls[-1][2] == igd.calls[1][2]
    await unmap(m)
    assert igd.calls[-1][1:] == ("DeletePortMapping", {"NewRemoteHost": "", "NewExternalPort": "4000",
                                                       "NewProtocol": "TCP"})


@pytest.mark.trio
async def test_upnp_found_by_ssdp(nursery: trio.Nursery) -> None:
    igd = await Igd(chunked=True).start(nursery)
    searches: list[bytes] = []

    def answers(search: bytes) -> list[bytes]:
        searches.append(search)
        return [b"garbage", ssdp_answer("http://10.9.9.9:1/elsewhere.xml"), ssdp_answer(igd.location)]

    where = await ssdp_responder(nursery, answers)
    m = await map_port(4000, internal_host=LOOP, protocols=("upnp",), gateway=Gateway(LOOP, ssdp=where))
    assert m is not None and m.external_host == EXTERNAL
    assert searches[0].startswith(b"M-SEARCH * HTTP/1.1\r\nHOST: 239.255.255.250:1900\r\nMAN: \"ssdp:discover\"")
    assert b"ST: urn:schemas-upnp-org:device:InternetGatewayDevice:1\r\n" in searches[0]


@pytest.mark.trio
async def test_ssdp_silence(clock: trio.testing.MockClock, nursery: trio.Nursery) -> None:
    where = await ssdp_responder(nursery, lambda search: [])
    with pytest.raises(PortmapError, match="no UPnP gateway answered the SSDP search in 1.5 s"):
        await discover_igd(1.5, target=where)


@pytest.mark.trio
async def test_ssdp_prefers_the_default_gateway(clock: trio.testing.MockClock, nursery: trio.Nursery) -> None:
    where = await ssdp_responder(nursery, lambda search: [ssdp_answer("http://127.0.0.1:5/a.xml")])
    start = trio.current_time()
    assert await discover_igd(2.0, target=where, prefer="192.168.1.1") == "http://127.0.0.1:5/a.xml"
    assert trio.current_time() - start == pytest.approx(2.0)  # waited for the gateway in vain
    assert await discover_igd(2.0, target=where, prefer=LOOP) == "http://127.0.0.1:5/a.xml"
    assert trio.current_time() - start == pytest.approx(2.0)


@pytest.mark.trio
async def test_upnp_permanent_lease_and_a_taken_port(nursery: trio.Nursery) -> None:
    igd = await Igd(faults={"AddPortMapping": [725, 718]}).start(nursery)
    m = await map_port(4000, internal_host=LOOP, protocols=("upnp",), gateway=Gateway(upnp_location=igd.location))
    assert m is not None and m.lifetime == 0 and m.external_port != 4000
    leases = [(args["NewExternalPort"], args["NewLeaseDuration"]) for _, a, args in igd.calls if a == "AddPortMapping"]
    assert leases[:2] == [("4000", "3600"), ("4000", "0")] and leases[2] == (str(m.external_port), "0")


@pytest.mark.trio
async def test_upnp_falls_back_to_the_ppp_service(nursery: trio.Nursery) -> None:
    igd = await Igd(services=[(WANPPP1, "/ctl/PPP"), (WANIP1, "/ctl/IP")], faults={"AddPortMapping": [501]}).start(nursery)
    m = await map_port(4000, internal_host=LOOP, protocols=("upnp",), gateway=Gateway(upnp_location=igd.location))
    assert m is not None and m.service == WANPPP1
    assert [(path, a) for path, a, _ in igd.calls] == [
        ("/ctl/IP", "GetExternalIPAddress"), ("/ctl/IP", "AddPortMapping"),
        ("/ctl/PPP", "GetExternalIPAddress"), ("/ctl/PPP", "AddPortMapping")]


@pytest.mark.trio
async def test_upnp_deletion_of_a_missing_mapping_is_fine(nursery: trio.Nursery) -> None:
    igd = await Igd(faults={"DeletePortMapping": [714, 606]}).start(nursery)
    m = await map_port(4000, internal_host=LOOP, protocols=("upnp",), gateway=Gateway(upnp_location=igd.location))
    assert m is not None
    await unmap(m)
    with pytest.raises(PortmapError, match="^DeletePortMapping: UPnP error 606 Refused$"):
        await unmap(m)


@pytest.mark.parametrize("igd, words", [
    (Igd(faults={"AddPortMapping": [501]}), "upnp: WANIPConnection: AddPortMapping: UPnP error 501 Refused"),
    (Igd(external="not an address"), "no usable external address (not an address)"),
    (Igd(external=""), "no usable external address (empty)"),
    (Igd(services=[]), "lists no WANIPConnection or WANPPPConnection"),
    (Igd(services=[(WANIP1, "http://10.1.2.3/ctl")]), "lists no WANIPConnection"),  # another host
    (Igd(desc=b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa">]><root>&a;</root>'), "holds a DTD"),
    (Igd(desc=b"<root><unclosed></root>"), "malformed XML from the gateway: mismatched tag"),
    (Igd(desc=b"x" * (MAX_DESCRIPTION + 1)), "over the 65536-byte cap"),
])
@pytest.mark.trio
async def test_upnp_failures_are_one_line(nursery: trio.Nursery, igd: Igd, words: str) -> None:
    await igd.start(nursery)
    lines, log = mapping_lines()
    assert await map_port(4000, internal_host=LOOP, protocols=("upnp",), gateway=Gateway(upnp_location=igd.location),
                          log=log) is None
    assert len(lines) == 1 and words in lines[0] and "\n" not in lines[0], lines


@pytest.mark.trio
async def test_upnp_server_that_never_finishes(nursery: trio.Nursery, clock: trio.testing.MockClock) -> None:
    async def stall(stream: trio.SocketStream) -> None:
        await stream.send_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n<root>")
        await trio.sleep_forever()

    (listener,) = await nursery.start(partial(trio.serve_tcp, stall, 0, host=LOOP))
    port = listener.socket.getsockname()[1]
    lines, log = mapping_lines()
    assert await map_port(4000, internal_host=LOOP, protocols=("upnp",), timeout=2.0, log=log,
                          gateway=Gateway(upnp_location=f"http://{LOOP}:{port}/d.xml")) is None
    assert lines == [f"upnp: no whole HTTP answer from {LOOP}:{port} in 2 s"]


# ---- holding a mapping for a block


@pytest.mark.trio
async def test_mapped_port_renews_at_half_the_lifetime_and_removes_on_exit(
        nursery: trio.Nursery, clock: trio.testing.MockClock) -> None:
    r = await router(nursery, max_lifetime=120)
    lines, log = mapping_lines()
    async with mapped_port(4000, internal_host=LOOP, lifetime=3600, gateway=r.gateway, log=log) as m:
        assert m is not None and m.lifetime == 120
        await trio.sleep(130)  # renewals at 60 and 120 s
        assert r.maps == [("pcp", 4000, 4000, 120)] * 3
    assert r.maps[3:] == [("pcp", 4000, 0, 0)]
    assert {req[24:36] for req in r.requests} == {m.nonce}
    assert lines == []


@pytest.mark.trio
async def test_mapped_port_logs_a_failed_renewal_retries_and_follows_a_moved_port(
        nursery: trio.Nursery, clock: trio.testing.MockClock) -> None:
    r = await router(nursery, max_lifetime=160, ports=[4000, 4444])
    lines, log = mapping_lines()
    async with mapped_port(4000, internal_host=LOOP, gateway=r.gateway, log=log) as m:
        assert m is not None
        r.pcp_result = 8
        await trio.sleep(81)  # the renewal at 80 s fails; the next comes at 120 s (half the time left)
        assert lines == ["pcp: renewing the mapping failed: PCP result 8 NO_RESOURCES: the gateway has no mapping left"]
        r.pcp_result = 0
        await trio.sleep(40)
    assert lines[1:] == [f"pcp: the router moved the mapping to {EXTERNAL}:4444"]
    assert r.maps[-1] == ("pcp", 4000, 0, 0)


@pytest.mark.trio
async def test_mapped_port_removes_the_mapping_when_cancelled(nursery: trio.Nursery,
                                                              clock: trio.testing.MockClock) -> None:
    igd = await Igd().start(nursery)
    with trio.move_on_after(30) as scope:
        async with mapped_port(4000, internal_host=LOOP, protocols=("upnp",),
                               gateway=Gateway(upnp_location=igd.location)):
            await trio.sleep_forever()
    assert scope.cancelled_caught
    assert igd.actions()[-1] == "DeletePortMapping"


@pytest.mark.trio
async def test_mapped_port_removes_the_mapping_on_an_exception_which_comes_out_as_raised(
        nursery: trio.Nursery) -> None:
    r = await router(nursery)
    with pytest.raises(KeyError, match="boom"):
        async with mapped_port(4000, internal_host=LOOP, gateway=r.gateway):
            raise KeyError("boom")
    assert r.maps[-1] == ("pcp", 4000, 0, 0)


@pytest.mark.trio
async def test_mapped_port_does_not_wait_long_for_a_router_gone_silent(
        nursery: trio.Nursery, clock: trio.testing.MockClock) -> None:
    r = await router(nursery)
    lines, log = mapping_lines()
    start = trio.current_time()
    with trio.move_on_after(10):
        async with mapped_port(4000, internal_host=LOOP, gateway=r.gateway, log=log, timeout=2.0):
            r.silent = True
            await trio.sleep_forever()
    assert trio.current_time() - start == pytest.approx(12.0)
    assert lines == [f"pcp: removing the mapping failed: no answer from {LOOP}:{r.gateway.port} in 2 s"]


@pytest.mark.trio
async def test_mapped_port_without_any_mapping(nursery: trio.Nursery) -> None:
    r = await router(nursery, pcp=False, natpmp_result=2)
    lines, log = mapping_lines()
    async with mapped_port(4000, internal_host=LOOP, protocols=("pcp", "natpmp"), gateway=r.gateway, log=log) as m:
        assert m is None
    assert [line.split(":")[0] for line in lines] == ["pcp", "natpmp"]


@pytest.mark.trio
async def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown port mapping protocols"):
        await map_port(4000, internal_host=LOOP, protocols=("nat-pmp",))
    with pytest.raises(ValueError, match="port from 1 to 65535"):
        await map_port(0, internal_host=LOOP)
    with pytest.raises(ValueError, match="lifetime of 1 s or more"):
        await map_port(4000, internal_host=LOOP, lifetime=0)


# ---- trust


def m_at(external: str) -> Mapping:
    return Mapping("upnp", external, 4000, 4000, 3600, "192.168.1.1", "192.168.1.2")


@pytest.mark.parametrize("external, seen, ok, words", [
    ("11.0.0.2", [], True, "is a global address (no STUN answer to compare it with)"),
    ("11.0.0.2", ["11.0.0.2", "11.0.0.2"], True, "is the address STUN servers see"),
    ("11.0.0.2", ["11.0.0.3"], False, "is not the address STUN servers see (11.0.0.3): another NAT"),
    ("10.0.0.2", [], False, "the router's external address 10.0.0.2 is private: another NAT is in front of it (double NAT)"),
    ("192.168.0.9", ["192.168.0.9"], False, "double NAT"),
    ("100.64.1.2", [], False, "100.64.0.0/10, carrier-grade NAT"),
    ("127.0.0.1", [], False, "not a global unicast address"),
    ("169.254.1.1", [], False, "not a global unicast address"),
    ("0.0.0.0", [], False, "not a global unicast address"),
    ("224.0.0.1", [], False, "not a global unicast address"),
    ("192.0.2.7", [], False, "is reserved, not routed on the internet"),  # TEST-NET: documentation only
    ("240.0.0.1", [], False, "reserved"),
    ("2001:db8::1", [], False, "reserved"),
    ("fd00::2", [], False, "double NAT"),
    ("172.20.0.1", [], False, "double NAT"),
    ("2a00:1450::1", ["2a00:1450:0:0::1"], True, "is the address STUN servers see"),
    ("::ffff:11.0.0.2", ["11.0.0.2"], True, "is the address STUN servers see"),
    ("", [], False, "is not an IP address"),
])
def test_confirmed(external: str, seen: list[str], ok: bool, words: str) -> None:
    got, reason = confirmed(m_at(external), seen)
    assert got is ok and words in reason, reason


# ---- the default gateway


def test_default_gateway_from_the_route_table(tmp_path: Path) -> None:
    table = tmp_path / "route"
    table.write_text(
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
        "wlan0\t00000000\t0100A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0\n"
        "eth0\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
        "eth0\t0001A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n"
        "tun0\t00000000\t00000000\t0001\t0\t0\t50\t00000000\t0\t0\t0\n")  # no gateway: not a router
    expected = "192.168.1.1" if struct.pack("=I", 1) == b"\1\0\0\0" else "1.1.168.192"
    assert default_gateway(str(table)) == expected
    table.write_text("Iface\tDestination\tGateway\n")
    with pytest.raises(PortmapError, match="no default route through a gateway in"):
        default_gateway(str(table))
    with pytest.raises(PortmapError, match="cannot read"):
        default_gateway(str(tmp_path / "missing"))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_fuzz_route_table(text: str) -> None:
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", errors="replace") as f:
        f.write(text)
        f.flush()
        try:
            default_gateway(f.name)
        except PortmapError:
            pass


def route_field(address: str) -> str:
    """An IPv4 address as /proc/net/route writes it: the number in host byte order, in hex."""
    return f"{struct.unpack('=I', socket.inet_aton(address))[0]:08X}"


ROUTE = st.tuples(st.ip_addresses(v=4).map(str), st.booleans(), st.sampled_from([0x1, 0x2, 0x3, 0x7, 0x43]),
                  st.integers(0, 2000), st.booleans())


@settings(max_examples=200, deadline=None)
@given(st.lists(ROUTE, max_size=6))
def test_the_default_gateway_is_the_default_route_with_the_lowest_metric(
    routes: list[tuple[str, bool, int, int, bool]],
) -> None:
    """The known answer, from the table as the kernel writes it: the gateway of the first
    default route (destination and mask 0) that is up with a gateway, at the lowest metric."""
    lines = ["Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT"]
    expected: tuple[int, str] | None = None
    for gateway, default, flags, metric, whole_mask in routes:
        destination, mask = ("00000000", "00000000") if default else ("0001A8C0", "00FFFFFF" if whole_mask else "00000000")
        lines.append(f"eth0\t{destination}\t{route_field(gateway)}\t{flags:04X}\t0\t0\t{metric}\t{mask}\t0\t0\t0")
        usable = default and flags & 0x3 == 0x3 and gateway != "0.0.0.0"
        if usable and (expected is None or metric < expected[0]):
            expected = (metric, gateway)
    with tempfile.NamedTemporaryFile("w", encoding="ascii") as f:
        f.write("\n".join(lines) + "\n")
        f.flush()
        if expected is None:
            with pytest.raises(PortmapError, match="no default route through a gateway"):
                default_gateway(f.name)
        else:
            assert default_gateway(f.name) == expected[1]


# ---- the parsers, against anything


NONCE = bytes(range(12))
PCP_OK = (struct.pack(">BBBBII12x", 2, 0x81, 0, 0, 600, 1)
          + struct.pack(">12sB3xHH16s", NONCE, 6, 4000, 4000, pcp_address(EXTERNAL)))


def test_pcp_and_nat_pmp_parsers() -> None:
    assert parse_pcp(PCP_OK, NONCE, 4000) == (EXTERNAL, 4000, 600)
    assert parse_pcp(PCP_OK, bytes(12), 4000) is None
    with pytest.raises(PortmapError, match="maps protocol 6 port 4000, not TCP port 4001"):
        parse_pcp(PCP_OK, NONCE, 4001)
    with pytest.raises(PortmapError, match="over the 1100-byte cap"):
        parse_pcp(PCP_OK + bytes(1100), NONCE, 4000)
    with pytest.raises(PortmapError, match="not a whole message"):
        parse_pcp(PCP_OK[:-1], NONCE, 4000)
    with pytest.raises(PortmapError, match="cut short"):
        parse_pcp(PCP_OK[:56], NONCE, 4000)
    with pytest.raises(PortmapError, match="version 1"):
        parse_pcp(b"\1" + PCP_OK[1:], NONCE, 4000)
    request = pcp_request("192.168.1.2", NONCE, 4000, 600)
    assert len(request) == 60 and request[:4] == b"\2\1\0\0" and request[44:60] == pcp_address("0.0.0.0")
    assert pcp_request("fd00::2", NONCE, 4000, 600)[44:60] == bytes(16)
    assert parse_natpmp(struct.pack(">BBHI4s", 0, 128, 0, 1, b"\x0b\0\0\2"), 0) == (0x0B000002,)
    assert parse_natpmp(struct.pack(">BBHI4s", 0, 128, 0, 1, b"\x0b\0\0\2"), 2) is None
    with pytest.raises(PortmapError, match="version 2"):
        parse_natpmp(PCP_OK, 0)


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=80), st.lists(st.tuples(st.integers(0, 59), st.integers(0, 255)), max_size=3),
       st.integers(0, 60))
def test_fuzz_pcp_and_nat_pmp(data: bytes, changes: list[tuple[int, int]], cut: int) -> None:
    damaged = bytearray(PCP_OK)
    for at, value in changes:
        damaged[at] = value
    for candidate in (data, bytes(damaged[:60 - cut])):
        try:
            got = parse_pcp(candidate, NONCE, 4000)
        except PortmapError:
            got = None
        if got is not None:  # encoded again, the answer is the message's own fields
            host, port, lifetime = got
            assert candidate[44:60] == pcp_address(host)
            assert struct.unpack_from(">IH", candidate[4:8] + candidate[42:44]) == (lifetime, port)
        for opcode, layout in ((0, ">I"), (2, ">HHI")):
            try:
                fields = parse_natpmp(candidate, opcode)
            except PortmapError:
                continue
            if fields is not None:
                assert struct.pack(layout, *fields) == candidate[8:]


def pcp_answer(nonce: bytes, internal: int, external: int, lifetime: int, host: str) -> bytes:
    """A MAP success response, as the fake router writes one (RFC 6887 7.2 and 11.1)."""
    return (struct.pack(">BBBBII12x", 2, 0x81, 0, 0, lifetime, 1234)
            + struct.pack(">12sB3xHH16s", nonce, 6, internal, external, pcp_address(host)))


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=12, max_size=12), st.integers(1, 0xFFFF), st.integers(0, 0xFFFF),
       st.integers(0, 0xFFFFFFFF), st.ip_addresses().filter(lambda ip: ip.version == 4 or ip.ipv4_mapped is None))
def test_any_mapping_a_pcp_router_grants_is_read_back(nonce: bytes, internal: int, external: int, lifetime: int,
                                                       address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    answer = pcp_answer(nonce, internal, external, lifetime, str(address))
    assert parse_pcp(answer, nonce, internal) == (str(address), external, lifetime)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 0xFFFFFFFF), st.integers(0, 0xFFFF), st.integers(0, 0xFFFF), st.integers(0, 0xFFFFFFFF),
       st.integers(0, 0xFFFFFFFF))
def test_any_nat_pmp_answer_is_read_back(external: int, internal: int, port: int, lifetime: int, epoch: int) -> None:
    assert parse_natpmp(struct.pack(">BBHII", 0, 128, 0, epoch, external), 0) == (external,)
    assert parse_natpmp(struct.pack(">BBHIHHI", 0, 130, 0, epoch, internal, port, lifetime), 2) == (internal, port, lifetime)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300) | st.lists(st.sampled_from([
    "HTTP/1.1 200 OK", "ST: urn:schemas-upnp-org:device:InternetGatewayDevice:1", "LOCATION: http://127.0.0.1:80/",
    "LOCATION: http://127.0.0.1:99999/", "LOCATION: http://[::1/", "LOCATION: ftp://127.0.0.1/", "LOCATION: \x00",
    "location:http://127.0.0.1/x", "", "\n", ":", "ST:", "HTTP/1.0 200"]), max_size=6).map(lambda ls: "\r\n".join(ls).encode()))
def test_fuzz_ssdp(data: bytes) -> None:
    try:
        location = parse_ssdp(data, LOOP)
    except PortmapError:
        return
    assert location.startswith("http://127.0.0.1") and location.encode() in data


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["urn:schemas-upnp-org:device:InternetGatewayDevice:1", WANIP1, WANPPP1]),
       st.integers(1, 0xFFFF), st.text("abcdefghijklmnopqrstuvwxyz0123456789._-/", max_size=30),
       st.permutations(["ST", "LOCATION", "CACHE-CONTROL", "SERVER"]), st.sampled_from(["", " OK"]),
       st.booleans())
def test_any_gateway_location_an_ssdp_answer_gives_is_read_back(
    target: str, port: int, path: str, order: list[str], reason: str, lower: bool,
) -> None:
    location = f"http://127.0.0.1:{port}/{path}"
    values = {"ST": target, "LOCATION": location, "CACHE-CONTROL": "max-age=120", "SERVER": "Linux UPnP/1.1"}
    head = [f"{name.lower() if lower else name}: {values[name]}" for name in order]
    answer = "\r\n".join([f"HTTP/1.1 200{reason}", *head, "", ""]).encode()
    assert parse_ssdp(answer, LOOP) == location


HTTP_PARTS = st.sampled_from([
    b"HTTP/1.1 200 OK\r\n", b"HTTP/1.0 500 X\r\n", b"Content-Length: 5\r\n", b"Content-Length: \xb2\r\n",
    b"Content-Length: 99999999999\r\n", b"Transfer-Encoding: chunked\r\n", b"Transfer-Encoding: gzip\r\n",
    b"\r\n", b"5\r\nhello\r\n", b"0\r\n\r\n", b"ffffffffff\r\n", b"3;x=y\r\nabc\r\n", b"hello", b"\r\n\r\n"])


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=200) | st.lists(HTTP_PARTS, max_size=8).map(b"".join), st.booleans())
def test_fuzz_http(raw: bytes, eof: bool) -> None:
    try:
        got = parse_http(raw, eof, 1000)
    except PortmapError:
        return
    assert got is None or (100 <= got[0] <= 599 and len(got[1]) <= 1000)


@settings(max_examples=300, deadline=None)
@given(st.integers(100, 599), st.binary(max_size=300), st.sampled_from(["length", "chunked", "close"]),
       st.lists(st.integers(1, 64), max_size=8), st.booleans())
def test_any_answer_an_http_server_frames_is_read_back(status: int, body: bytes, framing: str, sizes: list[int],
                                                       lower: bool) -> None:
    """The round trip: status and body, framed by a length, by chunks of any sizes, or by the
    end of the connection, come back whole."""
    headers = {"length": f"Content-Length: {len(body)}\r\n", "chunked": "Transfer-Encoding: chunked\r\n",
               "close": ""}[framing]
    payload = body
    if framing == "chunked":
        chunks, at = [], 0
        for size in sizes + [len(body)]:
            if at < len(body):
                chunks.append(body[at:at + size])
                at += size
        payload = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"
    head = f"HTTP/1.1 {status} Whatever\r\nServer: x\r\n{headers}\r\n"
    raw = (head.lower() if lower else head).replace("http/1.1", "HTTP/1.1").encode() + payload
    assert parse_http(raw, framing == "close", 1000) == (status, body)
    if framing != "close":  # what is framed is known to be whole before the end of the connection
        assert parse_http(raw, True, 1000) == (status, body)


def test_http_parser() -> None:
    assert parse_http(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", False, 100) is None
    assert parse_http(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", False, 100) == (200, b"hello")
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2;ext\r\nlo\r\n0\r\n\r\n"
    assert parse_http(chunked, False, 100) == (200, b"hello")
    assert parse_http(chunked[:-9], False, 100) is None
    assert parse_http(b"HTTP/1.0 200 OK\r\n\r\nall of it", True, 100) == (200, b"all of it")
    with pytest.raises(PortmapError, match="cut short in its body"):
        parse_http(chunked[:-9], True, 100)
    with pytest.raises(PortmapError, match="over the 4-byte cap"):
        parse_http(chunked, False, 4)


XML_PARTS = st.sampled_from([
    "<root>", "</root>", "<service>", "</service>", f"<serviceType>{WANIP1}</serviceType>",
    "<controlURL>/ctl</controlURL>", "<controlURL>http://10.0.0.1/x</controlURL>", "<controlURL>http://[x/</controlURL>",
    "<URLBase>http://127.0.0.1:9/</URLBase>", "<URLBase>http://[::1</URLBase>", "<URLBase>::::</URLBase>",
    "<errorCode>718</errorCode>", "<errorCode>\u00b2</errorCode>", "<s:Fault xmlns:s='x'>", "</s:Fault>",
    "<AddPortMappingResponse>", "</AddPortMappingResponse>", "<NewExternalIPAddress>1.2.3.4</NewExternalIPAddress>",
    "&amp;", "&bogus;", "<![CDATA[x]]>", "<!-- c -->", "<?xml version='1.0' encoding='foo'?>", "\x00", "<a b='>"])


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=200) | st.lists(XML_PARTS, max_size=12).map(lambda parts: "".join(parts).encode()),
       st.sampled_from([200, 500, 404]))
def test_fuzz_xml(data: bytes, status: int) -> None:
    try:
        for _, url in control_urls(data, "http://127.0.0.1:9/d.xml"):
            assert url.startswith("http://127.0.0.1")
    except PortmapError:
        pass
    try:
        args = parse_soap(status, data, "AddPortMapping")
    except PortmapError:
        return
    assert status == 200 and b"AddPortMappingResponse" in data
    assert all(name.encode() in data for name in args), args  # each a child of the response, by name


XML_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Cn")), max_size=20).map(str.strip)
XML_NAME = st.from_regex(r"\A[A-Za-z][A-Za-z0-9]{0,15}\Z")


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(XML_NAME, XML_TEXT, max_size=4), st.sampled_from([WANIP1, WANPPP1]),
       st.sampled_from(["AddPortMapping", "GetExternalIPAddress", "DeletePortMapping"]))
def test_any_soap_answer_is_read_back(args: dict[str, str], service: str, action: str) -> None:
    assert parse_soap(200, soap_answer(service, action, args), action) == args


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 9999), XML_TEXT, st.sampled_from([500, 200]))
def test_any_soap_fault_is_read_back(code: int, text: str, status: int) -> None:
    with pytest.raises(UpnpFault) as fault:
        parse_soap(status, soap_fault(code, text), "AddPortMapping")
    assert fault.value.code == code


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([WANIP1, WANPPP1, "urn:schemas-upnp-org:service:WANIPConnection:2",
                                           "urn:schemas-upnp-org:service:Layer3Forwarding:1"]),
                          st.from_regex(r"\A/?[a-z0-9]{1,8}(/[a-z0-9]{1,8}){0,2}\Z")), max_size=5),
       st.sampled_from([None, "http://127.0.0.1:7/base/"]))
def test_the_control_urls_of_any_description_are_read_back(services: list[tuple[str, str]], base: str | None) -> None:
    """The known answer: the first control URL of each WAN connection service, against the
    description's base (or its own URL), in the order of preference."""
    location = "http://127.0.0.1:5/dir/d.xml"
    first: dict[str, str] = {}
    for service, url in services:
        first.setdefault(service, url)
    preference = ("urn:schemas-upnp-org:service:WANIPConnection:2", WANIP1, WANPPP1)
    expected = [(s, urljoin(base or location, first[s])) for s in preference if s in first]
    assert control_urls(description(services, base), location) == expected


def test_description_parsing() -> None:
    desc = description([(WANPPP1, "ppp"), (WANIP1, "/ip"), (WANIP1, "/second")], base="http://127.0.0.1:7/sub/")
    assert control_urls(desc, "http://127.0.0.1:5/d.xml") == [
        (WANIP1, "http://127.0.0.1:7/ip"), (WANPPP1, "http://127.0.0.1:7/sub/ppp")]
    assert control_urls(b"<a>" * 20000 + b"</a>" * 20000, "http://127.0.0.1/") == []  # deep, not a crash
