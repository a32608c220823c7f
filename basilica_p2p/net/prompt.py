"""A person at a plain terminal prompt (the full terminal client comes later).

It shows the board and the numbered legal actions and reads one line:
an action in notation or its number.
"""

from __future__ import annotations

import sys
from typing import TextIO

from ..engine import Action, NotationError, Observation, format_action, parse_action
from ..engine.cells import format_cell
from ..engine.components import format_colors


class PromptPlayer:
    name = "you"
    blocking = True  # waits for a person: asked in a worker thread, never ahead of time

    def __init__(self, out: TextIO = sys.stdout, inp: TextIO = sys.stdin) -> None:
        self.out = out
        self.inp = inp

    def choose(self, obs: Observation, legal: list[Action]) -> Action:
        o = self.out
        o.write(f"\nturn {obs.turn}, action {obs.actions_taken + 1} of 3; scores {obs.scores[0]}-{obs.scores[1]}, "
                f"coins {obs.coins[0]}/{obs.coins[1]}\n")
        o.write("cathedral: " + (" ".join(f"{format_cell(c)}={format_colors(f.colors)}{'^' if f.crown else ''}"
                                         for c, f in obs.vaults) or "empty") + "\n")
        o.write("builders: " + (" ".join(f"{format_cell(c)}:P{p + 1}" for c, p, _ in obs.builders) or "none") + "\n")
        o.write("market: " + "  ".join(f"O{k + 1} {f.order.value.lower()}" for k, f in enumerate(obs.orders) if f)
                + " | " + "  ".join(f"V{k + 1} {format_colors(f.colors)}{'^' if f.crown else ''}"
                                    for k, f in enumerate(obs.market) if f) + "\n")
        for i, a in enumerate(legal, start=1):
            o.write(f"  {i:>3}. {format_action(a)}\n")
        while True:
            o.write("your action (notation or number): ")
            o.flush()
            line = self.inp.readline()
            if not line:
                raise EOFError("no more input")
            text = line.strip()
            if text.isdigit() and 1 <= int(text) <= len(legal):
                return legal[int(text) - 1]
            try:
                action = parse_action(text)
            except NotationError as e:
                o.write(f"{e}\n")
                continue
            if action in legal:
                return action
            o.write("that is not legal now\n")
