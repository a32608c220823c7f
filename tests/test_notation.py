"""The action notation (docs/notation.md): parsing, formatting, errors."""

from __future__ import annotations

import pytest

from basilica_p2p.engine import Action, NotationError, format_action, format_cell, parse_action, parse_cell
from basilica_p2p.engine.components import ARCHITECT, BLUE, GREEN, JESTER, MASON, RED, STRONGMAN, YELLOW


def test_cells_by_hand() -> None:
    # (row - 1) * 5 + column index
    assert parse_cell("a1") == 0
    assert parse_cell("e1") == 4
    assert parse_cell("b3") == 11
    assert parse_cell("c12") == 57
    assert format_cell(11) == "b3" and format_cell(57) == "c12"


@pytest.mark.parametrize("bad", ["", "a", "a0", "f1", "A1", "1a", "a-1", "a01", "b1.5", "a10001"])
def test_bad_cells(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_cell(bad)


@pytest.mark.parametrize(
    "text, action",
    [
        ("V2:b3", Action("vault", 2, 11)),
        ("V*", Action("redeal")),
        ("B:b3", Action("builder", 0, 11)),
        ("O1:c2", Action("order", 1, 7)),
        ("O1:c2-c3", Action("order", 1, 7, 12)),
        ("O1:c2=M", Action("order", 1, 7, -1, MASON)),
        ("O3:a1=J", Action("order", 3, 0, -1, JESTER)),
        ("d4", Action("place", 0, 18)),
        ("c2-c3", Action("shift", 0, 7, 12)),
        ("$", Action("pay")),
        ("$c4", Action("pay", 0, 17)),
        ("$c4=S", Action("pay", 0, 17, -1, STRONGMAN)),
        ("$a1=A", Action("pay", 0, 0, -1, ARCHITECT)),
        ("pass", Action("decline")),
        ("J:c2=G", Action("jester", colors=((7, GREEN),))),
        ("J:d3=R,c2=Y", Action("jester", colors=((7, YELLOW), (13, RED)))),
        ("J:a1=B", Action("jester", colors=((0, BLUE),))),
        ("none", Action("none")),
    ],
)
def test_parse_by_hand(text: str, action: Action) -> None:
    assert parse_action(text) == action
    if text != "J:d3=R,c2=Y":  # written back sorted by cell
        assert format_action(action) == text
    else:
        assert format_action(action) == "J:c2=Y,d3=R"
    assert parse_action(format_action(action)) == action


def test_surrounding_spaces_are_ignored() -> None:
    assert parse_action("  pass ") == Action("decline")


@pytest.mark.parametrize(
    "bad",
    [
        "", "   ", "x", "hello", "V4:a1", "V0:a1", "V1:", "V1:f1", "V1:a0", "Va:a1", "V1-a1",
        "B:", "B:z9", "O1:", "O4:a1", "O1:a1=Q", "O1:a1-", "O1:a1-f2", "O1:a1=", "a1=M", "a1-a0",
        "$a1=X", "$f1", "J:", "J:a1", "J:a1=X", "J:a1=GB", "J:a1=G,a1=B", "J:a1=G,", "f1", "V*x",
        "passs", "nonee", "a" * 201,
    ],
)
def test_garbage_raises_notation_error(bad: str) -> None:
    with pytest.raises(NotationError) as e:
        parse_action(bad)
    msg = str(e.value)
    assert msg and "\n" not in msg  # a one-line reason


@pytest.mark.parametrize("bad", [None, 3, b"pass", ["pass"]])
def test_non_text_raises_notation_error(bad) -> None:
    with pytest.raises(NotationError):
        parse_action(bad)  # type: ignore[arg-type]


def test_notation_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_action("garbage")


def test_unknown_kind_cannot_be_formatted() -> None:
    with pytest.raises(NotationError):
        format_action(Action("bogus"))
