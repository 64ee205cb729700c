"""Fit the context gate (kiosk/dialogue/gate.toml) on every venue site of ../shared/bench.

    .venv/bin/python scripts/fit_gate.py            # measure, fit, write gate.toml
    .venv/bin/kiosk eval --all --cv site            # its leave-one-site-out figures

The sites' dialogues run once without a gate, the gate's features measured on every
follow-up; those whose page the bare search and the brain disagree on teach it (which of the
two found it). A gate is fitted for every L2 weight of the grid and votes at every threshold
of it; the committee decides by majority (kiosk.evalsets.choose_gate).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from kiosk.config import Config
from kiosk.dialogue.gate import GATE_FILE, dumps
from kiosk.evalsets import (
    GATE_L2,
    GATE_THRESHOLDS,
    choose_gate,
    default_bench_dir,
    evaluate_all,
    find_sets,
    gate_net,
    gate_rows,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", type=Path, default=default_bench_dir())
    parser.add_argument("--out", type=Path, default=GATE_FILE)
    args = parser.parse_args()
    venues = [s for s in find_sets(args.bench) if s.venue]
    measured = evaluate_all(Config(), venues, gates={s.name: None for s in venues},
                            features=True)["sets"]
    names = [s.name for s in venues]
    gate = choose_gate(measured, names)
    counts = ", ".join(f"{n} {len(gate_rows(measured[n])[0])}" for n in names)
    nets = ", ".join(f"{n} +{w}-{lost}" for n in names
                     for w, lost in [gate_net(gate, measured[n])])
    note = (f"Fitted by scripts/fit_gate.py on {time.strftime('%Y-%m-%d')}: logistic "
            f"regressions over kiosk.dialogue.gate.FEATURES\n(standardized), one per L2 weight "
            f"{GATE_L2}, each voting at thresholds {GATE_THRESHOLDS};\nthe majority decides. "
            f"On the follow-ups "
            f"whose page the bare search and the brain disagree on: {counts}.\n"
            f"In sample, turns won and lost: {nets}. Left-out figures: kiosk eval --all "
            f"--cv site (README).")
    args.out.write_text(dumps(gate, note), encoding="utf-8")
    print(f"wrote {args.out} ({len(gate.members)} members); in sample: {nets}", file=sys.stderr)


if __name__ == "__main__":
    main()
