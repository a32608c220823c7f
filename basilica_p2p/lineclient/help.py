"""The game prompt's commands, shown by ``help`` (with the notation card of rules_help.py)."""

from __future__ import annotations

COMMANDS = """\
Type an action in notation (V2:b3, O1:c2=M, pass...) or its number in the list.
Tab completes an action; part of one (V2:) lists what it could be.
  list           every legal action, numbered
  board          draw the board again
  log            the latest moves, in words (log all: every move, a page at a
                 time; log N: from turn N)
  score          the breakdown of the last scoring
  scorings       every scoring so far (scoring N shows one, area by area)
  rules [TOPIC]  how something works: rules move, rules vault, rules scoring,
                 rules ranks, rules paid, rules jester, rules turn (the turn,
                 the market and the goal; rules alone lists all)
  clock          both clocks now (a game with --clock)
  undo           take back to your previous decision (a game against a bot
                 on this machine; the replay records it)
  say TEXT       chat to the other player (unwatch: send the watchers away)
  quit           leave the game (asks first: leaving is a forfeit)"""
