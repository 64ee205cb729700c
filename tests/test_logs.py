"""Turn records keep visitors' words out of the journal; stored transcripts expire."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from kiosk.logs import JournalFormatter, TurnLog, logs_dir

TURN = {"utterance": "where can I park", "query": "park", "reply": "The car park is next door.",
        "kind": "independent", "page": "en/parking.md", "asr_ms": 25.0}


def test_the_journal_line_has_no_words(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    turns = TurnLog(tmp_path, store_transcripts=False, retention_days=7)
    with caplog.at_level(logging.INFO):
        turns.record(TURN)
    text = caplog.text
    assert "park" not in text.replace("parking.md", "") and "car" not in text
    assert '"utterance_chars": 16' in text and '"page": "en/parking.md"' in text
    # only the word-free counts `kiosk report` reads are stored
    [stats] = tmp_path.iterdir()
    assert stats.name.startswith("stats-")
    stored = json.loads(stats.read_text())
    assert set(stored) == {"time", "lang", "act", "kind", "page", "unclear"}
    assert stored["page"] == "en/parking.md" and "park" not in json.dumps(
        {k: v for k, v in stored.items() if k != "page"})


def test_stored_transcripts_expire(tmp_path: Path) -> None:
    now = [1_700_000_000.0]
    turns = TurnLog(tmp_path, store_transcripts=True, retention_days=2, clock=lambda: now[0])
    turns.record(TURN)
    first = sorted(tmp_path.glob("turns-*"))
    assert len(first) == 1
    assert json.loads(first[0].read_text())["utterance"] == "where can I park"
    now[0] += 86_400
    turns.record(TURN)
    assert len(list(tmp_path.glob("turns-*"))) == 2
    now[0] += 2 * 86_400  # the first day is now three days old
    turns.record(TURN)
    left = sorted(p.name for p in tmp_path.glob("turns-*"))
    assert first[0].name not in left and len(left) == 2
    assert len(list(tmp_path.glob("stats-*"))) == 3  # counts are kept longer


def test_journal_priorities() -> None:
    formatter = JournalFormatter("%(message)s")
    record = logging.LogRecord("kiosk.app", logging.ERROR, __file__, 1, "boom", None, None)
    assert formatter.format(record) == "<3>kiosk.app: boom"


def test_logs_dir_follows_systemd() -> None:
    assert logs_dir(Path("/s"), {"LOGS_DIRECTORY": "/var/log/kiosk-avatar"}) == Path(
        "/var/log/kiosk-avatar")
    assert logs_dir(Path("/s"), {}) == Path("/s/logs")


def test_days_are_read_as_dates_and_files_of_no_date_or_a_wrong_clock_go(
        tmp_path: Path) -> None:
    """Names used to be compared as strings: a transcript dated in the future, or named by no
    date at all, was kept for ever."""
    now = 1_764_547_200.0  # 2025-12-01 UTC
    for name in ("turns-2099-01-01", "turns-notes", "turns-2025-11-30", "turns-2025-11-01",
                 "stats-2099-01-01", "stats-backup", "stats-2025-11-30"):
        (tmp_path / f"{name}.jsonl").write_text("{}\n")
    removed = TurnLog(tmp_path, store_transcripts=True, retention_days=7,
                      clock=lambda: now).prune()
    assert sorted(p.name for p in removed) == [
        "stats-backup.jsonl", "turns-2025-11-01.jsonl", "turns-2099-01-01.jsonl",
        "turns-notes.jsonl"]
    # counts hold no words: a clock behind the real time must not cost them
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "stats-2025-11-30.jsonl", "stats-2099-01-01.jsonl", "turns-2025-11-30.jsonl"]
