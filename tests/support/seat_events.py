"""Telling a person's agent a game the test plays on the engine, as a seat would (basilica_p2p.seat)."""

from basilica_p2p.seat import Told, ask_for, outcome_of

__all__ = ["Told", "ask_for", "outcome_of"]
