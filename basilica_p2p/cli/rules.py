"""``basilica rules``: work with the rules without playing."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

from ..engine import EngineError
from ._common import fail, read_input


rules_app = typer.Typer(help="Work with the rules: score a written cathedral position.", no_args_is_help=True)


@rules_app.command("score")
def rules_score(
    position: Path = typer.Argument(..., help="A cathedral position as JSON (format in docs/notation.md); - for stdin."),
    as_json: bool = typer.Option(False, "--json", metavar="", help="Print the breakdown as JSON instead of a table."),
) -> None:
    """Score a written cathedral position: every area with a builder, and the totals.

    Bad input exits with status 2 and one line naming the problem and the cell.
    """
    from ..position import load_position, render_table, report_json, score_position

    text = read_input(position, "position")
    try:
        pos = load_position(text)
        result = score_position(pos)
    except EngineError as e:
        raise fail(str(e)) from None
    if as_json:
        typer.echo(json.dumps(report_json(result)))
    else:
        render_table(result, Console(highlight=False))
