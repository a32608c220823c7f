"""The wormhole mailbox client (basilica_p2p/net/wormhole) against the real mailbox server,
the real magic-wormhole client, and a fake server that misbehaves (tests/support/wormhole_servers.py).

The real server and client live in a venv of their own that `bash scripts/test --setup-only`
creates; without it the tests that need them fail, naming that command. Every wait is bounded (`trio.fail_after`),
so a hang fails the test instead of holding the suite.
"""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import pytest
import trio
from spake2 import SPAKE2_Symmetric

from basilica_p2p.net.wormhole import (
    MAX_PAYLOAD,
    BadCode,
    ConnectionLost,
    Crowded,
    MailboxUnreachable,
    ProtocolViolation,
    ServerRefused,
    Timeout,
    Wormhole,
    WormholeError,
    WrongCode,
    create,
    join,
    make_code,
    parse_code,
)
from basilica_p2p.net.wormhole._wordlist import EVEN, ODD
from basilica_p2p.net.wormhole import mailbox as mailbox_module
from basilica_p2p.net.wormhole._server import Server
from support.wormhole_servers import (
    REAL_PEER,
    TWIST,
    VENV_PYTHON,
    Fake,
    MailboxServer,
    fake_mailbox,
    mailbox_server,
    require_venv,
)

pytestmark = pytest.mark.trio

APPID = "basilica-p2p.org/play/v1"
MOTD = "the test mailbox says hello"
WRONG = "the code is wrong, or someone else tried it: no game"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MailboxServer]:
    with mailbox_server(tmp_path_factory.mktemp("mailbox"), motd=MOTD) as running:
        yield running


@pytest.fixture
def mailbox(server: MailboxServer) -> str:
    return server.url


async def both(first: Wormhole, second: Wormhole, ours: bytes, theirs: bytes) -> list[bytes | WormholeError]:
    """Both sides' `exchange` at once: what each returned, or the error it raised."""
    results: list[bytes | WormholeError] = [b"", b""]

    async def one(i: int, w: Wormhole, payload: bytes) -> None:
        try:
            results[i] = await w.exchange(payload, timeout=10)
        except WormholeError as e:
            results[i] = e

    async with trio.open_nursery() as nursery:
        nursery.start_soon(one, 0, first, ours)
        nursery.start_soon(one, 1, second, theirs)
    return results


# --- codes --------------------------------------------------------------------------------------

async def test_codes_are_magic_wormholes() -> None:
    code = make_code("7", 4)
    assert str(code).startswith("7-") and len(code.words) == 4
    # first word from the odd list, then even, alternately (src/wormhole/_wordlist.py)
    assert code.words[0] in ODD and code.words[1] in EVEN and code.words[2] in ODD and code.words[3] in EVEN
    assert str(make_code("12", 2, entropy=lambda n: bytes([0x00, 0xFF]))) == "12-adroitness-zulu"


async def test_codes_are_read_tolerantly() -> None:
    assert str(parse_code("  7-Crossover-CLOCKWORK\n")) == "7-crossover-clockwork"
    assert str(parse_code("7 crossover clockwork")) == "7-crossover-clockwork"
    assert parse_code("7-crossover-clockwork").password == b"7-crossover-clockwork"


@pytest.mark.parametrize("text", [
    "", "   ", "crossover-clockwork", "7", "7-", "7--clockwork", "x7-crossover-clockwork",
    "7-crossovr-clockwork", "٧-crossover-clockwork", "7-" + "-".join(["clockwork"] * 17), "1" * 41 + "-clockwork",
])
async def test_malformed_codes_are_refused_before_any_connection(text: str) -> None:
    with trio.fail_after(1):  # 192.0.2.1 (TEST-NET-1) would not answer: nothing may dial it
        with pytest.raises(BadCode) as info:
            await join("ws://192.0.2.1:4000/v1", APPID, text)
    assert "\n" not in str(info.value) and str(info.value)


# --- with the real mailbox server ---------------------------------------------------------------

async def test_two_clients_exchange_through_a_fresh_code(server: MailboxServer) -> None:
    appid = "basilica-p2p.org/test/happy"
    with trio.fail_after(20):
        first = await create(server.url, appid)
        assert first.motd == MOTD
        nameplate, *words = first.code.split("-")
        assert nameplate.isdigit() and len(words) == 2
        second = await join(server.url, appid, f"  {first.code.upper()} ")
        try:
            got = await both(first, second, b"hello from the creator", b"hello from the joiner")
            assert got == [b"hello from the joiner", b"hello from the creator"]
            assert len(first.verifier) == 32 and first.verifier == second.verifier
            assert first.derive_key(b"basilica:transit", 16) == second.derive_key("basilica:transit", 16)
            # a second turn goes in phase 1
            assert await both(first, second, b"again", b"back") == [b"back", b"again"]
        finally:
            await first.close()
            await second.close()
    assert server.moods(appid) == ["happy"]  # both released and closed, saying so


async def test_a_wrong_code_fails_both_sides_and_returns_nothing(server: MailboxServer) -> None:
    appid = "basilica-p2p.org/test/scary"
    with trio.fail_after(20):
        first = await create(server.url, appid)
        nameplate, word1, word2 = first.code.split("-")
        wrong = f"{nameplate}-{word1}-{EVEN[(EVEN.index(word2) + 1) % 256]}"
        second = await join(server.url, appid, wrong)
        try:
            got = await both(first, second, b"secret one", b"secret two")
        finally:
            await first.close()
            await second.close()
    assert all(isinstance(r, WrongCode) for r in got), got
    assert [str(r) for r in got] == [WRONG, WRONG]
    assert server.moods(appid) == ["scary"]
    with pytest.raises(RuntimeError):
        first.verifier  # noqa: B018 - the property raises: the key was never confirmed
    for w in (first, second):
        with pytest.raises(RuntimeError):
            await w.exchange(b"again")


async def test_a_third_side_on_the_code_is_crowded_out(mailbox: str) -> None:
    with trio.fail_after(20):
        first = await create(mailbox, APPID)
        second = await join(mailbox, APPID, first.code)
        try:
            with pytest.raises(Crowded) as info:
                await join(mailbox, APPID, first.code)
            assert "\n" not in str(info.value)
        finally:
            await first.close()
            await second.close()


async def test_nobody_joining_is_a_timeout(server: MailboxServer) -> None:
    appid = "basilica-p2p.org/test/lonely"
    with trio.fail_after(10):
        w = await create(server.url, appid)
        try:
            with pytest.raises(Timeout, match=r"^nobody used the code within 0.3 s$"):
                await w.exchange(b"anyone?", timeout=0.3)
        finally:
            await w.close()
    assert server.moods(appid) == ["lonely"]


async def test_waiting_for_the_peer_keeps_the_websocket_alive(mailbox: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pings = 0
    real_ping = Server.ping

    async def counted(self: Server) -> None:
        nonlocal pings
        pings += 1
        await real_ping(self)

    monkeypatch.setattr(mailbox_module, "PING_INTERVAL", 0.01)
    monkeypatch.setattr(Server, "ping", counted)
    with trio.fail_after(10):
        first = await create(mailbox, APPID)
        second = None
        got: list[bytes] = []

        async def wait_for_peer() -> None:
            got.append(await first.exchange(b"waited"))

        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(wait_for_peer)
                while pings < 5:  # the creator waits, pinging, interrupting its reads each time
                    await trio.sleep(0.01)
                second = await join(mailbox, APPID, first.code)
                assert await second.exchange(b"came") == b"waited"
        finally:
            await first.close()
            if second is not None:
                await second.close()
    assert got == [b"came"]


async def test_a_payload_too_big_is_refused(mailbox: str) -> None:
    with trio.fail_after(10):
        w = await create(mailbox, APPID)
        try:
            with pytest.raises(ValueError):
                await w.exchange(bytes(MAX_PAYLOAD + 1))
        finally:
            await w.close()


# --- with the real magic-wormhole client --------------------------------------------------------

@asynccontextmanager
async def real_peer(mailbox: str, send: str, code: str = "") -> AsyncIterator[Callable[[], Awaitable[str]]]:
    """The real client (tests/support/wormhole_servers.py's REAL_PEER) sending ``send`` on ``code``, or
    on a code it allocates; yields a function reading its next line (the code, then a report)."""
    require_venv(VENV_PYTHON)
    command = [str(VENV_PYTHON), "-c", REAL_PEER, mailbox, APPID, send, code]
    async with trio.open_nursery() as nursery:
        process = await nursery.start(partial(trio.run_process, command, stdout=subprocess.PIPE, check=False))
        buffer = bytearray()

        async def line() -> str:
            while b"\n" not in buffer:
                data = await process.stdout.receive_some(4096)
                assert data, f"the real client ended without a line; it had said {bytes(buffer)!r}"
                buffer.extend(data)
            text, _, rest = bytes(buffer).partition(b"\n")
            buffer[:] = rest
            return text.decode()

        yield line


async def exchange_and_close(w: Wormhole, payload: bytes) -> tuple[bytes, bytes]:
    """What the peer sent, and the verifier."""
    try:
        return await w.exchange(payload, timeout=15), w.verifier
    finally:
        await w.close()


async def test_the_real_client_allocates_and_we_join(mailbox: str) -> None:
    with trio.fail_after(25):
        async with real_peer(mailbox, "from magic-wormhole") as line:
            code = await line()
            got, verifier = await exchange_and_close(await join(mailbox, APPID, code), b"from basilica")
            report = json.loads(await line())
    assert parse_code(code)  # its code is one of ours
    assert got == b"from magic-wormhole"
    assert report == {"verifier": verifier.hex(), "message": "from basilica"}


async def test_we_allocate_and_the_real_client_joins(mailbox: str) -> None:
    with trio.fail_after(25):
        w = await create(mailbox, APPID)
        async with real_peer(mailbox, "from magic-wormhole", w.code) as line:
            assert await line() == w.code
            got, verifier = await exchange_and_close(w, b"from basilica")
            report = json.loads(await line())
    assert got == b"from magic-wormhole"
    assert report == {"verifier": verifier.hex(), "message": "from basilica"}


async def test_the_real_client_sees_a_wrong_code_too(mailbox: str) -> None:
    with trio.fail_after(25):
        w = await create(mailbox, APPID)
        nameplate, word1, word2 = w.code.split("-")
        wrong = f"{nameplate}-{word1}-{EVEN[(EVEN.index(word2) + 1) % 256]}"
        async with real_peer(mailbox, "never seen", wrong) as line:
            assert await line() == wrong
            with pytest.raises(WrongCode):
                await exchange_and_close(w, b"never seen either")
            report = json.loads(await line())
    assert report == {"error": "WrongPasswordError"}


# --- no server, or a hostile one -----------------------------------------------------------------

async def test_nothing_listening_is_unreachable_quickly() -> None:
    with socket.socket() as reserved:  # bound, never listening: connections are refused
        reserved.bind(("127.0.0.1", 0))
        url = f"ws://127.0.0.1:{reserved.getsockname()[1]}/v1"
        with trio.fail_after(2):
            with pytest.raises(MailboxUnreachable, match=rf"^the mailbox server at {url} did not answer: [^\n]+$"):
                await create(url, APPID)


@pytest.mark.parametrize("url", ["http://127.0.0.1/v1", "relay.magic-wormhole.io:4000", "ws://:4000/v1", "ws://h:99999/"])
async def test_a_url_that_is_not_a_websocket_one_is_refused(url: str) -> None:
    with pytest.raises(MailboxUnreachable, match="not a ws:// or wss:// URL"):
        await create(url, APPID)


WELCOME = {"type": "welcome", "welcome": {}}
ALLOCATED = {"type": "allocated", "nameplate": "5"}
CLAIMED = {"type": "claimed", "mailbox": "mb5"}
OPENED: list[dict[str, Any]] = [WELCOME, {"type": "ack"}, ALLOCATED, CLAIMED]  # then the client waits for its peer
SOME_PAKE = json.dumps({"pake_v1": SPAKE2_Symmetric(b"5-x", idSymmetric=b"other").start().hex()}).encode().hex()


def message(side: str, phase: str, body: str) -> dict[str, Any]:
    return {"type": "message", "side": side, "phase": phase, "body": body}


def pieces(text: str) -> bytes:
    """``text`` as a websocket text message sent one byte a frame (a server's frames are unmasked):
    a first frame, continuation frames, and a last one with FIN set."""
    data = text.encode()
    frames = [bytes([0x01, 1, data[0]])]
    frames += [bytes([0x00, 1, b]) for b in data[1:-1]]
    frames.append(bytes([0x80, 1, data[-1]]))
    return b"".join(frames)


HOSTILE = {
    "HTTP garbage": Fake([b"garbage\r\n\r\n"], handshake=False),
    "not JSON": Fake(["{nope"]),
    "JSON without a type": Fake(["[1, 2]"]),
    "oversized": Fake(["x" * 1_000_000]),
    "reply before welcome": Fake([CLAIMED]),
    "welcome not an object": Fake([{"type": "welcome", "welcome": "hi"}]),
    "two welcomes": Fake([WELCOME, WELCOME]),
    "unasked reply": Fake([WELCOME, CLAIMED]),
    "message before open": Fake([WELCOME, message("p", "pake", SOME_PAKE)]),
    "nameplate not a number": Fake([WELCOME, {"type": "allocated", "nameplate": "../5"}]),
    "mailbox id not a string": Fake([WELCOME, ALLOCATED, {"type": "claimed", "mailbox": 5}]),
    "bad websocket frame": Fake([WELCOME, b"\xff\xff\xff\xff"]),
    "body not hex": Fake([*OPENED, message("p", "pake", "zz")]),
    "side not text": Fake([*OPENED, message("p\n", "pake", SOME_PAKE)]),
    "pake not JSON": Fake([*OPENED, message("p", "pake", b"junk".hex())]),
    "pake not a point": Fake([*OPENED, message("p", "pake", json.dumps({"pake_v1": "53" + "ff" * 32}).encode().hex())]),
    "a third side": Fake([*OPENED, message("p", "pake", SOME_PAKE), message("q", "version", "00" * 40)]),
    "a flood before the pake": Fake([*OPENED, *[message("p", str(i), "00") for i in range(100)]]),
    "JSON nested 100,000 deep": Fake(["[" * 100_000]),
    "a pake nested 50,000 deep": Fake([*OPENED, message("p", "pake", ("[" * 50_000).encode().hex())]),
    "nested JSON in 100,000 one-byte frames": Fake([pieces("[" * 100_000)]),
    "nested JSON in 1,000 one-byte frames": Fake([pieces("[" * 1_000)]),
}


@pytest.mark.parametrize("fake", HOSTILE.values(), ids=HOSTILE.keys())
async def test_a_hostile_server_is_a_protocol_violation(fake: Fake) -> None:
    async with trio.open_nursery() as nursery:
        url = await fake_mailbox(nursery, fake)
        with trio.fail_after(5):
            with pytest.raises(ProtocolViolation) as info:
                w = await create(url, APPID, timeout=2)
                try:
                    await w.exchange(b"hello?", timeout=2)
                finally:
                    await w.close()
        nursery.cancel_scope.cancel()
    assert "\n" not in str(info.value) and str(info.value)


async def test_brackets_and_escaped_quotes_inside_strings_are_not_nesting() -> None:
    from basilica_p2p.net.wormhole._json import NotJson, parse_json

    text = json.dumps({"motd": "[" * 100 + '\\"{' * 50 + "\\", "x": [[["three deep"]]]}).encode()
    assert parse_json(text, len(text), max_depth=4) == json.loads(text)
    assert parse_json(text, len(text), max_depth=3) == NotJson("nested deeper than 3 levels")
    assert parse_json(text, len(text) - 1) == NotJson(f"over {len(text) - 1} bytes")


async def test_a_stranger_on_the_nameplate_posting_a_deeply_nested_pake_is_a_protocol_violation(
        mailbox: str) -> None:
    """Anyone who learns the nameplate can claim it on the real server and post a pake body of
    '[' * N: one line, no traceback (it was a RecursionError), and no game.  (A longer one is
    refused for its size: the fake server's 'a pake nested 50,000 deep' below.)"""
    from basilica_p2p.net.wormhole._server import mailbox_of, open_server

    with trio.fail_after(20):
        w = await create(mailbox, APPID)
        try:
            stranger = await open_server(mailbox, APPID, "ffff", timeout=5, max_message=1 << 20,
                                         client_version=("stranger", "1"))
            try:
                opened = mailbox_of(await stranger.ask("claim", "claimed", nameplate=w.code.split("-")[0]), mailbox)
                await stranger.send("open", mailbox=opened)
                # Short enough for a pake body (at most 1,024 bytes), too deep for the parser.
                await stranger.send("add", phase="pake", body=("[" * 1_000).encode().hex())
                with pytest.raises(ProtocolViolation) as info:
                    await w.exchange(b"for the host's guest only", timeout=10)
            finally:
                await stranger.aclose()
        finally:
            await w.close()
    assert "\n" not in str(info.value) and "nested" in str(info.value), info.value


async def test_pings_acks_pongs_and_unknown_messages_are_borne() -> None:
    welcome = {"type": "welcome", "welcome": {"motd": "hi\tthere", "current_cli_version": "9", "new": 1}, "x": 2}
    noise: list[bytes | dict[str, Any]] = [b"\x89\x01x", welcome, {"type": "ack"}, {"type": "pong", "pong": 1}, {"type": "news"}, ALLOCATED,
             {"type": "ack", "id": None}, CLAIMED, {"type": "ack"}]
    async with trio.open_nursery() as nursery:
        url = await fake_mailbox(nursery, Fake(noise))
        with trio.fail_after(3):
            w = await create(url, APPID, timeout=2)
            assert w.code.startswith("5-") and w.motd == "hi there"
            await w.close()
        nursery.cancel_scope.cancel()


async def test_a_server_closing_the_websocket_is_a_lost_connection() -> None:
    async with trio.open_nursery() as nursery:
        url = await fake_mailbox(nursery, Fake([WELCOME, b"\x88\x02\x03\xe8"]))  # close, 1000
        with trio.fail_after(3):
            with pytest.raises(ConnectionLost, match=r"^lost the mailbox server at .*: it closed the connection$"):
                await create(url, APPID, timeout=2)
        nursery.cancel_scope.cancel()


async def test_a_server_that_never_opens_the_websocket_is_unreachable() -> None:
    async with trio.open_nursery() as nursery:
        url = await fake_mailbox(nursery, Fake([], handshake=False))
        with trio.fail_after(3):
            with pytest.raises(MailboxUnreachable, match="no websocket within 0.5 s"):
                await create(url, APPID, timeout=0.5)
        nursery.cancel_scope.cancel()


async def test_a_server_without_a_welcome_is_a_timeout() -> None:
    async with trio.open_nursery() as nursery:
        url = await fake_mailbox(nursery, Fake([]))
        with trio.fail_after(3):
            with pytest.raises(Timeout, match="sent no welcome within 0.5 s"):
                await create(url, APPID, timeout=0.5)
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("fake, refusal", [
    (Fake([{"type": "welcome", "welcome": {"error": "down for\nmaintenance"}}]), ServerRefused),
    (Fake([WELCOME, {"type": "error", "error": "crowded", "orig": {}}]), Crowded),
    (Fake([WELCOME, {"type": "error", "error": "you already allocated one", "orig": {}}]), ServerRefused),
])
async def test_a_refusal_is_shown_in_one_line(fake: Fake, refusal: type[ServerRefused]) -> None:
    async with trio.open_nursery() as nursery:
        url = await fake_mailbox(nursery, fake)
        with trio.fail_after(3):
            with pytest.raises(refusal) as info:
                await create(url, APPID, timeout=2)
        nursery.cancel_scope.cancel()
    assert str(info.value).startswith(f"the mailbox server at {url} refused: ") and "\n" not in str(info.value)


async def test_the_helpers_venv_is_where_scripts_test_puts_it() -> None:
    # This fails first, and plainly, when the set-up was not run.
    require_venv(VENV_PYTHON, TWIST)
