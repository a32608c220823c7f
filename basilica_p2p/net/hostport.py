"""A host and port as people and URLs write them: ``192.0.2.1:7431``, ``[2001:db8::1]:7431``."""

from __future__ import annotations


def host_port(host: object, port: object) -> str:
    """``host:port``, with an IPv6 host (any host with a colon) in brackets."""
    text = str(host)
    return f"[{text}]:{port}" if ":" in text else f"{text}:{port}"


__all__ = ["host_port"]
