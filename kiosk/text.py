"""Text as the brain sees it: normalization of recognizer output, language, terms and 2-grams.

Shared by the index (so page text and queries are cut the same way) and by the dialogue code
(character 2-gram overlap between an utterance and older exchanges).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from kiosk.dialogue.lexicon import load_lexicon

LANGS = ("ja", "en")

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u30fc\u3005"
_CJK_RE = re.compile(f"[{_CJK}]")
_HIRAGANA_ONLY = re.compile(r"^[\u3040-\u309f\u30fc]+$")
_TOKEN_RE = re.compile(f"[{_CJK}]+|[a-z0-9]+(?:['’][a-z]+)?")
_SPACE_BETWEEN_CJK = re.compile(f"(?<=[{_CJK}])\\s+(?=[{_CJK}])")
# (not inside a quotation or before another mark: 「本当？」と聞いた, "posing the question “Why?” at
# least five times", 本当!?)
_SENTENCE_END_JA = re.compile(r"(?<=[。！？!?])(?![)）」』”’\"'\]。！？!?])")
# (not after an abbreviation that ends no sentence, "e.g. The", "Dr. Smith"; nor after a.m. /
# p.m. before a bracket, a number or a time zone: "10:00 p.m. (ET), and Saturday", "1:30
# p.m. ET, and the call center")
_SENTENCE_END_EN = re.compile(
    r"(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bDr\.)"
    r"(?<!\bvs\.)(?<!\bSt\.)(?<!\bU\.S\.)(?:(?<!\b[ap]\.m\.)\s+(?=[A-Z0-9\"'(\[])|"
    r"(?<=\b[ap]\.m\.)\s+(?!(?:[A-Z]{1,3}T|UTC)\b)(?=[A-Z\"'\[]))")
# A sentence's own end mark at the end of a text, perhaps inside a closing bracket or quote.
SENTENCE_END_EN = re.compile(r"[.!?][)\"”’]*$")
SENTENCE_END_JA = re.compile(r"[。！？!?][）」』)]*$")


# A statement's full stop at the end of a one-sentence utterance.
_FULL_STOP = re.compile(r"[\s。．.!！]+$")
_STOPS = re.compile(r"[。．.!！?？\n]")


def unstopped(text: str) -> str:
    """A one-sentence utterance without the full stop at its end (a question mark stays):
    Whisper writes one where a visitor's voice falls ("...できなくなったんだけど。", "I forgot
    my password."), a typed question has none, and the encoder moves a question for it
    (misskey-ja: the silenced-account page first without it, the streaming API with it).
    Several sentences are left as they are."""
    stripped = _FULL_STOP.sub("", text)
    return stripped if stripped and not _STOPS.search(stripped) else text


def normalize(text: str) -> str:
    """NFKC, lower case, Japanese word spaces removed (recognizers insert them), spaces folded."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = _SPACE_BETWEEN_CJK.sub("", text)
    return " ".join(text.split())


def opens_with(words: list[str], phrases: tuple[str, ...]) -> bool:
    """The words begin with one of the phrases, word for word."""
    return any(words[:len(p.split())] == p.split() for p in phrases)


def lower_first(text: str) -> str:
    """"Dental services" -> "dental services"; "VA dental care" keeps its acronym."""
    if len(text) > 1 and text[0].isupper() and (text[1].islower() or text.startswith("A ")):
        return text[0].lower() + text[1:]
    return text


def detect_lang(text: str) -> str:
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return "en"
    cjk = sum(1 for ch in letters if _CJK_RE.match(ch))
    return "ja" if cjk / len(letters) >= 0.2 else "en"


@lru_cache(maxsize=4)
def _stopwords() -> frozenset[str]:
    words: set[str] = set()
    for lang in LANGS:
        words.update(load_lexicon(lang).stopwords)
    return frozenset(words)


@lru_cache(maxsize=4)
def _number_words() -> dict[str, int]:
    return dict(load_lexicon("en").number_words)


_VOWEL_LETTERS = frozenset("aeiou")


def _is_consonant(word: str, i: int) -> bool:
    ch = word[i]
    if ch in _VOWEL_LETTERS:
        return False
    if ch == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """Porter's m: how many vowel-consonant sequences the stem has."""
    m = 0
    prev_vowel = False
    for i in range(len(stem)):
        vowel = not _is_consonant(stem, i)
        if prev_vowel and not vowel:
            m += 1
        prev_vowel = vowel
    return m


def _ends_cvc(stem: str) -> bool:
    """Consonant, vowel, consonant (not w, x or y) at the end: "hop", "car" (a short stem
    like this lost an "e": hoping -> hope)."""
    n = len(stem)
    return (n >= 3 and _is_consonant(stem, n - 3) and not _is_consonant(stem, n - 2)
            and _is_consonant(stem, n - 1) and stem[-1] not in "wxy")


def _stem(word: str) -> str:
    """Inflections folded as Porter's first step does (and his final "e"), no derivations:
    "applied" / "applying" / "apply", "caring" / "care" (not "car"), "messages" / "message".
    The earlier suffix-stripping alone split those (appli / apply, car) and joined "caring"
    with "car": raw top-1 rose 1.5-1.8 points on vagov-en and both CAsT sets with this."""
    if not word.isalpha() or len(word) <= 2:
        return word
    if word.endswith("sses"):
        word = word[:-2]
    elif len(word) > 4 and word.endswith(("ies", "ied")):
        return word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    else:
        for suffix in ("ing", "ed"):
            if not word.endswith(suffix):
                continue
            stem = word[:-len(suffix)]
            if any(not _is_consonant(stem, i) for i in range(len(stem))):  # not "thing", "red"
                if stem.endswith(("at", "bl", "iz")):
                    word = stem + "e"
                elif len(stem) > 1 and stem[-1] == stem[-2] and stem[-1] not in "lsz" \
                        and _is_consonant(stem, len(stem) - 1):
                    word = stem[:-1]
                elif _measure(stem) == 1 and _ends_cvc(stem):
                    word = stem + "e"
                else:
                    word = stem
                break
    if word.endswith("e") and len(word) > 2:
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _ends_cvc(stem)):
            word = stem
    return word


_KANJI_DIGITS = {"〇": 0, "零": 0, "一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
                 "八": 8, "九": 9}
_KANJI_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_KANJI_NUMBER = re.compile("[〇零一二三四五六七八九十百千万]+")


def _kanji_value(run: str) -> int:
    total, section, digit = 0, 0, 0
    for ch in run:
        if ch in _KANJI_DIGITS:
            digit = digit * 10 + _KANJI_DIGITS[ch] if digit else _KANJI_DIGITS[ch]
        elif ch == "万":
            total += (section + digit or 1) * 10000
            section, digit = 0, 0
        else:
            section += (digit or 1) * _KANJI_UNITS[ch]
            digit = 0
    return total + section + digit


@lru_cache(maxsize=1)
def _counter_re() -> re.Pattern[str]:
    counters = sorted(load_lexicon("ja").number_counters, key=len, reverse=True)
    return re.compile(f"({_KANJI_NUMBER.pattern})(?=({'|'.join(map(re.escape, counters))}))")


def kanji_numbers(text: str) -> str:
    """'六十五歳' -> '65歳', '千二百円' -> '1200円': only before a counter word, and never the
    lone 十分 ('enough')."""
    def repl(m: re.Match[str]) -> str:
        run = m.group(1)
        if run == "十" and m.group(2) == "分":
            return run
        return str(_kanji_value(run))

    return _counter_re().sub(repl, text)


def spell_numbers(text: str) -> str:
    """'ten thirty' -> '10 30', 'twenty five' -> '25', '六十五歳' -> '65歳': recognizers
    spell numbers out."""
    if _CJK_RE.search(text):
        text = kanji_numbers(text)
    numbers = _number_words()
    out: list[str] = []
    pending: int | None = None
    words = text.split(" ")
    for pos, word in enumerate(words):
        value = numbers.get(word)
        if word == "one" and pending is None and (
                pos + 1 >= len(words) or words[pos + 1] not in numbers):
            value = None  # "is there one for children": a pronoun, not a number
        if value is None:
            if pending is not None:
                out.append(str(pending))
                pending = None
            out.append(word)
            continue
        if value == 100 and pending is not None:
            pending *= 100
        elif value == 1000 and pending is not None:
            pending *= 1000
        elif pending is not None and (
                (pending % 100 >= 20 and pending % 10 == 0 and value < 10)
                or (pending >= 100 and pending % 100 == 0 and value < 100)):
            pending += value
        else:
            if pending is not None:
                out.append(str(pending))
            pending = value
    if pending is not None:
        out.append(str(pending))
    return " ".join(out)


def _script_class(ch: str) -> int:
    if "\u3040" <= ch <= "\u309f":
        return 0  # hiragana
    if "\u30a0" <= ch <= "\u30ff":
        return 1  # katakana (and the long-vowel mark)
    return 2  # kanji


def _script_segments(run: str) -> list[str]:
    """Split a CJK run where the script changes: 2-grams across 'の' or 'を' are noise."""
    segments: list[str] = []
    start = 0
    for i in range(1, len(run)):
        if _script_class(run[i]) != _script_class(run[i - 1]):
            segments.append(run[start:i])
            start = i
    segments.append(run[start:])
    return segments


_PARTICLES = frozenset("はがをにでのもとへやか")


# Nouns written in hiragana (さくら, おみやげ, ごはん) are words a visitor asks about, and
# speech recognition writes many so; the rest of a hiragana run is particles and endings.
# The index finds the site's own such nouns once, by Open JTalk's analysis of its text
# (`site_nouns`); a query's hiragana is searched for those, so serving needs no analyser (and
# a noun the site never writes would find nothing of it anyway).
_NOUN_KINDS = frozenset({"一般", "固有名詞", "サ変接続", "形容動詞語幹"})
SITE_NOUN_SHARE = 0.4


def japanese_words(text: str) -> list[dict[str, Any]]:
    """Open JTalk's analysis of a Japanese text, word by word (string, pos, pos_group1,
    cform, read, chain_flag, ...). Its own dictionary only (`use_vanilla`): the extra reading
    fixes would load Sudachi's dictionary, and they change readings, not words or parts of
    speech; the voice, which says the readings, runs its own frontend with them."""
    import pyopenjtalk

    return [dict(word) for word in pyopenjtalk.run_frontend(text, use_vanilla=True)]


def site_nouns(texts: Iterable[str]) -> frozenset[str]:
    """The nouns of two letters or more that the texts write in hiragana alone, by Open
    JTalk's analysis of each whole run of Japanese (alone, the さい of 小さい reads as one);
    not the lexicon's own words (いくら asks; it names nothing)."""
    runs = Counter(token for text in texts
                   for token in _TOKEN_RE.findall(spell_numbers(normalize(text)))
                   if _CJK_RE.match(token) and any(_HIRAGANA_ONLY.match(ch) for ch in token))
    if not runs:
        return frozenset()  # an English site loads no analyser
    said = frozenset(load_lexicon("ja").function_phrases())
    read: Counter[str] = Counter()
    for token, times in sorted(runs.items()):
        for word in japanese_words(token):
            text = word["string"]
            if (word["pos"] == "名詞" and word["pos_group1"] in _NOUN_KINDS
                    and len(text) >= 2 and _HIRAGANA_ONLY.match(text) and text not in said):
                read[text] += times
    # A string read as a noun in few of the places the site writes it is mostly part of other
    # words there (もの of ものです, により); a name keeps its share (みなと of みなと駅).
    # Counted by each run's substrings of a noun's lengths: one pass over the site's text.
    sizes = sorted({len(w) for w in read})
    written: Counter[str] = Counter()
    for token, times in runs.items():
        for size in sizes:
            for at in range(len(token) - size + 1):
                if token[at:at + size] in read:
                    written[token[at:at + size]] += times
    return frozenset(w for w, times in read.items() if times >= SITE_NOUN_SHARE * written[w])


def _nouns_in(segment: str, nouns: frozenset[str], said: str | None = None) -> list[str]:
    """The `nouns` in a run of hiragana, longest first from the left. With `said` (the text
    as said, when `segment` is what is left of it once the conversation's phrases are cut
    out), only a noun the words as said hold: それはどこで見つかったの without それ and どこ
    leaves はで見つかったの, and はで (派手) was not said."""
    if not nouns or len(segment) < 2:
        return []
    out: list[str] = []
    at = 0
    while at < len(segment) - 1:
        for size in range(len(segment) - at, 1, -1):  # a run is short; the nouns may be many
            word = segment[at:at + size]
            if word in nouns and (said is None or word in said):
                out.append(word)
                at += size
                break
        else:
            at += 1
    return out


def content_strength(text: str, nouns: frozenset[str] = frozenset()) -> float:
    """How much searchable content an utterance carries, in rough 'words'.

    A Latin word or a CJK 2-gram counts 1. A lone kanji counts when a particle or the end
    follows it (車は, 駅) — then it is a noun; before okurigana (作った, 食べ) it is a verb stem.
    Hiragana counts by the site's `nouns` in it (`site_nouns`).
    """
    said, text = text, strip_function_phrases(text)
    stop = _stopwords()
    strength = 0.0
    for match in _TOKEN_RE.finditer(text):
        token = match.group(0)
        if not _CJK_RE.match(token):
            token = token.replace("’", "'").split("'")[0]
            if token not in stop and len(token) >= 3:
                strength += 1
            continue
        pos = 0
        for segment in _script_segments(token):
            end = pos + len(segment)
            if _HIRAGANA_ONLY.match(segment):
                strength += sum(len(w) - 1 for w in _nouns_in(segment, nouns, said))
            else:
                if len(segment) == 1:
                    after = token[end:end + 1]
                    if not after or after in _PARTICLES:
                        strength += 1
                else:
                    strength += len(segment) - 1
            pos = end
    return strength


# A katakana word of three letters or more is also a term of its own, holding this share of
# its weight: by its 2-grams alone ボット meets テキストボックス (ボッ), and on misskey-ja the
# note page's text box outranked the bot page; a compound (ワードミュート) still meets
# ミュート by them.
KATAKANA_WHOLE_SHARE = 0.5


def is_whole_word_term(term: str) -> bool:
    """A katakana word held as a term whole, beside its 2-grams (a segment of one script, or
    any term of the index)."""
    return len(term) > 2 and all(_script_class(ch) == 1 for ch in term)


def query_weights(text: str, nouns: frozenset[str] = frozenset()) -> dict[str, float]:
    """Query terms with weights: a Latin word counts 1, and so does a CJK word, its 2-grams
    sharing that 1 — otherwise a long katakana name (プラネタリウム, six 2-grams) outweighs
    the short word that asks the question (写真)."""
    text = spell_numbers(normalize(text))
    stop = _stopwords()
    weights: dict[str, float] = {}
    for token in _TOKEN_RE.findall(text):
        if _CJK_RE.match(token):
            for segment in _script_segments(token):
                if _HIRAGANA_ONLY.match(segment):
                    for word in _nouns_in(segment, nouns):
                        grams = [word[i:i + 2] for i in range(len(word) - 1)]
                        for gram in grams:
                            weights[gram] = weights.get(gram, 0.0) + 1.0 / len(grams)
                    continue
                if segment in stop:
                    continue  # 他 of 他には: "other", no word of what is asked about
                grams = [segment] if len(segment) == 1 else [
                    segment[i:i + 2] for i in range(len(segment) - 1)]
                share = 1.0
                if is_whole_word_term(segment):
                    weights[segment] = weights.get(segment, 0.0) + KATAKANA_WHOLE_SHARE
                    share -= KATAKANA_WHOLE_SHARE
                for gram in grams:
                    weights[gram] = weights.get(gram, 0.0) + share / len(grams)
        else:
            token = token.replace("’", "'").split("'")[0]
            if token in stop or (len(token) < 2 and not token.isdigit()):
                continue
            stem = _stem(token)
            weights[stem] = weights.get(stem, 0.0) + 1.0
    return weights


def terms(text: str, *, for_query: bool = False) -> list[str]:
    """Index terms: Latin words (stopwords dropped, inflections folded) and CJK character 2-grams.

    CJK runs are first cut where the script changes (kanji / katakana / hiragana), so 2-grams
    never straddle a particle; the index also holds each kanji alone, and each katakana word
    whole (`KATAKANA_WHOLE_SHARE`). In queries, hiragana segments are dropped: in an
    utterance they are nearly always function words (それを, ですか), noise; the site's own
    hiragana nouns are searched by `query_weights`, which the search reads.
    """
    text = spell_numbers(normalize(text))
    stop = _stopwords()
    out: list[str] = []
    for token in _TOKEN_RE.findall(text):
        if _CJK_RE.match(token):
            for segment in _script_segments(token):
                hiragana = bool(_HIRAGANA_ONLY.match(segment))
                if (hiragana or segment in stop) and for_query:
                    continue
                if len(segment) == 1:
                    if not hiragana:
                        out.append(segment)
                    continue
                out.extend(segment[i : i + 2] for i in range(len(segment) - 1))
                if is_whole_word_term(segment):
                    out.append(segment)
                if not for_query and _script_class(segment[0]) == 2:
                    # Kanji also stand alone in the index, so a one-kanji query word (車, 駅)
                    # finds the compounds it lives in (駐車場, 電車).
                    out.extend(segment)
        else:
            token = token.replace("’", "'").split("'")[0]
            if token in stop or (len(token) < 2 and not token.isdigit()):
                continue
            out.append(_stem(token))
    return out


def content_terms(text: str) -> list[str]:
    """Query terms of what remains once the conversation's own phrases (deixis, acts, requests,
    interrogatives) that occur in the text are cut out."""
    return terms(strip_function_phrases(text), for_query=True)


@lru_cache(maxsize=4)
def _stemmed_phrases(lang: str) -> tuple[tuple[str, ...], ...]:
    phrases = {tuple(_stem(w) for w in p.split()) for p in load_lexicon(lang).function_phrases()}
    # Longest first, then alphabetical: a set's order changes from run to run.
    return tuple(sorted(phrases, key=lambda p: (-len(p), p)))


@lru_cache(maxsize=2048)  # pure, and a turn asks it for the same few texts several times
def strip_function_phrases(text: str) -> str:
    """The text without the conversation's own phrases; English matches them on word stems, so
    "explaining" goes with "explain"."""
    text = spell_numbers(normalize(text))
    lang = detect_lang(text)
    lex = load_lexicon(lang)
    if not lex.word_boundaries:
        return lex.strip(text, lex.function_phrases())
    words = [w.replace("’", "'") for w in re.sub(r"[^\w\s'’]", " ", text).split()]
    stems = [_stem(w) for w in words]
    keep = [True] * len(words)
    for phrase in _stemmed_phrases(lang):
        n = len(phrase)
        for i in range(len(stems) - n + 1):
            if all(keep[i:i + n]) and tuple(stems[i:i + n]) == phrase:
                keep[i:i + n] = [False] * n
    return " ".join(w for w, k in zip(words, keep, strict=True) if k)


def _word_grams(word: str) -> frozenset[str]:
    """A term's character 2-grams; a term of one or two characters is its own."""
    return frozenset(word[i:i + 2] for i in range(max(1, len(word) - 1)))


@lru_cache(maxsize=1024)
def bigrams(text: str) -> frozenset[str]:
    """Character 2-grams of the content of a text, for overlap between utterances and exchanges."""
    return frozenset().union(*(_word_grams(term) for term in content_terms(text)))


def word_overlap(clue: str, target: str, min_dice: float = 0.6) -> float:
    """Share of the clue's content words found among the target's (0..1). A word counts when
    the target has it or a word whose character 2-grams mostly agree with it ("counsel" /
    "counseling", Dice >= min_dice): 2-grams found anywhere would let a short clue match
    inside any word ("draw" in "photography")."""
    words = set(content_terms(clue))
    if not words:
        return 0.0
    targets = [_word_grams(t) for t in set(content_terms(target))]
    found = 0
    for word in words:
        grams = _word_grams(word)
        found += any(2 * len(grams & t) >= min_dice * (len(grams) + len(t)) for t in targets)
    return found / len(words)


def overlap(clue: Iterable[str], target: frozenset[str] | set[str]) -> float:
    """Share of the clue's 2-grams found in the target (0..1)."""
    clue_set = set(clue)
    if not clue_set:
        return 0.0
    return len(clue_set & target) / len(clue_set)


def sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        for part in _SENTENCE_END_JA.split(line):
            for piece in _SENTENCE_END_EN.split(part):
                piece = piece.strip()
                if piece:
                    out.append(piece)
    return out


_CLAUSE_END = re.compile(r"(?<=[,;:])\s+(?!\d)|(?<=、)")  # not in 1,500, 11:30, May 16, 2003
FIRST_PIECE_CHARS = {"en": 48, "ja": 20}  # a longer first sentence is spoken clause first


def spoken_pieces(text: str) -> list[str]:
    """The reply as the synthesizer speaks it: sentence by sentence, except that a long first
    sentence gives its first clause as a piece of its own. The visitor hears the reply start
    after one clause's synthesis, not one long sentence's (a comma is a pause anyway)."""
    pieces = sentences(text) or ([text] if text.strip() else [])
    if not pieces:
        return []
    first = pieces[0]
    lang = detect_lang(first)
    if len(first) <= FIRST_PIECE_CHARS.get(lang, 48):
        return pieces
    shortest = FIRST_PIECE_CHARS.get(lang, 48) // 4
    clauses = [c for c in _CLAUSE_END.split(first) if c]
    if len(clauses) < 2 or len(clauses[0]) < shortest:
        return pieces
    rest = first[len(clauses[0]):].strip()
    return [clauses[0].strip(), rest, *pieces[1:]]


LEAD_CHARS = {"en": 30, "ja": 14}  # a longer first piece is begun with a lead phrase...
LEAD_MIN_CHARS = {"en": 12, "ja": 5}  # ...at least this long, before a phrase boundary


def lead_split(piece: str, boundaries: Iterable[int], lang: str) -> tuple[str, str] | None:
    """The reply's first piece as (lead phrase, rest), cut at the first phrase boundary (a
    character offset) that leaves a lead of LEAD_MIN_CHARS and a rest at least as long, or
    None when the piece is short enough or has no such boundary. The lead is synthesized
    alone, so the visitor hears the reply begin after a phrase's synthesis, not a sentence's."""
    if len(piece) <= LEAD_CHARS.get(lang, 30):
        return None
    shortest = LEAD_MIN_CHARS.get(lang, 12)
    for at in boundaries:
        lead, rest = piece[:at].strip(), piece[at:].strip()
        if len(lead) >= shortest and len(rest) >= shortest:
            return lead, rest
    return None


def split_long(piece: str, max_chars: int, boundaries: Iterable[int]) -> list[str]:
    """A piece cut into parts of at most `max_chars`: at a clause end (a comma: a pause
    anyway), else at a phrase boundary (a character offset), else between words; each cut
    as late as the limit allows. A part with no place to cut stays whole."""
    parts: list[str] = []
    rest = piece.strip()
    phrase = sorted(set(boundaries))
    offset = len(piece) - len(piece.lstrip())
    while len(rest) > max_chars:
        head = rest[:max_chars + 1]
        least = max_chars // 4  # no stub of a word or two before or after the cut
        cuts = [m.end() for m in _CLAUSE_END.finditer(head)]
        cuts = [c for c in cuts if least <= c <= len(rest) - least]
        if not cuts:
            cuts = [b - offset for b in phrase if least <= b - offset <= len(head)
                    and len(rest) - (b - offset) >= least]
        if not cuts:
            cuts = [m.start() for m in re.finditer(r"\s+", head)
                    if least <= m.start() <= len(rest) - least]
        if not cuts:
            break
        at = max(cuts)
        parts.append(rest[:at].strip())
        new_rest = rest[at:]
        offset += at + len(new_rest) - len(new_rest.lstrip())
        rest = new_rest.strip()
    parts.append(rest)
    return [p for p in parts if p]


def word_boundaries_before(piece: str, openers: Iterable[str]) -> list[int]:
    """Offsets of the spaces before a word that opens a phrase ("from", "until", "and")."""
    opening = {o.lower() for o in openers}
    return [m.start() for m in re.finditer(r"\s+(?=(\S+))", piece)
            if m.group(1).lower().strip(",.;:") in opening]
