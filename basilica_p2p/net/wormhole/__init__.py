"""A trio client of the magic-wormhole mailbox (rendezvous) protocol.

Two peers who share a short code such as ``7-crossover-clockwork`` swap one small message
each, sealed under a key that SPAKE2 derives from the code, through a mailbox server: the
public one (`PUBLIC_MAILBOX`) or your own. It speaks the protocol of magic-wormhole 0.x,
so it meets the ``wormhole`` tool's Python library on the same appid. See docs/wormhole.md.

    from basilica_p2p.net import wormhole

    w = await wormhole.create(wormhole.PUBLIC_MAILBOX, "basilica-p2p.org/play/v1")
    ...  # show w.code; the peer calls wormhole.join(..., code)
    theirs = await w.exchange(ours)
    await w.close()
"""

from ._code import Code, make_code, parse_code
from .errors import (
    BadCode,
    ConnectionLost,
    Crowded,
    MailboxUnreachable,
    ProtocolViolation,
    ServerRefused,
    Timeout,
    WormholeError,
    WrongCode,
)
from .mailbox import MAX_PAYLOAD, PUBLIC_MAILBOX, Wormhole, create, join

__all__ = [
    "MAX_PAYLOAD", "PUBLIC_MAILBOX", "BadCode", "Code", "ConnectionLost", "Crowded", "MailboxUnreachable",
    "ProtocolViolation", "ServerRefused", "Timeout", "Wormhole", "WormholeError", "WrongCode", "create", "join",
    "make_code", "parse_code",
]
