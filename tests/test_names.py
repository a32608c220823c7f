"""Issue 9, trust between strangers: names that look alike are one name, fingerprints a
person can read aloud, and a home directory nobody else can read.

Every look-alike below was accepted as a *first contact* before names were compared by
skeleton; every mode check failed under a permissive umask before files were made 0600.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import basilica_p2p
from basilica_p2p.cli import app
from basilica_p2p.fingerprint_words import fingerprint_words
from basilica_p2p import safefile
from basilica_p2p.identity import create_identity, fingerprint, rename_identity
from basilica_p2p.names import look_alike, quoted_name, skeletons
from basilica_p2p.known_peers import FILE, KnownPeers, PeerKeyMismatch
from basilica_p2p.net.session import PeerGone, Refused

from support.net_harness import ALICE, BOB, config, host_and_join, ident, reports, settings

runner = CliRunner()
WORDS_FILE = Path(basilica_p2p.__file__).parent / "data" / "fingerprint_words.json"
# the SHA-256 of the BIP-0039 English list as published (one word a line): the list we ship is that list
BIP39_ENGLISH_SHA256 = "2f5eed53a4727b4bf8880d8f3f199efc90e58503646d9ff8eff3a2ed3b24dbda"

ALICE_IMPOSTOR = ident(9, "alice")
PINNED_ZERO_WORDS = "bean vault expand smart relief emerge silk baby"
LOOK_ALIKES = ["alice ", "\u0430lice", "Alice", "ALICE", " al\u200bice", "\uff41lice", "a\u13deice"]


def cli(home: Path, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["--home", str(home), *args], env={"BASILICA_HOME": None})


def independent_words(public: bytes) -> list[str]:
    """The eight words by another road: the digest as a string of bits, cut every 11."""
    words = json.loads(WORDS_FILE.read_text(encoding="utf-8"))["words"]
    bits = "".join(f"{byte:08b}" for byte in hashlib.sha256(public).digest())
    return [words[int(bits[i * 11:(i + 1) * 11], 2)] for i in range(8)]


# --- skeletons --------------------------------------------------------------------------------------


@pytest.mark.parametrize("other", LOOK_ALIKES + ["AIice", "a1ice", "alice  ", "\u0430l\u0456c\u0435"])
def test_look_alikes_of_alice(other: str) -> None:
    base = "Alice" if other == "AIice" else "alice"  # capital I stands for l beside a capital A
    assert look_alike(base, other)
    assert look_alike(other, base)


@pytest.mark.parametrize("a,b", [("alice", "bob"), ("alice", "alice2"), ("alice", "alce"), ("José", "Jose"),
                                 ("al ice", "alice"), ("rob", "tob"), ("ian", "jan")])
def test_different_names_stay_different(a: str, b: str) -> None:
    assert not look_alike(a, b)


def test_skeletons_fold_the_mapped_names_too() -> None:
    # the mapping gives an uppercase prototype for some letters; folding it afterwards keeps case out
    assert skeletons("\u13aalice") == skeletons("alice") == frozenset({"alice"})  # Cherokee A
    assert look_alike("mary", "rnary")  # one character may look like two


def test_a_look_alike_is_spelled_out_when_shown() -> None:
    assert quoted_name("alice") == "'alice'"
    assert quoted_name("\u0430lice") == "'\u0430lice' (written '\\u0430lice')"
    assert "\\x1b" in quoted_name("a\x1b[2Jb")  # a control character is never printed raw


# --- known peers: look-alikes refused, same key accepted ----------------------------------------------


@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_a_look_alike_with_another_key_is_refused_like_a_changed_key(tmp_path: Path, name: str) -> None:
    peers = KnownPeers(tmp_path)
    assert peers.check("alice", ALICE.public).new
    before = (tmp_path / FILE).read_bytes()
    with pytest.raises(PeerKeyMismatch) as caught:
        peers.check(name, ALICE_IMPOSTOR.public)
    message = str(caught.value)
    assert "\n" not in message
    assert quoted_name(name) in message and "'alice'" in message
    for key in (ALICE.public, ALICE_IMPOSTOR.public):
        assert fingerprint(key) in message and " ".join(independent_words(key)) in message
    assert caught.value.known_name == "alice" and caught.value.known_key == ALICE.public
    assert (tmp_path / FILE).read_bytes() == before  # nothing stored: still one alice
    listed = cli(tmp_path, "peers", "list")
    assert listed.exit_code == 0 and len(listed.output.splitlines()) == 1, listed.output


@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_a_look_alike_with_the_same_key_is_the_same_person_and_keeps_its_first_name(tmp_path: Path,
                                                                                       name: str) -> None:
    peers = KnownPeers(tmp_path)
    peers.check("alice", ALICE.public)
    before = (tmp_path / FILE).read_bytes()
    check = peers.check(name, ALICE.public)
    assert not check.new and check.known_as == "alice"
    assert (tmp_path / FILE).read_bytes() == before


def test_the_same_name_with_the_same_key_is_fine(tmp_path: Path) -> None:
    peers = KnownPeers(tmp_path)
    first, again = peers.check("bob", BOB.public), peers.check("bob", BOB.public)
    assert first.new and not again.new
    assert first.fingerprint == again.fingerprint == f"{fingerprint(BOB.public)} (words: {' '.join(independent_words(BOB.public))})"
    assert peers.load() == {"bob": BOB.public.hex()}


def test_an_old_file_keeps_loading_and_its_entries_are_compared_by_skeleton(tmp_path: Path) -> None:
    # as the client wrote it before: indent 1, sorted, two names an old client took for two peers
    (tmp_path / FILE).write_text(json.dumps({"bob": BOB.public.hex(), "Bob": ALICE.public.hex()}, indent=1,
                                            sort_keys=True) + "\n", encoding="utf-8")
    peers = KnownPeers(tmp_path)
    assert peers.load() == {"bob": BOB.public.hex(), "Bob": ALICE.public.hex()}
    with pytest.raises(PeerKeyMismatch):  # each key is the other name's wrong key: neither passes
        peers.check("bob", BOB.public)
    assert cli(tmp_path, "peers", "trust", "BOB", BOB.public.hex()).exit_code == 0
    assert peers.load() == {"BOB": BOB.public.hex()}
    assert not peers.check("bob", BOB.public).new


def test_trust_and_forget_find_the_entry_by_skeleton(tmp_path: Path) -> None:
    peers = KnownPeers(tmp_path)
    peers.check("alice", ALICE.public)
    trusted = cli(tmp_path, "peers", "trust", "\u0430lice", ALICE_IMPOSTOR.public.hex())
    assert trusted.exit_code == 0, trusted.output
    assert "'alice' looked the same: replaced" in trusted.output
    assert " ".join(independent_words(ALICE_IMPOSTOR.public)) in trusted.output
    assert peers.load() == {"\u0430lice": ALICE_IMPOSTOR.public.hex()}  # one alice, the trusted key
    assert not peers.check("alice", ALICE_IMPOSTOR.public).new
    forgot = cli(tmp_path, "peers", "forget", "ALICE ")
    assert forgot.exit_code == 0 and "\\u0430lice" in forgot.output, forgot.output
    assert peers.load() == {}
    assert cli(tmp_path, "peers", "forget", "alice").exit_code == 2


@pytest.mark.parametrize("content", ['{"bob": "not hex"}', '{"bob": "' + "AB" * 32 + '"}', '{"bob": 1}', "[]"])
def test_a_damaged_file_is_one_line_never_a_traceback(tmp_path: Path, content: str) -> None:
    (tmp_path / FILE).write_text(content, encoding="utf-8")
    with pytest.raises(PeerKeyMismatch, match="damaged") as caught:
        KnownPeers(tmp_path).check("bob", BOB.public)
    assert caught.value.known_name is None
    listed = cli(tmp_path, "peers", "list")
    assert listed.exit_code == 2 and "damaged" in listed.output and "Traceback" not in listed.output


# --- the words ------------------------------------------------------------------------------------


def test_the_word_list_is_bip39_english() -> None:
    words = json.loads(WORDS_FILE.read_text(encoding="utf-8"))["words"]
    assert hashlib.sha256(("\n".join(words) + "\n").encode()).hexdigest() == BIP39_ENGLISH_SHA256
    assert len(set(words)) == 2048 and len({w[:4] for w in words}) == 2048


def test_id_show_and_peers_list_show_the_words(tmp_path: Path) -> None:
    home = tmp_path / "home"
    me = create_identity(home, "me")
    shown_id = cli(home, "id", "show").output
    assert f"words       {' '.join(independent_words(me.public))}\n" in shown_id
    assert f"fingerprint {fingerprint(me.public)}\n" in shown_id
    KnownPeers(home).check("bob", BOB.public)
    listed = cli(home, "peers", "list").output
    assert fingerprint(BOB.public) in listed and " ".join(independent_words(BOB.public)) in listed


def test_the_peers_commands_load_no_networking(tmp_path: Path) -> None:
    # The address book of peers' keys is read by `basilica peers ...` on its own: reaching it
    # through the network package ran all of net/ (and trio) first, some 0.2 s a command.
    code = ("import sys; from basilica_p2p.cli import main; sys.argv = ['basilica', 'peers', 'list']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m == 'trio' or m.startswith('basilica_p2p.net')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "BASILICA_HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["no known peers yet", "[]"]


def test_known_keys_have_known_words() -> None:
    zero = bytes.fromhex("3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29")  # seed of 32 zeros
    for public in (zero, ALICE.public, BOB.public):
        assert fingerprint_words(public) == " ".join(independent_words(public))
    # pinned as well: the words must never change under a peer who already read them to someone
    assert fingerprint_words(zero) == PINNED_ZERO_WORDS


# --- over the network -------------------------------------------------------------------------------


@pytest.mark.trio
async def test_a_look_alike_host_is_refused_and_first_contact_shows_the_words(tmp_path: Path) -> None:
    s = settings()
    home_j = tmp_path / "home-j"
    lines: list[str] = []
    first = await host_and_join(config(ALICE, s, tmp_path / "h1"),
                                dataclasses.replace(config(BOB, s, tmp_path / "j1", home=home_j), log=lines.append))
    reports(first.host), reports(first.join)
    assert any("first contact with 'alice'" in line and " ".join(independent_words(ALICE.public)) in line
               for line in lines), lines

    spoof = ident(9, "\u0430lice")  # Cyrillic а, another key
    pair = await host_and_join(config(spoof, s, tmp_path / "h2"), config(BOB, s, tmp_path / "j2", home=home_j))
    assert isinstance(pair.join, Refused), repr(pair.join)
    assert "\\u0430lice" in str(pair.join) and "'alice'" in str(pair.join)
    assert fingerprint(spoof.public) in str(pair.join) and fingerprint(ALICE.public) in str(pair.join)
    assert isinstance(pair.host, PeerGone), repr(pair.host)
    assert "'alice'" in str(pair.host) and fingerprint(ALICE.public) in str(pair.host)
    assert KnownPeers(home_j).load() == {"alice": ALICE.public.hex()}
    assert not list((tmp_path / "j2").glob("*.replay"))


# --- a private home ---------------------------------------------------------------------------------


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_home_and_private_files_have_exact_modes_under_an_open_umask(tmp_path: Path, open_umask: None) -> None:
    home = tmp_path / "deep" / "home"
    create_identity(home, "me")
    assert mode(home) == 0o700
    assert mode(home / "identity.key") == 0o600 and mode(home / "identity.json") == 0o600
    rename_identity(home, "me2")
    assert mode(home / "identity.json") == 0o600
    KnownPeers(home).check("bob", BOB.public)
    assert mode(home / FILE) == 0o600
    KnownPeers(tmp_path / "fresh").check("bob", BOB.public)  # known peers alone also make the home
    assert mode(tmp_path / "fresh") == 0o700 and mode(tmp_path / "fresh" / FILE) == 0o600
    assert not [p for p in home.iterdir() if p.name.endswith(".tmp")]


def test_a_symlink_planted_at_the_temporary_name_is_not_written_through(tmp_path: Path, open_umask: None,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    KnownPeers(home).check("bob", BOB.public)
    create_identity(home, "me")
    before = {p: (home / p).read_bytes() for p in (FILE, "identity.json")}
    target = tmp_path / "victim"
    target.write_text("untouched\n")
    # the temporary name is random; an attacker who guessed it anyway plants a link there
    monkeypatch.setattr(safefile.secrets, "token_hex", lambda n: "guessed")
    for name in before:
        os.symlink(target, home / f".{name}.guessed.tmp")
    with pytest.raises(OSError):
        KnownPeers(home).check("carol", ALICE.public)
    with pytest.raises(OSError):
        rename_identity(home, "me2")
    assert target.read_text() == "untouched\n"
    assert {p: (home / p).read_bytes() for p in before} == before
    assert mode(home / FILE) == 0o600 and not (home / FILE).is_symlink()


def test_replacing_a_key_with_force_never_writes_through_a_symlink(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    target = tmp_path / "victim"
    target.write_text("untouched\n")
    os.symlink(target, home / "identity.key")
    assert cli(home, "id", "new", "--name", "x").exit_code == 2  # without --force: refused
    made = cli(home, "id", "new", "--name", "x", "--force")
    assert made.exit_code == 0, made.output
    assert target.read_text() == "untouched\n"
    assert not (home / "identity.key").is_symlink() and mode(home / "identity.key") == 0o600


@pytest.mark.parametrize("invisible", ["\ufe0f", "\ufe00", "\U000e0100", "\u034f", "\u115f", "\u1160", "\u3164",
                                       "\uffa0", "\u17b4", "\u180b", "\u00ad", "\u200b"])
def test_invisible_characters_that_are_not_format_characters_do_not_make_a_new_name(invisible: str) -> None:
    # Variation selectors, the combining grapheme joiner and the Hangul fillers draw as nothing
    # and pass the wire's text rule, but are not category Cf.
    from basilica_p2p.names import look_alike
    from basilica_p2p.wire.text import is_text

    name = "al" + invisible + "ice"
    if invisible != "\u200b" and invisible != "\u00ad":
        assert is_text(name, 64)  # the wire lets it through, so the skeleton must catch it
    assert look_alike("alice", name)


def test_the_trust_command_in_a_refusal_is_quoted_for_a_shell(tmp_path: Path) -> None:
    # The peer chooses its name; a user who pastes the suggested command
    # must not run a command the peer wrote into it.
    import shlex

    peers = KnownPeers(tmp_path)
    evil = "x; touch pwned"
    peers.check(evil, BOB.public)
    with pytest.raises(PeerKeyMismatch) as e:
        peers.check(evil, ALICE.public)
    command = str(e.value).split("run: ", 1)[1].split(" (else", 1)[0]
    assert shlex.split(command) == ["basilica", "peers", "trust", evil, ALICE.public.hex()]
