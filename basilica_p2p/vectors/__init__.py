"""Test vectors for other implementations: the files of protocol/vectors/, built from fixed inputs.

One module per family; each builds a dict of file name to exact bytes, and its
``main`` writes them (protocol/vectors/README.md says what each file holds)::

    python -m basilica_p2p.vectors.protocol --write protocol/vectors      # envelopes, commit-reveal,
                                # state hashes, manifests, text(N), small/clock/fault.replay, and
                                # the hidden deal in a game (hidden.py: hidden*.replay, deal-game.json)
    python -m basilica_p2p.vectors.playthroughs --write protocol/vectors  # golden playthroughs, setups
    python -m basilica_p2p.vectors.deal --write protocol/vectors          # sra-p256-v1 (deal.json)
    python -m basilica_p2p.vectors.invite --write protocol/vectors        # invite codes (invite.json)

The inputs the families share (keys, game id, nonces, manifests) are in
``_inputs``.  A development tool, like bench/: nothing else in the package
imports it (tests/test_import_graph.py), and it may read the insides of the
formats whose intermediate bytes it prints.  This face imports none of the
families on purpose: each is run with ``python -m``, which must not find its
module already imported by the package.
"""
