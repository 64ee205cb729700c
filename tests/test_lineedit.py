from __future__ import annotations

from firmware_bridge.lineedit import MAX_LINE_CHARS, Cancel, Line, LineEditor


def _lines(events: list[Line | Cancel]) -> list[str]:
    return [e.text for e in events if isinstance(e, Line)]


def test_typing_echoes_and_enter_completes_the_line() -> None:
    ed = LineEditor()
    echo, events = ed.feed(b"show\r")
    assert echo == b"show\r\n" and _lines(events) == ["show"]


def test_crlf_lf_and_cr_each_end_one_line() -> None:
    ed = LineEditor()
    _, events = ed.feed(b"a\r\nb\nc\r")
    assert _lines(events) == ["a", "b", "c"]


def test_backspace_and_delete_erase_one_character_and_wide_ones_two_columns() -> None:
    ed = LineEditor()
    ed.feed("カフェ".encode())
    echo, _ = ed.feed(b"\x7f")
    assert echo == b"\b \b\b \b" and ed.pending == "カフ"
    echo, _ = ed.feed(b"x\x08")
    assert echo == b"x\b \b" and ed.pending == "カフ"
    echo, _ = ed.feed(b"\x08\x08\x08")  # one more than there is: nothing to erase
    assert ed.pending == "" and echo.count(b"\b \b") == 4


def test_ctrl_u_erases_the_line_and_ctrl_c_cancels_it() -> None:
    ed = LineEditor()
    ed.feed(b"set x")
    echo, _ = ed.feed(b"\x15")
    assert ed.pending == "" and echo == b"\b \b" * 5
    ed.feed(b"oops")
    echo, events = ed.feed(b"\x03")
    assert echo == b"^C\r\n" and events == [Cancel()] and ed.pending == ""


def test_utf8_split_across_reads_arrives_whole() -> None:
    ed = LineEditor()
    data = "日本".encode()
    ed.feed(data[:2])
    ed.feed(data[2:4])
    _, events = ed.feed(data[4:] + b"\r")
    assert _lines(events) == ["日本"]


def test_arrow_keys_and_other_controls_are_ignored() -> None:
    ed = LineEditor()
    _, events = ed.feed(b"ab\x1b[A\x1b[D\x01\x02c\r")
    assert _lines(events) == ["abc"]


def test_masked_input_echoes_stars() -> None:
    ed = LineEditor(masked=True)
    echo, events = ed.feed(b"1234\r")
    assert echo == b"****\r\n" and _lines(events) == ["1234"]


def test_overlong_line_rings_the_bell_and_keeps_the_start() -> None:
    ed = LineEditor()
    echo, _ = ed.feed(b"a" * (MAX_LINE_CHARS + 3))
    assert echo.endswith(b"\x07\x07\x07") and len(ed.pending) == MAX_LINE_CHARS
