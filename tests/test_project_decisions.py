"""The project's own decisions P1-P9 (docs/rules.md), for cases RULES.md leaves open."""

from __future__ import annotations

from basilica_p2p.engine import Game, Options, Order, default_manifest, observe
from basilica_p2p.engine.game import AFTER_REDEAL, JESTER_COLORS, MAIN, PAID
from basilica_p2p.engine.observation import OrderFace, VaultFace
from basilica_p2p.engine.rng import FESTUM_REMOVAL as REMOVAL_LABEL, SHUFFLE
from basilica_p2p.match import play_game, record
from basilica_p2p.bots import RandomBot

from support.helpers import C, FESTUM, FESTUM_REMOVAL, SEED, Tiles, build, legal_strs, play, ref_below, ref_shuffle, ref_u64

M = default_manifest()


def test_P1_festum_crowns_in_base_proportion() -> None:
    base = sum(t.crown for t in M.tiles)
    festum = sum(t.crown for t in M.festum_tiles)
    assert festum == round(base * 8 / 58)
    # spread: at most one crown more in one colour than in another
    per_colour = [sum(t.crown for t in M.festum_tiles if t.colors == c) for c in (1, 2, 4, 8)]
    assert max(per_colour) - min(per_colour) <= 1


def test_P2_festum_removal_from_its_own_stream_before_dealing() -> None:
    g = Game.new(M, FESTUM_REMOVAL, SEED)
    order = ref_shuffle(sorted(t.id for t in M.tiles + M.festum_tiles), SEED, SHUFFLE)
    stream = ref_u64(SEED, REMOVAL_LABEL)
    removed = [order.pop(ref_below(stream, len(order))) for _ in range(6)]
    assert g.out == sorted(removed)
    assert g.orders == order[0:3] and g.market == order[3:6]
    assert g.stack[::-1] == order[6:]
    obs = observe(g, 0)
    assert obs.out_count == 6
    assert not any(isinstance(f, VaultFace) and f.tile in removed for f in obs.market)


def _all_wild_blocked() -> Game:
    t = Tiles()
    vaults = {"a1": t.take(wild=True, crown=False), "c1": t.take(wild=True, crown=False),
              "e1": t.take(wild=True, crown=False)}
    market = [t.take(wild=True, crown=False) for _ in range(3)]
    orders = [t.take(order=Order.SCAFFOLDING) for _ in range(3)]
    return build(t, vaults=vaults, market=market, orders=orders)


def test_P3_redeal_is_a_choice_next_to_orders() -> None:
    # Row 1 is W . W . W: every free cell touches a wild tile, and V1-V3 are wild.
    g = _all_wild_blocked()
    legal = legal_strs(g)
    assert "V*" in legal
    assert not any(s.startswith("V") and s != "V*" for s in legal)
    assert any(s.startswith("O1:") for s in legal)  # the player may execute an order instead
    play(g, "V*")
    assert g.pending.kind == AFTER_REDEAL or g.over


def test_P4_paid_recruit_judged_after_the_main_effect() -> None:
    t = Tiles()
    vaults = {"a1": t.plain(), "a2": t.plain(), "c1": t.plain()}
    recruit = t.take(order=Order.RECRUIT)
    orders = [recruit] + [t.take(order=Order.SCAFFOLDING) for _ in range(2)]
    g = build(t, vaults=vaults, builders={"a1": (1, "-")}, orders=orders)
    h = g.clone()
    # Recruiting on a2 takes the only free tile next to player 2's builder.
    play(g, "O1:a2")
    assert g.pending.kind == MAIN and g.coins == [1, 1]
    play(h, "O1:c1")
    assert h.pending.kind == PAID and h.pending.player == 1
    assert legal_strs(h) == ["pass", "$a2"]


def test_P5_player_on_turn_records_jester_colours_first_and_secretly() -> None:
    t = Tiles()
    crowned = t.take(crown=True, wild=False, colors="Y")
    g = build(t, vaults={"a1": t.take(colors="B", crown=False), "b1": t.take(colors="R", crown=False)},
              market=[crowned, t.plain(), t.plain()], builders={"a1": (0, "J"), "b1": (1, "J")},
              pawn=9, active=1)
    play(g, "V1:c1")
    assert g.pending.kind == JESTER_COLORS and g.pending.player == 1  # player 2 is on turn
    h = g.clone()
    play(g, "J:b1=G")
    play(h, "J:b1=Y")
    assert g.pending.player == 0 and h.pending.player == 0
    # What player 1 sees does not depend on player 2's secret choice.
    assert observe(g, 0) == observe(h, 0)
    assert observe(g, 0).other_jester_committed and observe(g, 0).my_jester_choice is None
    assert observe(g, 1).my_jester_choice == ((C("b1"), 8),)


def test_P6_cleanup_discards_rows_one_and_two_in_row_then_column_order() -> None:
    t = Tiles()
    ids = {k: t.plain() for k in ("b2", "a1", "c1", "a3")}
    crowned = t.take(crown=True, wild=False)
    g = build(t, vaults=dict(ids), market=[crowned, t.plain(), t.plain()], pawn=9,
              builders={"a3": (0, "-")})
    play(g, "V1:d1")
    assert g.scorings == 1
    assert g.discard[-4:] == [ids["a1"], ids["c1"], crowned, ids["b2"]]


def test_P7_altar_does_not_stop_move_off_or_onto_its_tile() -> None:
    t = Tiles(festum=True)
    move = t.take(order=Order.MOVE)
    g = build(t, options=FESTUM, vaults={"a1": t.plain(), "a2": t.plain(), "b2": t.plain()},
              builders={"a1": (0, "-")}, altars=["a1", "a2"],
              orders=[move, t.take(order=Order.SCAFFOLDING), t.take(order=Order.SCAFFOLDING)])
    legal = legal_strs(g)
    assert "O1:a1-a2" in legal  # off an altar tile, onto another altar tile


def test_P7_confuse_may_move_a_builder_onto_an_altar_tile() -> None:
    t = Tiles(festum=True)
    confuse = t.take(order=Order.CONFUSE)
    # Player 2's builder on b1 (no altar) can only go to a1, which has an altar.
    g = build(t, options=FESTUM, vaults={"a1": t.plain(), "b1": t.plain(), "d1": t.plain()},
              builders={"b1": (1, "-"), "d1": (0, "-")}, altars=["a1"], coins=(1, 0),
              orders=[confuse, t.take(order=Order.SCAFFOLDING), t.take(order=Order.SCAFFOLDING)])
    play(g, "O1:d1")  # player 2 has no coin: player 1 chooses the move at once (D27)
    assert legal_strs(g) == ["b1-a1"]
    play(g, "b1-a1")
    assert g.builders[C("a1")] == (1, 0)


def test_P8_turns_count_every_turn_begun() -> None:
    switches = 0
    last = [None]

    def watch(g: Game, turn: int, player: int, text: str, events: list) -> None:
        nonlocal switches
        if last[0] is not None and g.active != last[0] and not g.over:
            switches += 1
        last[0] = g.active

    g = Game.new(M, Options(), SEED)
    last[0] = g.active
    bots = (RandomBot(1), RandomBot(2))
    rng_game = play_game(M, Options(), SEED, bots, watch)
    assert record(1, SEED, rng_game).turns == switches + 1


def test_P9_vault_faces_show_ids_order_faces_never_do() -> None:
    g = Game.new(M, Options(), SEED)
    obs = observe(g, 0)
    assert [f.tile for f in obs.market] == g.market
    assert all(isinstance(f, OrderFace) and not hasattr(f, "tile") for f in obs.orders)
    assert all(f.crown is None for f in obs.orders)  # D18 with the default manifest
    assert isinstance(obs.stack_top, OrderFace)


# --- more cases RULES.md leaves open (docs/rules.md P10-P15) --------------------

def test_P10_the_game_ends_at_the_scoring_on_the_last_crown_space() -> None:
    from dataclasses import replace

    from support.helpers import SCENARIO_MANIFEST

    m = replace(SCENARIO_MANIFEST, crown_spaces=(1, 2))
    t = Tiles(m)
    crowned = [t.take(crown=True, wild=False) for _ in range(2)]
    g = build(t, market=[crowned[0], crowned[1], t.plain()], builders={})
    play(g, "V1:a1")  # pawn onto space 1: the first scoring, turn ends
    assert g.scorings == 1 and not g.over
    p = g.to_move
    play(g, "V1:b1" if g.market[0] == crowned[1] else "V2:b1")
    assert g.over and g.scorings == 2 and g.end_reason == "last-scoring"
    assert p is not None


def test_P11_altar_order_with_only_one_free_tile_places_one() -> None:
    t = Tiles(festum=True)
    altar = t.take(order=Order.ALTAR)
    g = build(t, options=FESTUM, vaults={"a1": t.plain(), "b1": t.plain()}, altars=["b1"],
              orders=[altar, t.take(order=Order.SCAFFOLDING), t.take(order=Order.SCAFFOLDING)])
    play(g, "O1:a1")
    assert g.altars == {C("a1"), C("b1")} and g.pending.kind == MAIN and g.actions == 1


def test_P12_confuse_may_remove_your_own_builder_from_an_altar() -> None:
    t = Tiles(festum=True)
    confuse = t.take(order=Order.CONFUSE)
    g = build(t, options=FESTUM, vaults={"a1": t.plain(), "b1": t.plain(), "c1": t.plain()},
              builders={"a1": (0, "-"), "b1": (1, "-")}, altars=["a1"], coins=(1, 0),
              orders=[confuse, t.take(order=Order.SCAFFOLDING), t.take(order=Order.SCAFFOLDING)])
    assert "O1:a1" in legal_strs(g)
    play(g, "O1:a1")
    assert C("a1") not in g.builders and g.supply[0] == 5


def test_P13_paid_confuse_is_offered_even_with_a_single_possible_move() -> None:
    t = Tiles()
    confuse = t.take(order=Order.CONFUSE)
    g = build(t, vaults={"a1": t.plain(), "b1": t.plain(), "d1": t.plain()},
              builders={"a1": (1, "-"), "d1": (0, "-")},
              orders=[confuse, t.take(order=Order.SCAFFOLDING), t.take(order=Order.SCAFFOLDING)])
    play(g, "O1:d1")
    assert legal_strs(g) == ["pass", "$"]  # player 2 holds a coin: asked, although a1-b1 is the only move


def test_P14_redeal_discards_V1_V2_V3_vault_face_up_in_order() -> None:
    g = _all_wild_blocked()
    before = list(g.market)
    play(g, "V*")
    assert g.discard[:3] == before
    assert set(before) <= g.discard_up


def test_P15_redeal_with_an_empty_second_stack_ends_the_game() -> None:
    g = _all_wild_blocked()
    g.discard.extend(g.stack)
    g.stack = []
    g.reshuffles = 1
    g._legal = None
    assert "V*" in legal_strs(g)
    play(g, "V*")
    assert g.over and g.end_reason == "stack"


def test_apply_refuses_equal_values_of_the_wrong_types_and_changes_nothing() -> None:
    import pytest

    from basilica_p2p.engine import Action, IllegalAction

    t = Tiles()
    g = build(t, vaults={"a1": t.plain()})
    play(g, "V1:b1")  # a builder may now follow on b1
    before = g.state_hash()
    legal = g.legal_actions()
    o = next(a for a in legal if a.kind == "order")
    for bad in (Action(o.kind, float(o.space), o.cell, o.dest, o.rank, o.colors), tuple(o), Action(True, 1)):
        with pytest.raises(IllegalAction):
            g.apply(bad)  # type: ignore[arg-type]
    assert g.state_hash() == before and g.legal_actions() == legal


def test_scoring_space_is_cleared_after_the_scoring() -> None:
    t = Tiles()
    crowned = t.take(crown=True, wild=False)
    g = build(t, market=[t.plain(), t.plain(), crowned], pawn=9, builders={})
    play(g, "V3:a1")
    assert g.scorings == 1 and g.scoring_space == 0
