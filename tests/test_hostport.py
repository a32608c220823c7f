"""net/hostport.py: a host and port written as people and URLs write them, IPv6 in brackets."""

from __future__ import annotations

from basilica_p2p.net import host_port


def test_an_ipv4_address_or_a_name_is_written_host_colon_port() -> None:
    assert host_port("192.0.2.1", 7431) == "192.0.2.1:7431"
    assert host_port("relay.example", 4001) == "relay.example:4001"


def test_an_ipv6_address_is_written_in_brackets() -> None:
    assert host_port("2001:db8::1", 7431) == "[2001:db8::1]:7431"
    assert host_port("::1", 80) == "[::1]:80"
