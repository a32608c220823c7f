"""One or more tests per decision D1-D27 of RULES.md, plus the rulebook's
areas example.  Every expected value is worked out by hand in the comments
from RULES.md, never computed by the engine.
"""

from __future__ import annotations

from collections import Counter

import pytest

from basilica_p2p.engine import (
    Game,
    IllegalAction,
    Options,
    Order,
    OrderFace,
    Ruleset,
    default_manifest,
    find_areas,
    observe,
    parse_action,
    reconstruct_default,
)
from basilica_p2p.engine.actions import NONE_ACTION, REDEAL_ACTION, Action
from basilica_p2p.engine.components import (
    ARCHITECT,
    BLUE,
    GREEN,
    JESTER,
    MASON,
    NO_RANK,
    RED,
    STRONGMAN,
    YELLOW,
)
from basilica_p2p.engine.game import AFTER_REDEAL, CONFUSE_MOVE, CONFUSE_PAY, JESTER_COLORS, MAIN, PAID, SECOND_ALTAR

from support.helpers import (
    CLASSIC,
    FESTUM,
    FESTUM_REMOVAL,
    OTHER_SEED,
    PORTAL,
    SEED,
    C,
    Tiles,
    build,
    legal_strs,
    play,
    ref_shuffle,
    ref_u64,
    stack_top_first,
)

Y, B, R, G = YELLOW, BLUE, RED, GREEN


def kinds(g: Game) -> set[str]:
    return {a.kind for a in g.legal_actions()}


def order_actions(g: Game, space: int) -> list[str]:
    return [str(a) for a in g.legal_actions() if a.kind == "order" and a.space == space]


def rule_of(g: Game, text: str) -> str:
    before = g.state_hash()
    with pytest.raises(IllegalAction) as e:
        g.apply(parse_action(text))
    assert g.state_hash() == before
    return e.value.rule


# --- D1 ------------------------------------------------------------------------


def test_D1_four_promotion_tokens_per_player_in_both_rulesets() -> None:
    m = default_manifest()
    assert m.promotion_tokens == 4
    assert m.builders == 5
    assert m.coins == 1
    for opts in (CLASSIC, PORTAL, FESTUM):
        g = Game.new(m, opts, SEED)
        assert g.tokens == [4, 4]  # D1: 4 per player, not the English 2022 setup's 3
        assert g.supply == [5, 5]
        assert g.coins == [1, 1]
        assert observe(g, 0).tokens == (4, 4)


def test_D1_ranks_per_ruleset() -> None:
    # §1: Architect, Master Mason, Strongman; portal2022 adds the Jester.
    assert Ruleset.CLASSIC.ranks == (ARCHITECT, MASON, STRONGMAN)
    assert Ruleset.PORTAL2022.ranks == (ARCHITECT, MASON, STRONGMAN, JESTER)
    assert Ruleset.CLASSIC.pawn == "king" and Ruleset.PORTAL2022.pawn == "queen"


def test_D1_classic_has_no_jester_promotion() -> None:
    T = Tiles()
    a1 = T.take("Y")
    prom = T.take(order=Order.PROMOTE)
    g = build(T, options=CLASSIC, vaults={"a1": a1}, builders={"a1": (0, "-")},
              orders=[prom, T.take(order=Order.SCAFFOLDING), T.take(order=Order.SCAFFOLDING)])
    assert order_actions(g, 1) == ["O1:a1=A", "O1:a1=M", "O1:a1=S"]
    assert rule_of(g, "O1:a1=J") == "§7"


# --- D2 - D5: the default manifest ----------------------------------------------


def test_D2_ten_single_tiles_per_colour_and_six_wild_pairs_three_each() -> None:
    m = default_manifest()
    assert len(m.tiles) == 58
    assert len({t.id for t in m.tiles}) == 58
    singles = Counter(t.colors for t in m.tiles if not t.wild)
    assert singles == {Y: 10, B: 10, R: 10, G: 10}
    wild = Counter(t.colors for t in m.tiles if t.wild)
    pairs = [Y | B, Y | R, Y | G, B | R, B | G, R | G]
    assert wild == {p: 3 for p in pairs}  # 6 pairs x 3 = 18 wild tiles


def test_D3_paid_option_on_promote_recruit_confuse_only() -> None:
    m = default_manifest()
    paid_orders = {Order.PROMOTE, Order.RECRUIT, Order.CONFUSE}
    for t in m.tiles + m.festum_tiles:
        assert t.paid == (t.order in paid_orders), t
    # 8 PROMOTE + 9 RECRUIT + 8 CONFUSE = 25 paid tiles
    assert sum(t.paid for t in m.tiles) == 25


def test_D4_order_counts() -> None:
    m = default_manifest()
    counts = Counter(t.order for t in m.tiles)
    # 8 each, 9 for MOVE and RECRUIT: 5*8 + 2*9 = 58
    assert counts == {
        Order.PROMOTE: 8, Order.MOVE: 9, Order.RECRUIT: 9, Order.CONFUSE: 8,
        Order.STAINED_GLASS: 8, Order.SCAFFOLDING: 8, Order.DISASTER: 8,
    }
    assert Order.ALTAR not in counts


def test_D4_orders_spread_evenly_over_the_colours() -> None:
    m = default_manifest()
    for order in Order:
        if order is Order.ALTAR:
            continue
        per_colour = [sum(1 for t in m.tiles if t.colors == c and t.order is order) for c in (Y, B, R, G)]
        # 10 tiles of a colour over 7 order types: each type 1 or 2 times, and
        # across the four colours the counts differ by at most one.
        assert all(n in (1, 2) for n in per_colour), (order, per_colour)
        assert max(per_colour) - min(per_colour) <= 1


def test_D4_crowns_spread_evenly_over_the_colours() -> None:
    m = default_manifest()
    crowned = [t for t in m.tiles if t.crown]
    assert 0 < len(crowned) < 58
    # "Evenly" as far as the count allows: 48 crowns put 33 on the 40
    # single-colour tiles, which cannot split four ways exactly.
    single = [sum(1 for t in crowned if t.colors == c) for c in (Y, B, R, G)]
    assert max(single) - min(single) <= 1, single
    having = [sum(1 for t in crowned if t.colors & c) for c in (Y, B, R, G)]
    assert max(having) - min(having) <= 2, having
    assert m.crown_spaces == (10, 20, 30)
    assert m.order_faces_show_crown is False


def test_D4_default_manifest_is_the_reconstruction() -> None:
    m = default_manifest()
    n = sum(t.crown for t in m.tiles)
    rebuilt = reconstruct_default(n)
    assert rebuilt.hash == m.hash
    # any crown count keeps the D2/D4 structure
    other = reconstruct_default(12)
    assert sum(t.crown for t in other.tiles) == 12
    assert [(t.id, t.colors, t.order, t.paid) for t in other.tiles] == [
        (t.id, t.colors, t.order, t.paid) for t in m.tiles
    ]


def test_D5_festum_tiles_and_altar_tokens() -> None:
    m = default_manifest()
    assert len(m.festum_tiles) == 8
    assert all(t.order is Order.ALTAR and not t.paid and not t.wild for t in m.festum_tiles)
    assert Counter(t.colors for t in m.festum_tiles) == {Y: 2, B: 2, R: 2, G: 2}
    assert m.altar_tokens == 14
    assert not {t.id for t in m.festum_tiles} & {t.id for t in m.tiles}


def test_D5_festum_game_has_66_tiles_and_14_altars() -> None:
    m = default_manifest()
    g = Game.new(m, PORTAL, SEED)
    assert len(g.tile_locations()) == 58 and g.altar_supply == 0
    g = Game.new(m, FESTUM, SEED)
    assert len(g.tile_locations()) == 66 and g.altar_supply == 14
    g = Game.new(m, FESTUM_REMOVAL, SEED)
    where = g.tile_locations()
    assert len(where) == 66
    assert sum(1 for v in where.values() if v == "out") == 6
    # 66 - 6 out - 6 dealt = 54 in the stack
    assert len(g.stack) == 54


def test_festum_needs_portal_and_removal_needs_festum() -> None:
    from basilica_p2p.engine import EngineError

    with pytest.raises(EngineError):
        Options(Ruleset.CLASSIC, festum=True)
    with pytest.raises(EngineError):
        Options(Ruleset.PORTAL2022, festum=False, festum_removal=True)


# --- §4 setup and D6 --------------------------------------------------------------


def test_setup_deal_follows_the_seeded_shuffle() -> None:
    m = default_manifest()
    g = Game.new(m, PORTAL, SEED)
    order = ref_shuffle(list(range(1, 59)), SEED, b"shuffle")  # order[0] is the top
    assert g.orders == order[0:3]  # O1, O2, O3 first
    assert g.market == order[3:6]  # then V1, V2, V3
    assert stack_top_first(g) == order[6:]


def test_setup_festum_removal_uses_its_own_stream() -> None:
    m = default_manifest()
    g = Game.new(m, FESTUM_REMOVAL, SEED)
    order = ref_shuffle(list(range(1, 67)), SEED, b"shuffle")
    s = ref_u64(SEED, b"festum-removal")
    from support.helpers import ref_below

    out = [order.pop(ref_below(s, len(order))) for _ in range(6)]
    assert g.out == sorted(out)
    assert g.orders == order[0:3] and g.market == order[3:6]
    assert stack_top_first(g) == order[6:]


def test_D6_first_player_from_the_seed_substream() -> None:
    seen = set()
    for i in range(24):
        seed = bytes([i]) * 32
        # below(2): 2**64 is a multiple of 2, so no value is rejected: first u64 mod 2
        expected = next(ref_u64(seed, b"first-player")) % 2
        for opts in (PORTAL, CLASSIC, FESTUM_REMOVAL):
            g = Game.new(default_manifest(), opts, seed)
            assert g.active == expected
            assert g.to_move == expected
        seen.add(expected)
    assert seen == {0, 1}


# --- D7 ----------------------------------------------------------------------------


def blocked(T: Tiles, market_wild: int = 3, **kw) -> Game:
    """Row 1: W S W S W, row 2: b2 W, d2 W.  Every empty cell a tile may go on
    (a2, c2, e2, b3, d3) touches a printed wild tile, so no wild tile fits."""
    vaults = {
        "a1": T.take("R/G"), "b1": T.take("Y"), "c1": T.take("R/G"),
        "d1": T.take("B"), "e1": T.take("R/G"), "b2": T.take("Y/R"), "d2": T.take("Y/R"),
    }
    vaults.update(kw.pop("extra_vaults", {}))
    market = kw.pop("market", None) or [T.take(wild=True, crown=False) for _ in range(market_wild)]
    return build(T, vaults=vaults, market=market, **kw)


def test_D7_main_always_has_a_legal_action_and_none_is_illegal() -> None:
    T = Tiles()
    g = blocked(T)
    acts = legal_strs(g)
    assert acts, "MAIN must always offer something"
    assert "none" not in acts
    assert "V*" in acts  # D8 keeps PLACE VAULT possible
    assert rule_of(g, "none") == "D7"  # illegal while other actions exist (state unchanged)
    g = Game.new(default_manifest(), PORTAL, SEED)
    assert g.legal_actions() and NONE_ACTION not in g.legal_actions()
    with pytest.raises(IllegalAction):
        g.apply(NONE_ACTION)


def test_D7_no_legal_action_is_a_recorded_event_not_a_crash() -> None:
    T = Tiles()
    g = build(T, active=0, actions=1)
    g._legal = (NONE_ACTION,)  # force the situation that cannot arise under these rules
    events = g.apply(NONE_ACTION)
    assert [e.kind for e in events] == ["no-action"]
    # the turn ends: the other player moves, with a fresh count of actions
    assert g.active == 1 and g.actions == 0 and not g.over
    assert g.pending.kind == MAIN and g.pending.player == 1


# --- D8 ------------------------------------------------------------------------------


def test_D8_redeal_when_all_three_vault_tiles_are_wild_and_cannot_be_placed() -> None:
    T = Tiles()
    s1, s2, s3 = T.plain(), T.plain(), T.plain()
    g = blocked(T, stack=[s1, s2, s3])
    old_market = list(g.market)
    assert not any(a.kind == "vault" for a in g.legal_actions())
    events = play(g, "V*")
    assert [e.kind for e in events] == ["redeal"]
    # all three discarded (V1, V2, V3), three new ones dealt to V1, V2, V3 in order
    assert g.discard == old_market
    assert g.discard_up == set(old_market)  # discarded vault face up: public
    assert g.market == [s1, s2, s3]
    # the same action goes on: nothing counted yet, and it must be a PLACE VAULT
    assert g.actions == 0
    assert g.pending.kind == AFTER_REDEAL
    assert kinds(g) == {"vault"}
    play(g, "V1:a2")
    assert g.actions == 1 and g.pending.kind == MAIN
    assert "B:a2" in legal_strs(g)


def test_D8_redeal_repeats_while_nothing_fits() -> None:
    T = Tiles()
    w1, w2, w3 = T.take(wild=True), T.take(wild=True), T.take(wild=True)
    s1, s2, s3 = T.plain(), T.plain(), T.plain()
    g = blocked(T, stack=[w1, w2, w3, s1, s2, s3])
    old_market = list(g.market)
    events = play(g, "V*")
    assert [e.kind for e in events] == ["redeal", "redeal"]
    assert g.discard == old_market + [w1, w2, w3]
    assert g.market == [s1, s2, s3]
    assert g.actions == 0


def test_D8_redeal_only_when_no_vault_tile_fits() -> None:
    T = Tiles()
    # two wild and one single-colour tile in the market: the single one fits
    g = blocked(T, market=[T.take(wild=True, crown=False), T.take(wild=True, crown=False), T.plain()])
    assert "V*" not in legal_strs(g)
    assert rule_of(g, "V*") == "D8"
    g = Game.new(default_manifest(), PORTAL, SEED)
    with pytest.raises(IllegalAction) as e:
        g.apply(REDEAL_ACTION)
    assert e.value.rule == "D8"


# --- §5 PLACE VAULT -------------------------------------------------------------------


def test_place_vault_row1_or_adjacent_and_wild_not_next_to_wild() -> None:
    T = Tiles()
    wild_board = T.take("Y/B")
    g = build(T, vaults={"b1": wild_board},
              market=[T.take(wild=True, crown=False), T.plain(), T.plain()])
    acts = set(legal_strs(g))
    # single tile: any empty row-1 cell, or next to b1 (b2); never c3 or diagonal c2
    assert {f"V2:{c}" for c in ("a1", "c1", "d1", "e1", "b2")} <= acts
    assert "V2:c2" not in acts and "V2:c3" not in acts
    # wild tile: not next to the wild b1 (a1, c1, b2 excluded)
    v1 = {a for a in acts if a.startswith("V1:")}
    assert v1 == {"V1:d1", "V1:e1"}
    assert rule_of(g, "V2:c3").startswith("§5")
    assert rule_of(g, "V1:a1").startswith("§5")
    assert rule_of(g, "V2:b1").startswith("§5")


# --- D9 ------------------------------------------------------------------------------


def test_D9_orders_without_a_target_are_not_offered() -> None:
    T = Tiles()
    a1 = T.take("Y")
    orders = [T.take(order=Order.MOVE), T.take(order=Order.STAINED_GLASS), T.take(order=Order.CONFUSE)]
    # player 1 (not on turn) has builders; player 0 has none: nothing to move,
    # glaze or remove
    g = build(T, vaults={"a1": a1, "b1": T.take("Y")}, builders={"a1": (1, "-")}, orders=orders)
    assert not any(a.kind == "order" for a in g.legal_actions())
    assert rule_of(g, "O1:a1-b1") == "D9"
    assert rule_of(g, "O2:a1") == "D9"
    assert rule_of(g, "O3:a1") == "D9"


def test_D9_promote_recruit_disaster_need_a_target() -> None:
    T = Tiles()
    orders = [T.take(order=Order.PROMOTE), T.take(order=Order.RECRUIT), T.take(order=Order.DISASTER)]
    # all 5 builders of player 1 on the board, 4 of them promoted: every vault
    # has a builder (no DISASTER target), no token (no PROMOTE, D16), no
    # builder in supply (no RECRUIT)
    g = build(T, vaults={c: T.take("Y") for c in ("a1", "b1", "c1", "d1", "e1")},
              builders={"a1": (0, "A"), "b1": (0, "M"), "c1": (0, "S"), "d1": (0, "J"), "e1": (0, "-")},
              orders=orders)
    assert g.supply == [0, 5] and g.tokens == [0, 4]
    assert order_actions(g, 1) == [] and order_actions(g, 2) == [] and order_actions(g, 3) == []
    assert rule_of(g, "O1:a1=M") == "D9"
    assert rule_of(g, "O2:a1") == "D9"
    assert rule_of(g, "O3:a1") == "D9"
    # empty cathedral: nothing to discard, nothing to recruit on
    T = Tiles()
    g = build(T, vaults={}, orders=[T.take(order=Order.DISASTER), T.take(order=Order.RECRUIT),
                                    T.take(order=Order.MOVE)])
    assert not any(a.kind == "order" for a in g.legal_actions())


def test_D9_with_targets_the_same_orders_are_offered() -> None:
    T = Tiles()
    orders = [T.take(order=Order.PROMOTE), T.take(order=Order.RECRUIT), T.take(order=Order.DISASTER)]
    g = build(T, vaults={"a1": T.take("Y"), "b1": T.take("B"), "c1": T.take("R")},
              builders={"a1": (0, "-")}, orders=orders)
    assert order_actions(g, 1) == ["O1:a1=A", "O1:a1=M", "O1:a1=S", "O1:a1=J"]
    assert order_actions(g, 2) == ["O2:b1", "O2:c1"]
    assert order_actions(g, 3) == ["O3:b1", "O3:c1"]


def test_D9_altar_needs_a_token_in_supply() -> None:
    T = Tiles(festum=True)
    alt = T.take(order=Order.ALTAR)
    g = build(T, options=FESTUM, vaults={"a1": T.take("Y")}, orders=[alt, T.take(order=Order.MOVE),
                                                                     T.take(order=Order.MOVE)], altar_supply=0)
    assert order_actions(g, 1) == []
    assert rule_of(g, "O1:a1") == "D9"


def test_D9_scaffolding_two_tiles_second_may_lean_on_first() -> None:
    T = Tiles()
    sc = T.take(order=Order.SCAFFOLDING)
    g = build(T, vaults={}, orders=[sc, T.take(order=Order.MOVE), T.take(order=Order.MOVE)])
    assert order_actions(g, 1) == ["O1:a1", "O1:b1", "O1:c1", "O1:d1", "O1:e1"]
    play(g, "O1:a1")
    # second tile: row 1, or next to the first (a2)
    assert set(legal_strs(g)) == {"b1", "c1", "d1", "e1", "a2"}
    play(g, "a2")
    assert g.scaffold == {C("a1"), C("a2")}
    assert g.actions == 1 and g.discard == [sc]
    # scaffolding is not a vault: nothing can be recruited/glazed on it, but
    # vault tiles may lean on it
    assert "V1:a3" in legal_strs(g)


# --- D10 ----------------------------------------------------------------------------


def test_D10_crown_scoring_comes_before_the_refill() -> None:
    T = Tiles()
    ya = T.take("Y")
    yc = T.take("Y", crown=True)
    x1 = T.take(order=Order.MOVE)
    last = T.plain()
    d1, d2 = T.plain(), T.plain()
    g = build(T, vaults={"a1": ya}, builders={"a1": (0, "-")}, market=[yc, T.plain(), T.plain()],
              orders=[x1, T.take(order=Order.MOVE), T.take(order=Order.MOVE)],
              stack=[last], discard=[d1, d2], rest="out", pawn=9)
    play(g, "V1:b1")
    # the pawn enters 10: scoring of Y area {a1, b1}: player 1 alone, 2 tiles
    assert g.scorings == 1 and g.scores == [2, 0]
    # clean-up discarded rows 1-2 (a1, b1) BEFORE the refill drew the last tile,
    # so the reshuffle (D11) includes them
    assert g.reshuffles == 1
    assert stack_top_first(g) == ref_shuffle(sorted([d1, d2, ya, yc]), SEED, b"reshuffle/1")
    # refill: the order above V1 moved down, the last stack tile went to O1
    assert g.market[0] == x1
    assert g.orders[0] == last
    assert g.discard == []


def test_D10_order_is_discarded_before_its_refill() -> None:
    T = Tiles()
    sg = T.take(order=Order.STAINED_GLASS)
    last = T.plain()
    d1, d2 = T.plain(), T.plain()
    g = build(T, vaults={"a1": T.take("Y")}, builders={"a1": (0, "-")},
              orders=[T.take(order=Order.MOVE), sg, T.take(order=Order.MOVE)],
              stack=[last], discard=[d2, d1], rest="out")
    play(g, "O2:a1")
    assert g.glass == {C("a1")}
    assert g.orders[1] == last
    # the order tile was in the discard pile when the last tile was drawn
    assert sorted(g.stack) == sorted([d1, d2, sg])
    assert stack_top_first(g) == ref_shuffle(sorted([d1, d2, sg]), SEED, b"reshuffle/1")


def test_D10_paid_option_before_the_order_is_discarded_and_refilled() -> None:
    T = Tiles()
    rec = T.take(order=Order.RECRUIT)
    top = T.plain()
    g = build(T, vaults={"a1": T.take("Y"), "b1": T.take("Y"), "c1": T.take("B")},
              builders={"b1": (1, "-")}, orders=[rec, T.take(order=Order.MOVE), T.take(order=Order.MOVE)],
              stack=[top, T.plain()], discard=[T.plain(), T.plain()], rest="out")
    discard_before = list(g.discard)
    play(g, "O1:c1")
    assert g.pending.kind == PAID and g.to_move == 1
    # the paid option comes before the discard and the refill
    assert g.orders[0] is None and g.in_hand == (rec, 1)
    assert g.discard == discard_before and stack_top_first(g)[0] == top
    play(g, "$a1")
    assert g.discard == discard_before + [rec]
    assert g.orders[0] == top
    assert g.in_hand is None


# --- D11 -----------------------------------------------------------------------------


def test_D11_reshuffle_when_the_last_tile_is_drawn_sorted_then_shuffled() -> None:
    T = Tiles()
    last = T.plain()
    pile = [T.take("G"), T.take("R"), T.take("Y"), T.take("B"), T.take("Y/B"), T.take("R")]
    pile = sorted(pile, reverse=True)  # not in id order
    x1 = T.take(order=Order.MOVE)
    g = build(T, orders=[x1, T.take(order=Order.MOVE), T.take(order=Order.MOVE)], stack=[last],
              discard=pile, discard_up=pile[:2], rest="out")
    events = play(g, "V1:a1")
    assert [e.kind for e in events] == ["reshuffle"]
    assert g.reshuffles == 1
    assert g.orders[0] == last and g.market[0] == x1
    assert stack_top_first(g) == ref_shuffle(sorted(pile), SEED, b"reshuffle/1")
    assert g.discard == [] and g.discard_up == set()
    # the stream depends on the seed
    g2 = build(Tiles(), seed=OTHER_SEED, orders=[x1, Tiles().take(order=Order.PROMOTE),
                                                 Tiles().take(order=Order.DISASTER)],
               stack=[last], discard=pile, rest="out", market=[T.plain(), T.plain(), T.plain()])
    play(g2, "V1:a1")
    assert stack_top_first(g2) == ref_shuffle(sorted(pile), OTHER_SEED, b"reshuffle/1")


def test_D11_no_reshuffle_before_the_last_tile() -> None:
    T = Tiles()
    s1, s2 = T.plain(), T.plain()
    g = build(T, stack=[s1, s2], discard=[T.plain()], rest="out")
    play(g, "V1:a1")
    assert g.reshuffles == 0 and stack_top_first(g) == [s2] and len(g.discard) == 1


def test_D11_empty_discard_gives_an_empty_stack_and_the_next_draw_ends_the_game() -> None:
    T = Tiles()
    last = T.plain()
    g = build(T, vaults={"a1": T.take("Y")}, builders={"a1": (0, "-")}, stack=[last], discard=[], rest="out",
              market=[T.take("Y", crown=False), T.take("B", crown=False), T.plain()])
    play(g, "V1:b1")  # refill draws the last tile: the new stack is empty
    assert g.reshuffles == 1 and g.stack == [] and not g.over
    assert g.orders[0] == last
    play(g, "V2:c1")  # the refill needs a draw: the game ends (D25)
    assert g.over and g.end_reason == "stack"
    # final scoring: Y {a1, b1} with player 1's builder = 2; B {c1} has no builder
    assert g.scorings == 1 and g.scores == [2, 0]


def test_D11_second_exhaustion_does_not_reshuffle() -> None:
    T = Tiles()
    last = T.plain()
    g = build(T, stack=[last], discard=[T.plain(), T.plain()], rest="out", reshuffles=1)
    play(g, "V1:a1")
    assert g.stack == [] and g.reshuffles == 1 and len(g.discard) == 2 and not g.over


# --- D12 / §6 areas ----------------------------------------------------------------------


def test_rulebook_areas_example_with_wild_tiles_D_E_F() -> None:
    # row 1: a1 G, b1 G/B (D), c1 B, d1 B/Y (E), e1 B
    # row 2:           c2 G/Y (F), d2 R, e2 B
    printed = {
        C("a1"): G, C("b1"): G | B, C("c1"): B, C("d1"): B | Y, C("e1"): B,
        C("c2"): G | Y, C("d2"): R, C("e2"): B,
    }
    areas = {(col, cells) for col, cells in find_areas(printed, printed)}
    green_A = (G, (C("a1"), C("b1")))  # D joins a1
    # c1 and e1 are linked through E (d1); e2 hangs on e1: 5 tiles
    blue_B = (B, tuple(sorted([C("b1"), C("c1"), C("d1"), C("e1"), C("e2")], key=lambda c: (c % 5, c // 5))))
    red_C = (R, (C("d2"),))  # a lone printed red tile is an area; E is not red
    assert areas == {green_A, blue_B, red_C}
    # F (c2) is in no area: its green and yellow neighbours are only diagonal;
    # E (d1) is not a yellow area on its own (D12)
    assert all(C("c2") not in cells for _, cells in areas)
    assert not any(col == Y for col, _ in areas)


def test_D12_lone_wild_tile_makes_no_area() -> None:
    assert find_areas({C("c3"): Y | B}, {C("c3"): Y | B}) == []
    assert find_areas({C("c3"): Y}, {C("c3"): Y}) == [(Y, (C("c3"),))]


def test_D12_jester_colour_on_a_lone_tile_makes_no_area() -> None:
    # printed yellow, Jester gives blue: a yellow area of one tile, no blue one
    assert find_areas({C("c3"): Y | B}, {C("c3"): Y}) == [(Y, (C("c3"),))]


def test_D12_group_of_two_wild_or_jester_tiles_is_an_area() -> None:
    # a1 printed Y/B, b1 printed R with a Jester's blue: blue {a1, b1}
    areas = find_areas({C("a1"): Y | B, C("b1"): R | B}, {C("a1"): Y | B, C("b1"): R})
    assert sorted(areas) == sorted([(B, (C("a1"), C("b1"))), (R, (C("b1"),))])


def test_D12_builder_on_a_lone_wild_tile_scores_nothing() -> None:
    T = Tiles()
    g = build(T, vaults={"c1": T.take("Y/B")}, builders={"c1": (0, "A")})
    assert g.current_areas().points == (0, 0)
    assert g.current_areas().areas == ()


# --- D13, D14 and the scoring rules --------------------------------------------------------


def four_yellow(T: Tiles, builders: dict, **kw) -> Game:
    return build(T, vaults={c: T.take("Y") for c in ("a1", "b1", "c1", "d1")}, builders=builders, **kw)


@pytest.mark.parametrize(
    "builders, expected",
    [
        # equal strength 2-2, only player 1 has a Strongman: majority 4 tiles, other 1 per builder
        ({"a1": (0, "S"), "b1": (0, "-"), "c1": (1, "-"), "d1": (1, "-")}, (4, 2)),
        # opposing Strongmen cancel: tie, nobody scores
        ({"a1": (0, "S"), "b1": (0, "-"), "c1": (1, "S"), "d1": (1, "-")}, (0, 0)),
        # two of one player's against none: they do not cancel each other
        ({"a1": (0, "S"), "b1": (0, "S"), "c1": (1, "-"), "d1": (1, "-")}, (4, 2)),
        # two against one: a Strongman on each side, tie
        ({"a1": (0, "S"), "b1": (0, "S"), "c1": (1, "S"), "d1": (1, "-")}, (0, 0)),
        # player 2 wins on Strongman
        ({"a1": (0, "-"), "b1": (1, "S")}, (1, 4)),
    ],
)
def test_D13_strongman_breaks_ties_opposing_strongmen_cancel(builders, expected) -> None:
    g = four_yellow(Tiles(), builders)
    assert g.current_areas().points == expected


def test_D14_stained_glass_on_a_wild_tile_counts_in_each_area() -> None:
    T = Tiles()
    # a1 Y, b1 Y/B with glass, c1 B; player 1 on a1 and c1
    vaults = {"a1": T.take("Y"), "b1": T.take("Y/B"), "c1": T.take("B")}
    g = build(T, vaults=vaults, builders={"a1": (0, "-"), "c1": (0, "-")}, glass=["b1"])
    # Y {a1,b1}: 2 + 2 glass = 4; B {b1,c1}: 2 + 2 = 4
    assert g.current_areas().points == (8, 0)


def test_D14_glass_on_an_altar_counts_4_in_each_area() -> None:
    T = Tiles(festum=True)
    vaults = {"a1": T.take("Y"), "b1": T.take("Y/B"), "c1": T.take("B")}
    g = build(T, options=FESTUM, vaults=vaults, builders={"a1": (0, "-"), "c1": (0, "-")},
              glass=["b1"], altars=["b1"])
    assert g.current_areas().points == (12, 0)  # (2 + 4) * 2 areas


def test_scoring_architect_doubles_once_glass_added_after() -> None:
    T = Tiles()
    g = build(T, vaults={c: T.take("Y") for c in ("a1", "b1", "c1")},
              builders={"a1": (0, "A"), "b1": (1, "A"), "c1": (0, "M")}, glass=["c1"])
    # strength: player 1 = 1 + 2 = 3, player 2 = 1 -> player 1 majority
    # 3 tiles doubled once (two Architects) = 6, + 2 glass = 8; player 2: 1 builder
    assert g.current_areas().points == (8, 1)


def test_scoring_minority_master_mason_counts_one() -> None:
    T = Tiles()
    g = build(T, vaults={c: T.take("R") for c in ("a1", "b1", "c1", "d1")},
              builders={"a1": (0, "-"), "b1": (0, "-"), "c1": (0, "-"), "d1": (1, "M")})
    # strength 3 vs 2: player 1 scores 4 tiles, player 2 one point for one builder
    assert g.current_areas().points == (4, 1)


def test_scoring_master_mason_counts_two_for_strength() -> None:
    T = Tiles()
    g = build(T, vaults={c: T.take("R") for c in ("a1", "b1", "c1")},
              builders={"a1": (0, "-"), "b1": (0, "-"), "c1": (1, "M")})
    assert g.current_areas().points == (0, 0)  # 2 vs 2, no Strongman: tie


# --- D15, D21, D23: after a scoring ------------------------------------------------------------


def test_D21_clean_up_order_and_next_player() -> None:
    T = Tiles()
    crown_y = T.take("Y", crown=True)
    x1 = T.take(order=Order.MOVE)
    top = T.plain()
    a1, b1, a2 = T.take("Y"), T.take("Y"), T.take("G")
    a3, b3, b4 = T.take("G"), T.take("R"), T.take("R")
    g = build(
        T,
        vaults={"a1": a1, "b1": b1, "a2": a2, "a3": a3, "b3": b3, "b4": b4},
        builders={"a1": (0, "A"), "a3": (1, "M"), "b4": (0, "-")},
        glass=["a1", "a3"], scaffold=["b2", "c3"],
        market=[crown_y, T.plain(), T.plain()],
        orders=[x1, T.take(order=Order.MOVE), T.take(order=Order.MOVE)],
        stack=[top], pawn=9, active=0, actions=0,
    )
    turn = g.turn
    play(g, "V1:c1")
    # scoring: Y {a1,b1,c1}: Architect, 3*2 + 2 glass = 8 for player 1
    #          G {a2,a3}: player 2 (Mason), 2 + 2 glass = 4
    #          R {b3,b4}: player 1, 2
    assert g.scores == [10, 4]
    # 1. builders and tokens home
    assert g.builders == {} and g.supply == [5, 5] and g.tokens == [4, 4]
    # 2. scaffolding gone, rows 1-2 discarded in cell order, their glass gone
    assert g.scaffold == set()
    assert g.discard == [a1, b1, crown_y, a2]
    assert set(g.discard_up) >= {a1, b1, crown_y, a2}
    # 3. the rest shifts two rows toward the board, glass travels with its tile
    assert g.vaults == {C("a1"): a3, C("b1"): b3, C("b2"): b4}
    assert g.glass == {C("a1")}
    # refill after the clean-up
    assert g.market[0] == x1 and g.orders[0] == top
    # 4. the scoring ended player 1's turn after one action: player 2 plays
    assert g.active == 1 and g.to_move == 1 and g.actions == 0
    assert g.turn == turn + 1 and g.last_placed == -1
    assert not any(a.kind == "builder" for a in g.legal_actions())


def test_D15_shift_keeps_layout_and_lone_tiles() -> None:
    T = Tiles()
    crown = T.take("Y", crown=True)
    t_a3, t_b3, t_d5 = T.take("G"), T.take("R"), T.take("B")
    g = build(T, vaults={"a1": T.take("Y"), "a2": T.take("Y"), "a3": t_a3, "b3": t_b3, "d5": t_d5},
              glass=["b3", "d5"], market=[crown, T.plain(), T.plain()], pawn=9)
    play(g, "V1:e1")
    # nearest row left is 3: shift by 2; d5 (no neighbours) shifts the same way
    assert g.vaults == {C("a1"): t_a3, C("b1"): t_b3, C("d3"): t_d5}
    assert g.glass == {C("b1"), C("d3")}


def test_D15_gap_rows_shift_to_row_1() -> None:
    T = Tiles()
    crown = T.take("Y", crown=True)
    t_c4, t_c6 = T.take("G"), T.take("R")
    g = build(T, vaults={"a1": T.take("Y"), "c4": t_c4, "c6": t_c6},
              market=[crown, T.plain(), T.plain()], pawn=9)
    play(g, "V1:b1")
    # rows 1-2 go; row 3 is empty, so row 4 becomes row 1 (shift 3)
    assert g.vaults == {C("c1"): t_c4, C("c3"): t_c6}


def test_D15_empty_cathedral_after_clean_up() -> None:
    T = Tiles()
    crown = T.take("Y", crown=True)
    g = build(T, vaults={"a1": T.take("Y"), "a2": T.take("Y")}, market=[crown, T.plain(), T.plain()], pawn=9)
    play(g, "V1:b1")
    assert g.vaults == {} and g.glass == set()
    # the next player starts in row 1
    assert {a.cell for a in g.legal_actions() if a.kind == "vault"} == {0, 1, 2, 3, 4}


def test_D23_altars_of_discarded_rows_go_back_to_supply() -> None:
    T = Tiles(festum=True)
    crown = T.take("Y", crown=True)
    t_a3 = T.take("G")
    g = build(T, options=FESTUM, vaults={"a1": T.take("Y"), "a2": T.take("B"), "a3": t_a3},
              altars=["a1", "a2", "a3"], glass=["a2", "a3"], market=[crown, T.plain(), T.plain()], pawn=9)
    assert g.altar_supply == 11
    play(g, "V1:b1")
    # a1, a2 altars back (11 + 2 = 13); a3's altar and glass move with it to a1
    assert g.altar_supply == 13
    assert g.altars == {C("a1")} and g.glass == {C("a1")}
    assert g.vaults == {C("a1"): t_a3}


# --- D16, D22 -----------------------------------------------------------------------------


def test_D16_repromote_must_change_rank_and_returns_the_old_token() -> None:
    T = Tiles()
    prom = T.take(order=Order.PROMOTE)
    g = build(T, vaults={"a1": T.take("Y")}, builders={"a1": (0, "A")},
              orders=[prom, T.take(order=Order.MOVE), T.take(order=Order.MOVE)])
    assert g.tokens == [3, 4]
    assert order_actions(g, 1) == ["O1:a1=M", "O1:a1=S", "O1:a1=J"]  # not A again
    assert rule_of(g, "O1:a1=A") == "§7"
    play(g, "O1:a1=M")
    assert g.builders[C("a1")] == (0, MASON)
    assert g.tokens == [3, 4]  # the Architect token came back, the Mason one left


def test_D16_promote_unranked_builder_takes_a_token() -> None:
    T = Tiles()
    prom = T.take(order=Order.PROMOTE)
    g = build(T, vaults={"a1": T.take("Y")}, builders={"a1": (0, "-")},
              orders=[prom, T.take(order=Order.MOVE), T.take(order=Order.MOVE)])
    play(g, "O1:a1=S")
    assert g.builders[C("a1")] == (0, STRONGMAN) and g.tokens == [3, 4]


def test_D16_repromote_still_needs_a_token_in_supply() -> None:
    T = Tiles()
    prom = T.take(order=Order.PROMOTE)
    g = build(T, vaults={c: T.take("Y") for c in ("a1", "b1", "c1", "d1")},
              builders={"a1": (0, "A"), "b1": (0, "M"), "c1": (0, "S"), "d1": (0, "J")},
              orders=[prom, T.take(order=Order.MOVE), T.take(order=Order.MOVE)])
    assert g.tokens == [0, 4]
    assert order_actions(g, 1) == []
    assert rule_of(g, "O1:a1=M") == "D9"


def test_D22_paid_promote_must_differ_from_the_rank_just_given() -> None:
    T = Tiles()
    prom = T.take(order=Order.PROMOTE)
    g = build(T, vaults={"a1": T.take("Y"), "b1": T.take("B")}, builders={"a1": (0, "-"), "b1": (1, "-")},
              orders=[prom, T.take(order=Order.MOVE), T.take(order=Order.MOVE)])
    play(g, "O1:a1=M")
    assert g.pending.kind == PAID and g.to_move == 1
    assert legal_strs(g) == ["pass", "$b1=A", "$b1=S", "$b1=J"]
    assert rule_of(g, "$b1=M") == "D22"
    play(g, "$b1=S")
    assert g.builders[C("b1")] == (1, STRONGMAN)
    assert g.tokens == [3, 3]
    assert g.coins == [2, 0]


def test_D22_paid_promote_also_changes_the_opponents_rank() -> None:
    T = Tiles()
    prom = T.take(order=Order.PROMOTE)
    g = build(T, options=CLASSIC, vaults={"a1": T.take("Y"), "b1": T.take("B")},
              builders={"a1": (0, "-"), "b1": (1, "A")},
              orders=[prom, T.take(order=Order.MOVE), T.take(order=Order.MOVE)])
    play(g, "O1:a1=M")
    # classic ranks A, M, S: not M (just given), not A (b1's own rank, D16)
    assert legal_strs(g) == ["pass", "$b1=S"]
    play(g, "$b1=S")
    assert g.tokens == [3, 3]  # player 2 got the Architect token back


# --- D17 ------------------------------------------------------------------------------------


def test_D17_altar_places_two_on_different_tiles() -> None:
    T = Tiles(festum=True)
    alt = T.take(order=Order.ALTAR)
    g = build(T, options=FESTUM, vaults={"a1": T.take("Y"), "b1": T.take("B")}, scaffold=["c1"],
              orders=[alt, T.take(order=Order.MOVE), T.take(order=Order.MOVE)])
    assert order_actions(g, 1) == ["O1:a1", "O1:b1"]  # not on scaffolding
    play(g, "O1:a1")
    assert g.pending.kind == SECOND_ALTAR
    assert legal_strs(g) == ["b1"]  # a different tile, without an altar
    play(g, "b1")
    assert g.altars == {C("a1"), C("b1")} and g.altar_supply == 12 and g.actions == 1


def test_D17_one_altar_when_the_supply_has_one() -> None:
    T = Tiles(festum=True)
    alt = T.take(order=Order.ALTAR)
    g = build(T, options=FESTUM, vaults={"a1": T.take("Y"), "b1": T.take("B")},
              orders=[alt, T.take(order=Order.MOVE), T.take(order=Order.MOVE)], altar_supply=1)
    play(g, "O1:a1")
    assert g.altars == {C("a1")} and g.altar_supply == 0
    assert g.pending.kind == MAIN and g.actions == 1 and g.discard[-1] == alt


def test_D17_one_altar_when_only_one_tile_is_free_of_altars() -> None:
    T = Tiles(festum=True)
    alt = T.take(order=Order.ALTAR)
    g = build(T, options=FESTUM, vaults={"a1": T.take("Y"), "b1": T.take("B")}, altars=["b1"],
              orders=[alt, T.take(order=Order.MOVE), T.take(order=Order.MOVE)])
    assert g.altar_supply == 13
    play(g, "O1:a1")
    assert g.altars == {C("a1"), C("b1")} and g.altar_supply == 12 and g.pending.kind == MAIN


def test_altar_protects_from_disaster() -> None:
    T = Tiles(festum=True)
    dis = T.take(order=Order.DISASTER)
    g = build(T, options=FESTUM, vaults={"a1": T.take("Y"), "b1": T.take("B"), "c1": T.take("R")},
              builders={"c1": (1, "-")}, altars=["a1"], glass=["b1"],
              orders=[dis, T.take(order=Order.MOVE), T.take(order=Order.MOVE)])
    # a1 has an altar, c1 a builder: only b1 can go
    assert order_actions(g, 1) == ["O1:b1"]
    b1 = g.vaults[C("b1")]
    play(g, "O1:b1")
    assert C("b1") not in g.vaults and g.glass == set()
    assert g.discard[-2:] == [b1, dis] and b1 in g.discard_up


# --- D18 -------------------------------------------------------------------------------------


def order_faces(obs) -> list[OrderFace]:
    faces = [f for f in obs.orders if f is not None]
    if obs.stack_top is not None:
        faces.append(obs.stack_top)
    faces += [f for f in obs.discard if isinstance(f, OrderFace)]
    if obs.in_hand is not None:
        faces.append(obs.in_hand[1])
    return faces


def test_D18_order_faces_hide_the_crown() -> None:
    g = Game.new(default_manifest(), FESTUM, SEED)
    for p in (0, 1):
        obs = observe(g, p)
        faces = order_faces(obs)
        assert len(faces) == 4
        assert all(f.crown is None for f in faces)
        # vault faces show it
        for f, t in zip(obs.market, g.market):
            assert f.crown == g.spec(t).crown and f.tile == t


def test_D18_box_that_prints_crowns_on_order_faces() -> None:
    import dataclasses

    m = dataclasses.replace(default_manifest(), order_faces_show_crown=True)
    g = Game.new(m, PORTAL, SEED)
    obs = observe(g, 0)
    for f, t in zip(obs.orders, g.orders):
        assert f.crown == g.spec(t).crown
    assert obs.stack_top.crown == g.spec(g.stack[-1]).crown


def test_D18_hidden_crown_and_stack_order_do_not_change_the_observation() -> None:
    # Y RECRUIT tiles: one without, one with a crown (same order face)
    T1 = Tiles()
    plain_rec = T1.take("Y", order=Order.RECRUIT, crown=False)
    crown_rec = T1.take("Y", order=Order.RECRUIT, crown=True)
    top = T1.plain()
    below = [T1.take("G"), T1.take("B"), T1.take("R")]
    o2, o3 = T1.take(order=Order.MOVE), T1.take(order=Order.MOVE)
    market = [T1.plain(), T1.plain(), T1.plain()]
    a = build(T1, orders=[plain_rec, o2, o3], market=market, stack=[top, crown_rec] + below)
    T2 = Tiles()
    T2.used = set(T1.used)
    b = build(T2, orders=[crown_rec, o2, o3], market=market, stack=[top] + below[::-1] + [plain_rec])
    assert a.state_hash() != b.state_hash()
    for p in (0, 1):
        assert observe(a, p) == observe(b, p)
    # but the top of the stack is public
    c = build(Tiles(), orders=[plain_rec, o2, o3], market=market, stack=[below[0], crown_rec, top] + below[1:])
    assert observe(c, 0) != observe(a, 0)


# --- D19 --------------------------------------------------------------------------------------


def test_D19_builder_only_on_tile_just_placed() -> None:
    T = Tiles()
    g = build(T, vaults={"a1": T.take("Y")},
              orders=[T.take(order=Order.MOVE), T.take(order=Order.MOVE), T.take(order=Order.MOVE)])
    assert "builder" not in kinds(g)  # nothing placed yet this turn
    assert rule_of(g, "B:a1") == "D19"
    play(g, "V1:b1")
    builder_acts = [str(a) for a in g.legal_actions() if a.kind == "builder"]
    assert builder_acts == ["B:b1"]
    assert rule_of(g, "B:a1") == "D19"
    play(g, "B:b1")
    assert g.builders == {C("b1"): (0, NO_RANK)} and g.supply == [4, 5] and g.actions == 2
    assert "builder" not in kinds(g)  # only immediately after the placement


def test_D19_no_builder_after_another_action_in_between() -> None:
    T = Tiles()
    g = build(T, vaults={"a1": T.take("Y")})
    play(g, "V1:b1", "O2:c1")  # a SCAFFOLDING order in between
    play(g, "d1")
    assert "builder" not in kinds(g)


def test_D19_no_builder_across_turns() -> None:
    T = Tiles()
    g = build(T, actions=2)
    play(g, "V1:a1")  # third action: the turn passes
    assert g.active == 1 and "builder" not in kinds(g)


def test_D19_no_builder_after_a_scoring_placement() -> None:
    T = Tiles()
    crown = T.take("Y", crown=True)
    g = build(T, market=[crown, T.plain(), T.plain()], pawn=9)
    play(g, "V1:a1")
    assert g.scorings == 1 and g.active == 1
    assert "builder" not in kinds(g)


def test_D19_no_builder_without_supply() -> None:
    T = Tiles()
    g = build(T, supply=(0, 5))
    play(g, "V1:a1")
    assert "builder" not in kinds(g)
    assert rule_of(g, "B:a1") == "§5 PLACE BUILDER"


# --- D20 -------------------------------------------------------------------------------------


def confuse_game(coins=(1, 1)) -> Game:
    """a1 b1 c1 . e1 / a2 . . . e2 / . . . . e3
    player 1: a1 (Mason), c1, e1; player 2: b1 (Architect), a2, e2 (on an altar); e3 free."""
    T = Tiles(festum=True)
    conf = T.take(order=Order.CONFUSE)
    vaults = {c: T.take("Y") for c in ("a1", "b1", "c1", "e1", "a2", "e2", "e3")}
    return build(T, options=FESTUM, vaults=vaults,
                 builders={"a1": (0, "M"), "c1": (0, "-"), "e1": (0, "-"),
                           "b1": (1, "A"), "a2": (1, "-"), "e2": (1, "-")},
                 altars=["e2"], coins=coins,
                 orders=[conf, T.take(order=Order.MOVE), T.take(order=Order.MOVE)])


def test_D20_confuse_needs_a_removal_that_lets_an_unprotected_builder_move() -> None:
    g = confuse_game()
    # removing a1 frees it for b1 and a2; removing c1 frees it for b1;
    # removing e1 would only help e2, which stands on an altar
    assert order_actions(g, 1) == ["O1:a1", "O1:c1"]
    assert rule_of(g, "O1:e1") == "§7"


def test_D20_confuse_order_of_play_with_paid_choice() -> None:
    g = confuse_game()
    play(g, "O1:a1")
    # 1. the builder is removed and goes home with its token
    assert C("a1") not in g.builders
    assert g.supply == [3, 2] and g.tokens == [4, 3]
    # 2. the opponent pays or declines
    assert g.pending.kind == CONFUSE_PAY and g.to_move == 1
    assert legal_strs(g) == ["pass", "$"]
    play(g, "$")
    assert g.coins == [2, 0]  # the coin goes to the active player
    # 3. the payer picks the move among the legal ones (e2 on its altar never)
    assert g.pending.kind == CONFUSE_MOVE and g.to_move == 1
    assert legal_strs(g) == ["b1-a1", "a2-a1"]
    play(g, "b1-a1")
    assert g.builders[C("a1")] == (1, ARCHITECT)  # moves with its token
    assert C("b1") not in g.builders
    assert g.pending.kind == MAIN and g.to_move == 0 and g.actions == 1


def test_D20_confuse_declined_active_player_picks() -> None:
    g = confuse_game()
    play(g, "O1:c1", "pass")
    assert g.coins == [1, 1]
    assert g.pending.kind == CONFUSE_MOVE and g.to_move == 0
    assert legal_strs(g) == ["b1-c1"]
    play(g, "b1-c1")
    assert g.builders[C("c1")] == (1, ARCHITECT)


def test_D20_confuse_without_coin_goes_straight_to_the_move() -> None:
    g = confuse_game(coins=(1, 0))
    play(g, "O1:a1")
    assert g.pending.kind == CONFUSE_MOVE and g.to_move == 0
    assert rule_of(g, "e2-e3") == "D20"  # protected by its altar


def test_D20_confuse_any_builder_when_a_move_exists_already() -> None:
    T = Tiles()
    conf = T.take(order=Order.CONFUSE)
    vaults = {c: T.take("Y") for c in ("a1", "b1", "e1")}
    g = build(T, vaults=vaults, builders={"a1": (0, "-"), "e1": (0, "-"), "b1": (1, "-")},
              orders=[conf, T.take(order=Order.MOVE), T.take(order=Order.MOVE)], coins=(1, 0))
    # b1 cannot move now (a1 taken, c1/b2 no tiles), but removing a1 frees it;
    # removing e1 frees nothing b1 can reach
    assert order_actions(g, 1) == ["O1:a1"]


# --- D24 Jester --------------------------------------------------------------------------------


def jester_game(crown: bool = True, pawn: int = 9, **kw) -> Game:
    """a1 Y (player 1 Jester), b1 B, c1 G, d1 R (player 2 Jester); the crowned
    green tile in V1 goes to e1 and sets off a scoring."""
    T = Tiles()
    crown = T.take("G", crown=crown)
    vaults = {"a1": T.take("Y"), "b1": T.take("B"), "c1": T.take("G"), "d1": T.take("R")}
    builders = kw.pop("builders", {"a1": (0, "J"), "d1": (1, "J")})
    return build(T, vaults=vaults, builders=builders, market=[crown, T.plain(), T.plain()], pawn=pawn, **kw)


def test_D24_jester_colours_chosen_before_scoring_secret_from_each_other() -> None:
    g = jester_game()
    play(g, "V1:e1")
    assert g.pending.kind == JESTER_COLORS and g.to_move == 0 and g.scorings == 0
    # a colour the tile does not have already
    assert legal_strs(g) == ["J:a1=B", "J:a1=R", "J:a1=G"]
    assert rule_of(g, "J:a1=Y") == "D24"
    a, b = g.clone(), g.clone()
    play(a, "J:a1=B")
    play(b, "J:a1=G")
    # player 2 cannot tell which colour player 1 committed
    assert observe(a, 1) == observe(b, 1)
    assert observe(a, 1).other_jester_committed and observe(a, 1).my_jester_choice is None
    assert observe(a, 0).my_jester_choice == ((C("a1"), B),)
    assert observe(a, 0) != observe(b, 0)
    assert a.to_move == 1 and legal_strs(a) == ["J:d1=Y", "J:d1=B", "J:d1=G"]
    play(a, "J:d1=G")
    # scoring with a1 = Y+B and d1 = R+G:
    #   Y {a1}: player 1, 1;  B {a1,b1}: player 1, 2
    #   G {c1,d1,e1}: player 2, 3;  R {d1}: player 2, 1
    assert a.scorings == 1 and a.scores == [3, 4]
    assert a.scoring_log[-1].jester_colors == ((C("a1"), B), (C("d1"), G))
    play(b, "J:d1=G")
    # a1 = Y+G: lone green tile from a Jester makes no area (D12): 1 for player 1
    assert b.scores == [1, 4]


def test_D24_single_owner_chooses_openly() -> None:
    g = jester_game(builders={"a1": (0, "J"), "d1": (1, "-")})
    play(g, "V1:e1")
    assert g.pending.kind == JESTER_COLORS and g.to_move == 0
    play(g, "J:a1=B")
    # no second choice: the scoring happens at once
    assert g.scorings == 1 and g.scores == [3, 1]
    assert g.active == 1 and g.pending.kind == MAIN


def test_D24_jester_owned_by_opponent_of_active_player() -> None:
    g = jester_game(builders={"a1": (0, "-"), "d1": (1, "J")})
    play(g, "V1:e1")
    assert g.pending.kind == JESTER_COLORS and g.to_move == 1
    play(g, "J:d1=G")
    assert g.scores == [1, 4]


def test_D24_jester_tile_may_sit_next_to_wild_tiles() -> None:
    T = Tiles()
    g = build(T, vaults={"a1": T.take("Y")}, builders={"a1": (0, "J")},
              market=[T.take("B/R", crown=False), T.plain(), T.plain()])
    assert "V1:b1" in legal_strs(g)


def test_D24_jester_colours_before_the_final_scoring_too() -> None:
    g = jester_game(scorings=2, pawn=29, builders={"a1": (0, "J"), "d1": (1, "-")})
    play(g, "V1:e1")
    assert g.pending.kind == JESTER_COLORS and not g.over
    play(g, "J:a1=B")
    assert g.over and g.end_reason == "last-scoring" and g.scores == [3, 1]


# --- D25, D26 ------------------------------------------------------------------------------------


def test_D25_game_ends_mid_refill_when_the_second_stack_is_empty() -> None:
    T = Tiles()
    yb, yc = T.take("Y"), T.take("Y", crown=False, order=Order.RECRUIT)
    x1 = T.take(order=Order.MOVE)
    g = build(T, vaults={"a1": T.take("Y"), "b1": yb}, builders={"a1": (0, "-"), "b1": (1, "S")},
              market=[yc, T.plain(), T.plain()],
              orders=[x1, T.take(order=Order.MOVE), T.take(order=Order.MOVE)],
              stack=[], rest="out", reshuffles=1, active=0)
    events = play(g, "V1:c1")
    assert [e.kind for e in events] == ["stack-out", "scoring", "game-over"]
    assert g.over and g.end_reason == "stack" and g.to_move is None
    # final scoring on the board as it stands: Y {a1,b1,c1}: 1-1, player 2's
    # Strongman breaks the tie: player 2 scores 3, player 1 one builder = 1
    assert g.scores == [1, 3] and g.scorings == 1
    # mid-refill: the order above V1 moved down, no tile for O1
    assert g.market[0] == x1 and g.orders[0] is None
    # the rest of the turn is lost; no clean-up (D26)
    assert g.actions == 1 and g.active == 0
    assert g.builders == {C("a1"): (0, NO_RANK), C("b1"): (1, STRONGMAN)}
    assert g.legal_actions() == []
    with pytest.raises(IllegalAction):
        g.apply(Action("vault", 2, C("d1")))
    assert g.winner() == 1 and g.result() == (1, 3)
    g.tile_locations()


def test_D25_last_tile_drawn_from_second_stack_does_not_end_the_game() -> None:
    T = Tiles()
    last = T.plain()
    g = build(T, stack=[last], rest="out", reshuffles=1)
    play(g, "V1:a1")
    assert not g.over and g.stack == [] and g.orders[0] == last


def test_D25_game_ends_mid_redeal() -> None:
    T = Tiles()
    s1, s2 = T.plain(), T.plain()
    g = blocked(T, stack=[s1, s2], rest="out", reshuffles=1)
    old = list(g.market)
    # player 1 on b1 (Y) and d1 (B): Y {b1, b2 (Y/R)} = 2, B {d1} alone = 1
    # (a1, c1, e1 are R/G and link nothing to them)
    g.builders = {C("b1"): (0, NO_RANK), C("d1"): (0, NO_RANK)}
    g.supply = [3, 5]
    g._legal = None
    play(g, "V*")
    assert g.over and g.end_reason == "stack"
    assert g.discard == old and g.market == [s1, s2, None]
    assert g.scores == [3, 0]


def test_D25_final_scoring_asks_jester_colours() -> None:
    g = jester_game(crown=False, builders={"a1": (0, "J"), "d1": (1, "-")}, stack=[], rest="out",
                    reshuffles=1)
    play(g, "V1:e1")  # the refill needs a draw from the empty second stack
    assert g.pending.kind == JESTER_COLORS and not g.over
    play(g, "J:a1=B")
    assert g.over and g.end_reason == "stack" and g.scorings == 1


def test_D26_third_scoring_no_clean_up_no_refill() -> None:
    T = Tiles()
    crown = T.take("Y", crown=True)
    o1 = T.take(order=Order.MOVE)
    g = build(T, vaults={"a1": T.take("Y"), "a2": T.take("B")}, builders={"a1": (0, "A")},
              market=[crown, T.plain(), T.plain()],
              orders=[o1, T.take(order=Order.MOVE), T.take(order=Order.MOVE)],
              pawn=29, scorings=2, scores=(20, 30))
    stack_before = list(g.stack)
    play(g, "V1:b1")
    # Y {a1,b1} with an Architect: 2*2 = 4
    assert g.over and g.end_reason == "last-scoring" and g.scores == [24, 30] and g.scorings == 3
    assert g.builders == {C("a1"): (0, ARCHITECT)}  # no clean-up
    assert set(g.vaults) == {C("a1"), C("a2"), C("b1")}
    assert g.market[0] is None and g.orders[0] == o1 and g.stack == stack_before  # no refill
    assert g.active == 0  # no next turn
    assert g.to_move is None and g.winner() == 1


def test_D26_stack_out_during_post_scoring_refill_ends_without_another_scoring() -> None:
    T = Tiles()
    crown = T.take("Y", crown=True)
    g = build(T, vaults={"a1": T.take("Y")}, builders={"a1": (0, "-")},
              market=[crown, T.plain(), T.plain()], stack=[], rest="out", reshuffles=1, pawn=9)
    events = play(g, "V1:b1")
    # scoring 1: Y {a1,b1} = 2 for player 1; clean-up; the refill needs a draw
    assert [e.kind for e in events] == ["scoring", "stack-out", "game-over"]
    assert g.over and g.end_reason == "stack"
    assert g.scorings == 1 and len(g.scoring_log) == 1 and g.scores == [2, 0]
    assert g.builders == {} and g.supply == [5, 5]


# --- D27 ------------------------------------------------------------------------------------


def recruit_game(**kw) -> Game:
    T = Tiles()
    rec = T.take(order=Order.RECRUIT)
    vaults = {c: T.take("Y") for c in ("a1", "b1", "c1", "e1")}
    builders = kw.pop("builders", {"b1": (1, "-")})
    return build(T, vaults=vaults, builders=builders,
                 orders=[rec, T.take(order=Order.MOVE), T.take(order=Order.MOVE)], **kw)


def test_D27_paid_recruit_offered_coin_goes_to_active_player() -> None:
    g = recruit_game()
    play(g, "O1:e1")
    assert g.pending.kind == PAID and g.to_move == 1
    assert legal_strs(g) == ["pass", "$a1", "$c1"]  # next to player 2's builder on b1
    play(g, "$a1")
    assert g.coins == [2, 0]
    assert g.builders[C("a1")] == (1, NO_RANK) and g.supply == [4, 3]
    # it costs no action; player 1 took one action
    assert g.actions == 1 and g.to_move == 0 and g.pending.kind == MAIN


def test_D27_declining_keeps_the_coin() -> None:
    g = recruit_game()
    play(g, "O1:e1", "pass")
    assert g.coins == [1, 1] and g.supply == [4, 4] and g.actions == 1


def test_D27_no_offer_without_a_coin() -> None:
    g = recruit_game(coins=(1, 0))
    play(g, "O1:e1")
    assert g.pending.kind == MAIN and g.to_move == 0


def test_D27_no_offer_without_a_builder_in_supply() -> None:
    g = recruit_game(supply=(5, 0))
    play(g, "O1:e1")
    assert g.pending.kind == MAIN and g.to_move == 0


def test_D27_no_offer_without_a_legal_cell() -> None:
    # player 2 on e1's neighbour? put them on a1 with b1 occupied by player 1
    g = recruit_game(builders={"a1": (1, "-"), "b1": (0, "-")})
    play(g, "O1:c1")
    assert g.pending.kind == MAIN and g.to_move == 0


def test_D27_paid_promote_needs_token_and_builder() -> None:
    for builders, tokens in (
        ({"a1": (0, "-")}, (4, 4)),  # player 2 has no builder
        ({"a1": (0, "-"), "b1": (1, "-")}, (4, 0)),  # player 2 has no token
    ):
        T = Tiles()
        prom = T.take(order=Order.PROMOTE)
        g = build(T, vaults={"a1": T.take("Y"), "b1": T.take("B")}, builders=builders, tokens=tokens,
                  orders=[prom, T.take(order=Order.MOVE), T.take(order=Order.MOVE)])
        play(g, "O1:a1=A")
        assert g.pending.kind == MAIN and g.to_move == 0


def test_D27_active_player_may_hold_two_coins() -> None:
    g = recruit_game(coins=(1, 1))
    play(g, "O1:e1", "$a1")
    assert g.coins == [2, 0]
    assert sum(g.coins) == 2


def test_D3_D27_tile_without_paid_option_offers_none() -> None:
    # A box whose RECRUIT tile has no paid option (manifest "paid": false):
    # D27 offers the paid option only after "a tile with a paid option".
    import dataclasses

    m = default_manifest()
    rec_id = next(t.id for t in m.tiles if t.order is Order.RECRUIT)
    tiles = [dataclasses.replace(t, paid=False) if t.id == rec_id else t for t in m.tiles]
    m2 = dataclasses.replace(m, tiles=tuple(tiles))
    T = Tiles(m2)
    T.used.add(rec_id)
    vaults = {c: T.take("Y") for c in ("a1", "b1", "c1", "e1")}
    g = build(T, vaults=vaults, builders={"b1": (1, "-")},
              orders=[rec_id, T.take(order=Order.MOVE), T.take(order=Order.MOVE)])
    play(g, "O1:e1")
    assert g.pending.kind == MAIN and g.to_move == 0 and g.coins == [1, 1]


def test_D3_D27_confuse_tile_without_paid_option_goes_straight_to_the_move() -> None:
    import dataclasses

    m = default_manifest()
    conf_id = next(t.id for t in m.tiles if t.order is Order.CONFUSE)
    m2 = dataclasses.replace(m, tiles=tuple(dataclasses.replace(t, paid=False) if t.id == conf_id else t
                                            for t in m.tiles))
    T = Tiles(m2)
    T.used.add(conf_id)
    vaults = {c: T.take("Y") for c in ("a1", "b1")}
    g = build(T, vaults=vaults, builders={"a1": (0, "-"), "b1": (1, "-")},
              orders=[conf_id, T.take(order=Order.MOVE), T.take(order=Order.MOVE)])
    play(g, "O1:a1")
    assert g.pending.kind == CONFUSE_MOVE and g.to_move == 0


# --- §7 other orders ---------------------------------------------------------------------------


def test_move_order_to_adjacent_unoccupied_vault_with_token() -> None:
    T = Tiles()
    mv = T.take(order=Order.MOVE)
    g = build(T, vaults={c: T.take("Y") for c in ("a1", "b1", "c1", "a2")},
              builders={"b1": (0, "S"), "c1": (1, "-")}, scaffold=["b2"],
              orders=[mv, T.take(order=Order.RECRUIT), T.take(order=Order.RECRUIT)])
    # b1 -> a1 (free vault); not c1 (occupied), not b2 (scaffolding), never diagonal a2
    assert order_actions(g, 1) == ["O1:b1-a1"]
    play(g, "O1:b1-a1")
    assert g.builders == {C("a1"): (0, STRONGMAN), C("c1"): (1, NO_RANK)}


def test_stained_glass_one_per_tile_where_you_have_a_builder() -> None:
    T = Tiles()
    sg = T.take(order=Order.STAINED_GLASS)
    g = build(T, vaults={c: T.take("Y") for c in ("a1", "b1", "c1")},
              builders={"a1": (0, "-"), "b1": (0, "-"), "c1": (1, "-")}, glass=["a1"],
              orders=[sg, T.take(order=Order.MOVE), T.take(order=Order.MOVE)])
    assert order_actions(g, 1) == ["O1:b1"]


def test_D18_discarded_order_keeps_its_crown_hidden_discarded_vault_shows_it() -> None:
    T = Tiles()
    mv = T.take("Y", order=Order.MOVE, crown=True)
    dis = T.take(order=Order.DISASTER, crown=True)
    b1 = T.take("B", crown=True)
    g = build(T, vaults={"a1": T.take("Y"), "b1": b1}, builders={"a1": (0, "-")},
              orders=[dis, mv, T.take(order=Order.STAINED_GLASS)])
    play(g, "O1:b1")  # DISASTER: b1 (vault face up) then the order tile (order face up)
    for p in (0, 1):
        obs = observe(g, p)
        vault_face, order_face = obs.discard[-2], obs.discard[-1]
        assert not isinstance(vault_face, OrderFace)
        assert vault_face.tile == b1 and vault_face.crown is True
        assert isinstance(order_face, OrderFace)
        assert order_face.order is Order.DISASTER and order_face.crown is None
