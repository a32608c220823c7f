"""``basilica replay html``: the self-contained viewer page, checked as data and in headless Chromium.

The browser tests step through every sample replay with the buttons and the
arrow keys and compare what is drawn (the SVG's data attributes) with the
engine's own state at that step, computed here without the viewer's code.
"""

from __future__ import annotations

import html as html_lib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from support import replay_builders as rb
from basilica_p2p.cli import app
from basilica_p2p.engine import Game, Options, determinize, format_cell, observe
from basilica_p2p.engine.components import RANK_LETTER, Order, format_colors
from basilica_p2p.identity import Identity
from basilica_p2p.replay.file import frame, read_replay
from basilica_p2p.replay.html import build_viewer_data, public_state, script_json
from basilica_p2p.replay.local import play_recorded
from basilica_p2p.replay.show import walk
from basilica_p2p.replay.verify import verify_file

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "replays").glob("*.replay"))
runner = CliRunner()


def cli(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), env={"BASILICA_HOME": None})


def real_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "BASILICA_HOME"}
    return subprocess.run([sys.executable, "-m", "basilica_p2p.cli", *args], capture_output=True, text=True,
                          env=env, timeout=120, cwd=cwd)


def embedded(page: str) -> dict[str, Any]:
    m = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))  # type: ignore[no-any-return]


def engine_states(path: Path) -> tuple[list[Game], list[list[str]]]:
    """The engine's state at every step (the start, then after each decision) and each step's event kinds."""
    w = walk(path, rb.manifests())
    assert w.start is not None and not w.error
    return [w.start] + [m.game for m in w.moves], [[]] + [[e.kind for e in m.events] for m in w.moves]


def drawn_from_engine(g: Game) -> dict[str, Any]:
    """What the page must draw for state ``g``, straight from the engine (not through the viewer's code)."""
    cells = []
    for c, t in sorted(g.vaults.items()):
        spec = g.specs[t]
        b = g.builders.get(c)
        cells.append([format_cell(c), "vault", format_colors(spec.colors),
                      "" if b is None else f"{b[0] + 1}{RANK_LETTER.get(b[1], '')}",
                      c in g.glass, c in g.altars, spec.crown])
    cells += [[format_cell(c), "scaffold", "", "", False, False, False] for c in sorted(g.scaffold)]
    return {
        "cells": sorted(cells),
        "orders": [None if t is None else [g.specs[t].order.value, format_colors(g.specs[t].colors),
                                           g.specs[t].paid] for t in g.orders],
        "vaults": [None if t is None else [format_colors(g.specs[t].colors), g.specs[t].crown] for t in g.market],
        "scores": [str(s) for s in g.scores], "coins": [str(s) for s in g.coins],
        "supply": [str(s) for s in g.supply], "tokens": [str(s) for s in g.tokens],
        "pawn": str(g.pawn), "stack": str(len(g.stack)), "discard": str(len(g.discard)),
    }


DRAWN_JS = """
const q = (s) => Array.from(document.querySelectorAll(s));
const d = (e, k) => e.getAttribute(k);
const cells = q('#cathedral [data-cell]').filter(e => d(e, 'data-kind') !== 'empty').map(e => [
  d(e, 'data-cell'), d(e, 'data-kind'), d(e, 'data-colors') || '', d(e, 'data-builder') || '',
  d(e, 'data-glass') === '1', d(e, 'data-altar') === '1', d(e, 'data-crown') === '1']);
cells.sort();
const t = (id) => document.getElementById(id).textContent;
return {
  counter: t('counter'), step: document.body.getAttribute('data-step'), notation: t('move-notation'),
  cells: cells,
  orders: q('#market [data-order-space]').map(e => d(e, 'data-empty') ? null :
    [d(e, 'data-order'), d(e, 'data-colors'), d(e, 'data-paid') === '1']),
  vaults: q('#market [data-vault-space]').map(e => d(e, 'data-empty') ? null :
    [d(e, 'data-colors'), d(e, 'data-crown') === '1']),
  scores: [t('score-1'), t('score-2')], coins: [t('coins-1'), t('coins-2')],
  supply: [t('supply-1'), t('supply-2')], tokens: [t('tokens-1'), t('tokens-2')],
  pawn: d(document.getElementById('pawn'), 'data-pawn'),
  stack: d(document.getElementById('stack-count'), 'data-count'),
  discard: d(document.getElementById('discard-count'), 'data-count'),
  scoring: !document.getElementById('scoring').hidden,
  overflow: document.documentElement.scrollWidth > document.documentElement.clientWidth,
};
"""


def drawn(browser: Any) -> dict[str, Any]:
    return browser.execute_script(DRAWN_JS)  # type: ignore[no-any-return]


def open_page(browser: Any, page: Path) -> None:
    browser.get(page.as_uri())
    assert browser.find_element("id", "counter").text.startswith("move 0 of ")  # the script ran


def press(browser: Any, key: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(browser).send_keys(key).perform()


def js_errors(browser: Any) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("viewer")
    made = {}
    for path in SAMPLES:
        target = out / f"{path.stem}.html"
        r = cli("replay", "html", str(path), "-o", str(target))
        assert r.exit_code == 0, r.output
        assert r.stdout.startswith(f"{target}: ") and r.stderr == ""
        made[path.stem] = target
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{p.stem}.html" for p in SAMPLES)  # no temp files
    return made


def test_the_samples_are_all_there() -> None:
    assert len(SAMPLES) >= 5, SAMPLES


# --- the page as a file ------------------------------------------------------------------------------


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_the_page_loads_nothing_from_outside(pages: dict[str, Path], sample: Path) -> None:
    page = pages[sample.stem].read_text(encoding="utf-8")
    lowered = page.lower()
    for needle in ("http://", "https://", "src=", "<link", "@import", "url(", "<iframe", "<img", "fetch(",
                   "xmlhttprequest", "ftp:", "file:"):
        assert needle not in lowered, needle
    assert lowered.count("<script") == 2  # the JSON data and the inline viewer, neither with a source
    assert "default-src 'none'" in page  # and the Content-Security-Policy forbids any fetch anyway


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_the_page_embeds_every_step_and_the_verified_result(pages: dict[str, Path], sample: Path) -> None:
    page = pages[sample.stem].read_text(encoding="utf-8")
    data = embedded(page)
    assert data == build_viewer_data(sample, rb.manifests())
    verdict = verify_file(sample, rb.manifests())
    assert verdict.ok and verdict.outcome is not None
    o = verdict.outcome
    assert len(data["steps"]) == o.moves + 1
    assert data["result"]["scores"] == list(o.scores) and data["result"]["end"] == o.end
    assert data["steps"][-1]["scores"] == list(o.scores) and data["steps"][-1]["over"] is True
    states, events = engine_states(sample)
    for step, g, kinds in zip(data["steps"], states, events):
        assert len(step["cathedral"]["cells"]) == len(g.vaults)
        assert step["scores"] == list(g.scores) and step["pawn"] == g.pawn
        assert len(step["scoring"]) == kinds.count("scoring")
    scorings = [sc for s in data["steps"] for sc in s["scoring"]]
    log = states[-1].scoring_log
    assert [sc["points"] for sc in scorings] == [list(r.points) for r in log]
    assert [len(sc["areas"]) for sc in scorings] == [len(r.areas) for r in log]
    # The title names the players as their signed hellos do, and the result.
    hellos = [read_replay(sample).records[i] for i in (0, 1)]
    from basilica_p2p.wire import open_envelope

    names = [open_envelope(r).body["name"] for r in hellos]
    title = html_lib.unescape(re.search(r"<title>(.*?)</title>", page).group(1))  # type: ignore[union-attr]
    assert title.startswith(f"{names[0]} vs {names[1]}: ") and data["result"]["text"] in title
    assert data["players"] == names


def test_a_step_shows_only_public_information() -> None:
    """Each step is a function of what a spectator sees: other hidden stacks give the same data."""
    sample = ROOT / "replays" / "festum-removal-greedy-vs-greedy.replay"
    states, _ = engine_states(sample)
    m = rb.manifest()
    for k, g in enumerate(states[:: 7]):
        other = determinize(observe(g, 0), m, lambda xs: xs[::-1], bytes([k]) * 32)
        assert other.stack != g.stack or len(g.stack) <= 1
        assert public_state(other) == public_state(g)
    data = build_viewer_data(sample, rb.manifests())
    for step in data["steps"]:
        assert isinstance(step["stack"], int)  # a count, never the order
        for face in [*step["orders"], step["stack_top"]]:
            assert face is None or (set(face) == {"order", "title", "colors", "wild", "paid", "crown"}
                                    and face["crown"] is None)  # no tile id, no crown under an order face


def test_the_embedded_json_cannot_end_its_script_element() -> None:
    text = script_json({"name": "</script><script>alert(1)</script><!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"name": "</script><script>alert(1)</script><!-- & \u2028"}


# --- the command line: errors, and never a partial page ---------------------------------------------


def _tampered(src: Path, dst: Path, record: int) -> Path:
    replay = read_replay(src)
    blobs = [replay.header_bytes, *replay.records]
    blob = bytearray(blobs[record])
    blob[40] ^= 0x10
    blobs[record] = bytes(blob)
    dst.write_bytes(rb.MAGIC + b"".join(frame(b) for b in blobs))  # checksums recomputed: only the signature fails
    return dst


def test_errors_are_one_line_exit_1_and_write_nothing(tmp_path: Path) -> None:
    garbage = tmp_path / "notes.txt"
    garbage.write_text("not a replay\n")
    tampered = _tampered(SAMPLES[0], tmp_path / "tampered.replay", 12)
    cut = tmp_path / "unfinished.replay"
    replay = read_replay(SAMPLES[0])
    cut.write_bytes(SAMPLES[0].read_bytes()[: replay.offsets[30]])
    out = tmp_path / "out"
    out.mkdir()
    kept = out / "kept.html"
    kept.write_text("an older page")
    for bad, why in ((tmp_path / "missing.replay", "cannot read"), (garbage, "not a basilica replay"),
                     (tampered, "record 12"), (cut, "incomplete game"), (tmp_path, "directory")):
        for target in (out / "new.html", kept):
            p = real_cli("replay", "html", str(bad), "-o", str(target))
            assert p.returncode == 1, (bad, p.stderr)
            assert p.stdout == "" and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
            assert p.stderr.startswith(f"error: {bad}: ") and why in p.stderr, p.stderr
    assert sorted(x.name for x in out.iterdir()) == ["kept.html"]  # no page, no temporary file
    assert kept.read_text() == "an older page"


def test_an_unwritable_output_is_one_line(tmp_path: Path) -> None:
    p = real_cli("replay", "html", str(SAMPLES[0]), "-o", str(tmp_path / "no" / "such" / "dir" / "x.html"))
    assert p.returncode == 2 and p.stderr.startswith("error: cannot write ") and p.stderr.count("\n") == 1
    assert "Traceback" not in p.stderr


def test_the_default_output_is_the_replays_name_in_the_pages_folder_under_home(tmp_path: Path) -> None:
    home, here = tmp_path / "home", tmp_path / "here"
    here.mkdir()
    p = real_cli("--home", str(home), "replay", "html", str(SAMPLES[0]), cwd=here)
    assert p.returncode == 0, p.stderr
    assert [x.name for x in (home / "pages").iterdir()] == [f"{SAMPLES[0].stem}.html"]
    assert list(here.iterdir()) == []
    assert embedded((home / "pages" / f"{SAMPLES[0].stem}.html").read_text())["format"] == "basilica-replay-viewer/1"


@pytest.fixture(scope="module")
def odd_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A forfeited game, and a game whose players picked names full of markup."""
    base = tmp_path_factory.mktemp("odd")
    out = {}
    short = base / "short.replay"
    rb.record_game(short, rb.find_game(jester=False, max_plies=45))
    replay, envs = rb.load(short)
    head = envs[:8]
    forfeit = rb.seal(rb.BOB.key, rb.GAME_ID, 8, head[-1].hash, "forfeit", {"loser": 1, "reason": "left the game"})
    done = rb.write(base / "forfeit.replay", replay.header_bytes, [*rb.raws(head), forfeit.raw])
    early = rb.seal(rb.BOB.key, rb.GAME_ID, 2, envs[1].hash, "forfeit", {"loser": 1, "reason": "gone"})
    before_deal = rb.write(base / "early.replay", replay.header_bytes, [*rb.raws(envs[:2]), early.raw])
    players = (Identity("</script><b>x</b>", rb.key(7)), Identity("bob & <i>'quotes\"</i>", rb.key(8)))
    marked = base / "marked.replay"
    play_recorded(marked, rb.manifest(), Options(), players, (rb.RandomBot(1), rb.RandomBot(2)))
    for path in (done, before_deal, marked):
        target = base / f"{path.stem}.html"
        r = cli("replay", "html", str(path), "-o", str(target))
        assert r.exit_code == 0, r.output
        out[path.stem] = target
    return out


def test_a_forfeited_game_has_a_page(odd_pages: dict[str, Path]) -> None:
    data = embedded(odd_pages["forfeit"].read_text())
    assert data["result"]["end"] == "forfeit" and "bob claims a win by forfeit (left the game)" in data["result"]["text"]
    assert len(data["steps"]) == 2  # the start and the one move before the forfeit
    assert data["steps"][-1]["next"].startswith("the game ends here: bob claims a win by forfeit")
    early = embedded(odd_pages["early"].read_text())
    assert early["steps"] == [] and early["result"]["text"] == "bob claims a win by forfeit (gone), signed by bob alone; 0-0"


def test_names_with_markup_stay_text(odd_pages: dict[str, Path]) -> None:
    page = odd_pages["marked"].read_text()
    assert "<b>" not in page and "<i>" not in page and page.count("</script>") == 2
    assert embedded(page)["players"] == ["</script><b>x</b>", "bob & <i>'quotes\"</i>"]


# --- in headless Chromium ---------------------------------------------------------------------------


# What the page says of each scheme (the samples hold games dealt both ways).
STACK_TEXT = {
    "commit-reveal-v1": "; stack shuffled by commit-reveal-v1 (unbiased, but either side could compute the stack)",
    "sra-p256-v1": "; stack dealt face down by sra-p256-v1 (the stack hidden from both sides)",
}


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_every_step_of_every_sample_is_drawn_as_the_engine_says(browser: Any, pages: dict[str, Path],
                                                                 sample: Path) -> None:
    states, events = engine_states(sample)
    n = len(states) - 1
    open_page(browser, pages[sample.stem])
    assert browser.find_element("id", "counter").text == f"move 0 of {n}"
    assert browser.find_element("id", "prev").get_attribute("disabled") is not None
    for k, (g, kinds) in enumerate(zip(states, events)):
        if k:
            press(browser, "\ue014")  # ArrowRight
        got = drawn(browser)
        assert got.pop("counter") == f"move {k} of {n}" and got.pop("step") == str(k)
        assert got.pop("scoring") == ("scoring" in kinds), k
        got.pop("notation")
        assert got.pop("overflow") is False, f"{sample.name}, step {k}: the page is wider than the window"
        assert got == drawn_from_engine(g), f"{sample.name}, step {k}"
    assert browser.find_element("id", "next").get_attribute("disabled") is not None
    assert browser.find_element("id", "meta").text.endswith(STACK_TEXT[read_replay(sample).header.shuffle])
    verdict = verify_file(sample, rb.manifests())
    assert verdict.outcome is not None
    assert [browser.find_element("id", f"score-{p}").text for p in (1, 2)] == [str(s) for s in verdict.outcome.scores]
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    assert js_errors(browser) == []


def test_buttons_keys_and_the_move_log(browser: Any, pages: dict[str, Path]) -> None:
    sample = ROOT / "replays" / "festum-removal-greedy-vs-greedy.replay"
    states, _ = engine_states(sample)
    n = len(states) - 1
    w = walk(sample, rb.manifests())
    open_page(browser, pages[sample.stem])
    for _ in range(3):
        browser.find_element("id", "next").click()
    got = drawn(browser)
    assert got["counter"] == f"move 3 of {n}" and got["notation"] == w.moves[2].action
    assert len(got["cells"]) == len(states[3].vaults) + len(states[3].scaffold)
    press(browser, "\ue014")  # ArrowRight
    assert drawn(browser)["counter"] == f"move 4 of {n}"
    press(browser, "\ue012")  # ArrowLeft
    press(browser, "\ue012")
    assert drawn(browser)["counter"] == f"move 2 of {n}"
    browser.find_element("id", "prev").click()
    assert drawn(browser)["counter"] == f"move 1 of {n}"
    press(browser, "\ue010")  # End
    got = drawn(browser)
    assert got["counter"] == f"move {n} of {n}" and got == {**got, **drawn_from_engine(states[-1])}
    assert got["overflow"] is False
    press(browser, "\ue011")  # Home
    assert drawn(browser)["counter"] == f"move 0 of {n}"
    browser.find_element("id", "last").click()
    assert drawn(browser)["counter"] == f"move {n} of {n}"
    browser.find_element("id", "first").click()
    assert drawn(browser)["counter"] == f"move 0 of {n}"
    browser.find_element("css selector", '#moves li[data-step="17"] button').click()
    got = drawn(browser)
    assert got["counter"] == f"move 17 of {n}" and got["notation"] == w.moves[16].action
    current = browser.find_elements("css selector", "#moves li.current")
    assert [li.get_attribute("data-step") for li in current] == ["17"]
    assert browser.find_element("id", "move-words").text  # the move in words
    assert browser.find_element("id", "move-who").text.startswith(f"turn {w.moves[16].turn} ")
    assert js_errors(browser) == []


def test_a_scoring_step_shows_its_breakdown(browser: Any, pages: dict[str, Path]) -> None:
    sample = ROOT / "replays" / "secret-jesters-random-vs-random.replay"
    states, events = engine_states(sample)
    log = states[-1].scoring_log
    steps = [k for k, kinds in enumerate(events) if "scoring" in kinds]
    assert len(steps) == len(log) == 3
    open_page(browser, pages[sample.stem])
    assert not browser.find_element("id", "scoring").is_displayed()
    for number, (k, result) in enumerate(zip(steps, log), start=1):
        browser.find_element("css selector", f'#moves li[data-step="{k}"] button').click()
        box = browser.find_element("id", "scoring")
        assert box.is_displayed()
        assert box.find_element("tag name", "h2").text.startswith(f"Scoring {number}: ")
        rows = box.find_elements("css selector", ".areas tbody tr")
        assert len(rows) == len(result.areas)
        for row, area in zip(rows, result.areas):
            assert row.get_attribute("data-cells") == " ".join(format_cell(c) for c in area.cells)
            assert row.get_attribute("data-points") == f"{area.points[0]}-{area.points[1]}"
        totals = [box.find_element("css selector", f'[data-total="{p}"]').text for p in (1, 2)]
        assert totals == [str(x) for x in result.points]
        scored = {e.get_attribute("data-scored-cell") for e in
                  box.find_elements("css selector", '[data-scored-cell][data-kind="vault"]')}
        assert all(format_cell(c) in scored for a in result.areas for c in a.cells)
        if result.jester_colors:
            assert "Jester colours for this scoring" in box.text
            marked = {e.get_attribute("data-scored-cell"): e.get_attribute("data-jester") for e in
                      box.find_elements("css selector", "[data-jester]")}
            assert marked == {format_cell(c): "YBRG"[[1, 2, 4, 8].index(col)] for c, col in result.jester_colors}
        if rows:
            rows[0].click()
            framed = {e.get_attribute("data-scored-cell") for e in box.find_elements("css selector", ".hl[data-scored-cell]")}
            assert framed == {format_cell(c) for c in result.areas[0].cells}
        # The main drawing is the table after the scoring (and its clean-up, unless the game is over).
        assert drawn(browser)["cells"] == drawn_from_engine(states[k])["cells"]
        assert browser.find_element("id", "after-scoring").is_displayed() == (not states[k].over)
        press(browser, "\ue014")  # ArrowRight: the breakdown goes with its step
        if k < len(states) - 1:
            assert not browser.find_element("id", "scoring").is_displayed()
    assert js_errors(browser) == []


def test_odd_pages_in_the_browser(browser: Any, odd_pages: dict[str, Path]) -> None:
    open_page(browser, odd_pages["marked"])
    assert browser.title.startswith("</script><b>x</b> vs bob & <i>'quotes\"</i>: ")
    assert browser.find_element("id", "title").text == "</script><b>x</b> vs bob & <i>'quotes\"</i>"
    assert browser.execute_script("return document.querySelectorAll('b, i').length") == 0
    open_page(browser, odd_pages["forfeit"])
    assert browser.find_element("id", "counter").text == "move 0 of 1"
    assert "claims a win by forfeit" in browser.find_element("id", "result").text
    press(browser, "\ue010")  # End
    assert browser.find_element("id", "counter").text == "move 1 of 1"
    browser.get(odd_pages["early"].as_uri())  # forfeited before the deal: nothing to step through
    assert browser.find_element("id", "counter").text == "move 0 of 0"
    assert "before the tiles were dealt" in browser.find_element("id", "move-words").text
    assert all(browser.find_element("id", b).get_attribute("disabled") is not None
               for b in ("first", "prev", "next", "last"))
    assert js_errors(browser) == []


def test_the_viewer_speaks_to_players_without_rule_codes() -> None:
    """No decision id such as (D21) or (D13) in the viewer's text: those are for developers."""
    from importlib.resources import files

    page = files("basilica_p2p.data").joinpath("viewer.html").read_text(encoding="utf-8")
    assert re.findall(r"\(D\d+\)|§\d", page) == []


def test_orders_are_named_in_words_as_everywhere_else(browser: Any, pages: dict[str, Path]) -> None:
    """The market's tooltips and the stack's top name an order as describe.py does ('STAINED GLASS'),
    never by its identifier in the data ('STAINED_GLASS', which stays in data-order)."""
    from basilica_p2p.describe import ORDER_TITLE

    sample = ROOT / "replays" / "classic-greedy-vs-greedy.replay"
    n = len(engine_states(sample)[0]) - 1
    open_page(browser, pages[sample.stem])
    shown = []
    for _ in range(n + 1):
        shown.append(browser.execute_script(
            "return [document.body.innerText, document.getElementById('counts').textContent]"
            ".concat(Array.from(document.querySelectorAll('#market title')).map(e => e.textContent)).join('\\n')"))
        press(browser, "\ue014")  # ArrowRight
    text = "\n".join(shown)
    assert re.findall(r"\b[A-Z]+_[A-Z_]+\b", text) == []
    assert ORDER_TITLE[Order.STAINED_GLASS] in text and ORDER_TITLE[Order.SCAFFOLDING] in text
    assert js_errors(browser) == []
