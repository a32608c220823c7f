#!/usr/bin/env python3
"""A Basilica bot that speaks the line protocol of protocol/BOTS.md on stdin/stdout.

It uses nothing but the Python standard library and does not import
basilica_p2p: any program in any language can do the same.  Play it with

    basilica match --p1 "cmd:python3 examples/line_bot.py" --p2 random --games 10
    basilica tournament --bots "cmd:python3 examples/line_bot.py,random,greedy" --games 10

It plays by a few rules of thumb, read from the legal actions and the JSON
state, with a little seeded randomness (the seed comes with ``newgame``):
put a builder on the tile it just placed, place vault tiles next to tiles of
the same colour (most of all next to its own builders), recruit and promote,
pay for paid options while it has coins to spare.
"""

from __future__ import annotations

import json
import random
import sys

COLUMNS = "abcde"


def reply(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()  # a pipe is block-buffered: every answer must be flushed


def log(text: str) -> None:
    sys.stderr.write(f"line_bot: {text}\n")  # stderr is for people; stdout only for the protocol


def neighbours(cell: str) -> list[str]:
    col, row = COLUMNS.index(cell[0]), int(cell[1:])
    out = []
    for dc, dr in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        c, r = col + dc, row + dr
        if 0 <= c < len(COLUMNS) and r >= 1:
            out.append(f"{COLUMNS[c]}{r}")
    return out


def value(action: str, state: dict, me: int) -> float:
    """How much this action appeals, by rules of thumb (higher is better)."""
    vaults = state.get("vaults", {})
    builders = state.get("builders", {})
    coins = state.get("coins", [0, 0])[me - 1]
    if action.startswith("B:"):
        return 5.0  # a builder on the tile just placed
    if action.startswith("V") and ":" in action:
        face = state["market"][int(action[1]) - 1] or {}
        colors = set(face.get("colors", "").split("/"))
        cell = action[3:]
        v = 0.5 if face.get("crown") else 0.0
        for n in neighbours(cell):
            there = vaults.get(n)
            if there and colors & set(there["colors"].split("/")):
                v += 1.0
                owner = builders.get(n)
                if owner and owner[0] == me:
                    v += 1.5
        return v
    if action.startswith("O"):
        order = (state["orders"][int(action[1]) - 1] or {}).get("order", "")
        return {"RECRUIT": 2.5, "PROMOTE": 2.0, "STAINED_GLASS": 1.5, "ALTAR": 1.0, "MOVE": 0.8}.get(order, 0.3)
    if action.startswith("$"):
        return 1.0 if coins > 1 else -1.0
    if action == "pass":
        return 0.0
    return 0.0  # second placements, CONFUSE moves, Jester colours: all alike


def choose(legal: list[str], state: dict, me: int, rng: random.Random) -> str:
    return max(legal, key=lambda a: value(a, state, me) + rng.random())


def main() -> int:
    rng = random.Random(0)
    me = 1
    state: dict = {}
    legal: list[str] = []
    for raw in sys.stdin:
        line = raw.rstrip("\r\n")
        word, _, rest = line.partition(" ")
        if word == "basilica-bot":
            if rest.split()[:1] != ["1"]:
                reply("error this bot speaks basilica-bot 1 only")
                return 1
            reply("ok basilica-bot 1 name=line-bot")
        elif word == "newgame":
            fields = dict(kv.split("=", 1) for kv in rest.split() if "=" in kv)
            me = int(fields.get("seat", "1"))
            rng = random.Random(int(fields.get("seed", "0")))
            reply("ready")
        elif word == "position":
            pass  # the action history, e.g. "position 3 V1:c1 B:c1 O2:c1": this bot does not need it
        elif word == "state":
            state = json.loads(rest)
        elif word == "legal":
            legal = rest.split()[1:]  # the first word is the count
        elif word == "go":
            reply("action " + choose(legal, state, me, rng))
        elif word == "gameover":
            pass  # e.g. "gameover winner=1 scores=31,24 end=last-scoring"
        elif word == "error":
            log(f"the engine says: {rest}")
        elif word == "quit":
            return 0
        # Anything else is from a newer protocol: ignored.
    return 0  # end of input: the game is over


if __name__ == "__main__":
    sys.exit(main())
