"""Latin words in Japanese speech, read as words.

Open JTalk reads a Latin word its dictionary lacks letter by letter: "Misskey" is
エムアイエスエスケーイーワイ, "Cloudflare" thirteen letter names. A Japanese listener expects
ミスキー, クラウドフレア. Each Latin word of a Japanese sentence is read as Open JTalk analyses
it; the parts it would spell are read by e2k's character-to-katakana model instead (GitHub:
ギット + ハブ, camel-case parts apart), except an acronym or a piece of one or two letters
(API, OS, io), which is said letter by letter as Japanese says it. What Open JTalk knows
(YouTube: ユーチューブ; Web of WebSocket: ウェブ) stays its own reading. Only the speech
changes: the reply's text, and what the screen shows, keep the site's spelling.

`said_in_japanese` and `reading` are pure (the analysis and the model are passed in);
`LatinReadings` binds them to pyopenjtalk and e2k.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

# A word of Latin letters ("May'n" is one word; digits and dots part words: v2023, misskey.io).
LATIN_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*")
# Its camel-case parts: GitHub -> Git, Hub; HTMLParser -> HTML, Parser; iOS -> i, OS.
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
_VOWEL = re.compile(r"[aeiou]", re.I)

# Open JTalk's analysis of a word: its pieces in order, each with the katakana Open JTalk
# says, or None for a piece it would spell letter by letter.
Analysis = list[tuple[str, str | None]]


def reading(word: str, analyse: Callable[[str], Analysis], guess: Callable[[str], str],
            sayable: Callable[[str], bool] = lambda _: True) -> str | None:
    """The katakana a Japanese listener expects for a Latin word, or None when Open JTalk
    says it as well itself. `guess`: a lower-case English spelling to katakana; `sayable`:
    whether a lower-case word is said as a word (json, url and css are spelled)."""
    if all(said is not None for _, said in analyse(word)):
        return None
    # (read by its camel-case parts, not by Open JTalk's pieces: it finds "on" in "conf")
    return "".join(_part(part, analyse, guess, sayable)
                   for part in _PART.findall(word) or [word])


def _part(part: str, analyse: Callable[[str], Analysis], guess: Callable[[str], str],
          sayable: Callable[[str], bool]) -> str:
    if part.isupper() or len(part) < 3 or not _VOWEL.search(part):
        # an acronym, a piece of one or two letters, a run without a vowel (npm): letters,
        # which Open JTalk then says one by one, as Japanese does
        return part
    if part.islower() and not sayable(part):
        return part.upper()  # an acronym written in lower case (url, json): its letters
    known = _known(part, analyse)
    if known is not None:
        return known
    low = part.lower()
    if low[0] in "ix" and len(low) >= 6:
        # a product's letter before a word (iframe, Xserver): the letter, then the word
        after = _known(low[1:], analyse)
        if after is not None:
            return part[0].upper() + after
    return guess(low)


def _known(part: str, analyse: Callable[[str], Analysis]) -> str | None:
    """Open JTalk's own reading of a part: as written (Web of WebSocket), in lower case
    ("For" as for), or of its singular (sites, Ids: サイト, アイディー: Japanese says a loanword
    without its plural)."""
    low = part.lower()
    forms = [part, low]
    if low.endswith("s") and not low.endswith("ss") and len(low) >= 4:
        forms += [part[:-1], low[:-1]]
    for form in dict.fromkeys(forms):
        whole = analyse(form)
        if len(whole) == 1 and whole[0][1] is not None:
            return whole[0][1]
    return None


# Full-width letters and digits (ＷｉＦｉ, １０：００), which Japanese pages often write: read as
# their half-width selves.
HALF_WIDTH = {c: c - 0xFEE0 for c in range(0xFF10, 0xFF5B) if chr(c - 0xFEE0).isalnum()}


def said_in_japanese(text: str, read: Callable[[str], str | None]) -> str:
    """The text as the voice is to say it: each Latin word replaced by its reading (`read`;
    None keeps the word)."""
    def replace(match: re.Match[str]) -> str:
        said = read(match.group(0))
        return match.group(0) if said is None else said

    return LATIN_WORD.sub(replace, text.translate(HALF_WIDTH))


def open_jtalk_analysis(word: str) -> Analysis:
    """Open JTalk's pieces of a word (pyopenjtalk's front end): a piece it does not know
    (a "filler" it spells, or a run of single letters) has no reading."""
    import pyopenjtalk

    out: Analysis = []
    for feature in pyopenjtalk.run_frontend(word):
        piece = unicodedata.normalize("NFKC", feature["string"])
        unknown = feature["pos"] == "フィラー" or (
            feature["pos"] == "記号" and feature["pos_group1"] == "アルファベット")
        if unknown and out and out[-1][1] is None:
            out[-1] = (out[-1][0] + piece, None)  # H, u, b: one piece, "Hub"
        else:
            out.append((piece, None if unknown else feature["read"]))
    return out


class LatinReadings:
    """Latin words read by Open JTalk's analysis and e2k's model (loaded from the manifest's
    file; ~1 ms a word, remembered). `spelled`: lower-case words said letter by letter
    (`[speech] spelled_words`; e2k's own n-gram judge of them would hold 41 MB)."""

    def __init__(self, model: Path, spelled: tuple[str, ...] = ()) -> None:
        from e2k import C2K  # type: ignore[import-untyped]

        self._c2k = C2K(model="turbo", path=str(model))
        self._spelled = frozenset(spelled)
        self.read = lru_cache(maxsize=4096)(self._read)

    def _guess(self, word: str) -> str:
        return str(self._c2k(word))

    def _read(self, word: str) -> str | None:
        return reading(word, open_jtalk_analysis, self._guess,
                       lambda part: part not in self._spelled)

    def __call__(self, text: str) -> str:
        return said_in_japanese(text, self.read)
