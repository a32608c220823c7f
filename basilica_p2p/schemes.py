"""The two ways a game's stack can be dealt, by the names the hellos and a replay's header
give them (protocol/PROTOCOL.md §5 and §5b): the one place these strings are written.

A module that imports nothing, so that the command line can name the schemes in its options
and help without loading the cryptography that implements them (``wire``, ``deal``)."""

COMMIT_REVEAL = "commit-reveal-v1"  # one seed both sides commit to, then reveal (wire/commit.py)
HIDDEN_DEAL = "sra-p256-v1"  # the stack dealt face down (basilica_p2p/deal)
SCHEMES = (COMMIT_REVEAL, HIDDEN_DEAL)
