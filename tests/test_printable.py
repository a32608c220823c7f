"""Text from outside (a peer, a bot, a mailbox server, a router, a STUN server) reaches the screen
printable and bounded, through one function: basilica_p2p/printable.py.

Each caller keeps the words it always showed: the replacement of a refused character, the
limit, a cut marked with "..." or not, white space folded or not.  The known answers below are
those the callers' own copies gave before they were merged."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import basilica_p2p
from basilica_p2p.agent import shown_quoted
from basilica_p2p.bots.external import public_label
from basilica_p2p.net.portmap import PortmapError, parse_http
from basilica_p2p.net.stun import _error_line
from basilica_p2p.net.wormhole import ServerRefused
from basilica_p2p.printable import cut, printable

PACKAGE = Path(basilica_p2p.__file__).parent
ESCAPE = "\x1b[2J"  # clears a terminal


def test_refused_characters_become_the_callers_replacement_and_the_text_is_cut_at_its_limit() -> None:
    assert printable(f"al{ESCAPE}ice\n", 64) == "al?[2Jice?"
    assert printable(f"al{ESCAPE}ice\n", 5) == "al?[2"
    assert printable(f"al{ESCAPE}ice\n", 64, bad="") == "al[2Jice"
    assert printable("\x00" * 10 + "bob", 3, bad="") == "bob"  # dropped before the cut
    assert printable("é \U0001F600 z", 64) == "é \U0001F600 z"


def test_what_is_not_a_string_is_a_question_mark() -> None:
    for value in (None, 42, b"bytes", ["list"]):
        assert printable(value, 64) == "?"


def test_one_line_folds_white_space_and_a_marked_cut_ends_in_dots() -> None:
    text = f"  no\r\nway {ESCAPE}\tout  "
    assert printable(text, 200, one_line=True) == "no way ?[2J out"
    assert printable(text, 200, bad=" ", one_line=True) == "no way [2J out"  # the refused char folds in too
    assert printable("x" * 20, 10, one_line=True, dots=True) == "xxxxxxx..."
    assert printable("x" * 10, 10, one_line=True, dots=True) == "x" * 10
    assert cut("abcdef", 5) == "ab..." and cut("abcde", 5) == "abcde"


@pytest.mark.parametrize("text", ["a\u2028b", "tab\x0bvt\x0cff\x1c\x1dx", "\x85nel", "\u3000wide\u00a0space"])
def test_one_line_leaves_no_line_break_nor_control_character(text: str) -> None:
    for bad in ("?", " ", ""):
        shown = printable(text, 200, bad=bad, one_line=True)
        assert shown.isprintable() and shown == shown.strip() and "  " not in shown, (bad, shown)


def test_a_mailbox_servers_refusal_is_one_line_cut_with_dots() -> None:
    assert str(ServerRefused("ws://m", f"go\naway {ESCAPE}")) == "the mailbox server at ws://m refused: go away ?[2J"
    long = str(ServerRefused("ws://m", "y" * 300))
    assert long.endswith("y" * 197 + "...")


def test_a_routers_answer_is_one_line_with_spaces_for_control_characters() -> None:
    with pytest.raises(PortmapError) as caught:
        parse_http(b"HTTP/9 \x00\x01 ok\x7f" + b"z" * 100 + b"\r\n\r\n", True, 100)
    assert str(caught.value) == "not an HTTP answer: HTTP/9 ok " + "z" * 70


def test_a_stun_servers_reason_drops_what_is_not_printable() -> None:
    assert _error_line(bytes([0, 0, 4, 4]) + b"Not\r\nFound\x1b" + b"!" * 100) == (
        "STUN server answered error 404 NotFound" + "!" * 72)


def test_a_bots_words_and_its_name_for_a_peer() -> None:
    assert shown_quoted(f"{ESCAPE}" + "x" * 100) == "'?[2J" + "x" * 53 + "...'"
    assert shown_quoted(b"\x1b") == "'" + repr(b"\x1b") + "'"

    class Spec:
        spec = "cmd:/home/me/b\x1bot\x07" + "s" * 50

    assert public_label(Spec()) == "cmd:bot" + "s" * 37
    Spec.spec = "cmd:\x1b\x07"
    assert public_label(Spec()) == "cmd:bot"


# Where the running Python's str.isprintable() may be asked, besides printable.py, and why.
OTHER_IDEAS = {
    "wire/text.py": "the wire's pinned text rule (both peers alike, whatever Python): its ASCII fast path",
    "names.py": "whether a name must be spelled out in escapes as well, not a way to show it",
}


def test_one_module_makes_text_printable() -> None:
    askers = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.Attribute) and n.attr == "isprintable" for n in ast.walk(tree)):
            askers.add(path.relative_to(PACKAGE).as_posix())
    assert askers == {"printable.py", *OTHER_IDEAS}
