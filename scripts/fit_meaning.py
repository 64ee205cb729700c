"""Fit `meaning_below` (kiosk/answer/params.py) on the venue sets of ../shared/bench, and
validate it leaving each set out.

    .venv/bin/python scripts/fit_meaning.py

A reply's start that holds under `meaning_below` of the visitor's words (by weight) is chosen
again by meaning (`kiosk.answer.choose.by_meaning`). Each value of the grid runs every venue
set once; what it is judged by is the key facts said (the sets' `key`: the reply holds the
fact asked for). For each set left out, the value is the one that, on the other sets against
the rule switched off, loses least on the worst of them, then wins most, then is the lowest;
the left-out set is scored with it.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from kiosk.config import Config
from kiosk.evalsets import default_bench_dir, evaluate_all, find_sets

GRID = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)


def key_hits(cfg: Config, below: float, bench: Path) -> dict[str, int]:
    answer = dataclasses.replace(cfg.brain.answer, meaning_below=below)
    cfg = dataclasses.replace(cfg, brain=dataclasses.replace(cfg.brain, answer=answer))
    sets = [s for s in find_sets(bench) if s.venue]
    reports = evaluate_all(cfg, sets)["sets"]
    resolved = {name: r["strategies"]["resolved"] for name, r in reports.items()}
    return {name: round((r["key_hit"] or 0.0) * r["key_turns"])
            for name, r in resolved.items() if r.get("key_turns")}


def choose(hits: dict[float, dict[str, int]], names: list[str]) -> float:
    off = hits[0.0]

    def score(value: float) -> tuple[int, int, float]:
        gains = [hits[value][n] - off[n] for n in names]
        return (min(gains), sum(gains), -value)

    return max(GRID, key=score)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", type=Path, default=default_bench_dir())
    args = parser.parse_args()
    cfg = Config()
    hits = {value: key_hits(cfg, value, args.bench) for value in GRID}
    names = sorted(hits[0.0])
    print("key facts said, by value:")
    print("value " + " ".join(f"{n:>14}" for n in names))
    for value in GRID:
        print(f"{value:5} " + " ".join(f"{hits[value][n]:>14}" for n in names))
    print("left out: value chosen on the others, key facts said against the rule off")
    for out in names:
        value = choose(hits, [n for n in names if n != out])
        print(f"{out:>14}: {value}  {hits[value][out] - hits[0.0][out]:+d}")
    print(f"on every set: {choose(hits, names)}")


if __name__ == "__main__":
    main()
