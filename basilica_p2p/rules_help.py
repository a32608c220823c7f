"""The rules in short (docs/rules.md) and the notation card: what ``rules ORDER`` and ``help``
show at the line client's prompt, and the full-screen app's help and order tips."""

from __future__ import annotations

NOTATION = """\
Notation:  V2:b3 vault of V2 onto b3     V* redeal when no vault fits
           B:b3 builder on the vault just placed
           O1:c2 order of O1 on c2       O1:c2-c3 MOVE     O1:c2=M PROMOTE
           d4 second scaffolding/altar   c2-c3 the CONFUSE move
           $ pay (CONFUSE)  $c4 paid RECRUIT  $c4=S paid PROMOTE  pass decline
           J:c2=G Jester colour          ranks: A Architect, M Master Mason,
                                         S Strongman, J Jester
Board:     ^ crown  1A builder of player 1 with rank A  * glass  + altar
           ### scaffolding  $ paid order  Y/B wild vault (two colours)"""

RULES = {
    "TURN": "YOUR TURN: a turn is exactly three actions, in any mix (the header counts them: action 1 of "
            "3), and a scoring ends it at once. An action places a vault from the market (V2:b3), places a "
            "builder on the vault you placed with the action just before (B:b3), or carries out an order "
            "from the market (O1:c2). The market shows three slots, each an order on top (O1-O3) and the "
            "vault of the same slot below it (V1-V3). Taking V2 uses up the order O2 above it: that tile "
            "turns over into the new V2 and O2 is refilled from the stack, so plan an order before you take "
            "its vault. Crowns on placed vaults move the crown pawn; when it reaches a crown space, "
            "everything is scored ('rules scoring'). The goal is the most points after the last scoring.",
    "PROMOTE": "PROMOTE (O1:c2=M): put a rank token under one of your builders: A Architect (doubles "
               "an area's points for its majority), M Master Mason (counts 2 for strength), S Strongman "
               "(wins ties), J Jester (adds a colour before each scoring; portal2022). Re-promoting must "
               "change the rank. Paid: the opponent may pay a coin to promote one of theirs to another rank.",
    "MOVE": "MOVE (O1:c2-c3): move one of your builders to an adjacent unoccupied vault tile.",
    "RECRUIT": "RECRUIT (O1:c2): a builder from your supply onto any unoccupied vault tile. Paid: the "
               "opponent may pay a coin to put one of theirs next to one of their builders.",
    "CONFUSE": "CONFUSE (O1:c2): send your builder on c2 home; then an opponent builder (not on an altar) "
               "moves to an adjacent free vault tile. The opponent may pay a coin to choose that move "
               "($), otherwise you choose it (c2-c3).",
    "STAINED_GLASS": "STAINED GLASS (O1:c2): a glass on a tile where you have a builder: +2 points for "
                     "the majority of each of its areas (+4 on an altar).",
    "SCAFFOLDING": "SCAFFOLDING (O1:c2, then d4): two scaffolding tiles, placed like vaults but with no "
                   "colour; vaults can be built next to them. Removed at each scoring.",
    "DISASTER": "DISASTER (O1:c2): discard a vault tile with no builder and no altar on it.",
    "ALTAR": "ALTAR (O1:c2, then d4; festum): altars on two vault tiles. An altar protects its tile from "
             "DISASTER and its builder from CONFUSE, and makes glass there worth 4.",
    "VAULT": "PLACE VAULT (V2:b3): a vault of V1-V3 onto an empty cell of row 1 or next to a tile. Two "
             "wild (two-colour) tiles may not touch. A crown moves the pawn; reaching a crown space "
             "starts a scoring. Then you may PLACE BUILDER (B:b3) on it with your next action. If no "
             "vault fits anywhere, V* redeals V1-V3.",
    "RANKS": "RANKS (given by PROMOTE): A Architect doubles the majority's points in its areas; M Master "
             "Mason counts 2 for strength; S Strongman wins a tie of strength (two opposing Strongmen cancel); "
             "J Jester (portal2022) adds a colour of your choice to its tile before each scoring.",
    "PAID": "PAID ORDERS ($ on an order tile): after the other player's PROMOTE or RECRUIT you may pay them "
            "one coin to promote one of your builders to another rank ($c4=S) or to put a builder next to one "
            "of yours ($c4); after their CONFUSE you may pay one coin to choose the move yourself ($). "
            "'pass' declines. Without a coin you are not asked.",
    "JESTER": "JESTER (portal2022): before each scoring, each Jester's owner picks one colour its tile lacks "
              "(J:c2=G, or J:c2=G,d3=R for two). That colour counts for that scoring only. When both players "
              "own Jesters, both choose in secret and the choices are revealed together.",
    "SCORING": "SCORING: for each colour, connected tiles of that colour form areas. In each area with "
               "builders, the stronger side (a Master Mason counts 2; on a tie a lone Strongman wins) "
               "scores one point per tile, doubled by any Architect, +2 per glass; the other side scores "
               "1 per builder. Then builders go home, rows 1-2 are removed and the rest moves down. The "
               "last crown space (or the stack running out twice) ends the game; most points wins.",
}

ALIASES = {"GOAL": "TURN", "MARKET": "TURN", "TURNS": "TURN", "RANK": "RANKS", "PAY": "PAID", "JESTERS": "JESTER", "GLASS": "STAINED_GLASS", "STAINED": "STAINED_GLASS", "SCAFFOLD": "SCAFFOLDING",
           "VAULTS": "VAULT", "PLACE": "VAULT", "BUILDER": "VAULT", "SCORE": "SCORING"}


def rules_text(topic: str) -> str:
    """The rule for one order or topic, or the list of topics."""
    key = topic.strip().upper().replace(" ", "_")
    key = ALIASES.get(key, key)
    if not key:
        return "rules for: " + ", ".join(k.lower() for k in RULES) + " (e.g. 'rules move')"
    if key not in RULES:
        return f"no rule called {topic!r}; try one of: " + ", ".join(k.lower() for k in RULES)
    return RULES[key]
