"""``basilica rules score``: scoring written positions through the real CLI.

Every expected number is worked out by hand in a comment (RULES.md §6), never
by calling the code under test.  Players are 1 and 2 in the JSON report.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from basilica_p2p.cli import app
from basilica_p2p.engine import PositionError
from basilica_p2p.position import load_position, report_json, score_position

REPO = Path(__file__).resolve().parent.parent
runner = CliRunner()


def write(tmp_path: Path, position: Any) -> Path:
    path = tmp_path / "position.json"
    if isinstance(position, bytes):
        path.write_bytes(position)
    elif isinstance(position, str):
        path.write_text(position, encoding="utf-8")
    else:
        path.write_text(json.dumps(position), encoding="utf-8")
    return path


def score(tmp_path: Path, position: Any) -> dict[str, Any]:
    result = runner.invoke(app, ["rules", "score", str(write(tmp_path, position)), "--json"])
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.output
    return json.loads(result.stdout)


def table(tmp_path: Path, position: Any) -> str:
    result = runner.invoke(app, ["rules", "score", str(write(tmp_path, position))],
                           env={"NO_COLOR": "1", "COLUMNS": "80"})
    assert result.exit_code == 0, result.stderr
    return result.stdout


def rejected(tmp_path: Path, position: Any) -> str:
    """Run the CLI on bad input: exit 2, one line on stderr, no traceback; returns that line."""
    result = runner.invoke(app, ["rules", "score", str(write(tmp_path, position))])
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ")
    return lines[0]


def names(message: str, *cells: str) -> bool:
    """Whether the message names one of the cells (as a whole word: b1 is not in b10)."""
    return any(re.search(rf"(?<![a-z0-9]){c}(?![0-9])", message) for c in cells)


def area(color: str, cells: list[str], strength: list[int], majority: int | None,
         points: list[int]) -> dict[str, Any]:
    return {"color": color, "cells": cells, "tiles": len(cells), "strength": strength,
            "majority": majority, "points": points}


# --- the rulebook example and the shape of the report ------------------------------

# Row 1:  a1=Y  b1=Y/B  c1=B  d1=B  e1=B
# Player 1 (white): a builder on a1 and the Architect on the wild b1.
# Player 2 (black): a Master Mason on c1, and a stained glass on d1.
WORKED_EXAMPLE = {
    "rows": ["Y Y/B B B B"],
    "builders": {
        "a1": {"player": 1},
        "b1": {"player": 1, "rank": "architect"},
        "c1": {"player": 2, "rank": "mason"},
    },
    "glass": ["d1"],
}


def test_rulebook_worked_example_architect_on_a_wild_tile(tmp_path: Path) -> None:
    # Blue b1 c1 d1 e1 (4 tiles): P1 strength 1 (Architect), P2 2 (Mason) -> P2.
    #   P2: 4 tiles doubled by the Architect (of either player) = 8, + 2 glass after
    #   the doubling = 10; P1 gets 1 for its one builder.
    # Yellow a1 b1 (2 tiles): P1 strength 2, P2 0 -> P1: 2 x 2 = 4; P2 has no builder: 0.
    # Totals: P1 1 + 4 = 5, P2 10 + 0 = 10.
    assert score(tmp_path, WORKED_EXAMPLE) == {
        "areas": [
            area("B", ["b1", "c1", "d1", "e1"], [1, 2], 2, [1, 10]),
            area("Y", ["a1", "b1"], [2, 0], 1, [4, 0]),
        ],
        "total": [5, 10],
    }


def test_json_report_has_exactly_the_documented_shape(tmp_path: Path) -> None:
    # Red a1 b1: one plain builder each, no Strongman -> a tie, majority null, 0 / 0.
    report = score(tmp_path, {"rows": ["R R . . ."], "builders": {"a1": {"player": 1}, "b1": {"player": 2}}})
    assert list(report) == ["areas", "total"]
    assert len(report["areas"]) == 1
    a = report["areas"][0]
    assert list(a) == ["color", "cells", "tiles", "strength", "majority", "points"]
    assert a == {"color": "R", "cells": ["a1", "b1"], "tiles": 2, "strength": [1, 1], "majority": None,
                 "points": [0, 0]}
    assert report["total"] == [0, 0]


def test_areas_sorted_by_colour_letter_then_first_cell(tmp_path: Path) -> None:
    # Row 1: a1=R b1=G c1=. d1=R e1=Y ; row 2: a2=R, d2=R.
    # Areas with builders: G {b1} (lone printed green), R {a1,a2}, R {d1,d2}, Y {e1}.
    # Letter order is B < G < R < Y; the two red areas go by first cell, a1 before d1.
    # G: P2 alone -> 1 tile = 1.  R a: P1 -> 2.  R d: P2 -> 2.  Y: P1 -> 1.  Totals 3 / 3.
    report = score(tmp_path, {
        "rows": ["R G . R Y", "R . . R ."],
        "builders": {"e1": {"player": 1}, "d2": {"player": 2}, "b1": {"player": 2}, "a1": {"player": 1}},
    })
    assert report == {
        "areas": [
            area("G", ["b1"], [0, 1], 2, [0, 1]),
            area("R", ["a1", "a2"], [1, 0], 1, [2, 0]),
            area("R", ["d1", "d2"], [0, 1], 2, [0, 2]),
            area("Y", ["e1"], [1, 0], 1, [1, 0]),
        ],
        "total": [3, 3],
    }


def test_cells_in_natural_order_column_then_row(tmp_path: Path) -> None:
    # A red column a1..a10 plus b10: natural order puts a9 before a10 (text order would
    # not) and every a-cell before b10.  11 tiles, P2 alone -> 11.
    rows = ["R . . . ."] * 9 + ["R R . . ."]
    report = score(tmp_path, {"rows": rows, "builders": {"b10": {"player": 2}}})
    expected = [f"a{r}" for r in range(1, 11)] + ["b10"]
    assert report["areas"] == [area("R", expected, [0, 1], 2, [0, 11])]
    assert report["total"] == [0, 11]


def test_architect_doubles_once_and_mason_counts_one_for_the_minority(tmp_path: Path) -> None:
    # Red a1..e1 + a2 = 6 tiles.  P1: Mason a1 (2) + b1 + a2 = 4.  P2: Architects on c1
    # and d1, builder e1 = 3 -> P1.  P1: 6 tiles doubled once (two Architects, both of
    # the loser, still x2 and only x2) = 12.  P2: 1 per own builder -> 3.
    report = score(tmp_path, {
        "rows": ["R R R R R", "R . . . ."],
        "builders": {
            "a1": {"player": 1, "rank": "mason"}, "b1": {"player": 1}, "a2": {"player": 1},
            "c1": {"player": 2, "rank": "architect"}, "d1": {"player": 2, "rank": "architect"},
            "e1": {"player": 2},
        },
    })
    assert report["areas"] == [area("R", ["a1", "a2", "b1", "c1", "d1", "e1"], [4, 3], 1, [12, 3])]
    # The minority's Mason counts 1: P1 three builders (Mason included) would get 3, not 4.
    report = score(tmp_path, {
        "rows": ["R R R R ."],
        "builders": {"a1": {"player": 1, "rank": "mason"}, "b1": {"player": 2}, "c1": {"player": 2},
                     "d1": {"player": 2}},
    })
    # Strength 2 vs 3 -> P2: 4 tiles = 4; P1's Mason alone = 1.
    assert report["areas"] == [area("R", ["a1", "b1", "c1", "d1"], [2, 3], 2, [1, 4])]


def test_builder_less_position_scores_nothing(tmp_path: Path) -> None:
    # Areas exist (blue b1 c1) but none holds a builder: no areas listed, 0 / 0.
    assert score(tmp_path, {"rows": ["R Y/B B . #"]}) == {"areas": [], "total": [0, 0]}
    assert score(tmp_path, {"rows": [], "builders": {}, "glass": [], "altars": []}) == {"areas": [], "total": [0, 0]}


def test_ruleset_defaults_to_portal2022_and_classic_scores_the_same(tmp_path: Path) -> None:
    # Red a1 b1: P1 Strongman vs P2 builder, 1-1 -> P1 by Strongman: 2 tiles; P2 1.
    pos: dict[str, Any] = {"rows": ["R R . . ."],
                           "builders": {"a1": {"player": 1, "rank": "strongman"}, "b1": {"player": 2}}}
    assert score(tmp_path, pos)["total"] == [2, 1]
    assert score(tmp_path, {**pos, "ruleset": "classic"})["total"] == [2, 1]
    assert score(tmp_path, {**pos, "ruleset": "portal2022"})["total"] == [2, 1]


# --- D13: Strongmen on a tie ---------------------------------------------------------

def test_D13_lone_strongman_breaks_a_tie(tmp_path: Path) -> None:
    # Red a1 b1: strength 1-1, only P1 has a Strongman -> P1: 2 tiles; P2 1 builder -> 1.
    report = score(tmp_path, {"rows": ["R R . . ."],
                              "builders": {"a1": {"player": 2}, "b1": {"player": 1, "rank": "strongman"}}})
    assert report["areas"] == [area("R", ["a1", "b1"], [1, 1], 1, [2, 1])]


def test_D13_opposing_strongmen_cancel(tmp_path: Path) -> None:
    # Red a1 b1: 1-1 and each player has a Strongman -> they cancel: tie, 0 / 0.
    report = score(tmp_path, {"rows": ["R R . . ."],
                              "builders": {"a1": {"player": 1, "rank": "strongman"},
                                           "b1": {"player": 2, "rank": "strongman"}}})
    assert report["areas"] == [area("R", ["a1", "b1"], [1, 1], None, [0, 0])]
    assert report["total"] == [0, 0]


def test_D13_two_strongmen_of_one_player_do_not_cancel(tmp_path: Path) -> None:
    # Red a1 b1 c1: P1 two Strongmen (1 + 1 = 2) vs P2 Mason (2): tie on strength, only
    # P1 has Strongmen -> P1: 3 tiles; P2's Mason counts 1 -> 1.
    report = score(tmp_path, {"rows": ["R R R . ."],
                              "builders": {"a1": {"player": 1, "rank": "strongman"},
                                           "b1": {"player": 1, "rank": "strongman"},
                                           "c1": {"player": 2, "rank": "mason"}}})
    assert report["areas"] == [area("R", ["a1", "b1", "c1"], [2, 2], 1, [3, 1])]


def test_D13_strongmen_on_both_sides_cancel_whatever_their_number(tmp_path: Path) -> None:
    # Red a1..d1: P1 two Strongmen (2) vs P2 Strongman + builder (2): both players have
    # a Strongman, so nobody breaks the tie -> 0 / 0.
    report = score(tmp_path, {"rows": ["R R R R ."],
                              "builders": {"a1": {"player": 1, "rank": "strongman"},
                                           "b1": {"player": 1, "rank": "strongman"},
                                           "c1": {"player": 2, "rank": "strongman"},
                                           "d1": {"player": 2}}})
    assert report["areas"] == [area("R", ["a1", "b1", "c1", "d1"], [2, 2], None, [0, 0])]


def test_D13_strongman_does_not_beat_more_strength(tmp_path: Path) -> None:
    # Red a1 b1: P1 Strongman (1) vs P2 Mason (2) -> P2 by strength: 2 tiles; P1 1.
    report = score(tmp_path, {"rows": ["R R . . ."],
                              "builders": {"a1": {"player": 1, "rank": "strongman"},
                                           "b1": {"player": 2, "rank": "mason"}}})
    assert report["areas"] == [area("R", ["a1", "b1"], [1, 2], 2, [1, 2])]


# --- D24: the Jester's extra colour ------------------------------------------------------

def test_D24_jester_colour_joins_two_areas(tmp_path: Path) -> None:
    # Row 1: R G R.  P1's Jester on the green b1 takes red: red a1 b1 c1 is one area of 3.
    # Red: P1 alone -> 3.  Green: b1 is a lone printed green tile -> an area of 1: P1 1.
    # Totals 4 / 0.  (Without the Jester, red a1 and red c1 would be apart and empty.)
    report = score(tmp_path, {"rows": ["R G R . ."],
                              "builders": {"b1": {"player": 1, "rank": "jester", "color": "R"}}})
    assert report == {
        "areas": [
            area("G", ["b1"], [1, 0], 1, [1, 0]),
            area("R", ["a1", "b1", "c1"], [1, 0], 1, [3, 0]),
        ],
        "total": [4, 0],
    }


def test_D24_jester_tile_may_touch_a_wild_tile(tmp_path: Path) -> None:
    # Row 1: a1=Y/B b1=R.  P2's Jester on b1 takes blue: blue a1 b1 (2 tiles) -> P2 2.
    # Red b1 is a lone printed red tile -> P2 1.  Yellow a1 is a lone wild: none (D12).
    report = score(tmp_path, {"rows": ["Y/B R . . ."],
                              "builders": {"b1": {"player": 2, "rank": "jester", "color": "B"}}})
    assert report == {
        "areas": [
            area("B", ["a1", "b1"], [0, 1], 2, [0, 2]),
            area("R", ["b1"], [0, 1], 2, [0, 1]),
        ],
        "total": [0, 3],
    }


def test_D24_jester_colours_shown_in_the_table(tmp_path: Path) -> None:
    out = table(tmp_path, {"rows": ["R G R . ."],
                           "builders": {"b1": {"player": 1, "rank": "jester", "color": "R"}}})
    assert re.search(r"b1\s*=\s*R", out)


# --- D12 and D14 ---------------------------------------------------------------------

def test_D12_lone_wild_tile_makes_no_area(tmp_path: Path) -> None:
    # a1 Y/B alone, with a builder: neither yellow nor blue is an area -> nothing.
    assert score(tmp_path, {"rows": ["Y/B . . . ."], "builders": {"a1": {"player": 1}}}) == \
        {"areas": [], "total": [0, 0]}
    # Next to a red tile it links nothing across colours: still nothing for a1.
    assert score(tmp_path, {"rows": ["Y/B R . . ."], "builders": {"a1": {"player": 1}}}) == \
        {"areas": [], "total": [0, 0]}


def test_D12_lone_jester_colour_makes_no_area(tmp_path: Path) -> None:
    # Row 1: R G R.  The Jester on b1 takes yellow, which no neighbour has: yellow b1 is
    # alone and not its printed colour -> no area.  Red a1 and c1 stay apart, without
    # builders.  Only green b1 (printed, lone) scores: P1 1.
    report = score(tmp_path, {"rows": ["R G R . ."],
                              "builders": {"b1": {"player": 1, "rank": "jester", "color": "Y"}}})
    assert report == {"areas": [area("G", ["b1"], [1, 0], 1, [1, 0])], "total": [1, 0]}


def test_D12_group_of_only_wild_and_jester_tiles_is_an_area(tmp_path: Path) -> None:
    # a1=Y/B, b1=R with P1's Jester taking yellow: yellow a1 b1 is a group of two, an
    # area although neither tile is printed yellow.  P1 builder a1 + Jester b1 = 2 -> 2.
    # Red b1 (lone printed) -> P1 1.  Blue a1 lone wild -> none.  Totals 3 / 0.
    report = score(tmp_path, {"rows": ["Y/B R . . ."],
                              "builders": {"a1": {"player": 1},
                                           "b1": {"player": 1, "rank": "jester", "color": "Y"}}})
    assert report == {
        "areas": [area("R", ["b1"], [1, 0], 1, [1, 0]), area("Y", ["a1", "b1"], [2, 0], 1, [2, 0])],
        "total": [3, 0],
    }


def test_D14_glass_on_a_wild_tile_counts_in_both_areas(tmp_path: Path) -> None:
    # Row 1: a1=Y b1=Y/B c1=B, glass on b1.  Yellow a1 b1: P1 alone -> 2 + 2 = 4.
    # Blue b1 c1: P2 alone -> 2 + 2 = 4.
    pos: dict[str, Any] = {"rows": ["Y Y/B B . ."], "builders": {"a1": {"player": 1}, "c1": {"player": 2}},
                           "glass": ["b1"]}
    assert score(tmp_path, pos) == {
        "areas": [area("B", ["b1", "c1"], [0, 1], 2, [0, 4]), area("Y", ["a1", "b1"], [1, 0], 1, [4, 0])],
        "total": [4, 4],
    }
    # On an altar the glass is worth 4 in each: 2 + 4 = 6 per area.
    assert score(tmp_path, {**pos, "altars": ["b1"]})["total"] == [6, 6]


def test_glass_is_added_after_the_architect_doubling_and_altar_makes_it_4(tmp_path: Path) -> None:
    # Red a1 b1 c1: P1 Architect alone.  Glass on a1 (altar) and c1 (no altar).
    # 3 tiles x 2 = 6, + 4 (glass on altar) + 2 (glass) = 12.  An altar without glass adds 0.
    report = score(tmp_path, {"rows": ["R R R . ."],
                              "builders": {"b1": {"player": 1, "rank": "architect"}},
                              "glass": ["a1", "c1"], "altars": ["a1", "b1"]})
    assert report["areas"] == [area("R", ["a1", "b1", "c1"], [1, 0], 1, [12, 0])]


# --- the table -----------------------------------------------------------------------

def test_table_fits_80_columns_and_reads_without_colour(tmp_path: Path) -> None:
    out = table(tmp_path, WORKED_EXAMPLE)
    assert "\x1b" not in out
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert "blue" in out and "yellow" in out and "Architect" in out
    total = [line for line in lines if line.lstrip().lower().startswith("total")]
    assert len(total) == 1 and total[0].split()[-2:] == ["5", "10"]


def test_table_says_why_strongman_and_tie(tmp_path: Path) -> None:
    # Red a1 b1: P1 wins the 1-1 tie by Strongman.  Blue d1 e1: a 1-1 tie, nobody.
    out = table(tmp_path, {"rows": ["R R . B B"],
                           "builders": {"a1": {"player": 1, "rank": "strongman"}, "b1": {"player": 2},
                                        "d1": {"player": 1}, "e1": {"player": 2}}})
    assert "Strongman" in out
    assert "tie" in out


def test_table_of_a_builder_less_position(tmp_path: Path) -> None:
    out = table(tmp_path, {"rows": ["R R . . ."]})
    assert "total: player 1 0, player 2 0" in out


# --- bad input: exit 2, one line naming the problem and the cell -----------------------

ROW = ["R Y/B B . #"]  # a1=R b1=Y/B c1=B d1 empty e1 scaffolding

BAD: list[tuple[str, Any, tuple[str, ...], str]] = [
    # (id, position, cells the message must name (any one), a word it must contain)
    ("unknown-colour", {"rows": ["R X . . ."]}, ("b1",), "colour"),
    ("unknown-colour-lowercase", {"rows": ["r . . . ."]}, ("a1",), "colour"),
    ("wild-same-colour-twice", {"rows": ["Y/Y . . . ."]}, ("a1",), "colour"),
    ("three-colour-tile", {"rows": ["Y/B/R . . . ."]}, ("a1",), "colour"),
    ("unknown-rank", {"rows": ROW, "builders": {"a1": {"player": 1, "rank": "king"}}}, ("a1",), "rank"),
    ("rank-wrong-type", {"rows": ROW, "builders": {"a1": {"player": 1, "rank": 1}}}, ("a1",), "rank"),
    ("builder-on-empty", {"rows": ROW, "builders": {"d1": {"player": 1}}}, ("d1",), "empty"),
    ("builder-beyond-rows", {"rows": ROW, "builders": {"a7": {"player": 1}}}, ("a7",), "empty"),
    ("builder-on-scaffolding", {"rows": ROW, "builders": {"e1": {"player": 2}}}, ("e1",), "scaffolding"),
    ("wild-next-to-wild-row", {"rows": ["R Y/B R/G . ."]}, ("b1", "c1"), "wild"),
    ("wild-next-to-wild-column", {"rows": ["Y/B . . . .", "G/R . . . ."]}, ("a1", "a2"), "wild"),
    ("jester-without-colour", {"rows": ROW, "builders": {"c1": {"player": 2, "rank": "jester"}}}, ("c1",),
     "Jester"),
    ("jester-colour-on-its-tile", {"rows": ROW, "builders": {"b1": {"player": 2, "rank": "jester", "color": "B"}}},
     ("b1",), "Jester"),
    ("jester-unknown-colour", {"rows": ROW, "builders": {"c1": {"player": 2, "rank": "jester", "color": "P"}}},
     ("c1",), "colour"),
    ("jester-in-classic", {"ruleset": "classic", "rows": ROW,
                           "builders": {"c1": {"player": 2, "rank": "jester", "color": "G"}}}, ("c1",), "classic"),
    ("colour-on-non-jester", {"rows": ROW, "builders": {"a1": {"player": 1, "rank": "mason", "color": "G"}}},
     ("a1",), "Jester"),
    ("colour-on-plain-builder", {"rows": ROW, "builders": {"a1": {"player": 1, "color": "G"}}}, ("a1",), "Jester"),
    ("unknown-builder-field", {"rows": ROW, "builders": {"a1": {"player": 1, "hat": "red"}}}, ("a1",), "field"),
    ("player-0", {"rows": ROW, "builders": {"a1": {"player": 0}}}, ("a1",), "player"),
    ("player-3", {"rows": ROW, "builders": {"a1": {"player": 3}}}, ("a1",), "player"),
    ("player-missing", {"rows": ROW, "builders": {"a1": {}}}, ("a1",), "player"),
    ("player-string", {"rows": ROW, "builders": {"a1": {"player": "1"}}}, ("a1",), "player"),
    ("player-true", {"rows": ROW, "builders": {"a1": {"player": True}}}, ("a1",), "player"),
    ("player-float", {"rows": ROW, "builders": {"a1": {"player": 1.0}}}, ("a1",), "player"),
    ("builder-not-object", {"rows": ROW, "builders": {"a1": 1}}, ("a1",), "builder"),
    ("bad-cell-column", {"rows": ROW, "builders": {"f1": {"player": 1}}}, ("f1",), "cell"),
    ("bad-cell-row-0", {"rows": ROW, "builders": {"a0": {"player": 1}}}, ("a0",), "cell"),
    ("bad-cell-leading-zero", {"rows": ROW, "builders": {"a01": {"player": 1}}}, ("a01",), "cell"),
    ("bad-cell-uppercase", {"rows": ROW, "builders": {"A1": {"player": 1}}}, ("A1",), "cell"),
    ("bad-cell-no-row", {"rows": ROW, "glass": ["a"]}, (), '"a": not a cell'),
    ("bad-cell-unicode-digit", {"rows": ROW, "glass": ["a\u0661"]}, (), '"a\\u0661": not a cell'),
    ("glass-on-empty", {"rows": ROW, "glass": ["d1"]}, ("d1",), "empty"),
    ("glass-on-scaffolding", {"rows": ROW, "glass": ["e1"]}, ("e1",), "scaffolding"),
    ("two-glass-on-one-cell", {"rows": ROW, "glass": ["c1", "a1", "c1"]}, ("c1",), "glass"),
    ("altar-on-empty", {"rows": ROW, "altars": ["d1"]}, ("d1",), "empty"),
    ("altar-on-scaffolding", {"rows": ROW, "altars": ["e1"]}, ("e1",), "scaffolding"),
    ("two-altars-on-one-cell", {"rows": ROW, "altars": ["b1", "b1"]}, ("b1",), "altar"),
    ("altar-in-classic", {"ruleset": "classic", "rows": ROW, "altars": ["c1"]}, ("c1",), "festum"),
    ("row-of-four", {"rows": ["R . . ."]}, ("row 1",), "5"),
    ("row-of-six", {"rows": ["R . . . .", "R . . . . ."]}, ("row 2",), "5"),
    ("row-not-string", {"rows": ["R . . . .", ["R", ".", ".", ".", "."]]}, ("row 2",), "string"),
    ("rows-not-list", {"rows": "R . . . ."}, (), "rows"),
    ("rows-missing", {"builders": {}}, (), "rows"),
    ("builders-not-object", {"rows": ROW, "builders": [["a1", 1]]}, (), "builders"),
    ("glass-not-list", {"rows": ROW, "glass": "a1"}, (), "glass"),
    ("glass-entry-not-string", {"rows": ROW, "glass": [1]}, (), "glass"),
    ("altars-not-list", {"rows": ROW, "altars": {"a1": True}}, (), "altars"),
    ("unknown-field", {"rows": ROW, "scores": [1, 2]}, (), "scores"),
    ("unknown-ruleset", {"ruleset": "2010", "rows": ROW}, (), "ruleset"),
    ("ruleset-not-string", {"ruleset": 2022, "rows": ROW}, (), "ruleset"),
    ("top-level-array", [ROW], (), "object"),
    ("top-level-null", None, (), "object"),
]


@pytest.mark.parametrize(("position", "cells", "word"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_position_exits_2_with_one_line(tmp_path: Path, position: Any, cells: tuple[str, ...],
                                            word: str) -> None:
    line = rejected(tmp_path, position)
    if cells:
        assert names(line, *cells), line
    assert word.lower() in line.lower(), line


BAD_TEXT: list[tuple[str, str | bytes, str]] = [
    ("truncated-json", '{"rows": ["R . . . ."]', "JSON"),
    ("trailing-comma", '{"rows": ["R . . . ."],}', "JSON"),
    ("not-json", "rows: [R . . . .]", "JSON"),
    ("empty-file", "", "JSON"),
    ("nan", '{"rows": [], "builders": {"a1": {"player": NaN}}}', "JSON"),
    ("deep-nesting", "[" * 100_000 + "]" * 100_000, "JSON"),
    ("huge-number", '{"rows": [], "x": ' + "9" * 5000 + "}", "JSON"),
    ("duplicate-builder-key", '{"rows": ["R . . . ."], "builders": {"a1": {"player": 1}, "a1": {"player": 2}}}',
     "a1"),
    ("duplicate-field", '{"rows": [], "rows": []}', "rows"),
    ("over-1-MiB", '{"rows": []}' + " " * (1 << 20), "MiB"),
]


@pytest.mark.parametrize(("text", "word"), [b[1:] for b in BAD_TEXT], ids=[b[0] for b in BAD_TEXT])
def test_bad_text_exits_2_with_one_line(tmp_path: Path, text: str | bytes, word: str) -> None:
    line = rejected(tmp_path, text)
    assert word.lower() in line.lower(), line


def test_exactly_1_MiB_is_accepted(tmp_path: Path) -> None:
    text = '{"rows": []}'
    text += " " * ((1 << 20) - len(text))
    assert score(tmp_path, text) == {"areas": [], "total": [0, 0]}


def test_missing_file_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["rules", "score", str(tmp_path / "nope.json")])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "cannot read" in result.stderr


def test_file_not_utf_8_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["rules", "score", str(write(tmp_path, b'{"rows": ["R . . . \xff"]}'))])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "cannot read" in result.stderr


def test_long_cli_message_stays_on_one_line(tmp_path: Path) -> None:
    # A message longer than 80 columns (the path alone is) must not be word-wrapped.
    deep = tmp_path / ("d" * 60)
    deep.mkdir()
    result = runner.invoke(app, ["rules", "score", str(write(deep, b'\xff'))])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1, result.stderr


# --- through a real process ----------------------------------------------------------

def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "basilica_p2p.cli", *args], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=60)


def test_subprocess_bad_position_exits_2_with_one_line_on_stderr(tmp_path: Path) -> None:
    path = write(tmp_path, {"rows": ROW, "builders": {"d1": {"player": 1}}})
    proc = run_cli("rules", "score", str(path))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == ["error: d1: builder on an empty cell"]


def test_subprocess_malformed_json_exits_2(tmp_path: Path) -> None:
    proc = run_cli("rules", "score", str(write(tmp_path, "{")), "--json")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and "JSON" in proc.stderr


def test_subprocess_worked_example_json(tmp_path: Path) -> None:
    proc = run_cli("rules", "score", str(write(tmp_path, WORKED_EXAMPLE)), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["total"] == [5, 10]


# --- any input at all: a PositionError or a position, nothing else ------------------------

def assert_short_line(message: str) -> None:
    # With cli.fail's "error: " prefix, every message fits one 80-column line.
    assert message and "\n" not in message
    assert len(message) <= 73, message


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 5) | st.floats(allow_nan=False)
    | st.sampled_from(["a1", "b1", "c2", "e9", "f1", "R", "Y/B", "#", ".", "jester", "mason", "classic",
                       "R . . . .", "Y/B B . # R", "player", "rank", "color"]) | st.text(max_size=60),
    lambda inner: st.lists(inner, max_size=6)
    | st.dictionaries(st.sampled_from(["rows", "builders", "glass", "altars", "ruleset", "player", "rank", "color",
                                       "a1", "b1", "c1"]) | st.text(max_size=60), inner, max_size=5),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_any_json_value_raises_only_position_error(value: Any) -> None:
    try:
        load_position(json.dumps(value))
    except PositionError as e:
        assert_short_line(str(e))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_text_raises_only_position_error(text: str) -> None:
    try:
        load_position(text)
    except PositionError as e:
        assert_short_line(str(e))


CELLS = [f"{c}{r}" for c in "abcde" for r in range(1, 5)]
builder_specs = st.fixed_dictionaries(
    {"player": st.sampled_from([1, 2, 1, 2, 3])},
    optional={"rank": st.sampled_from(["architect", "mason", "strongman", "jester", "jester", "pope"]),
              "color": st.sampled_from(["Y", "B", "R", "G", "Y/B"])},
)
positions = st.fixed_dictionaries(
    {"rows": st.lists(st.lists(st.sampled_from([".", "#", "Y", "B", "R", "G", "Y/B", "R/G", "B/G", "."]),
                               min_size=5, max_size=5).map(" ".join), max_size=4)},
    optional={"ruleset": st.sampled_from(["portal2022", "classic"]),
              "builders": st.dictionaries(st.sampled_from(CELLS), builder_specs, max_size=8),
              "glass": st.lists(st.sampled_from(CELLS), max_size=3),
              "altars": st.lists(st.sampled_from(CELLS), max_size=3)},
)


@settings(max_examples=300, deadline=None)
@given(positions)
def test_any_near_valid_position_scores_or_raises_position_error(position: dict[str, Any]) -> None:
    try:
        pos = load_position(json.dumps(position))
    except PositionError as e:
        assert_short_line(str(e))
        return
    result = score_position(pos)
    report = report_json(result)
    # The totals are the sum of the areas, and each listed area holds a builder.
    assert report["total"] == [sum(a["points"][p] for a in report["areas"]) for p in (0, 1)]
    assert all(sum(a["strength"]) > 0 for a in report["areas"])
