"""Venue spelling for Japanese transcripts: a word Whisper heard right but wrote with other
characters (宇宙職 for 宇宙食, 中車場 for 駐車場, 子供 for 子ども) is written as the venue's
own pages write a word that sounds the same.

Whisper base hears Japanese sounds well and picks kanji badly: on the demo questions half of
its character errors are homophones and spelling variants (the kana reading's error rate is
half the characters'). The site is the best dictionary of what a visitor at this venue
talks about. Open JTalk (already the Japanese voice) splits both into words with their
readings; a run of one to three words of a transcript that holds a noun and reads exactly as
a site word of at least three morae is replaced by the site's spelling. Words that are not
the site's, particles and short readings (ホカ, トキ: too many homophones) are left alone. A
katakana word Open JTalk does not know is a loanword heard with one consonant slipped when it
is one mora's consonant (of the same manner) away from exactly one katakana word of the site:
アクリ is the site's アプリ.

Before that, the transcript itself is chosen among the hypotheses of Whisper's beam by
Whisper's score plus a character trigram model of the same site text (`kiosk.asr.charlm`):
the beam often holds the venue's word second (料金 after 両筋, 行き方 after 駅方).
"""

from __future__ import annotations

import collections
import logging
import re
import time
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

from kiosk.asr.charlm import CharTrigrams, Hypothesis
from kiosk.retrieval.loanwords import Loanwords, vowel_of
from kiosk.text import japanese_words

log = logging.getLogger(__name__)

HYPOTHESES = 5  # of Whisper's beam (5 wide): as many as it holds, at no extra search
# A hypothesis that ends as visitors' questions end (the lexicon's question frames: ますか,
# いくら, ...) gains this much of Whisper's score (mean log-probability per token). Whisper
# base often hears Open JTalk's ますか as ました and keeps the question in its beam, lower:
# 止められました -0.09 / 止められますか -0.27, 借りられました -0.43 / ますか -0.48, いくだ
# -0.64 / いくら -0.72. Demo questions' CER 10.48 -> 9.72% (0.15: 9.93; 0.3 to 1.0 the same);
# misskey-ja's 138 visitor turns, said the same way and chosen on their own site, 10.06%
# with or without it: a kiosk is asked questions, a question's ending costs the hearing of
# statements nothing.
ASKED_BONUS = 0.3

SPAN_WORDS = 3  # longest run of words matched as one site word (宇宙 + 飛行 + 士)
MIN_MORAE = 3  # shorter readings have too many homophones to rewrite safely
BUDGET_CHARS = 150_000  # of site text read (~5 s here); titles and headings come first
_CONTENT = frozenset({"名詞", "接頭詞"})
_NOT_A_WORD = frozenset({"助詞", "助動詞", "記号", "フィラー"})
_SMALL = frozenset("ァィゥェォャュョヮ")
_LATIN = re.compile(r"[A-Za-z]{3,}")


def morae(reading: str) -> int:
    """Morae of a katakana reading (キャ is one, ー and ッ count)."""
    return sum(ch not in _SMALL for ch in reading)


def _pos(word: dict[str, Any]) -> str:
    """A word's part of speech; a katakana word Open JTalk does not know (it calls it a
    filler: エモジ, アクリ) is a loanword, a noun."""
    if word["pos"] == "フィラー" and _katakana(word["string"]):
        return "名詞"
    return str(word["pos"])


def _spans(words: Sequence[dict[str, Any]], start: int) -> Iterable[tuple[int, str, str]]:
    """(words, spelling, reading) of the runs that begin at `start`, longest first."""
    for length in range(min(SPAN_WORDS, len(words) - start), 0, -1):
        span = words[start:start + length]
        if any(_pos(w) in _NOT_A_WORD for w in span):
            continue
        if not any(_pos(w) in _CONTENT for w in span):
            continue
        reading = "".join(w["read"] for w in span)
        if morae(reading) >= MIN_MORAE:
            yield length, "".join(w["string"] for w in span), reading


def _kana(text: str) -> bool:
    return all("\u3040" <= ch <= "\u30ff" for ch in text)


def _nominal(word: dict[str, Any]) -> bool:
    """A verb's continuative form written in kanji and kana, which Japanese also uses as a noun:
    the site's 貸し出し(ています) is the visitor's 貸し出し(はありますか)."""
    return (word["pos"] == "動詞" and word.get("cform") == "連用形"
            and not _kanji(word["string"]) and not _kana(word["string"])
            and morae(word["read"]) >= MIN_MORAE)


def _kanji(text: str) -> bool:
    return all("\u4e00" <= ch <= "\u9fff" for ch in text)


def _hiragana(text: str) -> bool:
    return all("\u3041" <= ch <= "\u309f" for ch in text)


def _katakana(text: str) -> bool:
    return len(text) >= 2 and all("\u30a1" <= ch <= "\u30fc" for ch in text)


def _morae(reading: str) -> list[str]:
    """A katakana reading mora by mora (キャ, ー and ッ each one)."""
    out: list[str] = []
    for ch in reading:
        if ch in _SMALL and out:
            out[-1] += ch
        else:
            out.append(ch)
    return out


def _slips(reading: str) -> list[str]:
    """Keys of the readings one consonant slip away: each mora in turn replaced by its
    vowel and its consonant's manner alone (プ and ク both leave a stop and ウ), so that アプリ
    and アクリ share a key. A recognizer, like a listener in noise, mistakes where a
    consonant is made far more often than how (Miller and Nicely, 1955): a stop for another
    stop, not for a fricative (アイフォン is no アイコン). Morae without a vowel of their own
    (ン, ッ, ー) are not slipped."""
    morae_ = _morae(reading)
    keys = []
    for i, mora in enumerate(morae_):
        vowel = vowel_of(mora[-1])
        # (ウ before a small vowel is a w: ウィ, ウェ)
        manner = "approximant" if mora[0] == "ウ" and len(mora) > 1 else _MANNER.get(mora[0])
        if vowel is not None and manner is not None:
            keys.append("".join(morae_[:i]) + f"<{manner}{vowel}>" + "".join(morae_[i + 1:]))
    return keys


_MANNER = {ch: m for m, row in (
    ("stop", "カキクケコガギグゲゴタテトダデドパピプペポバビブベボ"),
    ("fricative", "サシスセソザジズゼゾハヒフヘホチツヂヅヴ"),
    ("nasal", "ナニヌネノマミムメモ"), ("approximant", "ヤユヨラリルレロワヲ"),
    ("vowel", "アイウエオ")) for ch in row}


def same_word(heard: str, site: str, words: int) -> bool:
    """Whether writing `heard` as `site` keeps the word: a run of several words (宇宙 + 職
    is no word of its own), a kana spelling (いちばん, クルマイス), or a shared character
    (子供, 子ども). Two different words that sound alike (開設, 解説) are both kept."""
    return words > 1 or _kana(heard) or _kana(site) or bool(set(heard) & set(site))


class VenueSpelling:
    """The site's spellings, and (`trigrams`) a model of how its text runs, which chooses
    among Whisper's hypotheses before the spellings are applied."""

    def __init__(self, spellings: dict[str, str], trigrams: CharTrigrams | None = None,
                 weight: float = 0.0, endings: tuple[str, ...] = (),
                 latin: Loanwords | None = None, verbs: frozenset[str] = frozenset()) -> None:
        self.spellings = spellings  # katakana reading -> the site's commonest spelling
        # readings the site writes only as a verb's continuative form (貸し出し of
        # 貸し出しています): they respell a heard word written partly in kana (かし出し), not
        # one written in kanji, a noun's own spelling (話, not the 話し of 話しています)
        self.verbs = verbs
        self.latin = latin or Loanwords(())  # the site's words in Latin letters
        # The site's loanwords (written in katakana) by the keys of their readings one
        # consonant away: Whisper hears a loanword's consonant wrong more than its vowel
        # (アプリ as アクリ, パブリック as タブリック, プラグイン as グラグイン).
        slips: dict[str, set[str]] = collections.defaultdict(set)
        for reading, spelling in spellings.items():
            if _katakana(spelling) and morae(reading) >= MIN_MORAE:
                for key in _slips(reading):
                    slips[key].add(spelling)
        self.slips = {k: next(iter(v)) for k, v in slips.items() if len(v) == 1}
        self.trigrams = trigrams
        self.weight = weight
        self.endings = endings  # how visitors' questions end (gain ASKED_BONUS)

    @classmethod
    def from_texts(cls, texts: Iterable[str], budget_chars: int = BUDGET_CHARS, *,
                   spell: bool = True, weight: float = 0.0,
                   endings: tuple[str, ...] = ()) -> VenueSpelling:
        start = time.perf_counter()
        counts: dict[str, collections.Counter[str]] = collections.defaultdict(
            collections.Counter)
        verbal: dict[str, collections.Counter[str]] = collections.defaultdict(
            collections.Counter)
        read = 0
        kept: list[str] = []  # the budgeted text: its Latin words, and the trigram model
        for text in texts:
            text = text.strip()
            if not text:
                continue
            if read + len(text) > budget_chars:
                break
            read += len(text)
            kept.append(text)
            if not spell:
                continue
            words = japanese_words(text)
            for i in range(len(words)):
                for _, spelling, reading in _spans(words, i):
                    counts[reading][spelling] += 1
                if _nominal(words[i]):
                    verbal[words[i]["read"]][words[i]["string"]] += 1
        # (a verb's form only where the site writes no noun of the reading: 話 stays 話, not
        # the 話し of 話しています)
        spellings = {r: c.most_common(1)[0][0] for r, c in (verbal | counts).items()}
        verbs = frozenset(verbal.keys() - counts.keys())
        latin = Loanwords(w.lower() for text in kept for w in _LATIN.findall(text))
        trigrams = CharTrigrams(kept) if weight > 0 else None
        log.info("asr: %d venue spellings from %d characters of the site in %.1f s",
                 len(spellings), read, time.perf_counter() - start)
        return cls(spellings, trigrams, weight, endings, latin, verbs)

    @property
    def hypotheses(self) -> int:
        """How many of Whisper's hypotheses `choose` wants to see."""
        return HYPOTHESES if self.trigrams is not None and self.weight > 0 else 1

    def choose(self, hypotheses: Sequence[Hypothesis]) -> int:
        """The hypothesis that, by Whisper's score and the site's text together, is likeliest
        (Whisper's first without a model of the site)."""
        if self.trigrams is None or len(hypotheses) < 2:
            return 0
        return self.trigrams.choose(hypotheses, self.weight, self.endings, ASKED_BONUS)

    def _slipped(self, heard: str, reading: str) -> str | None:
        """The one site loanword that a katakana word Open JTalk does not know is one
        consonant away from, or None: none, several (タード: カード or ガード?), or the heard
        word is one the site writes in Latin letters (リノート: Renote, no slip of リモート)."""
        if self.latin.spellings(heard):
            return None
        found = {self.slips[k] for k in _slips(reading) if k in self.slips}
        return found.pop() if len(found) == 1 else None

    def correct(self, text: str) -> str:
        """The transcript with its site words spelled as the site spells them."""
        if not self.spellings or not text:
            return text
        words = japanese_words(text)
        out: list[str] = []
        changed = False
        i = 0
        while i < len(words):
            for length, spelling, reading in _spans(words, i):
                site = self.spellings.get(reading)
                if length == 1 and _katakana(spelling):
                    if site is not None and _hiragana(site):
                        site = None  # a loanword heard is no word the site writes in kana
                    elif site is None and words[i]["pos"] == "フィラー":
                        site = self._slipped(spelling, reading)
                elif site is None and length >= 2 and _katakana(spelling):
                    # a loanword Open JTalk splits into words it knows (ガラリー: ガ + ラリー,
                    # メタバレ: メタ + バレ) is no word of its own either
                    site = self._slipped(spelling, reading)
                if site is not None and reading in self.verbs and _kanji(spelling):
                    site = None
                if site is not None and same_word(spelling, site, length):
                    out.append(site)
                    changed |= site != spelling
                    i += length
                    break
            else:
                out.append(words[i]["string"])
                i += 1
        # Open JTalk hands back full-width letters and signs: give them back as they came
        return unicodedata.normalize("NFKC", "".join(out)) if changed else text


def site_texts(pages: Iterable[Any], lang: str = "ja") -> list[str]:
    """The site's text in reading order of importance: titles and headings of every page
    first, then the pages' prose (a large site's prose is cut by the budget)."""
    pages = [p for p in pages if p.lang == lang]
    heads = [p.title for p in pages] + [s.heading for p in pages for s in p.sections]
    prose = [line for p in pages for s in p.sections for line in s.text.splitlines()]
    return heads + prose
