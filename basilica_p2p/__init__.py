"""basilica-p2p: play Basilica peer to peer, with replays anyone can verify."""

__version__ = "0.1.0"
