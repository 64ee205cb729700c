"""Write the demo dialogues' off-topic questions (weather, a restaurant in town, a joke, abuse)
as one-turn dialogues for another site, so `kiosk eval` reports its off-topic false answers
there too (the real-site sets in ../shared/bench/ have no off-topic turns of their own).

    python scripts/offtopic_dialogues.py --lang en --screen index.md > offtopic-en.jsonl
    kiosk eval --site ../shared/bench/vagov-en/site --dialogues offtopic-en.jsonl --json

A question the site does cover after all (a pharmacy on a site with a pharmacy page) is left
out with --skip.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DEMO_DIALOGUES = Path(__file__).resolve().parent.parent / "kiosk" / "demo" / "dialogues"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", choices=("en", "ja"), required=True)
    parser.add_argument("--screen", default=None, help="page id on the touchscreen")
    parser.add_argument("--skip", action="append", default=[],
                        help="a question to leave out (may be given more than once)")
    args = parser.parse_args()
    count = 0
    source = DEMO_DIALOGUES / f"{args.lang}.jsonl"
    for line in source.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        for turn in json.loads(line)["turns"]:
            if turn.get("kind") != "offtopic" or turn["user"] in args.skip:
                continue
            count += 1
            dialogue = {"id": f"offtopic-{args.lang}-{count:02d}", "lang": args.lang,
                        "turns": [{"user": turn["user"], "screen": args.screen, "expect": None,
                                   "kind": "offtopic"}]}
            sys.stdout.write(json.dumps(dialogue, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
