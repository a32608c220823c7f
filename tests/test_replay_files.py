"""Replay files under damage: every single-byte flip and every truncation.

Three files are used: a full short game (found by a deterministic search), a
game ended early by a forfeit (a few KB: covered at every byte offset, also
with the record checksum recomputed so that the flip reaches the envelope
layer), and a full game with a secret Jester round.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support import replay_builders as rb
from basilica_p2p.replay.file import (
    MAGIC,
    Record,
    ReplayError,
    ReplayWriter,
    TornTail,
    frame,
    iter_records,
    parse,
    read_replay,
)
from basilica_p2p.wire import seal


class Sample:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = path.read_bytes()
        self.replay, self.envs = rb.load(path)
        # Byte offset where each record starts (0: the header), and where the file ends.
        self.starts = list(self.replay.offsets) + [len(self.data)]

    @property
    def nrecords(self) -> int:  # envelope records, the header not counted
        return len(self.replay.records)

    def record_at(self, offset: int) -> int:
        """The record holding byte ``offset`` (the magic bytes count as record 0)."""
        k = 0
        while k + 1 < len(self.starts) - 1 and self.starts[k + 1] <= offset:
            k += 1
        return k


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Sample]:
    d = tmp_path_factory.mktemp("damage")
    short = d / "short.replay"
    rb.record_game(short, rb.find_game(jester=False, max_plies=45))
    jester = d / "jester.replay"
    rb.record_game(jester, rb.find_game(jester=True, max_plies=75))
    replay, envs = rb.load(short)
    # A game ended early: setup, two plies (action + ack each), then bob records alice's forfeit.
    head = envs[:10]
    assert [e.type for e in head[6:]] == ["action", "ack", "action", "ack"]
    forfeit = seal(rb.BOB.key, rb.GAME_ID, 10, head[-1].hash, "forfeit", {"loser": 1, "reason": "timeout"})
    early = rb.write(d / "forfeit.replay", replay.header_bytes, [e.raw for e in head] + [forfeit.raw])
    out = {"short": Sample(short), "jester": Sample(jester), "forfeit": Sample(early)}
    for s in out.values():
        v = rb.verify(s.path)
        assert v.ok, v.error
    assert "jcommit" in {e.type for e in out["jester"].envs}
    assert rb.verify(early).outcome.end == "forfeit"
    assert len(out["forfeit"].data) < 5000
    return out


def _flip_all(sample: Sample, offsets: range | list[int], mask: int, work: Path) -> list[str]:
    """Flip each byte in turn (in a copy of the file), verify, collect every problem found."""
    path = work / f"flip-{sample.path.name}"
    path.write_bytes(sample.data)
    problems: list[str] = []
    fd = os.open(path, os.O_RDWR)
    try:
        for off in offsets:
            os.pwrite(fd, bytes([sample.data[off] ^ mask]), off)
            try:
                v = rb.verify(path)
            except Exception as e:  # noqa: BLE001 - the point: nothing may escape
                problems.append(f"offset {off}: {type(e).__name__}: {e}")
                v = None
            os.pwrite(fd, bytes([sample.data[off]]), off)
            if v is None:
                continue
            k = sample.record_at(off)
            if v.ok:
                problems.append(f"offset {off} (record {k}): flipped file still verifies")
            elif not rb.names_record(v.error, k):
                problems.append(f"offset {off}: error does not name record {k}: {v.error}")
            elif v.torn is not None and "torn" not in v.error:
                problems.append(f"offset {off}: torn tail not reported: {v.error}")
            if len(problems) > 20:
                break
    finally:
        os.close(fd)
    return problems


@pytest.mark.parametrize("name", ["forfeit", "short"])
def test_every_single_byte_flip_is_refused_naming_its_record(files: dict[str, Sample], name: str,
                                                             tmp_path: Path) -> None:
    s = files[name]
    problems = _flip_all(s, range(len(s.data)), 0xFF, tmp_path)
    assert not problems, "\n".join(problems)


def test_low_bit_flips_every_offset_of_the_forfeit_game(files: dict[str, Sample], tmp_path: Path) -> None:
    s = files["forfeit"]
    problems = _flip_all(s, range(len(s.data)), 0x01, tmp_path)
    assert not problems, "\n".join(problems)


def test_flips_over_a_game_with_a_secret_jester_round(files: dict[str, Sample], tmp_path: Path) -> None:
    s = files["jester"]
    # Every framing byte (length and checksum of every record), every byte of the
    # Jester records, and a stride over the rest.
    offsets: set[int] = set(range(0, len(s.data), 7))
    for k in range(len(s.starts) - 1):
        a, b = s.starts[k], s.starts[k + 1]
        offsets.update(range(a, a + 4))
        offsets.update(range(b - 4, b))
    for k, e in enumerate(s.envs, start=1):
        if e.type in ("jcommit", "jreveal"):
            offsets.update(range(s.starts[k], s.starts[k + 1]))
    problems = _flip_all(s, sorted(offsets), 0xFF, tmp_path)
    assert not problems, "\n".join(problems)


def _reframed_flips(s: Sample, k: int, work: Path) -> list[str]:
    """Flip every byte of record ``k``'s data and recompute its checksum, so the framing is intact."""
    blobs = [s.replay.header_bytes, *s.replay.records]
    problems = []
    path = work / "reframed.replay"
    prefix = MAGIC + b"".join(frame(b) for b in blobs[:k])
    suffix = b"".join(frame(b) for b in blobs[k + 1 :])
    for j in range(len(blobs[k])):
        changed = bytearray(blobs[k])
        changed[j] ^= 0xFF
        path.write_bytes(prefix + frame(bytes(changed)) + suffix)
        try:
            v = rb.verify(path)
        except Exception as e:  # noqa: BLE001
            problems.append(f"record {k} byte {j}: {type(e).__name__}: {e}")
            continue
        if v.ok:
            problems.append(f"record {k} byte {j} (value {blobs[k][j]:#04x} -> {changed[j]:#04x}): still verifies")
        elif k > 0 and rb.first_record(v.error) != k:
            problems.append(f"record {k} byte {j}: error names another record first: {v.error}")
        if len(problems) > 10:
            break
    return problems


def test_reframed_flips_in_every_envelope_record_fail_at_that_record(files: dict[str, Sample],
                                                                     tmp_path: Path) -> None:
    """A flip that also fixes the checksum must still fail: canonical form, signature or schema."""
    s = files["forfeit"]
    problems = []
    for k in range(1, s.nrecords + 1):
        problems += _reframed_flips(s, k, tmp_path)
    assert not problems, "\n".join(problems)


def test_reframed_flips_in_the_header_fail(files: dict[str, Sample], tmp_path: Path) -> None:
    """The header is not hash-chained: the signed hellos must agree with every field of it."""
    problems = _reframed_flips(files["forfeit"], 0, tmp_path)
    assert not problems, "\n".join(problems)


# --- truncation ----------------------------------------------------------------


def _check_truncation(s: Sample, n: int, path: Path) -> str | None:
    """Verify the first ``n`` bytes; return a problem, or None if the verdict is the right one."""
    path.write_bytes(s.data[:n])
    try:
        v = rb.verify(path)
    except Exception as e:  # noqa: BLE001
        return f"cut at {n}: {type(e).__name__}: {e}"
    if n == len(s.data):
        return None if v.ok else f"the whole file fails: {v.error}"
    if v.ok:
        return f"cut at {n}: verifies"
    header_end = s.starts[1]
    if n < header_end:
        return None if rb.first_record(v.error) == 0 else f"cut at {n} (in the header): {v.error}"
    complete = max(k for k in range(len(s.starts)) if s.starts[k] <= n) - 1  # envelope records wholly present
    if f"valid through record {complete};" not in v.error:
        return f"cut at {n}: expected 'valid through record {complete}': {v.error}"
    if n == s.starts[complete + 1]:
        if v.torn is not None or "torn" in v.error:
            return f"cut at {n} (a record boundary): reported as torn: {v.error}"
    else:
        start = s.starts[complete + 1]
        want = f"record {complete + 1} at byte {start} is torn ({n - start} bytes"
        if want not in v.error:
            return f"cut at {n}: expected {want!r}: {v.error}"
        if v.torn is None or (v.torn.record, v.torn.offset, v.torn.size) != (complete + 1, start, n - start):
            return f"cut at {n}: torn tail {v.torn}"
    return None


def test_truncation_at_every_offset_of_the_forfeit_game(files: dict[str, Sample], tmp_path: Path) -> None:
    s = files["forfeit"]
    problems = [p for n in range(len(s.data) + 1) if (p := _check_truncation(s, n, tmp_path / "cut.replay"))]
    assert not problems, "\n".join(problems[:20])


def test_truncation_around_every_record_of_a_full_game(files: dict[str, Sample], tmp_path: Path) -> None:
    s = files["short"]
    cuts: set[int] = set(range(0, s.starts[1] + 2))
    for k in range(1, len(s.starts) - 1):
        a, b = s.starts[k], s.starts[k + 1]
        cuts.update({a, a + (1, 3, 4, 5, (a + b) // 2 - a)[k % 5], b - 1})
    cuts.add(len(s.data))
    problems = [p for n in sorted(cuts) if (p := _check_truncation(s, n, tmp_path / "cut.replay"))]
    assert not problems, "\n".join(problems[:20])


def test_parse_reports_the_torn_tail_of_every_prefix(files: dict[str, Sample]) -> None:
    s = files["short"]
    header_end = s.starts[1]
    for n in range(header_end, len(s.data) + 1):
        r = parse(s.data[:n])
        complete = max(k for k in range(len(s.starts)) if s.starts[k] <= n) - 1
        assert len(r.records) == complete, n
        assert r.records == s.replay.records[:complete]
        if n == s.starts[complete + 1]:
            assert r.torn is None, n
        else:
            assert r.torn is not None and r.torn.record == complete + 1 and r.torn.offset == s.starts[complete + 1]
            assert r.torn.size == n - s.starts[complete + 1]


def test_iter_records_streams_the_header_then_each_record_and_stops_at_the_first_damage(
        files: dict[str, Sample], tmp_path: Path) -> None:
    s = files["short"]
    items = list(iter_records(s.path))
    assert items == [Record(k, s.starts[k], data)
                     for k, data in enumerate([s.replay.header_bytes, *s.replay.records])]
    cut = tmp_path / "cut.replay"
    cut.write_bytes(s.data[: s.starts[3] + 5])
    *whole, torn = iter_records(cut)
    assert [r.data for r in whole] == [s.replay.header_bytes, *s.replay.records[:2]]  # type: ignore[union-attr]
    assert torn == TornTail(3, s.starts[3], 5)
    # Damage in record 2: records 0 and 1 come out first, then the error; nothing after it is read.
    damaged = tmp_path / "damaged.replay"
    damaged.write_bytes(s.data[: s.starts[2] + 6] + bytes([s.data[s.starts[2] + 6] ^ 1]) + s.data[s.starts[2] + 7:])
    records = iter_records(damaged)
    assert [next(records).number, next(records).number] == [0, 1]  # type: ignore[union-attr]
    with pytest.raises(ReplayError, match=rf"^record 2 \(byte {s.starts[2]}\): checksum mismatch"):
        next(records)


def test_open_append_cuts_exactly_the_torn_record_and_writing_on_restores_the_file(
        files: dict[str, Sample], tmp_path: Path) -> None:
    s = files["forfeit"]
    path = tmp_path / "torn.replay"
    for k in range(1, s.nrecords + 1):
        a, b = s.starts[k], s.starts[k + 1]
        for n in sorted({a + 1, a + 3, a + 4, a + 5, (a + b) // 2, b - 4, b - 1}):
            path.write_bytes(s.data[:n])
            w, replay = ReplayWriter.open_append(path)
            try:
                assert replay.torn is not None and replay.torn.offset == a
                assert w.count == k  # the header and records 1 .. k-1
                assert path.stat().st_size == a
                assert path.read_bytes() == s.data[:a]
                v = rb.verify(path)
                assert not v.ok and v.torn is None and "torn" not in v.error
                assert f"valid through record {k - 1};" in v.error
                if n == (a + b) // 2:  # go on writing: the result is the original file, byte for byte
                    for raw in s.replay.records[k - 1 :]:
                        w.append(raw)
                    assert w.count == 1 + s.nrecords
            finally:
                w.close()
            if n == (a + b) // 2:
                assert path.read_bytes() == s.data
                assert rb.verify(path).ok


def test_open_append_on_an_intact_file_changes_nothing(files: dict[str, Sample], tmp_path: Path) -> None:
    s = files["forfeit"]
    path = tmp_path / "whole.replay"
    path.write_bytes(s.data)
    w, replay = ReplayWriter.open_append(path)
    w.close()
    assert replay.torn is None and w.count == 1 + s.nrecords
    assert path.read_bytes() == s.data


def test_open_append_refuses_damage_and_leaves_the_file_alone(files: dict[str, Sample], tmp_path: Path) -> None:
    s = files["forfeit"]
    path = tmp_path / "damaged.replay"
    for off in (3, s.starts[1] - 2, s.starts[3] + 20, s.starts[4] - 1):
        damaged = bytearray(s.data)
        damaged[off] ^= 0x40
        path.write_bytes(bytes(damaged))
        with pytest.raises(ReplayError):
            ReplayWriter.open_append(path)
        assert path.read_bytes() == bytes(damaged)
    for n in (0, 5, len(MAGIC), len(MAGIC) + 3, s.starts[1] - 1):  # nothing or a torn header
        path.write_bytes(s.data[:n])
        with pytest.raises(ReplayError) as e:
            ReplayWriter.open_append(path)
        assert e.value.record == 0
        assert path.read_bytes() == s.data[:n]


def test_bytes_after_a_finished_game_are_refused(files: dict[str, Sample], tmp_path: Path) -> None:
    s = files["forfeit"]
    end = s.nrecords + 1
    for tail in (b"\x00", b"\x00\x00\x01", b"\x00\x00\x01\x00" + b"x" * 10):
        path = tmp_path / "tail.replay"
        path.write_bytes(s.data + tail)
        v = rb.verify(path)
        assert not v.ok and rb.names_record(v.error, end), v.error
        assert "after the end" in v.error
    # A length of 0 or over 64 KiB is damage even at the very end, never a torn tail.
    for tail in (bytes(4), b"\xff\xff\xff\xff", (65_537).to_bytes(4, "big") + b"xy"):
        path.write_bytes(s.data + tail)
        v = rb.verify(path)
        assert not v.ok and v.torn is None and rb.first_record(v.error) == end, v.error
        assert "out of range" in v.error
        cut = s.data[: s.starts[5]] + tail  # in an unfinished game too
        path.write_bytes(cut)
        v = rb.verify(path)
        assert not v.ok and v.torn is None and rb.first_record(v.error) == 5 and "out of range" in v.error, v.error
    # A whole, well-framed record after the end (not an envelope): named too.
    path.write_bytes(s.data + frame(b"\xc0"))
    v = rb.verify(path)
    assert not v.ok and rb.first_record(v.error) == end, v.error


def test_read_replay_errors_carry_record_and_offset(files: dict[str, Sample]) -> None:
    s = files["short"]
    k = 5
    damaged = bytearray(s.data)
    damaged[s.starts[k] + 30] ^= 1
    with pytest.raises(ReplayError) as e:
        parse(bytes(damaged))
    assert (e.value.record, e.value.offset) == (k, s.starts[k])
    assert str(e.value).startswith(f"record {k} (byte {s.starts[k]}): ")
    big = bytearray(s.data)
    big[s.starts[k] : s.starts[k] + 4] = (70_000).to_bytes(4, "big")
    with pytest.raises(ReplayError, match=f"^record {k} .*out of range"):
        parse(bytes(big))
    zero = bytearray(s.data)
    zero[s.starts[k] : s.starts[k] + 4] = bytes(4)
    with pytest.raises(ReplayError, match=f"^record {k} .*out of range"):
        parse(bytes(zero))
    assert read_replay(s.path).records == s.replay.records


def test_the_writer_never_overwrites_and_refuses_bad_record_sizes(files: dict[str, Sample], tmp_path: Path) -> None:
    s = files["forfeit"]
    path = tmp_path / "existing.replay"
    path.write_bytes(s.data)
    with pytest.raises(FileExistsError):
        ReplayWriter.create(path, s.replay.header)
    assert path.read_bytes() == s.data
    fresh = tmp_path / "sub" / "fresh.replay"
    with ReplayWriter.create(fresh, s.replay.header) as w:
        assert w.count == 1
        for bad in (b"", bytes(65_537)):
            with pytest.raises(ValueError):
                w.append(bad)
        for raw in s.replay.records:
            w.append(raw)
    assert fresh.read_bytes() == s.data  # the same records give the same bytes


def test_a_header_name_over_64_characters_or_a_wrong_field_is_refused(files: dict[str, Sample],
                                                                       tmp_path: Path) -> None:
    from basilica_p2p.wire import encode

    s = files["forfeit"]
    m = s.replay.header.to_map()
    for change in ({"players": [[m["players"][0][0], "x" * 65], m["players"][1]]},
                   {"players": [[m["players"][0][0], ""], m["players"][1]]},
                   {"players": [m["players"][0]]}, {"game": bytes(31)}, {"festum": 0}, {"format": 2},
                   {"protocol": True}):
        bad = encode({**m, **change})
        v = rb.verify(rb.write(tmp_path / "h.replay", bad, s.replay.records))
        assert not v.ok and rb.first_record(v.error) == 0, (change, v.error)
    reordered = {k: m[k] for k in reversed(list(m))}
    v = rb.verify(rb.write(tmp_path / "h.replay", encode(reordered), s.replay.records))
    assert not v.ok and rb.first_record(v.error) == 0, v.error
