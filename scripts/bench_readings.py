"""How the voices say what pages write for the eye.

Japanese (default): Latin words, by Open JTalk alone and with the readings
(`kiosk.tts.readings`), and the sentences whose times, dates or ranges are said otherwise
(`kiosk.tts.spoken_ja`). Over every Japanese sentence of the given site folders (default: the
demo site, and misskey-ja of ../shared/bench when it is there) it counts the Latin words,
those Open JTalk alone spells letter by letter though they are no acronym, and the morae of
the sentences holding them said both ways; the time of a first reading. `--pairs FILE` writes
each changed word with its reading, for a listener to judge.

English (`--lang en`): numbers, times, money, telephone numbers and ranges
(`kiosk.tts.spoken_en`) over every English sentence (default: the demo site, and vagov-en,
logingov-en and methods18f-en when they are there): the sentences said otherwise, by kind,
and piper's phonemes for them as written and as said. `--pairs FILE`: each such sentence,
as written and as said.

    .venv/bin/python scripts/bench_readings.py [SITE ...] [--lang en] [--json] [--pairs FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kiosk.dialogue.lexicon import load_lexicon  # noqa: E402
from kiosk.models import default_models_dir, load_manifest, model_path  # noqa: E402
from kiosk.retrieval.site import chunk_page, load_site  # noqa: E402
from kiosk.text import sentences  # noqa: E402
from kiosk.tts.readings import LATIN_WORD, LatinReadings  # noqa: E402
from kiosk.tts.spoken_ja import numbers_said  # noqa: E402


def sentences_of(site: Path, lang: str) -> list[str]:
    """The site's sentences in a language, split as the voice splits a reply's text."""
    pages, _ = load_site(site)
    return [s for page in pages if page.lang == lang
            for chunk in chunk_page(page) for s in sentences(chunk.text)]


def english(sites: list[Path], pairs: Path | None) -> dict[str, object]:
    from kiosk.tts.piper import PiperSynthesizer
    from kiosk.tts.spoken_en import kinds_of, said_in_english

    say_as = load_lexicon("en").say_as
    voice = PiperSynthesizer.from_manifest(load_manifest()["piper-joe-en"], default_models_dir())
    texts = [s for site in sites for s in sentences_of(site, "en")]
    started = time.perf_counter()
    said = [said_in_english(s, say_as) for s in texts]
    per_sentence_ms = (time.perf_counter() - started) * 1000 / max(len(texts), 1)
    changed = [(s, t) for s, t in zip(texts, said, strict=True) if s != t]
    kinds = Counter(kind for s, _ in changed for kind in kinds_of(s, say_as))
    before = [voice.phonemes_of(s, as_written=True) for s, _ in changed]
    now = [voice.phonemes_of(s) for s, _ in changed]
    if pairs:
        pairs.write_text("".join(f"{s}\t{t}\n" for s, t in changed), encoding="utf-8")
    return {
        "english_sentences": len(texts),
        "sentences_said_otherwise": len(changed),
        "by_kind": dict(kinds.most_common()),
        # "dash", "zero zero" (8:00), "dollar" before its amount, as piper says them
        "dash_said_before": sum(p.count("dˈæʃ") for p in before),
        "dash_said_now": sum(p.count("dˈæʃ") for p in now),
        "zero_zero_before": sum(p.count("zˈiəɹoʊ zˈiəɹoʊ") for p in before),
        "zero_zero_now": sum(p.count("zˈiəɹoʊ zˈiəɹoʊ") for p in now),
        "phonemes_before": sum(len(p) for p in before),
        "phonemes_now": sum(len(p) for p in now),
        "ms_per_sentence": round(per_sentence_ms, 3),
    }


def japanese(sites: list[Path], pairs: Path | None) -> dict[str, object]:
    import pyopenjtalk

    readings = LatinReadings(model_path(load_manifest()["e2k-c2k"], default_models_dir()),
                             load_lexicon("ja").spelled_words)
    pyopenjtalk.g2p("準備")  # (the dictionary's loading is no reading's time)
    texts = [s for site in sites for s in sentences_of(site, "ja")]
    holding = [s for s in texts if LATIN_WORD.search(s)]
    words = Counter(w for s in holding for w in LATIN_WORD.findall(s))
    started = time.perf_counter()
    said = {w: readings.read(w) for w in words}
    per_word_ms = (time.perf_counter() - started) * 1000 / max(len(words), 1)
    changed = {w: r for w, r in said.items() if r is not None and r != w}
    if pairs:
        pairs.write_text("".join(f"{w}\t{r}\t{words[w]}\n" for w, r in sorted(
            changed.items(), key=lambda item: -words[item[0]])), encoding="utf-8")
    return {
        "japanese_sentences": len(texts),
        "sentences_with_latin_words": len(holding),
        "latin_words": sum(words.values()),
        "distinct_latin_words": len(words),
        "spelled_by_open_jtalk_alone": sum(words[w] for w in changed),
        "distinct_read_otherwise_now": len(changed),
        "kana_of_those_sentences_before": sum(len(pyopenjtalk.g2p(s, kana=True))
                                              for s in holding),
        "kana_of_those_sentences_after": sum(len(pyopenjtalk.g2p(readings(s), kana=True))
                                             for s in holding),
        "first_reading_ms_per_word": round(per_word_ms, 2),
        # times, dates, ranges (kiosk.tts.spoken_ja)
        "sentences_with_numbers_said_otherwise": sum(numbers_said(s) != s for s in texts),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sites", nargs="*", type=Path)
    parser.add_argument("--lang", choices=("ja", "en"), default="ja")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--pairs", type=Path, help="write the changed words and readings here")
    args = parser.parse_args()
    bench = ROOT.parent / "shared/bench"
    named = (["misskey-ja"] if args.lang == "ja"
             else ["vagov-en", "logingov-en", "methods18f-en"])
    sites = args.sites or [p for p in (ROOT / "kiosk/demo/site",
                                       *(bench / n / "site" for n in named)) if p.is_dir()]
    found = {"sites": [str(s) for s in sites],
             **(english if args.lang == "en" else japanese)(sites, args.pairs)}
    print(json.dumps(found, ensure_ascii=False, indent=1) if args.json
          else "\n".join(f"{k}: {v}" for k, v in found.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
