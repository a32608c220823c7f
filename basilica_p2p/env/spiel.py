"""Basilica as an OpenSpiel Python game: ``pyspiel.load_game("python_basilica")``.

Importing this module registers the game.  It is an imperfect-information
game with explicit chance: the engine's hidden deal (``Game.new_hidden``)
holds positions, not tiles, and whenever the rules turn a tile up (an order
face, or a vault face), the engine waits for that fact (``Game.needed_reveals``)
and a chance node supplies it.  So every draw is a chance outcome, drawn with the
probability the shuffle gives it, and no state holds a tile before the rules
show it.  The first player is the first chance outcome.

Player actions are the indices of :class:`~basilica_p2p.encoding.ActionTable`;
chance outcomes are numbered face classes first (``0 .. faces-1``, an order
face turned up), then tile ids (``faces + k``, the ``k``-th tile by id, a
vault face turned up); the first player is outcome 0 or 1.  The observation
tensor is :class:`~basilica_p2p.encoding.ObservationEncoder`'s; the
information-state tensor adds what a player remembers and the observation
no longer shows: the order faces that went into the D11 reshuffle.  The
information-state string is the public history (actions and revealed
faces and tiles), the other player's secret Jester colours left out (D24).

Parameters: ``ruleset`` ("portal2022" or "classic"), ``festum``,
``festum_removal``.  Returns at the end: +1 win, -1 loss, 0 shared victory.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

try:
    import pyspiel
    from open_spiel.python.algorithms import ismcts as _ismcts
except ImportError:  # pragma: no cover - exercised in a venv without the extra
    raise ImportError(
        "basilica_p2p.env.spiel needs OpenSpiel from the [rl] extra: pip install 'basilica-p2p[rl]'"
    ) from None

from ..engine import (REVEAL, FaceClass, Game, Level, Observation, Reveal, TileSpec, default_manifest, format_action,
                      format_colors, observe)
from ._core import Setting
from ..encoding import ActionTable, ObservationEncoder, jester_cells

SHORT_NAME = "python_basilica"
MAX_GAME_LENGTH = 1000  # player decisions and chance outcomes; games here take about 200

_PARAMS: dict[str, Any] = {"ruleset": "portal2022", "festum": False, "festum_removal": False}
_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Basilica (basilica-p2p engine)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_PARAMS,
)


class BasilicaGame(pyspiel.Game):
    """The game: its fixed tables, shared by all its states."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        p = {**_PARAMS, **(params or {})}
        self.setting = Setting(str(p["ruleset"]), bool(p["festum"]), bool(p["festum_removal"]))
        self.manifest = default_manifest()
        self.options = self.setting.options  # checks the combination (festum needs portal2022)
        self.table = ActionTable(jesters=max(1, self.manifest.promotion_tokens))
        self.encoder = ObservationEncoder(self.manifest)
        shown = self.manifest.order_faces_show_crown
        tiles = [*self.manifest.tiles, *(self.manifest.festum_tiles if self.options.festum else ())]
        self.tiles = sorted(tiles, key=lambda t: t.id)
        self.faces = sorted({t.face_class(shown) for t in self.tiles}, key=lambda f: f.to_list())
        self.face_index = {f: i for i, f in enumerate(self.faces)}
        self.tile_index = {t.id: i for i, t in enumerate(self.tiles)}
        info = pyspiel.GameInfo(
            num_distinct_actions=self.table.size,
            max_chance_outcomes=len(self.faces) + len(self.tiles),
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=MAX_GAME_LENGTH,
        )
        super().__init__(_GAME_TYPE, info, p)

    def __deepcopy__(self, memo: dict[int, Any]) -> BasilicaGame:
        # pyspiel clones a state by deep-copying its attributes; the game never changes.
        return self

    def new_initial_state(self) -> BasilicaState:
        return BasilicaState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> BasilicaObserver:
        if params:
            raise ValueError(f"observation parameters are not supported: {params}")
        perfect_recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        return BasilicaObserver(self, perfect_recall)


class _Engine:
    """Holds the engine game so that copying a state copies it with ``Game.clone`` (cheap),
    not attribute by attribute down to the manifest."""

    __slots__ = ("game",)

    def __init__(self, game: Game | None) -> None:
        self.game = game

    def __deepcopy__(self, memo: dict[int, Any]) -> _Engine:
        return _Engine(None if self.game is None else self.game.clone())


class BasilicaState(pyspiel.State):
    """A hidden-deal engine game, with the action waiting for its reveals if there is one."""

    def __init__(self, game: BasilicaGame) -> None:
        super().__init__(game)
        self._bg = game
        self._engine = _Engine(None)  # no game until the first player is drawn
        # In a secret Jester round, after the first choice: the game before it, and who chose (D24).
        self._secret: tuple[_Engine, int] | None = None
        # Public events in order, (history length, text): the reveals between actions.
        self.reveals: list[tuple[int, str]] = []

    @property
    def engine(self) -> Game | None:
        return self._engine.game

    @property
    def _due(self) -> tuple[Reveal, ...]:
        """The facts the game waits for (the tiles the last action turned up): chance's to give."""
        g = self._engine.game
        return g.needed_reveals() if g is not None else ()

    # --- the pyspiel API ---------------------------------------------------

    def current_player(self) -> int:
        g = self.engine
        if g is None or self._due:
            return int(pyspiel.PlayerId.CHANCE)
        if g.over:
            return int(pyspiel.PlayerId.TERMINAL)
        assert g.to_move is not None
        return g.to_move

    def _legal_actions(self, player: int) -> list[int]:
        g = self.engine
        if g is None or g.over or player != g.to_move:
            return []
        idx, _ = self._bg.table.indices(g.legal_actions())
        return sorted(idx)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.engine is None:
            return [(0, 0.5), (1, 0.5)]
        return self._distribution(self._due[0])

    def _apply_action(self, action: int) -> None:
        g = self.engine
        if g is None:
            self._engine.game = Game.new_hidden(self._bg.manifest, self._bg.options, int(action))
            self.reveals.append((0, f"player {int(action) + 1} begins"))
        elif self._due:
            self._reveal(self._due[0], int(action))
        else:
            act = self._decode(int(action))
            mover = g.to_move
            self._secret = (_Engine(g.clone()), mover) if g.secret_jester_round() and mover is not None else None
            g.apply(act)

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> BasilicaState:
        """A state ``player_id`` cannot tell from this one (for OpenSpiel's ISMCTS).

        The engine's hidden deal holds no tile before the rules show it, so the
        only fact one player has and the other lacks is a secret Jester choice
        made first (D24): it is drawn again, uniformly among that player's options.
        (The copy's pyspiel history still lists the real choice.)
        """
        other: BasilicaState = self.clone()
        g = self.engine
        if g is None or self._secret is None or g.over:
            return other
        before, chooser = self._secret
        if chooser == player_id or g.pending.kind != "jester" or chooser not in g.jester_choices:
            return other
        engine = before.game
        assert engine is not None
        engine = engine.clone()
        options = engine.legal_actions()
        engine.apply(options[min(int(probability_sampler() * len(options)), len(options) - 1)])
        other._engine = _Engine(engine)
        return other

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return self._outcome_text(int(action))
        try:
            return format_action(self._decode(int(action)))
        except ValueError:
            return f"action {action}"

    def is_terminal(self) -> bool:
        return self.engine is not None and self.engine.over and not self._due

    def returns(self) -> list[float]:
        g = self.engine
        if g is None or not g.over or g.winner() is None:
            return [0.0, 0.0]
        return [1.0, -1.0] if g.winner() == 0 else [-1.0, 1.0]

    def __str__(self) -> str:
        g = self.engine
        return "no first player yet" if g is None else repr(g)

    # --- actions and chance ------------------------------------------------

    def _decode(self, index: int) -> Any:
        g = self.engine
        assert g is not None and g.to_move is not None
        cells = jester_cells(((c, p, r) for c, (p, r) in g.builders.items()), g.to_move)
        return self._bg.table.action(index, cells)

    def _outcome_text(self, outcome: int) -> str:
        bg = self._bg
        if self.engine is None:
            return f"player {outcome + 1} begins"
        if outcome < len(bg.faces):
            f = bg.faces[outcome]
            return f"order face {f.order.value} {format_colors(f.colors)}{' paid' if f.paid else ''}"
        return f"tile {bg.tiles[outcome - len(bg.faces)].id}"

    def _reveal(self, r: Reveal, outcome: int) -> None:
        g = self.engine
        assert g is not None
        bg = self._bg
        fact: FaceClass | int
        if outcome < len(bg.faces):
            fact = bg.faces[outcome]
        else:
            fact = bg.tiles[outcome - len(bg.faces)].id
        g.reveal(r.position, fact)
        self.reveals.append((len(g.history), self._outcome_text(outcome)))

    def _distribution(self, r: Reveal) -> list[tuple[int, float]]:
        """The probability of each fact the shuffle can put at ``r``'s position.

        A deal is a uniform shuffle, so a slot whose face is unknown holds each
        face class in proportion to the copies of it no known slot of that deal
        accounts for; a slot's tile is, within its face class, one of the tiles
        known to be in that deal and not yet placed (each 1/n, n the slots of
        that class not yet identified), or else any tile of that class nobody
        has placed (sharing the rest equally).
        """
        g = self.engine
        assert g is not None
        bg = self._bg
        d = r.position.deal
        decks = g.decks
        shown = bg.manifest.order_faces_show_crown
        known = g.specs.get(r.position)
        face_of: dict[FaceClass, int] = {}  # how many slots of deal d have each face, and have each face identified
        ident_of: dict[FaceClass, int] = {}
        placed: set[int] = set()
        for p, k in g.specs.items():
            f = k if isinstance(k, FaceClass) else k.face_class(shown)
            if isinstance(k, TileSpec):
                placed.add(k.id)
            if p.deal == d:
                face_of[f] = face_of.get(f, 0) + 1
                if isinstance(k, TileSpec):
                    ident_of[f] = ident_of.get(f, 0) + 1

        def copies(f: FaceClass) -> int:
            # Tiles of a deal that went into a later one are counted there (as the engine does).
            return decks[d].copies(f) - sum(x.copies(f) for x in decks[d + 1:])

        if known is None:
            weights = {f: copies(f) - face_of.get(f, 0) for f in bg.faces}
        else:
            weights = {(known if isinstance(known, FaceClass) else known.face_class(shown)): 1}
        total = sum(w for w in weights.values() if w > 0)
        out: list[tuple[int, float]] = []
        if r.level is Level.FACE:
            return [(bg.face_index[f], w / total) for f, w in sorted(weights.items(), key=lambda x: bg.face_index[x[0]])
                    if w > 0]
        later_known = frozenset().union(*(x.known for x in decks))
        for f, w in weights.items():
            if w <= 0:
                continue
            tiles = [t.id for t in bg.tiles if t.face_class(shown) == f and t.id not in placed]
            mine = [t for t in tiles if t in decks[d].known]
            pool = [t for t in tiles if t not in later_known]
            n = copies(f) - ident_of.get(f, 0)
            p_face = w / total
            for t in mine:
                out.append((len(bg.faces) + bg.tile_index[t], p_face / n))
            if pool and n > len(mine):
                share = p_face * (n - len(mine)) / n / len(pool)
                out.extend((len(bg.faces) + bg.tile_index[t], share) for t in pool)
        out.sort()
        return out

    # --- what a player knows -----------------------------------------------

    def observation_of(self, player: int) -> Observation | None:
        g = self.engine
        if g is None or g.pending.kind == REVEAL:
            return None  # the tiles just turned up are not all known yet
        return observe(g, player)

    def history_text(self, player: int) -> str:
        """The public history as ``player`` knows it: actions in notation, reveals in words."""
        obs = self.observation_of(player)
        actions = [] if obs is None else [format_action(a) for a in obs.history]
        out: list[str] = []
        reveals = iter(self.reveals)
        nxt = next(reveals, None)
        for i in range(len(actions) + 1):
            while nxt is not None and nxt[0] <= i:
                out.append(nxt[1])
                nxt = next(reveals, None)
            if i < len(actions):
                out.append(actions[i])
        return " | ".join(out)


class BasilicaObserver:
    """OpenSpiel's observer: the encoder's tensor; with perfect recall, the reshuffle's faces too."""

    def __init__(self, game: BasilicaGame, perfect_recall: bool) -> None:
        self._game = game
        self._perfect_recall = perfect_recall
        size = game.encoder.size + (len(game.faces) if perfect_recall else 0)
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor[: game.encoder.size]}
        if perfect_recall:
            self.dict["reshuffled_faces"] = self.tensor[game.encoder.size:]

    def set_from(self, state: BasilicaState, player: int) -> None:
        self.tensor.fill(0)
        obs = state.observation_of(player)
        if obs is None:
            return
        self._game.encoder.encode_into(obs, self.dict["observation"])
        if self._perfect_recall and state.engine is not None and len(state.engine.decks) > 1:
            counts = self.dict["reshuffled_faces"]
            for f, n in state.engine.decks[1].faces:
                counts[self._game.face_index[f]] = n / 10

    def string_from(self, state: BasilicaState, player: int) -> str:
        obs = state.observation_of(player)
        if self._perfect_recall:
            return f"p{player + 1}: {state.history_text(player)}"
        if obs is None:
            return f"p{player + 1}: the setup is being dealt"
        return json.dumps(obs.describe(), sort_keys=True, separators=(",", ":"))


pyspiel.register_game(_GAME_TYPE, BasilicaGame)


class ISMCTSBot(_ismcts.ISMCTSBot):
    """OpenSpiel's Python ``ISMCTSBot``, with the ``restart_at`` that ``evaluate_bots`` calls before a
    game: the original has none (pyspiel's default raises "RestartAt(state) not implemented").
    Its search keeps nothing from one decision to the next, so a restart only forgets its tree."""

    def restart_at(self, state: pyspiel.State) -> None:
        self.reset()


__all__ = ["MAX_GAME_LENGTH", "SHORT_NAME", "BasilicaGame", "BasilicaObserver", "BasilicaState", "ISMCTSBot"]
