"""kiosk report: per-day counts from the word-free turn counts, and the refused questions
grouped by meaning (the real sentence encoder) when the venue stores transcripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kiosk.errors import KioskError
from kiosk.logs import TurnLog
from kiosk.models import load_manifest
from kiosk.report import build_report, format_report, group_similar, parse_since
from kiosk.retrieval.embedder import load_embedder

DAY_S = 86_400.0
START = 1_764_547_200.0  # 2025-12-01 00:00 UTC


def _turn(utterance: str, kind: str, page: str | None, act: str | None = None
          ) -> dict[str, object]:
    return {"utterance": utterance, "query": utterance, "reply": "...", "lang": "en",
            "act": act, "kind": kind, "page": page, "asr_ms": 100.0}


def _log(folder: Path, store: bool) -> None:
    now = [START + 10 * 3600]
    log = TurnLog(folder, store_transcripts=store, retention_days=30, clock=lambda: now[0])
    day1 = [_turn("hello", "act", None, act="greeting"),
            _turn("when do you open", "independent", "en/hours.md"),
            _turn("and on sundays", "immediate", "en/hours.md"),
            _turn("is there parking", "independent", None),
            _turn("where can I park my car", "independent", None)]
    day2 = [_turn("how much are tickets", "independent", "en/tickets.md"),
            _turn("駐車場はありますか", "independent", None),
            _turn("will it rain today", "independent", None),
            _turn("what's the weather tomorrow", "independent", None),
            _turn("can I bring my dog", "independent", None)]
    for turn in day1:
        log.record(turn)
    now[0] += DAY_S
    for turn in day2:
        log.record(turn)


def test_counts_per_day_without_words(tmp_path: Path) -> None:
    _log(tmp_path, store=False)
    report = build_report(tmp_path, START, START + 3 * DAY_S)
    assert [(d["day"], d["turns"], d["answered"], d["refused"], d["social"])
            for d in report["days"]] == [("2025-12-01", 5, 2, 2, 1), ("2025-12-02", 5, 1, 4, 0)]
    assert report["total"]["answered_share"] == round(3 / 9, 3)
    assert report["top_pages"] == [("en/hours.md", 2), ("en/tickets.md", 1)]
    assert report["kinds"] == {"independent": 8, "act": 1, "immediate": 1}
    assert report["refused_questions"] is None
    text = format_report(report)
    assert "counts only" in text and "park" not in text
    # a later window leaves the first day out
    assert [d["day"] for d in build_report(tmp_path, START + DAY_S, START + 3 * DAY_S)[
        "days"]] == ["2025-12-02"]


def test_a_question_asked_again_is_no_refused_question(tmp_path: Path) -> None:
    """A turn cut off mid-phrase ("how long does the") was asked again: counted apart, and not
    among the questions the site should add."""
    log = TurnLog(tmp_path, store_transcripts=True, retention_days=30,
                  clock=lambda: START + 3600)
    log.record(_turn("is there parking", "independent", None))
    log.record({**_turn("how long does uh the", "immediate", None), "unclear": True})
    report = build_report(tmp_path, START, START + DAY_S)
    day = report["days"][0]
    assert (day["refused"], day["unclear"], day["answered_share"]) == (1, 1, 0.0)
    assert [g["questions"] for g in report["refused_questions"]] == [["is there parking"]]
    assert "unclear" in format_report(report)


@pytest.fixture(scope="module")
def encoder(models_dir: Path):  # type: ignore[no-untyped-def]
    return load_embedder(load_manifest()["e5-small-int8"], models_dir).embed_queries


def test_refused_questions_are_grouped_by_meaning(tmp_path: Path, encoder) -> None:  # type: ignore[no-untyped-def]
    _log(tmp_path, store=True)
    report = build_report(tmp_path, START, START + 3 * DAY_S, encoder)
    groups = [set(g["questions"]) for g in report["refused_questions"]]
    assert groups[0] == {"is there parking", "where can I park my car", "駐車場はありますか"}
    assert report["refused_questions"][0]["asked"] == 3
    assert {"can I bring my dog"} in groups
    text = format_report(report)
    assert "add these to the site" in text and "is there parking" in text


def test_grouping_keeps_unrelated_questions_apart(encoder) -> None:  # type: ignore[no-untyped-def]
    asked = ["do you have a cafe", "do you have a car park", "are dogs allowed",
             "tell me a joke", "can I bring my dog", "do you have a cafe",
             "is there a restaurant nearby", "近くにレストランはある？", "will it rain today"]
    groups = group_similar(asked, encoder)
    assert groups[0][0] == "do you have a cafe"  # asked twice: first
    assert {"are dogs allowed", "can I bring my dog"} in [set(g) for g in groups]
    assert {"is there a restaurant nearby", "近くにレストランはある？"} in [set(g) for g in groups]
    assert ["tell me a joke"] in groups and ["will it rain today"] in groups
    assert not any({"do you have a cafe", "do you have a car park"} <= set(g) for g in groups)


def test_report_command_and_periods(tmp_path: Path) -> None:
    from kiosk.__main__ import main

    assert parse_since("7d") == 7 * DAY_S and parse_since("24h") == DAY_S
    with pytest.raises(KioskError, match="7d"):
        parse_since("a week")
    _log(tmp_path, store=False)
    assert main(["report", "--logs", str(tmp_path), "--since", "9999d", "--json"]) == 0
    assert main(["report", "--logs", str(tmp_path), "--since", "soon"]) == 2


def test_report_output_is_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kiosk.__main__ import main

    _log(tmp_path, store=False)
    main(["report", "--logs", str(tmp_path), "--since", "9999d", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["total"]["turns"] == 10


def test_a_bad_stats_line_is_left_out_and_the_rest_reported(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A `time` that is a string, a list, Infinity, NaN, a boolean or past the year 9999 used to
    stop the whole report (and the console's report command with it)."""
    good = {"time": START + 3600, "lang": "en", "act": None, "kind": "independent",
            "page": "en/hours.md", "unclear": False}
    bad_times: list[object] = ["2025-12-01", [1], 10 ** 30, True, None]
    lines = [json.dumps(good)] + [json.dumps({**good, "time": t}) for t in bad_times]
    lines += ['{"time": Infinity}', '{"time": NaN}', '{"time": -Infinity}', "[1, 2]", '"text"']
    (tmp_path / "stats-2025-12-01.jsonl").write_text("\n".join(lines) + "\n")
    with caplog.at_level("WARNING"):
        report = build_report(tmp_path, START, START + DAY_S)
    assert report["total"]["turns"] == 1 and report["top_pages"] == [("en/hours.md", 1)]
    assert "10 record(s) of stats-2025-12-01.jsonl have no usable time" in caplog.text
    format_report(report)


def test_control_characters_are_shown_not_obeyed(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A page id or a stored question holding ESC, an OSC sequence, CR (a forged line), a C1
    control or a bidi override reaches the terminal and the serial console escaped."""
    from kiosk.__main__ import main

    now = [START + 3600]
    log = TurnLog(tmp_path, store_transcripts=True, retention_days=30, clock=lambda: now[0])
    evil_page = "en/x\x1b]0;owned\x07.html"
    evil_question = "where\r  99  forged line\x1b[2J\x9b31m\u202egnp"
    log.record(_turn("what time", "independent", evil_page))
    log.record(_turn(evil_question, "independent", None))
    text = format_report(build_report(tmp_path, START, START + DAY_S))
    assert not any(ch in text for ch in "\x1b\x07\r\x9b\u202e")
    assert "en/x\\x1b]0;owned\\x07.html" in text and "\\u202egnp" in text
    assert main(["report", "--logs", str(tmp_path), "--since", "3650d", "--json"]) == 0
    out = capsys.readouterr().out
    assert not any(ch in out for ch in "\x1b\x07\r\x9b\u202e")
    assert evil_page in json.loads(out)["top_pages"][0]  # the same JSON, only escaped
