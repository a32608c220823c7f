"""``python -m basilica_p2p.bench``: see the package's docstring."""

from . import main

main()
