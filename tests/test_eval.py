from __future__ import annotations

import json
from pathlib import Path

import pytest

from kiosk.brain import Brain
from kiosk.errors import KioskError
from kiosk.eval import evaluate, format_table, load_dialogues, score_turn
from kiosk.retrieval.index import build_index
from tests.fakes import HashingEmbedder

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def brain() -> Brain:
    emb = HashingEmbedder()
    return Brain(build_index(FIXTURES / "site", emb), emb)


def test_report_shape_and_strategies(brain: Brain) -> None:
    report = evaluate(brain, load_dialogues(FIXTURES / "dialogues.jsonl"))
    strategies = report["strategies"]
    assert list(strategies) == ["raw", "prev_user", "prev_exchange", "window3", "resolved",
                                "oracle"]
    for s in strategies.values():
        assert set(s) == {"top1", "mrr", "turns", "by_kind"} and s["turns"] == 6
        assert 0.0 <= s["top1"] <= s["mrr"] <= 1.0
    json.dumps(report)  # serializable as --json prints it
    assert len(report["turns"]) == 6
    assert "resolved" in format_table(report)


def test_resolved_gets_acts_screen_and_site_right_where_raw_cannot(brain: Brain) -> None:
    report = evaluate(brain, load_dialogues(FIXTURES / "dialogues.jsonl"))
    resolved = report["strategies"]["resolved"]["by_kind"]
    raw = report["strategies"]["raw"]["by_kind"]
    assert resolved["act"]["top1"] == 1.0 and raw["act"]["top1"] == 0.0
    assert resolved["situational"]["top1"] == 1.0
    assert resolved["site"]["top1"] == 1.0
    assert resolved["immediate"]["top1"] == 1.0


def test_scoring_rules() -> None:
    from kiosk.eval import Turn

    page = Turn("q", None, ("a.md", "b.md"), "independent", None, None, None)
    assert score_turn(page, ["b.md", "c.md"], None) == (1.0, 1.0)
    assert score_turn(page, ["c.md", "a.md"], None) == (0.0, 0.5)
    assert score_turn(page, [], None) == (0.0, 0.0)
    act = Turn("hi", None, None, "act", "greeting", None, None)
    assert score_turn(act, [], "greeting") == (1.0, 1.0)
    assert score_turn(act, [], "thanks") == (0.0, 0.0)
    assert score_turn(act, ["a.md"], "greeting") == (0.0, 0.0)


def test_bad_dialogue_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "x", "turns": [{"user": "hi"}]}\n{"broken": true}\n',
                    encoding="utf-8")
    with pytest.raises(KioskError, match=r"d.jsonl:2"):
        load_dialogues(path)
