"""How Latin words in Japanese pages are said: by Open JTalk alone, and with the readings
(`kiosk.tts.readings`). Over every Japanese sentence of the given site folders (default: the
demo site, and misskey-ja of ../shared/bench when it is there) it counts the Latin words,
those Open JTalk alone spells letter by letter though they are no acronym, and the morae of
the sentences holding them said both ways; the time of a first reading. `--pairs FILE` writes
each changed word with its reading, for a listener to judge.

    .venv/bin/python scripts/bench_readings.py [SITE ...] [--json] [--pairs FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kiosk.dialogue.lexicon import load_lexicon  # noqa: E402
from kiosk.models import default_models_dir, load_manifest, model_path  # noqa: E402
from kiosk.retrieval.site import chunk_page, load_site  # noqa: E402
from kiosk.tts.readings import LATIN_WORD, LatinReadings  # noqa: E402


def japanese_sentences(site: Path) -> list[str]:
    pages, _ = load_site(site)
    out: list[str] = []
    for page in pages:
        if page.lang != "ja":
            continue
        for chunk in chunk_page(page):
            out += [s for s in re.split(r"(?<=[。！？])|\n", chunk.text) if s.strip()]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sites", nargs="*", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--pairs", type=Path, help="write the changed words and readings here")
    args = parser.parse_args()
    sites = args.sites or [p for p in (ROOT / "kiosk/demo/site",
                                       ROOT.parent / "shared/bench/misskey-ja/site") if p.is_dir()]
    import pyopenjtalk

    readings = LatinReadings(model_path(load_manifest()["e2k-c2k"], default_models_dir()),
                             load_lexicon("ja").spelled_words)
    pyopenjtalk.g2p("準備")  # (the dictionary's loading is no reading's time)
    result: dict[str, object] = {"sites": [str(s) for s in sites]}
    sentences = [s for site in sites for s in japanese_sentences(site)]
    holding = [s for s in sentences if LATIN_WORD.search(s)]
    words = Counter(w for s in holding for w in LATIN_WORD.findall(s))
    started = time.perf_counter()
    said = {w: readings.read(w) for w in words}
    per_word_ms = (time.perf_counter() - started) * 1000 / max(len(words), 1)
    changed = {w: r for w, r in said.items() if r is not None and r != w}
    before = sum(len(pyopenjtalk.g2p(s, kana=True)) for s in holding)
    after = sum(len(pyopenjtalk.g2p(readings(s), kana=True)) for s in holding)
    result.update({
        "japanese_sentences": len(sentences),
        "sentences_with_latin_words": len(holding),
        "latin_words": sum(words.values()),
        "distinct_latin_words": len(words),
        "spelled_by_open_jtalk_alone": sum(words[w] for w in changed),
        "distinct_read_otherwise_now": len(changed),
        "kana_of_those_sentences_before": before,
        "kana_of_those_sentences_after": after,
        "first_reading_ms_per_word": round(per_word_ms, 2),
    })
    if args.pairs:
        args.pairs.write_text("".join(f"{w}\t{r}\t{words[w]}\n" for w, r in sorted(
            changed.items(), key=lambda item: -words[item[0]])), encoding="utf-8")
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
