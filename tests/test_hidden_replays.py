"""Issue 10: games dealt face down by sra-p256-v1, recorded and verified end to end: the deal
audited, nothing predictable from the first records, every cheat caught and blamed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support import replay_builders as rb
from basilica_p2p.bots import RandomBot
from basilica_p2p.engine import Options, TileSpec
from basilica_p2p.replay.local import play_recorded
from basilica_p2p.replay.show import walk
from basilica_p2p.replay.verify import verify_file
from support.stack_predictor import predicted_draws, seen_draws

HIDDEN = "sra-p256-v1"


def record(path: Path, options: Options = Options(), seed: int = 1) -> Path:
    play_recorded(path, rb.manifest(), options, rb.PLAYERS, (RandomBot(seed), RandomBot(seed + 100)),
                  nonces=(bytes([1]) * 32, bytes([2]) * 32), game_id=rb.GAME_ID, salts=rb.salts(),
                  shuffle=HIDDEN, deal_secrets=(bytes([3]) * 32, bytes([4]) * 32))
    return path


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record(tmp_path_factory.mktemp("hidden") / "game.replay")


def edit(src: Path, out: Path, change: Any) -> Path:
    """Re-sign the chain of ``src`` after ``change(items)`` edits its messages in place."""
    replay, envs = rb.load(src)
    items = rb.as_items(envs)
    cut = change(items)
    chain = rb.rechain(items if cut is None else items[:cut])
    return rb.write(out, replay.header_bytes, rb.raws(chain))


def index_of(items: list[Any], type_: str, who: Any = None, nth: int = 0) -> int:
    found = [i for i, (w, t, _) in enumerate(items) if t == type_ and (who is None or w is who)]
    return found[nth]


@pytest.mark.parametrize("options,seed", [(Options(), 1), (Options(ruleset="classic"), 2),  # type: ignore[arg-type]
                                          (Options(festum=True, festum_removal=True), 3)])
def test_a_hidden_game_verifies_with_its_deal_audited(tmp_path: Path, options: Options, seed: int) -> None:
    v = verify_file(record(tmp_path / "g.replay", options, seed), rb.manifests())
    assert v.ok, v.error
    assert v.line().endswith(", deal audited") and v.to_json()["deal_audited"] is True


def test_some_hidden_game_reshuffles_and_still_verifies(tmp_path: Path) -> None:
    for seed in range(20):
        path = record(tmp_path / f"g{seed}.replay", Options(), seed)
        w = walk(path, rb.manifests())
        if any(e.kind == "reshuffle" for m in w.moves for e in m.events):
            assert verify_file(path, rb.manifests()).ok
            types = [rb.load(path)[1][i].type for i in range(len(w.replay.records))]
            assert types.count("deal") == 6  # the box's three steps, then the reshuffle's
            return
    raise AssertionError("no game of 20 reached the D11 reshuffle")


def test_the_first_records_no_longer_predict_the_draws(honest: Path) -> None:
    # The attack of the issue, run on a hidden game: from hellos, commits and reveals the
    # commit-reveal prediction matches the real draws no better than chance.
    seen = seen_draws(honest, rb.manifest())
    predicted = predicted_draws(honest, rb.manifest())
    assert len(seen) >= 20
    hits = sum(a == b for a, b in zip(seen, predicted))
    assert hits <= 3, f"{hits} of {len(seen)} draws predicted"


def test_before_the_first_decision_only_the_market_is_known_by_its_tiles(honest: Path) -> None:
    from basilica_p2p.replay.file import read_replay
    from basilica_p2p.replay.verify import referee_for
    from basilica_p2p.wire import open_envelope

    replay = read_replay(honest)
    ref = referee_for(replay, rb.manifests())
    for raw in replay.records:  # the referee as it stands when the first decision is due
        env = open_envelope(raw)
        if env.type == "action":
            break
        ref.feed(env)
    g = ref.game
    assert g is not None and ref.waiting_for()[0] == "action"
    known = {p: g.known(p) for p in [*g.orders, *g.market, *g.stack, *g.out]}
    tiles = [p for p, k in known.items() if isinstance(k, TileSpec)]
    assert sorted(tiles) == sorted(g.market)  # V1-V3 face up; O1-O3 and the stack top by face only
    assert all(known[p] is None for p in g.stack[:-1])  # below the top: nothing at all


# --- cheating, caught and blamed ---------------------------------------------------------


def _deal_step(items: list[Any], step: int) -> dict[str, Any]:
    return items[index_of(items, "deal", nth=step - 1)][2]


@pytest.mark.parametrize("cheat,words", [
    ("repeat", "repeat"), ("off-curve", "p-256 point"), ("count", "card"),
])
def test_a_bad_deal_step_is_refused_naming_its_player(honest: Path, tmp_path: Path, cheat: str, words: str) -> None:
    def change(items: list[Any]) -> None:
        cards = _deal_step(items, 2)["decks"][0]["cards"]
        if cheat == "repeat":
            cards[1] = cards[0]
        elif cheat == "off-curve":
            cards[0] = b"\xff" * 32
        else:
            cards.pop()

    v = verify_file(edit(honest, tmp_path / "x.replay", change), rb.manifests())
    assert not v.ok and "player 2's deal" in v.error and words in v.error.lower(), v.error


def test_a_false_share_is_blamed_on_its_sender_at_the_reveal(honest: Path, tmp_path: Path) -> None:
    def change(items: list[Any]) -> None:
        i = index_of(items, "shares", rb.BOB)
        share = items[i][2]["shares"][0]
        share[2] = (int.from_bytes(share[2], "big") ^ 1).to_bytes(32, "big")

    v = verify_file(edit(honest, tmp_path / "x.replay", change), rb.manifests())
    assert not v.ok and "player 2's share" in v.error and "commitment" in v.error, v.error


def test_a_secret_that_does_not_give_the_signed_deal_is_blamed_at_the_audit(honest: Path, tmp_path: Path) -> None:
    # Whether player 2 keyed the deck with another secret than it publishes, or publishes a
    # false one, its signed data and its secret disagree: the audit names player 2.
    def change(items: list[Any]) -> None:
        items[index_of(items, "secret", rb.BOB)][2]["secret"] = bytes([9]) * 32

    v = verify_file(edit(honest, tmp_path / "x.replay", change), rb.manifests())
    assert not v.ok and "audit" in v.error and "player 2's signed deal data" in v.error, v.error


def test_a_secret_withheld_at_the_end_is_an_absence_and_the_deal_not_audited(honest: Path, tmp_path: Path) -> None:
    # The board has decided, but the secrets come before the results: player 2 withholds its
    # own, and player 1, having waited, claims the forfeit. Refusing the audit cannot keep a win.
    def change(items: list[Any]) -> int:
        i = index_of(items, "secret", rb.BOB)
        items[i] = (rb.ALICE, "forfeit", {"loser": 2, "reason": "no secret within 20 s"})
        return i + 1

    v = verify_file(edit(honest, tmp_path / "x.replay", change), rb.manifests())
    assert v.ok and v.to_json()["deal_audited"] is False and v.outcome is not None, v.line()
    assert v.outcome.winner == 0 and v.outcome.claimed_by == 0
    assert "deal not audited: the game ended by forfeit before both deal secrets were published" in v.line()
    # Only secrets, results and absences may follow the board's decision: no other forfeit.
    v = verify_file(edit(honest, tmp_path / "y.replay", lambda items: (
        items.__setitem__(index_of(items, "result"), (rb.BOB, "forfeit", {"loser": 1, "reason": "x"})),
        index_of(items, "result") + 1)[1]), rb.manifests())
    assert not v.ok and "after the game ended on the board" in v.error, v.error


def test_a_forfeit_leaves_the_deal_not_audited(honest: Path, tmp_path: Path) -> None:
    def change(items: list[Any]) -> int:
        i = index_of(items, "action", nth=10)
        items[i] = (items[i][0], "forfeit", {"loser": 1 if items[i][0] is rb.ALICE else 2, "reason": "quit"})
        return i + 1

    v = verify_file(edit(honest, tmp_path / "x.replay", change), rb.manifests())
    assert v.ok and "deal not audited: the game ended by forfeit" in v.line(), v.line()


def test_shares_for_other_cards_than_those_due_are_refused(honest: Path, tmp_path: Path) -> None:
    def change(items: list[Any]) -> None:
        i = index_of(items, "shares", rb.ALICE)
        items[i][2]["shares"][0][1] += 1

    v = verify_file(edit(honest, tmp_path / "x.replay", change), rb.manifests())
    assert not v.ok and "not for the cards due" in v.error, v.error


def _face_only_positions_pinned(path: Path) -> tuple[int, int]:
    """Walk a hidden replay message by message; count the positions the engine knows only by
    their order face while the opened cards already say which tile lies there, beyond what the
    face alone tells (a class with one possible tile there).  Returns (checked, pinned)."""
    from basilica_p2p.engine import FaceClass
    from basilica_p2p.replay.file import read_replay
    from basilica_p2p.replay.verify import referee_for
    from basilica_p2p.wire import open_envelope

    replay = read_replay(path)
    ref = referee_for(replay, rb.manifests())
    checked = pinned = 0
    for raw in replay.records:
        ref.feed(open_envelope(raw))
        g, table = ref.game, ref.deal_table
        if g is None or table is None or ref.waiting_for()[0] != "action":
            continue
        dealer = table.dealer
        for p in [*g.orders, *g.stack[-1:], *g.discard, *(h[0] for h in [g.in_hand] if h)]:
            if p is None or not isinstance(g.known(p), FaceClass):
                continue
            checked += 1
            pinned += dealer.tells_more_than_face(p)
    return checked, pinned


def test_no_order_face_tells_its_tile_before_it_is_turned_even_after_a_reshuffle() -> None:
    # A reshuffle deck labelled by earlier positions would show, with a reshuffled tile's order
    # face, which tile it was: the reshuffle is two-level too.
    sample = Path(__file__).parent.parent / "replays" / "hidden-reshuffle-greedy-vs-greedy.replay"
    checked, pinned = _face_only_positions_pinned(sample)
    assert checked > 50 and pinned == 0, (checked, pinned)


def test_a_card_that_opens_to_nothing_goes_to_the_audit_which_names_the_cheater(honest: Path,
                                                                                tmp_path: Path) -> None:
    # Player 1 slips a foreign point into its re-key step. Both shares of that
    # card match their commitments, so no share explains the card that opens to nothing: the game
    # goes straight to the secrets, and the audit names player 1 (it used to stop with no blame).
    from basilica_p2p.deal import hash_to_card

    secrets = {rb.ALICE: bytes([3]) * 32, rb.BOB: bytes([4]) * 32}

    def change(items: list[Any]) -> int:
        first_round = index_of(items, "shares")
        deck, position, _ = items[first_round][2]["shares"][0]
        step3 = _deal_step(items, 3)["decks"]
        faces = next(d for d in step3 if d["deck"] == deck)
        faces["cards"][position] = hash_to_card(rb.GAME_ID, "elsewhere", "not a tile")[0]  # on the curve
        # The round's second half opens the card; then only the secrets may follow.
        cut = first_round + 2
        items[cut:] = [(who, "secret", {"secret": secrets[who]}) for who in (rb.ALICE, rb.BOB)]
        return cut + 2

    v = verify_file(edit(honest, tmp_path / "x.replay", change), rb.manifests())
    assert not v.ok and "audit" in v.error and "player 1's signed deal data" in v.error, v.error


def test_a_broken_deal_with_one_clean_secret_names_the_other_player_by_elimination(honest: Path,
                                                                                 tmp_path: Path) -> None:
    # Player 2 slips a foreign point into its keyed deck (and player 1 re-keys it
    # honestly), so a card of the first round opens to nothing. Player 1 publishes its secret,
    # which reproduces all it signed; player 2 never publishes its own, and player 1 claims the
    # game. The deal was not audited, but the file proves whose data was false: player 2's.
    from basilica_p2p.deal import hash_to_card
    from basilica_p2p.deal._curve import N, inverse, load, multiply, private
    from basilica_p2p.deal._keys import card_key, deck_key

    secret_1 = bytes([3]) * 32  # the honest fixture's deal secret of player 1

    def change(items: list[Any]) -> int:
        first_round = index_of(items, "shares")
        deck, position, _ = items[first_round][2]["shares"][0]
        keyed = next(d for d in _deal_step(items, 2)["decks"] if d["deck"] == deck)
        rekeyed = next(d for d in _deal_step(items, 3)["decks"] if d["deck"] == deck)
        foreign = hash_to_card(rb.GAME_ID, "elsewhere", "not a tile")[0]
        keyed["cards"][position] = foreign
        a_inv = inverse(deck_key(secret_1, 1, rb.GAME_ID, deck))
        a_i = card_key(secret_1, 1, rb.GAME_ID, deck, position)
        rekeyed["cards"][position] = multiply(private(a_i * a_inv % N), load(foreign))  # player 1 is honest
        cut = first_round + 2
        items[cut:] = [(rb.ALICE, "secret", {"secret": secret_1}),
                       (rb.ALICE, "forfeit", {"loser": 2, "reason": "no secret within 120 s"})]
        return cut + 2

    v = verify_file(edit(honest, tmp_path / "x.replay", change), rb.manifests())
    assert v.ok, v.error
    assert "deal not audited" in v.line() and "player 1's secret reproduces all it signed, so player 2 dealt " \
        "falsely (by elimination)" in v.line(), v.line()


def test_a_false_secret_of_player_1_is_blamed_when_it_arrives(honest: Path, tmp_path: Path) -> None:
    def change(items: list[Any]) -> None:
        items[index_of(items, "secret", rb.ALICE)][2]["secret"] = bytes([9]) * 32

    path = edit(honest, tmp_path / "x.replay", change)
    v = verify_file(path, rb.manifests())
    secret_record = index_of(rb.as_items(rb.load(path)[1]), "secret", rb.ALICE) + 1
    assert not v.ok and "player 1's signed deal data" in v.error and rb.first_record(v.error) == secret_record


@pytest.mark.parametrize("seat", [0, 1])
def test_one_sides_replay_prefix_and_secret_hold_no_hidden_tile_at_the_first_decision(honest: Path,
                                                                                      seat: int) -> None:
    # The leak test, from one side's own material: its replay up to the first decision
    # and its deal secret (what its session file holds), fed to a live referee as resume does.
    # Its engine knows tiles only where the table shows them, and its deal has opened no card
    # beyond those: the stack order is not in what it holds.
    from basilica_p2p.engine import FaceClass
    from basilica_p2p.referee import Referee
    from basilica_p2p.replay.file import read_replay
    from basilica_p2p.replay.walk import spec_from_replay
    from basilica_p2p.wire import open_envelope

    replay = read_replay(honest)
    ref = Referee(spec_from_replay(replay, rb.manifests()), me=seat, deal_secret=bytes([3 + seat]) * 32)
    for raw in replay.records:
        env = open_envelope(raw)
        if env.type == "action":
            break
        ref.feed(env)
    g, table = ref.game, ref.deal_table
    assert g is not None and table is not None
    tiles = {p for p in [*g.orders, *g.market, *g.stack, *g.out] if not isinstance(g.known(p), (FaceClass, type(None)))}
    assert tiles == set(g.market)
    faces = {p for p in [*g.orders, *g.stack, *g.out] if isinstance(g.known(p), FaceClass)}
    assert faces == set(g.orders) | {g.stack[-1]}
    # Opened: one face card per place shown, and the sub-deck cards of V1-V3 only.
    opened = {c for c in table.machines if table.machines[c].opened}
    main = table.machines["faces"]
    assert len(main.opened) == 7  # O1-O3, V1-V3 and the stack top
    assert {p.index for p in [*g.orders, *g.market, g.stack[-1]]} == set(main.opened)
    assert sum(len(table.machines[c].opened) for c in opened if c != "faces") <= 3


def test_each_decision_of_a_hidden_game_is_told_once_applied_with_its_events(tmp_path: Path) -> None:
    # `match --show` tells moves as the seat applies them: a hidden decision may wait for its
    # cards, so it is told once they are open, with everything it set off.
    from basilica_p2p.engine import format_action
    from basilica_p2p.replay.local import play_both_seats
    from basilica_p2p.seat import MoveApplied, SeatEvent

    told: list[tuple[int, str, list[str]]] = []

    def watch(event: SeatEvent) -> None:
        if isinstance(event, MoveApplied):
            told.append((event.ply, format_action(event.action), [e.kind for e in event.events]))

    g = play_both_seats(tmp_path / "g.replay", rb.manifest(), Options(), rb.PLAYERS, (RandomBot(5), RandomBot(6)),
                        shuffle=HIDDEN, watch=watch).game
    assert [(n, applied) for n, applied, _ in told] == [(i, format_action(a)) for i, a in enumerate(g.history)]
    assert sum(kinds.count("scoring") for *_, kinds in told) == g.scorings


def test_a_refused_deal_step_leaves_every_deck_as_it_was(honest: Path) -> None:
    # A deal step whose first deck is right and whose second is not is refused whole: the first
    # deck's message is not kept, and the right step for that seq is then taken (PROTOCOL.md §6:
    # a refused envelope leaves the verifier exactly as it was).
    from basilica_p2p.replay.file import read_replay
    from basilica_p2p.replay.verify import referee_for
    from basilica_p2p.wire import ProtocolError, open_envelope, seal

    replay = read_replay(honest)
    ref = referee_for(replay, rb.manifests())
    envs = [open_envelope(raw) for raw in replay.records]
    first_deal = next(i for i, e in enumerate(envs) if e.type == "deal")
    for env in envs[:first_deal]:
        ref.feed(env)
    right = envs[first_deal]
    decks = [dict(d) for d in right.body["decks"]]
    decks[1]["cards"] = decks[1]["cards"][:-1]
    bad = seal(rb.ALICE.key, right.game, right.seq, right.prev, "deal", {"decks": decks})
    with pytest.raises(ProtocolError, match="player 1's deal of deck 'tiles/.*' has"):
        ref.feed(bad)
    for env in envs[first_deal:first_deal + 3]:
        ref.feed(env)
    assert ref.deal_table is not None and all(m.step == 3 for m in ref.deal_table.machines.values())


def test_a_deal_that_broke_with_no_one_to_blame_refuses_the_second_secret_and_keeps_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # protocol/vectors/deal-game.json's opening fault (a card that opens to nothing), with an audit
    # that finds nothing false (which no real deal can give: the verifier itself would be wrong).
    # The second secret is refused, and refused it is not kept: the referee is as before it.
    import json

    from basilica_p2p.engine import parse_manifest
    from basilica_p2p.replay.file import read_replay
    from basilica_p2p.replay.verify import known_manifests, referee_for
    from basilica_p2p.deal_table import DealTable
    from basilica_p2p.wire import ProtocolError, open_envelope, seal

    vectors = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
    data = json.loads((vectors / "deal-game.json").read_text(encoding="utf-8"))
    case = next(c for c in data["cases"] if c["name"] == "opening-fault-then-the-cheaters-secret")
    replay = read_replay(vectors / case["replay"])
    ref = referee_for(replay, known_manifests([parse_manifest(data["inputs"]["manifests"]["small"]["json"])]))
    monkeypatch.setattr(DealTable, "audit", lambda self, sender, secret: True)
    for raw in [*replay.records[:case["after"]], *(bytes.fromhex(h) for h in case["accepted"])]:
        ref.feed(open_envelope(raw))
    ref.feed(open_envelope(bytes.fromhex(case["envelope"])))  # player 1's secret, passed by the audit
    assert ref.deal_table is not None and ref.deal_table.broken and len(ref.deal_table.secrets) == 1
    second = seal(rb.key(2), ref.spec.game, ref.seq, ref.prev, "secret", {"secret": bytes([0xD2]) * 32})
    with pytest.raises(ProtocolError, match="yet the audit blames no one"):
        ref.feed(second)
    assert len(ref.deal_table.secrets) == 1 and ref.waiting_for() == ("secret", 1)
