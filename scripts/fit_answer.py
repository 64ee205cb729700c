"""Fit one weight of the answer (kiosk/answer/params.py) on the venue sets of ../shared/bench,
and validate it leaving each set out.

    .venv/bin/python scripts/fit_answer.py                       # meaning_below (0 = off)
    .venv/bin/python scripts/fit_answer.py --param head_under --grid 0.1,0.25,0.4,0.5,0.75,1 \
        --against 0.25

Each value of the grid runs every venue set once; what it is judged by is the key facts said
(the sets' `key`: the reply holds the fact asked for), against the value `--against` (default:
the grid's first; for meaning_below 0, the rule switched off). For each set left out, the value
is the one that, on the other sets, loses least on the worst of them, then wins most, then is
the lowest; the left-out set is scored with it.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from kiosk.config import Config
from kiosk.evalsets import default_bench_dir, evaluate_all, find_sets


def key_hits(cfg: Config, param: str, value: float, bench: Path) -> dict[str, int]:
    kind = type(getattr(cfg.brain.answer, param))
    answer = dataclasses.replace(cfg.brain.answer, **{param: kind(value)})
    cfg = dataclasses.replace(cfg, brain=dataclasses.replace(cfg.brain, answer=answer))
    sets = [s for s in find_sets(bench) if s.venue]
    reports = evaluate_all(cfg, sets)["sets"]
    resolved = {name: r["strategies"]["resolved"] for name, r in reports.items()}
    return {name: round((r["key_hit"] or 0.0) * r["key_turns"])
            for name, r in resolved.items() if r.get("key_turns")}


def choose(hits: dict[float, dict[str, int]], names: list[str], against: float) -> float:
    off = hits[against]

    def score(value: float) -> tuple[int, int, float]:
        gains = [hits[value][n] - off[n] for n in names]
        return (min(gains), sum(gains), -value)

    return max(hits, key=score)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", type=Path, default=default_bench_dir())
    parser.add_argument("--param", default="meaning_below", help="a field of AnswerParams")
    parser.add_argument("--grid", default="0,0.1,0.2,0.3,0.4,0.5",
                        help="values, comma-separated")
    parser.add_argument("--against", type=float, help="the value gains are counted against "
                        "(default: the grid's first)")
    args = parser.parse_args()
    cfg = Config()
    if not hasattr(cfg.brain.answer, args.param):
        parser.error(f"--param {args.param}: no such field of AnswerParams")
    grid = [float(v) for v in args.grid.split(",")]
    against = grid[0] if args.against is None else args.against
    if against not in grid:
        grid.insert(0, against)
    hits = {value: key_hits(cfg, args.param, value, args.bench) for value in grid}
    names = sorted(hits[against])
    print(f"{args.param}: key facts said, by value:")
    print("value " + " ".join(f"{n:>14}" for n in names))
    for value in grid:
        print(f"{value:5} " + " ".join(f"{hits[value][n]:>14}" for n in names))
    print(f"left out: value chosen on the others, key facts said against {against}")
    for out in names:
        value = choose(hits, [n for n in names if n != out], against)
        print(f"{out:>14}: {value}  {hits[value][out] - hits[against][out]:+d}")
    print(f"on every set: {choose(hits, names, against)}")


if __name__ == "__main__":
    main()
