"""Every command's --help at 80 columns (and at 120): lines break only where they are full, and no word,
default or placeholder is cut short."""

from __future__ import annotations

import inspect
from collections import Counter

import pytest
import typer
from typer.testing import CliRunner

from basilica_p2p.cli import app

runner = CliRunner()
WIDTHS = (80, 120)
NAMES = 5  # a table row that starts within this many columns names a new option, argument or command
NEW_ITEM = ("[default:", "[required]", "[env var:")  # typer starts these on a line of their own


def command_paths() -> list[list[str]]:
    """Every command path, groups included: [], ["join"], ["id"], ["id", "new"], ..."""
    paths = []

    def walk(cmd, path):  # type: ignore[no-untyped-def]
        paths.append(path)
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return paths


def help_text(path: list[str], columns: int) -> str:
    r = runner.invoke(app, [*path, "--help"], env={"COLUMNS": str(columns), "BASILICA_HOME": None})
    assert r.exit_code == 0, r.output
    return r.output


def indent(row: str) -> int:
    return len(row) - len(row.lstrip())


def tables(text: str) -> list[tuple[list[str], int]]:
    """Each boxed panel's rows (inside the box), with the column where its help text starts."""
    panels: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.startswith("╰"):
            panels.append([])
        elif line.startswith("│"):
            panels[-1].append(line[1:-1])
    out = []
    for panel in panels:
        # A row's names (and a required mark) start within its first columns; a continuation further in,
        # most often at the help column.
        continuations = [indent(r) for r in panel if r.strip() and indent(r) > NAMES]
        if continuations:
            out.append((panel, Counter(continuations).most_common(1)[0][0]))
    return out


def needless_breaks(text: str, columns: int) -> list[str]:
    """Pairs of lines of one paragraph or table cell where the next line's first word would have fit
    on the line before: a break put there by hand, not by wrapping."""
    found = []
    free = [line for line in text.splitlines() if not line.startswith(("│", "╭", "╰"))]
    for a, b in zip(free, free[1:]):  # the description, padded by one column on each side
        if a.strip() and b.strip() and not b.strip().startswith("Usage:") and not a.strip().startswith("Usage:"):
            if len(a.rstrip()) + 1 + len(b.split()[0]) <= columns - 1:
                found.append(f"{a.rstrip()!r} / {b.strip()!r}")
    for panel, x in tables(text):
        width = len(panel[0]) - x - 1
        for a, b in zip(panel, panel[1:]):
            nxt = b[x:].strip()
            if indent(b) <= NAMES or not nxt or nxt.startswith(NEW_ITEM) or not a[x:].strip():
                continue
            if len(a[x:].rstrip()) + 1 + len(nxt.split()[0]) <= width:
                found.append(f"{a[x:].rstrip()!r} / {nxt!r}")
    return found


def folded_types(text: str) -> list[str]:
    """Option types or placeholders cut mid-word at the end of their column, the rest on the next row
    (``[sra-p256-v1|commit-re`` / ``veal-v1]``)."""
    found = []
    for panel, x in tables(text):
        for a, b in zip(panel, panel[1:]):
            start = indent(b)
            if NAMES < start < x:  # the type column goes on in this row
                cell = a[start:x - 2]
                if cell.rstrip() == cell and cell[-1:] not in ("", " "):  # filled to its last column
                    found.append(f"{cell!r} / {b[start:x].strip()!r}")
    return found


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(p) or "basilica")
def test_help_lines_break_only_where_they_are_full(path: list[str], columns: int) -> None:
    assert needless_breaks(help_text(path, columns), columns) == []


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(p) or "basilica")
def test_help_cuts_no_word_or_default_short(path: list[str], columns: int) -> None:
    text = help_text(path, columns)
    assert [line for line in text.splitlines() if "…" in line] == []
    assert folded_types(text) == []


def test_no_command_help_has_a_line_break_inside_a_paragraph() -> None:
    """typer keeps a docstring's line breaks after its first paragraph: a paragraph is one line."""
    root = typer.main.get_command(app)
    broken = []

    def walk(cmd, path):  # type: ignore[no-untyped-def]
        for paragraph in inspect.cleandoc(cmd.help or "").split("\n\n"):
            if "\n" in paragraph:
                broken.append((" ".join(path), paragraph))
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, [*path, name])

    walk(root, [])
    assert broken == []
