"""The link's framing and messages: pure, byte-level, and fuzzed."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_bridge.codec import MAX_PAYLOAD, SOF, Decoder, Frame, encode
from firmware_bridge.messages import (
    MESSAGES,
    Ack,
    Button,
    EchoCancellerStatus,
    Hello,
    HelloAck,
    MicMute,
    PageShown,
    Ping,
    Pong,
    ProtocolError,
    SetAvatarState,
    SetEchoCanceller,
    Touch,
    from_frame,
    to_frame,
)

SAMPLES = [Hello(1), HelloAck(1, "sim-1.0"), Ping(), Pong(), Ack(True, ""), Ack(False, "busy"),
           SetAvatarState("speaking"), SetEchoCanceller(False),
           PageShown("http://127.0.0.1:8000/ja/カフェ.md"), Touch(120, 480),
           Button("help", True), MicMute(True), EchoCancellerStatus(True, 31.5)]


def test_every_message_round_trips_through_bytes() -> None:
    assert {type(m) for m in SAMPLES} == set(MESSAGES.values())
    stream = b"".join(encode(to_frame(m, i)) for i, m in enumerate(SAMPLES))
    frames = Decoder().feed(stream)
    assert [f.seq for f in frames] == list(range(len(SAMPLES)))
    assert [from_frame(f) for f in frames] == SAMPLES


def test_byte_by_byte_delivery() -> None:
    dec = Decoder()
    frames = []
    for b in encode(to_frame(PageShown("x"), 9)):
        frames += dec.feed(bytes([b]))
    assert frames == [to_frame(PageShown("x"), 9)]


def test_resynchronizes_after_garbage_and_corruption() -> None:
    good = encode(to_frame(Ping(), 3))
    corrupt = bytearray(encode(to_frame(Pong(), 4)))
    corrupt[8] ^= 0xFF
    dec = Decoder()
    frames = dec.feed(b"\x00\xff\x7e\x7e junk" + bytes(corrupt) + good)
    assert frames == [Frame(Ping.TYPE, 3, b"{}")]
    assert dec.bad_frames >= 1 and dec.dropped_bytes > 0


def test_a_garbage_start_announcing_a_long_frame_does_not_swallow_a_real_one() -> None:
    fake_header = bytes([SOF, 1, 0x20, 0, 0x00, 0x04])  # claims a 1024-byte payload
    good = encode(to_frame(MicMute(True), 7))
    assert Decoder().feed(fake_header + good) == [to_frame(MicMute(True), 7)]


def test_truncated_frame_waits_then_completes() -> None:
    data = encode(to_frame(Touch(1, 2), 1))
    dec = Decoder()
    assert dec.feed(data[:-1]) == []
    assert dec.feed(data[-1:]) == [to_frame(Touch(1, 2), 1)]


def test_encoder_refuses_what_it_cannot_frame() -> None:
    with pytest.raises(ValueError):
        encode(Frame(1, 256, b""))
    with pytest.raises(ValueError):
        encode(Frame(1, 1, b"x" * (MAX_PAYLOAD + 1)))


@pytest.mark.parametrize(
    ("frame", "match"),
    [(Frame(0x55, 1, b"{}"), "unknown message type"),
     (Frame(PageShown.TYPE, 1, b"\xff\xfe"), "not JSON"),
     (Frame(PageShown.TYPE, 1, b"[1]"), "not an object"),
     (Frame(PageShown.TYPE, 1, b'{"url": 5}'), "wrong type"),
     (Frame(MicMute.TYPE, 1, b'{"muted": 1}'), "wrong type"),
     (Frame(PageShown.TYPE, 1, b'{"uri": "x"}'), "unknown fields"),
     (Frame(SetAvatarState.TYPE, 1, b'{"state": "dancing"}'), "not one of")],
)
def test_bad_payloads_raise_a_coded_error(frame: Frame, match: str) -> None:
    with pytest.raises(ProtocolError, match=match) as info:
        from_frame(frame)
    assert info.value.code == "bridge-protocol"


def test_hundred_thousand_random_inputs() -> None:
    rng = random.Random(20261130)
    good = encode(to_frame(PageShown("ok"), 42))
    dec = Decoder()
    for i in range(100_000):
        noise = rng.randbytes(rng.randrange(0, 40))
        if i % 7 == 0:
            noise = noise[: rng.randrange(len(noise) + 1)] + good[: rng.randrange(len(good))]
        frames = dec.feed(noise)
        assert all(f == to_frame(PageShown("ok"), 42) for f in frames)
        if i % 1000 == 999:
            assert dec.feed(good)[-1:] == [to_frame(PageShown("ok"), 42)]


@settings(max_examples=2000, deadline=None)
@given(garbage=st.binary(max_size=300), cut=st.integers(min_value=0, max_value=40))
def test_garbage_never_raises_never_yields_a_message_and_a_good_frame_follows(
        garbage: bytes, cut: int) -> None:
    dec = Decoder()
    assert dec.feed(garbage) == []
    good = to_frame(Button("help", True), 77)
    data = encode(good)
    frames = dec.feed(data[:cut]) + dec.feed(data[cut:])
    assert frames[-1:] == [good]


@settings(max_examples=1000, deadline=None)
@given(seq=st.integers(0, 255), flip=st.integers(0, 10_000))
def test_any_single_bit_flip_is_caught(seq: int, flip: int) -> None:
    data = bytearray(encode(to_frame(PageShown("http://x/a.md"), seq)))
    bit = flip % (len(data) * 8)
    data[bit // 8] ^= 1 << (bit % 8)
    assert Decoder().feed(bytes(data)) == []
