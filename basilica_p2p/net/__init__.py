"""Two processes playing over the network (trio): meeting, the play loop, and what each side keeps.

    from basilica_p2p.net import PeerConfig, host, join
    await host(bind, port, config, ready)    # waits for a joiner, then plays the games it starts
    await join(address, port, config)        # connects, and plays as many games as the host starts

The modules, by what a game needs of them:

- meeting: invite codes (invite.py, protocol/INVITE-FORMAT.md), the host's door
  (gate.py), the joiner's race over candidate addresses (dial.py), STUN (stun.py),
  port mapping (portmap/), hole punching (punch.py), arranged by invite_meeting.py; a
  code read aloud, with a relay as the last way (code_meeting.py over wormhole/ and
  relay.py: the ``[internet]`` extra, imported only when a code is used); an address as
  people write it, IPv6 in brackets (hostport.py);
- playing: frames and deadlines (framing.py, connection.py), the hellos
  (handshake.py), the play loop (session.py), a side's replay and session file
  (side.py), a peer that went away (presence.py) and meeting it again (rejoin.py),
  finishing a game after a crash (resume.py); peer.py plays the games of one
  connection, demo.py a whole game on loopback;
- remembered: the game ids signed (ledger.py); the keys of known peers are the package's
  known_peers.py, an address book that needs no networking.

Everything the rest of the package uses is re-exported here, but for the two
functions named like their module (``dial``, ``resume``): re-exported, either would
hide its module.
"""

from .again import counted, play_again
from .chat import Chat, is_chat
from .code_meeting import (PUBLIC_MAILBOX, PUBLIC_RELAY, CodeFailed, CodeOptions, fetch_watch_code,
                           hand_out_watch_codes, join_with_code, missing_extra, relay_note, wormhole_companion)
from .connection import BadHello, Connection, NoGameStarted, PeerGone, SessionError, Timeouts
from .demo import run_demo
from .dial import Dialed, DialTimes, ManInTheMiddle, NoPath
from .gate import Admitted, GateClosed, GateLimits, admit, describe_path
from .hostport import host_port
from .handshake import Settings
from .interfaces import local_candidates
from .invite import (Candidate, Invite, InviteError, Reply, check_reply, format_invite, format_reply, format_watch,
                     invite_id, make_reply, parse_invite, parse_reply, parse_watch, watch_mac, WatchCode)
from .invite_meeting import (MAPPING_PROTOCOLS, Companion, Door, InternetOptions, host_connection, join_connection,
                      reply_reader, seated_play)
from .ledger import GameLedger, LedgerError
from .peer import PeerConfig, host, join, play_games
from .presence import Presence
from .rejoin import Rendezvous
from .session import GameReport, Watch, continue_game, play_one_game
from .side import Side, forget_session, side_from_replay, sidecar_path
from .stun import DEFAULT_SERVERS, SYMMETRIC, Mapped, nat_behaviour, public_addresses
from .relay import RelayError
from .relay import meet as meet_on_relay
from .watch import WatchError, WatchHub, Watched, watch_games
from .watch import relay_key as watch_relay_key

__all__ = [
    "DEFAULT_SERVERS", "MAPPING_PROTOCOLS", "PUBLIC_MAILBOX", "PUBLIC_RELAY", "SYMMETRIC", "Admitted", "BadHello",
    "Candidate", "Chat", "CodeFailed", "CodeOptions", "Companion", "Connection", "DialTimes", "Dialed", "Door", "GameLedger", "GameReport",
    "GateClosed", "GateLimits", "InternetOptions", "Invite", "InviteError", "LedgerError",
    "ManInTheMiddle", "Mapped", "NoGameStarted", "NoPath", "PeerConfig", "PeerGone", "Presence",
    "RelayError", "Rendezvous", "Reply", "SessionError", "Settings", "Side", "Timeouts", "Watch", "WatchCode", "WatchError", "WatchHub",
    "Watched", "admit", "check_reply",
    "continue_game", "counted", "describe_path", "host_port", "fetch_watch_code", "format_invite", "format_reply", "format_watch", "forget_session", "hand_out_watch_codes", "host",
    "host_connection", "invite_id", "is_chat", "join", "join_connection", "join_with_code", "make_reply", "missing_extra",
    "local_candidates", "meet_on_relay", "nat_behaviour", "parse_invite", "parse_reply", "parse_watch", "play_again", "play_games", "play_one_game", "public_addresses", "relay_note",
    "reply_reader", "run_demo", "seated_play", "side_from_replay", "sidecar_path", "watch_games", "watch_mac", "watch_relay_key", "wormhole_companion",
]
