"""Print N replies drawn at random (fixed seed) from a `kiosk eval --json` report, with the
question, the page found and the reference reply, for reading them as a visitor would.

    kiosk eval --site ../shared/bench/vagov-en/site \
        --dialogues ../shared/bench/vagov-en/dialogues.jsonl --json > vagov.json
    python scripts/sample_replies.py vagov.json --count 30 --seed 5
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    report = json.loads(args.report.read_text(encoding="utf-8"))
    turns = [t for t in report["turns"] if t["expect"] and t["resolved"].get("reply")]
    for n, turn in enumerate(random.Random(args.seed).sample(turns, min(args.count,
                                                                         len(turns))), 1):
        got = turn["resolved"]
        right = "right page" if got["rr"] == 1.0 else f"wrong page (expected {turn['expect']})"
        print(f"{n:2}. [{turn['kind']}] {turn['user']}\n    {got['top']} — {right}\n"
              f"    avatar: {got['reply']}\n")


if __name__ == "__main__":
    main()
