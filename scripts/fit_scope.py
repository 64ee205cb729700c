"""Fit `scope_story_tokens` (kiosk/answer/params.py) on every set of ../shared/bench, and
validate it leaving each set out.

    .venv/bin/python scripts/fit_scope.py

A question that stands alone and whose best page scores under `scope_page_below` is declined,
unless its best chunk stands out from the site (`scope_peak_below`): a long story around a
real question dilutes its words (CAsT's openings). A short question is diluted by nothing, so
under that length the peak does not keep it answered. The sets run once with the length rule
off; the turns it would decide are those the other rules leave answered with a best page under
`scope_page_below`: off-topic turns (the sets' own, the demo's, and the chit-chat of
kiosk/bench/offtopic) and page turns. The length is one past the longest off-topic question
among them, and never above the shortest page turn's (a false refusal costs more than a false
answer). Fitted on all sets but one, it is scored on the one left out.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from kiosk.answer import AnswerParams
from kiosk.config import Config
from kiosk.evalsets import default_bench_dir, evaluate_all, find_sets


def decided(report: dict[str, Any], below: float) -> list[tuple[int, bool]]:
    """(tokens, off-topic) of the turns the length rule decides in one set's report."""
    records = list(report["turns"]) + list(report.get("chat", {}).get("turns", []))
    out: list[tuple[int, bool]] = []
    for record in records:
        scope = (record.get("resolved") or {}).get("scope")
        if (scope is None or scope["declined"] or scope["best_page"] is None
                or scope["best_page"] >= below or scope["tokens"] is None):
            continue
        off = record["expect"] is None and record["kind"] == "offtopic"
        if off or record["expect"] is not None:
            out.append((int(scope["tokens"]), off))
    return out


def fit(rows: list[tuple[int, bool]]) -> int:
    longest_off = max((t for t, off in rows if off), default=0)
    shortest_page = min((t for t, off in rows if not off), default=10**6)
    return min(longest_off + 1, shortest_page)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", type=Path, default=default_bench_dir())
    args = parser.parse_args()
    cfg = Config()
    off = dataclasses.replace(cfg.brain.answer, scope_story_tokens=0)
    cfg = dataclasses.replace(cfg, brain=dataclasses.replace(cfg.brain, answer=off))
    sets = find_sets(args.bench)
    reports = evaluate_all(cfg, sets)["sets"]
    below = AnswerParams().scope_page_below
    rows = {name: decided(report, below) for name, report in reports.items()}
    print(f"{'left out':<16}{'fitted':>7}{'off kept answered':>19}{'pages refused':>15}")
    for name, own in rows.items():
        tokens = fit([r for other, rs in rows.items() if other != name for r in rs])
        kept = sum(1 for t, o in own if o and t >= tokens)
        refused = sum(1 for t, o in own if not o and t < tokens)
        print(f"{name:<16}{tokens:>7}{f'{kept} of {sum(o for _, o in own)}':>19}"
              f"{f'{refused} of {sum(not o for _, o in own)}':>15}")
    every = fit([r for rs in rows.values() for r in rs])
    print(f"fitted on every set: scope_story_tokens = {every} "
          f"(shipped: {AnswerParams().scope_story_tokens})")


if __name__ == "__main__":
    main()
