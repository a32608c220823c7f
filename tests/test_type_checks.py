"""The package's type checking (mypy, run by scripts/test before the suite) stays honest: an
ignore names the error it silences and says, on its line, why the code cannot simply be fixed."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "basilica_p2p"
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[a-z-]+(?:,\s*[a-z-]+)*\])?(?P<after>.*)$")


def test_every_type_ignore_names_its_error_and_its_reason() -> None:
    bare = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found = IGNORE.search(line)
            if found and not (found["codes"] and re.match(r"\s*#\s*\S", found["after"])):
                bare.append(f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}")
    assert not bare, "\n".join(bare)


MADE_BODIES = '''
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from basilica_p2p.deal import DeckDeal, DeckStep
from basilica_p2p.deal_table import DealTable
from basilica_p2p.engine import Options, default_manifest
from basilica_p2p.net.handshake import Settings, hello_body as network_hello
from basilica_p2p.identity import Identity
from basilica_p2p.seat import hello_body
from basilica_p2p.wire import DealBody, HelloBody, SharesBody, seal


def made(table: DealTable, deck: DeckDeal, me: Identity, key: Ed25519PrivateKey) -> None:
    hello: HelloBody = hello_body("alice", Options(), default_manifest(), "commit-reveal-v1")
    theirs: HelloBody = network_hello(me, Settings(Options(), default_manifest()))
    deal: DealBody = table.make_deal()
    shares: SharesBody = table.make_shares()
    step: DeckStep = deck.make()
    seal(key, bytes(32), 0, bytes(32), "takeback", {"too": 3})  # the line that must be refused
'''


def test_message_bodies_are_typed_where_they_are_made(tmp_path: Path) -> None:
    # The seat, the handshake and the deal make the bodies the wire's TypedDicts describe, and
    # seal takes no other: a body of no message's shape is a type error, not only a run-time
    # refusal.  (Checked on a snippet: the package itself is checked by scripts/test.)
    from mypy import api

    snippet = tmp_path / "made_bodies.py"
    snippet.write_text(MADE_BODIES, encoding="utf-8")
    out, err, status = api.run([str(snippet), "--config-file", str(PACKAGE.parent / "pyproject.toml"),
                                "--cache-dir", str(tmp_path / "cache"), "--no-error-summary",
                                "--show-error-codes", "--no-pretty"])
    errors = [line for line in out.splitlines() if ": error: " in line]
    seal_line = MADE_BODIES.splitlines().index(next(line for line in MADE_BODIES.splitlines() if "seal(key" in line))
    assert len(errors) == 1, out + err
    assert errors[0].startswith(f"{snippet}:{seal_line + 1}: error: Argument 6 to \"seal\""), out
    assert errors[0].endswith("[arg-type]"), out
