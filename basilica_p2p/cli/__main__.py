"""``python -m basilica_p2p.cli``, as the tests and the NAT lab run it."""

from . import main

main()
