"""The best reply F1 a spoken reply of a given length can reach against a set's reference
replies: with a reply of L words, every one of them in the reference of R words, F1 is
2L / (L + R) (L <= R; a reply longer than its reference loses precision the same way).
Averaged over the page turns `kiosk eval` scores (a reference that is no apology).

    python scripts/reply_f1_bound.py ../shared/bench/cast2021/dialogues.jsonl --seconds 12 17

`--seconds` turns speaking time into words at the bundled English voice's rate, measured here
by synthesizing the English demo site's sentences (`--words` gives lengths in words directly).
English sets only: Japanese replies are scored on character 2-grams.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from kiosk.eval import load_dialogues, reply_units


def words_of(text: str) -> int:
    """As `kiosk eval`'s word F1 counts them."""
    return sum(reply_units("en", text).values())


def voice_words_per_s() -> float:
    """Words a second of the bundled English voice over the demo site's English sentences."""
    from kiosk.audio.format import RATE_HZ
    from kiosk.config import DEMO_SITE, Config
    from kiosk.retrieval.site import load_site
    from kiosk.text import sentences
    from kiosk.tts import spoken
    from kiosk.wiring import synthesizer

    pages, _ = load_site(DEMO_SITE)
    said = [s for p in pages if p.lang == "en" for sec in p.sections
            for s in sentences(sec.text)][:60]
    voice = synthesizer(Config(), "en", deterministic=True)
    seconds = sum(len(spoken(voice, s)) for s in said) / RATE_HZ
    return sum(words_of(s) for s in said) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dialogues", type=Path, nargs="+")
    parser.add_argument("--words", type=int, nargs="*", default=[])
    parser.add_argument("--seconds", type=float, nargs="*", default=[])
    args = parser.parse_args()
    lengths = list(args.words)
    if args.seconds:
        rate = voice_words_per_s()
        print(f"English voice: {rate:.2f} words/s")
        lengths += [round(s * rate) for s in args.seconds]
    for path in args.dialogues:
        refs = [words_of(t.reply) for d in load_dialogues(path) for t in d.turns
                if t.reply and t.expect]
        refs = [r for r in refs if r]
        print(f"{path}: {len(refs)} turns, reference median {statistics.median(refs):g} words")
        for length in lengths:
            bound = statistics.mean(2 * min(length, r) / (length + r) for r in refs)
            print(f"  a reply of {length} words: F1 at most {bound:.3f}")


if __name__ == "__main__":
    main()
