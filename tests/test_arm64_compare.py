"""scripts/arm64_compare.py: two probe files -> table rows and a verdict (pure; fast)."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("arm64_compare",
                                               REPO / "scripts" / "arm64_compare.py")
assert _spec is not None and _spec.loader is not None
compare_mod: Any = importlib.util.module_from_spec(_spec)
sys.modules["arm64_compare"] = compare_mod  # dataclasses look their module up
_spec.loader.exec_module(compare_mod)


def _ok(result: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "seconds": 1.0, "result": result}


def probe(machine: str = "x86_64") -> dict[str, Any]:
    return {"machine": machine, "finished": True, "steps": {
        "platform": _ok({"machine": machine, "python": "3.11",
                         "packages": {"onnxruntime": "1.20", "ctranslate2": "4.5"}}),
        "models": _ok({"files": {"a.onnx": "ab" * 32, "fp32.onnx": "(missing)"}}),
        "index": _ok({"model": "e5", "pages": 44, "chunks": 194, "sha_text": "t",
                      "sha_postings": "p", "sha_idf": "i", "sha_vectors": "v",
                      "vectors": [[0.6, 0.8], [1.0, 0.0]]}),
        "doctor": _ok({"checks": {"models": {"status": "ok"}, "audio": {"status": "FAIL"}}}),
        "ask": _ok({"en": [{"question": "when does it open", "reply": "At 9.",
                            "top1": "en/hours.md"}],
                    "ja": [{"question": "何時から", "reply": "9時です。", "top1": "ja/hours.md"}]}),
        "eval": _ok({"en": {"resolved": {"page_top1": 0.9667, "top1": 0.9647, "mrr": 0.97}}}),
        "voice-en": _ok({"utterances": 14, "error_rate": 0.02, "spoken_top1": 1.0,
                         "typed_top1": 1.0, "examples": [{"said": "a", "heard": "A."}]}),
        "voice-ja": _ok({"utterances": 14, "error_rate": 0.0577, "error_rate_kana": 0.0165,
                         "spoken_top1": 0.8571, "typed_top1": 1.0, "examples": []}),
        "bridge": _ok({"connected": True, "firmware": "sim", "pong": True, "ack": True,
                       "simulator_state": "speaking"}),
        "systemd": _ok({"rendered": {"verify_rc": 0, "verify_messages": "",
                                     "exposure": {"kiosk.service": 1.3}}}),
    }}


def verdicts(rows: list[Any], verdict: str) -> list[tuple[str, str]]:
    return [(r.section, r.item) for r in rows if r.verdict == verdict]


def test_identical_probes_pass_and_every_section_is_checked() -> None:
    rows, passed = compare_mod.compare(probe(), probe("aarch64"))
    assert passed
    assert {r.section for r in rows} >= {"platform", "models", "index", "doctor", "ask", "eval",
                                         "voice-en", "voice-ja", "bridge", "systemd"}
    assert not verdicts(rows, "DIFF") and not verdicts(rows, "FAIL")


def test_error_rates_within_one_point_pass_beyond_fail() -> None:
    arm = probe("aarch64")
    arm["steps"]["voice-ja"]["result"]["error_rate"] = 0.0577 + 0.009
    rows, passed = compare_mod.compare(probe(), arm)
    assert passed and ("voice-ja", "CER") in verdicts(rows, "within")
    arm["steps"]["voice-en"]["result"]["error_rate"] = 0.02 + 0.011
    rows, passed = compare_mod.compare(probe(), arm)
    assert not passed and verdicts(rows, "DIFF") == [("voice-en", "WER")]


def test_top1_must_be_equal() -> None:
    arm = probe("aarch64")
    arm["steps"]["eval"]["result"]["en"]["resolved"]["page_top1"] = 0.9583
    arm["steps"]["ask"]["result"]["en"][0]["top1"] = "en/cafe.md"
    rows, passed = compare_mod.compare(probe(), arm)
    assert not passed
    assert set(verdicts(rows, "DIFF")) == {("eval", "en resolved page_top1"),
                                           ("ask", "en #1 top page")}


def test_a_reply_difference_fails_unless_explained() -> None:
    arm = probe("aarch64")
    arm["steps"]["ask"]["result"]["ja"][0]["reply"] = "9時からです。"
    rows, passed = compare_mod.compare(probe(), arm, explained={})
    assert not passed and verdicts(rows, "DIFF") == [("ask", "ja #1 reply: 何時から")]
    rows, passed = compare_mod.compare(probe(), arm,
                                       explained={("ja", "何時から"): "a tie broken otherwise"})
    assert passed and ("ask", "ja #1 reply: 何時から") in verdicts(rows, "info")


def test_index_text_must_match_vectors_within_tolerance() -> None:
    arm = probe("aarch64")
    arm["steps"]["index"]["result"]["sha_vectors"] = "other"
    arm["steps"]["index"]["result"]["vectors"] = [[0.61, 0.79], [1.0, 0.01]]
    rows, passed = compare_mod.compare(probe(), arm)
    item = ("index", "vectors: cosine x86-64 / arm64, min (mean)")
    assert passed and item in verdicts(rows, "within")
    arm["steps"]["index"]["result"]["sha_postings"] = "q"
    arm["steps"]["index"]["result"]["vectors"] = [[0.8, 0.6], [1.0, 0.0]]  # cosine 0.96
    rows, passed = compare_mod.compare(probe(), arm)
    assert set(verdicts(rows, "DIFF")) == {("index", "sha_postings"), item}


def test_baseline_strategies_may_move_one_turn_the_kiosk_s_own_none() -> None:
    x86 = probe()
    x86["steps"]["eval"]["result"]["en"]["raw"] = {"page_top1": 0.7, "top1": 0.5, "mrr": 0.5}
    arm = copy.deepcopy(x86)
    arm["machine"] = "aarch64"
    arm["steps"]["eval"]["result"]["en"]["raw"]["page_top1"] = 0.7 - 1 / 120
    rows, passed = compare_mod.compare(x86, arm)
    assert passed and ("eval", "en raw page_top1") in verdicts(rows, "within")
    arm["steps"]["eval"]["result"]["en"]["raw"]["page_top1"] = 0.7 - 2 / 120
    rows, passed = compare_mod.compare(x86, arm)
    assert not passed and verdicts(rows, "DIFF") == [("eval", "en raw page_top1")]


def test_a_failed_or_unfinished_step_is_a_row_of_its_own_and_the_rest_are_compared() -> None:
    arm = probe("aarch64")
    arm["steps"]["voice-en"] = {"ok": False, "seconds": 3.0, "error": "RuntimeError: boom"}
    arm["steps"]["voice-ja"] = {"ok": False, "running": True, "seconds": None}
    del arm["steps"]["bridge"]
    rows, passed = compare_mod.compare(probe(), arm)
    assert not passed
    failed = {(r.section, r.arm64) for r in rows if r.verdict == "FAIL"}
    assert failed == {("voice-en", "failed: RuntimeError: boom"),
                      ("voice-ja", "did not finish (killed or timed out)"),
                      ("bridge", "not run")}
    assert ("eval", "en resolved page_top1") in verdicts(rows, "same")


def test_a_package_missing_on_arm64_fails() -> None:
    arm = probe("aarch64")
    arm["steps"]["platform"]["result"]["packages"]["ctranslate2"] = "(missing)"
    rows, passed = compare_mod.compare(probe(), arm)
    assert not passed and verdicts(rows, "FAIL") == [("platform", "ctranslate2")]


def test_systemd_installed_units_are_compared_with_the_rendered_ones() -> None:
    arm = probe("aarch64")
    units = arm["steps"]["systemd"]["result"]
    units["installed"] = copy.deepcopy(units["rendered"])
    units["installed"]["verify_messages"] = "kiosk.service: Command /x is not executable"
    units["installed"]["verify_rc"] = 1
    rows, passed = compare_mod.compare(probe(), arm)
    assert not passed and ("systemd", "installed verify (arm64)") in verdicts(rows, "FAIL")


def test_missing_and_broken_files_are_reported_plainly(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    good = tmp_path / "x86.json"
    good.write_text(json.dumps(probe()))
    assert compare_mod.main([str(good), str(tmp_path / "arm.json")]) == 2
    assert "arm.json is missing" in capsys.readouterr().err
    (tmp_path / "arm.json").write_text('{"steps": {')
    assert compare_mod.main([str(good), str(tmp_path / "arm.json")]) == 2
    assert "unreadable" in capsys.readouterr().err


def test_main_prints_the_table_and_exits_by_the_verdict(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    x86, arm = tmp_path / "x86.json", tmp_path / "arm.json"
    x86.write_text(json.dumps(probe()))
    arm.write_text(json.dumps(probe("aarch64")))
    assert compare_mod.main([str(x86), str(arm)]) == 0
    out = capsys.readouterr().out
    assert "| section | check |" in out and "PASS" in out
    changed = probe("aarch64")
    changed["steps"]["bridge"]["result"]["connected"] = False
    arm.write_text(json.dumps(changed))
    assert compare_mod.main([str(x86), str(arm)]) == 1
    assert "FAIL" in capsys.readouterr().out
