"""Compare two probe files of scripts/arm64_probe.py (x86-64 and arm64) and print a table.

    python3 scripts/arm64_compare.py probe-x86_64.json probe-aarch64.json [--markdown]

Exit status 0 when every figure agrees within its tolerance, 1 on a difference, 2 when a file
is missing or unreadable. Tolerances (TOLERANCES below):
- page top-1 and top-1 of the kiosk's strategy (eval's `resolved`), spoken and typed top-1 of
  the voice bench, each fixed question's top page: equal; eval's baseline strategies: within
  one turn;
- CER / WER of the voice bench: within 1 point (0.01);
- the fixed questions' replies: identical, or the question listed in EXPLAINED with the reason;
- the index's text and postings: the same bytes; its vectors: cosine >= 0.99 chunk by chunk;
- the model files: the same sha256; doctor's checks: the same status; the bridge handshake:
  up on both; the units: verify clean on both, the same exposure.
Package versions, transcripts and timings are shown, never judged (emulated timings are not
the kiosk's latency).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TOLERANCES = {
    "error_rate": 0.01,  # CER (ja) / WER (en): 1 point
    # a chunk's vector on the two machines: int8 kernels differ (x86-64 VNNI vs arm64 NEON), so
    # the dynamic int8 encoder's output does; each machine's is as close to fp32 (README)
    "vector_cosine": 0.99,
    "mrr": 0.01,
    # eval's baseline strategies (all but the kiosk's own, resolved): within one turn of 120
    "baseline_top1": 0.0085,
}
STRATEGY = "resolved"  # what the kiosk answers with: its top-1 must be equal

# Replies that may differ between the machines, each with its reason: (lang, question) -> why
EXPLAINED: dict[tuple[str, str], str] = {}

SAME, WITHIN, INFO, DIFF, FAIL = "same", "within", "info", "DIFF", "FAIL"


@dataclass(frozen=True)
class Row:
    section: str
    item: str
    x86: str
    arm64: str
    rule: str
    verdict: str  # same, within, info: agree; DIFF, FAIL: the check does not pass


def _cosine(p: list[float], q: list[float]) -> float:
    dot = sum(a * b for a, b in zip(p, q, strict=True))
    norm = (sum(a * a for a in p) * sum(b * b for b in q)) ** 0.5
    return dot / norm if norm else 0.0


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _step(probe: dict[str, Any], name: str) -> tuple[dict[str, Any] | None, str]:
    """The step's result, or None and why there is none."""
    step = probe.get("steps", {}).get(name)
    if step is None:
        return None, "not run"
    if step.get("running"):
        return None, "did not finish (killed or timed out)"
    if not step.get("ok"):
        return None, f"failed: {str(step.get('error', '?'))[:200]}"
    result = step.get("result")
    return (result, "") if isinstance(result, dict) else (None, "no result")


def _equal(section: str, item: str, a: Any, b: Any, rule: str = "equal") -> Row:
    return Row(section, item, _fmt(a), _fmt(b), rule, SAME if a == b else DIFF)


def _within(section: str, item: str, a: Any, b: Any, tol: float) -> Row:
    if not isinstance(a, int | float) or not isinstance(b, int | float):
        return Row(section, item, _fmt(a), _fmt(b), f"within {tol}", FAIL)
    verdict = SAME if a == b else WITHIN if abs(a - b) <= tol + 1e-9 else DIFF
    return Row(section, item, _fmt(a), _fmt(b), f"within {tol}", verdict)


def _platform(x: dict[str, Any], a: dict[str, Any]) -> list[Row]:
    rows = [Row("platform", "machine", _fmt(x.get("machine")), _fmt(a.get("machine")), "shown",
                INFO),
            Row("platform", "python", _fmt(x.get("python")), _fmt(a.get("python")), "shown",
                INFO)]
    xp, ap = x.get("packages", {}), a.get("packages", {})
    for name in sorted(set(xp) | set(ap)):
        missing = ap.get(name) == "(missing)" and xp.get(name) != "(missing)"
        verdict = FAIL if missing else SAME if xp.get(name) == ap.get(name) else INFO
        rows.append(Row("platform", name, _fmt(xp.get(name)), _fmt(ap.get(name)),
                        "installed (versions shown)", verdict))
    return rows


def _models(x: dict[str, Any], a: dict[str, Any]) -> list[Row]:
    xf, af = x.get("files", {}), a.get("files", {})
    rows = []
    for name in sorted(set(xf) | set(af)):
        xs, as_ = xf.get(name), af.get(name)
        if xs == "(missing)" and as_ == "(missing)":
            continue  # not installed by default on either
        rows.append(Row("models", name, _fmt(xs)[:12], _fmt(as_)[:12], "same sha256",
                        SAME if xs == as_ else DIFF))
    return rows


def _index(x: dict[str, Any], a: dict[str, Any]) -> list[Row]:
    rows = [_equal("index", key, x.get(key), a.get(key))
            for key in ("model", "pages", "chunks", "sha_text", "sha_postings", "sha_idf")]
    rows.append(Row("index", "sha_vectors", _fmt(x.get("sha_vectors")),
                    _fmt(a.get("sha_vectors")), "shown (float16 bits may differ)", INFO))
    xv, av = x.get("vectors", []), a.get("vectors", [])
    if not xv or len(xv) != len(av):
        rows.append(Row("index", "vectors", f"{len(xv)} rows", f"{len(av)} rows",
                        "the same chunks on both", FAIL))
    else:
        cosines = [_cosine(p, q) for p, q in zip(xv, av, strict=True)]
        low, mean = min(cosines), sum(cosines) / len(cosines)
        tol = TOLERANCES["vector_cosine"]
        rows.append(Row("index", "vectors: cosine x86-64 / arm64, min (mean)", "1",
                        f"{low:.4f} ({mean:.4f})", f"min >= {tol}",
                        SAME if low >= 1 - 1e-9 else WITHIN if low >= tol else DIFF))
    return rows


def _doctor(x: dict[str, Any], a: dict[str, Any]) -> list[Row]:
    xc, ac = x.get("checks", {}), a.get("checks", {})
    return [_equal("doctor", name, xc.get(name, {}).get("status"),
                   ac.get(name, {}).get("status"), "same status")
            for name in sorted(set(xc) | set(ac))]


def _ask(x: dict[str, Any], a: dict[str, Any], explained: dict[tuple[str, str], str]
         ) -> list[Row]:
    rows = []
    for lang in sorted(set(x) | set(a)):
        xs, as_ = x.get(lang, []), a.get(lang, [])
        if len(xs) != len(as_):
            rows.append(Row("ask", f"{lang}: questions", str(len(xs)), str(len(as_)),
                            "the same questions", FAIL))
            continue
        for i, (p, q) in enumerate(zip(xs, as_, strict=True), 1):
            question = p.get("question", "")
            rows.append(_equal("ask", f"{lang} #{i} top page", p.get("top1"), q.get("top1")))
            if p.get("reply") == q.get("reply"):
                rows.append(Row("ask", f"{lang} #{i} reply", "(identical)", "(identical)",
                                "identical", SAME))
                continue
            why = explained.get((lang, question))
            rows.append(Row("ask", f"{lang} #{i} reply: {question}", _fmt(p.get("reply")),
                            _fmt(q.get("reply")), "identical, or explained",
                            INFO if why else DIFF))
    return rows


def _eval(x: dict[str, Any], a: dict[str, Any]) -> list[Row]:
    rows = []
    for lang in sorted(set(x) | set(a)):
        xs, as_ = x.get(lang, {}), a.get(lang, {})
        for strategy in sorted(set(xs) | set(as_)):
            p, q = xs.get(strategy, {}), as_.get(strategy, {})
            for key in ("page_top1", "top1"):
                item = f"{lang} {strategy} {key}"
                rows.append(_equal("eval", item, p.get(key), q.get(key)) if strategy == STRATEGY
                            else _within("eval", item, p.get(key), q.get(key),
                                         TOLERANCES["baseline_top1"]))
            rows.append(_within("eval", f"{lang} {strategy} mrr", p.get("mrr"), q.get("mrr"),
                                TOLERANCES["mrr"]))
    return rows


def _voice(lang: str, x: dict[str, Any], a: dict[str, Any]) -> list[Row]:
    section = f"voice-{lang}"
    measure = "WER" if lang == "en" else "CER"
    rows = [_equal(section, "utterances", x.get("utterances"), a.get("utterances")),
            _within(section, measure, x.get("error_rate"), a.get("error_rate"),
                    TOLERANCES["error_rate"])]
    if "error_rate_kana" in x or "error_rate_kana" in a:
        rows.append(_within(section, "CER (kana)", x.get("error_rate_kana"),
                            a.get("error_rate_kana"), TOLERANCES["error_rate"]))
    rows += [_equal(section, "spoken top-1", x.get("spoken_top1"), a.get("spoken_top1")),
             _equal(section, "typed top-1", x.get("typed_top1"), a.get("typed_top1"))]
    xe, ae = x.get("examples", []), a.get("examples", [])
    differ = sum(p.get("heard") != q.get("heard") for p, q in zip(xe, ae, strict=False))
    rows.append(Row(section, "transcripts differing", "-", f"{differ} of {len(xe)}",
                    "shown (CER/WER judge them)", INFO))
    return rows


def _bridge(x: dict[str, Any], a: dict[str, Any]) -> list[Row]:
    rows = []
    for key in ("connected", "firmware", "pong", "ack", "simulator_state"):
        row = _equal("bridge", key, x.get(key), a.get(key))
        if x.get(key) is False:
            row = Row(row.section, row.item, row.x86, row.arm64, "true on both", FAIL)
        rows.append(row)
    return rows


def _systemd(x: dict[str, Any], a: dict[str, Any]) -> list[Row]:
    rows = []
    for where in ("rendered", "installed"):
        xs, as_ = x.get(where), a.get(where)
        if xs is None and as_ is None:
            continue
        if where == "installed" and xs is None:
            xs = x.get("rendered")  # x86-64 has no installed units: its rendered ones
        if xs is None or as_ is None:
            rows.append(Row("systemd", f"{where} units", _fmt(xs and "checked"),
                            _fmt(as_ and "checked"), "checked on both", FAIL))
            continue
        for side, result in (("x86", xs), ("arm64", as_)):
            clean = result.get("verify_rc") == 0 and not result.get("verify_messages")
            if not clean:
                rows.append(Row("systemd", f"{where} verify ({side})",
                                _fmt(xs.get("verify_rc")), _fmt(as_.get("verify_rc")),
                                "exit 0, no messages", FAIL))
        if all(r.get("verify_rc") == 0 and not r.get("verify_messages") for r in (xs, as_)):
            rows.append(Row("systemd", f"{where} verify", "clean", "clean",
                            "exit 0, no messages", SAME))
        xe, ae = xs.get("exposure", {}), as_.get("exposure", {})
        for unit in sorted(set(xe) | set(ae)):
            rows.append(_equal("systemd", f"{where} exposure {unit}", xe.get(unit),
                               ae.get(unit)))
    return rows


def compare(x86: dict[str, Any], arm64: dict[str, Any],
            explained: dict[tuple[str, str], str] | None = None) -> tuple[list[Row], bool]:
    """Rows of the table and whether everything agrees within its tolerance."""
    why = EXPLAINED if explained is None else explained
    rows: list[Row] = []
    sections = {
        "platform": _platform, "models": _models, "index": _index, "doctor": _doctor,
        "ask": lambda x, a: _ask(x, a, why), "eval": _eval,
        "voice-en": lambda x, a: _voice("en", x, a), "voice-ja": lambda x, a: _voice("ja", x, a),
        "bridge": _bridge, "systemd": _systemd,
    }
    for name, judge in sections.items():
        xr, xwhy = _step(x86, name)
        ar, awhy = _step(arm64, name)
        if xr is None or ar is None:
            rows.append(Row(name, "step", xwhy or "ok", awhy or "ok", "ran on both", FAIL))
            continue
        rows.extend(judge(xr, ar))
    for name, probe in (("x86", x86), ("arm64", arm64)):
        for step in probe.get("steps", {}):
            if step not in sections:
                rows.append(Row(step, f"unknown step ({name})", "-", "-", "shown", INFO))
    passed = not any(r.verdict in (DIFF, FAIL) for r in rows)
    return rows, passed


def step_times(x86: dict[str, Any], arm64: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Each step's wall time on both machines (emulated on arm64: not the kiosk's latency)."""
    names = list(dict.fromkeys([*x86.get("steps", {}), *arm64.get("steps", {})]))
    def secs(probe: dict[str, Any], name: str) -> str:
        value = probe.get("steps", {}).get(name, {}).get("seconds")
        return "-" if value is None else f"{value:.0f} s"
    return [(n, secs(x86, n), secs(arm64, n)) for n in names]


def _cell(text: str, width: int) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= width else text[:width - 1] + "…"


def format_table(rows: list[Row], *, everything: bool = False, width: int = 60) -> str:
    """A Markdown table; without `everything`, rows that agree exactly are counted per
    section instead of listed (the package versions are always listed)."""
    lines = ["| section | check | x86-64 | arm64 | rule | verdict |",
             "|---|---|---|---|---|---|"]
    counted: dict[str, int] = {}
    for row in rows:
        if not everything and row.verdict == SAME:
            counted[row.section] = counted.get(row.section, 0) + 1
            continue
        lines.append(f"| {row.section} | {_cell(row.item, width)} | {_cell(row.x86, width)} | "
                     f"{_cell(row.arm64, width)} | {row.rule} | {row.verdict} |")
    for section, count in counted.items():
        lines.append(f"| {section} | {count} more checks | | | | same |")
    return "\n".join(lines)


def load_probe(path: Path) -> dict[str, Any]:
    """The probe file, or a ValueError saying plainly what is wrong with it."""
    if not path.is_file():
        raise ValueError(f"probe file {path} is missing: the probe did not start or its "
                         "machine's run failed before writing it (see the log beside it)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"probe file {path} is unreadable: {exc}") from exc
    if not isinstance(data, dict) or "steps" not in data:
        raise ValueError(f"probe file {path} is not a probe (no steps)")
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="compare an x86-64 and an arm64 probe")
    parser.add_argument("x86")
    parser.add_argument("arm64")
    parser.add_argument("--all", action="store_true", help="list the rows that agree as well")
    args = parser.parse_args(argv)
    try:
        x86, arm64 = load_probe(Path(args.x86)), load_probe(Path(args.arm64))
    except ValueError as exc:
        print(f"compare: {exc}", file=sys.stderr)
        return 2
    rows, passed = compare(x86, arm64)
    print(format_table(rows, everything=args.all))
    print()
    print("| step | x86-64 | arm64 (emulated) |\n|---|---|---|")
    for name, xs, as_ in step_times(x86, arm64):
        print(f"| {name} | {xs} | {as_} |")
    bad = [r for r in rows if r.verdict in (DIFF, FAIL)]
    print(f"\n{len(rows)} checks, {len(bad)} beyond tolerance: "
          f"{'PASS' if passed else 'FAIL'}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
