"""Per-language word lists (deixis, acts, requests, repairs, reply templates) loaded from TOML."""

from __future__ import annotations

import re
import tomllib
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from kiosk.errors import ConfigError

_DIR = Path(__file__).resolve().parent
# what a transcript may end in after its last word (end marks, pauses written as dashes)
TRAILING_PUNCT = re.compile(r"[\s.,!?;:、。！？…・\-]+$")
# How far after "this" / この a page noun may stand ("this chart page", このグラフのページ).
_PAGE_NOUN_WORDS = 3
_PAGE_NOUN_CHARS = 10
# Between an owner and the thing owned in a language written without spaces: one word of two
# characters at most (私の携帯電話番号).
_OWNED_GAP_CHARS = 2
ACTS = ("greeting", "thanks", "farewell", "ack", "stop", "personal", "clock")


def _norm(phrase: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", phrase).lower().split())


@dataclass(frozen=True)
class Lexicon:
    lang: str
    word_boundaries: bool  # English phrases match whole words; Japanese ones match substrings
    stopwords: frozenset[str]
    number_words: tuple[tuple[str, int], ...]
    number_counters: tuple[str, ...]
    # a speaker's hesitations ("uh", えっと): no words of the question, left out before its shape
    # is read ("列を増やすにはえー" ends like a follow-up, in は)
    hesitations: tuple[str, ...]
    acts: dict[str, tuple[str, ...]]
    act_fillers: tuple[str, ...]
    page: tuple[str, ...]
    site: tuple[str, ...]
    # site phrases that only name the site ("the website", ホームページ): with words of its own
    # the question is about them ("can I book on the website"), not about what the site holds
    site_mentions: tuple[str, ...]
    # "how is it organized", どういう構成: beside a site mention, or after a question about the
    # site, it asks for the site's overview, not for a page holding the word
    site_structure: tuple[str, ...]
    immediate: tuple[str, ...]
    proximal: tuple[str, ...]
    distal: tuple[str, ...]  # "that" / それ: the exchange, not the page on screen
    page_nouns: tuple[str, ...]
    # "near here", この近く: "here" is the venue's place, not the page on screen
    not_proximal: tuple[str, ...]
    distant: tuple[str, ...]
    distant_starts: tuple[str, ...]
    first: tuple[str, ...]
    # a question ending so asks to be reminded of something said ("what's that number
    # again", 何番だっけ): a distant reference; with openers, only a question opening with one
    recall: tuple[str, ...]
    recall_openers: tuple[str, ...]
    rejection: tuple[str, ...]
    # A rejection turns down the last answer as the turn opens: at most this many words
    # (English) or characters (Japanese) stand before it ("no no | i mean", いや人 | じゃなくて).
    rejection_within: int
    topic_nouns: tuple[str, ...]
    clue_ends: tuple[str, ...]
    # 〜だけど, 〜ですが: what a topic is closed with before the new question (Japanese)
    topic_closers: tuple[str, ...]
    # "the first one", "both": words that lean on something named before them
    anaphors: tuple[str, ...]
    not_deictic: tuple[str, ...]
    follow_up_starts: tuple[str, ...]
    follow_up_ends: tuple[str, ...]
    # "AとBの違いは": a comparison that names both of what it compares (joined by one of
    # `comparison_joins`) is a question of its own, whatever its follow-up ending
    comparison_ends: tuple[str, ...]
    comparison_joins: tuple[str, ...]
    repeat: tuple[str, ...]
    cut_off: tuple[str, ...]  # last words of an utterance cut off mid-phrase ("... for the")
    detail: tuple[str, ...]
    verbs: tuple[str, ...]
    interrogatives: tuple[str, ...]
    repair_markers: tuple[str, ...]
    clarification_markers: tuple[str, ...]
    # sympathy ("I'm sorry for your loss") or an apology the answer follows: no repair
    not_repair: tuple[str, ...] = ()
    dangling: tuple[str, ...] = ()  # a sentence opening with these leans on the one before
    droppable: tuple[str, ...] = ()  # ... of which these can be left out without it
    stands_alone: tuple[str, ...] = ()  # openings of `dangling` words that lean on nothing
    opening_only: tuple[str, ...] = ()  # `dangling` words that lean only as the first word
    announces: tuple[str, ...] = ()  # a sentence with these tells what a page holds, not it
    points: tuple[str, ...] = ()  # ... with these and a link's words, sends the reader there
    ahead: tuple[str, ...] = ()  # a finished sentence with these leads into the list after it
    # a line without its sentence end holding one of these as a word says something: a
    # list item that is a clause ("You do not need to pay again"), finished as a sentence
    clause_words: tuple[str, ...] = ()
    more_items: str = ""  # ends the first items of such a list said in part (", and more")
    asks_what: tuple[str, ...] = ()  # a question asking what something is (wants a definition)
    # a question asking when something happened: a dated post answers with its day too
    asks_when: tuple[str, ...] = ()
    months: tuple[str, ...] = ()  # the months' names, January first (a post's day said)
    not_defining: tuple[str, ...] = ()  # a topic opening with these is no definition ("most X")
    refuse: tuple[str, ...] = ()  # requests never answered from any page
    danger: tuple[str, ...] = ()  # someone is in danger now: act "emergency", never a page
    # health or safety: a question no page answers says whom to tell instead
    emergency: tuple[str, ...] = ()
    insults: tuple[str, ...] = ()  # met with a calm line (act "insult"), never a page
    # phrases of this language asking for a language, by the language asked for
    language_requests: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # asking for a language the avatar does not speak ("can we speak spanish", 中国語で):
    # every `[language] frames` phrase around every `[language] others` name
    other_languages: tuple[str, ...] = ()
    unfinished: tuple[str, ...] = ()  # words a finished question never ends with
    finished: tuple[str, ...] = ()  # endings only a finished sentence has (Japanese)
    end_marks: tuple[str, ...] = ()  # a finished sentence is transcribed ending in one
    # parts of speech a last word has when a noun must follow (Japanese: どんな, genitive の)
    unfinished_classes: tuple[str, ...] = ()
    # ... a last word has when the sentence ends there only if said as a question, which the
    # recognizer marks (Japanese: 休みの日は? / 何時から?); unmarked, the visitor goes on
    open_classes: tuple[str, ...] = ()
    question_marks: tuple[str, ...] = ()  # how the recognizer marks a question said as one
    phrase_openers: tuple[str, ...] = ()  # words a reply's lead phrase may stop before
    question_frames: tuple[str, ...] = ()  # how visitors ask, read with the site's text (ASR)
    # Latin words in lower case the language says letter by letter (Japanese: url, json)
    spelled_words: tuple[str, ...] = ()
    # what the voice says for a written form ("24/7": twenty-four seven; "(ET)")
    say_as: dict[str, str] = field(default_factory=dict)
    # said at once when the answer is held (`tts.answer_hold_ms`), one after another
    acknowledgements: tuple[str, ...] = ()
    answer_cues: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # a sentence just before a list that points at it ("At least one of these must be true.")
    before_list: tuple[str, ...] = ()
    # the visitor's own (or a companion's): "change my phone number" asks for no number
    owners: tuple[str, ...] = ()
    # what a page's box (`::: warning`) says on top when it names only its kind
    container_titles: dict[str, str] = field(default_factory=dict)
    replies: dict[str, str] = field(default_factory=dict)
    # The article's word lists as written (page, site, immediate, distant): `kiosk eval`'s
    # `seed` strategy only.
    seed: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def find(self, text: str, phrases: tuple[str, ...]) -> list[str]:
        """Phrases present in an already normalized text. A phrase written with a final "$"
        counts only where the text ends with it (歌を歌って$: not その歌を歌ってる人)."""
        if self.word_boundaries:
            padded = f" {text} "
            return [p for p in phrases
                    if (self._ends_with(text, p) if p.endswith("$") else f" {p} " in padded)]
        return [p for p in phrases if (self._ends_with(text, p) if p.endswith("$") else p in text)]

    def owned(self, text: str, phrase: str) -> bool:
        """Every time the phrase stands in the text, an owner's word comes just before it,
        at most one word between ("my phone number", "my cell phone number", 自分の電話番号,
        私の携帯電話番号): the visitor speaks of a thing of their own (changing it, losing it),
        they do not ask the site for it. "your phone number" asks for the venue's."""
        if not self.owners:
            return False
        if self.word_boundaries:
            words, size = text.split(), len(phrase.split())
            spots = [i for i in range(len(words)) if words[i:i + size] == phrase.split()]
            return bool(spots) and all(set(words[max(i - 2, 0):i]) & set(self.owners)
                                       for i in spots)
        def owned_at(at: int) -> bool:
            for owner in self.owners:
                end = text.rfind(owner, 0, at)
                if end >= 0 and at - (end + len(owner)) <= _OWNED_GAP_CHARS:
                    return True
            return False

        spots = [m.start() for m in re.finditer(re.escape(phrase), text)]
        return bool(spots) and all(owned_at(at) for at in spots)

    def _ends_with(self, text: str, phrase: str) -> bool:
        """The text ends with a phrase marked final ("...$"; English: on a word boundary)."""
        bare = phrase[:-1].rstrip()
        return f" {text}".endswith(f" {bare}") if self.word_boundaries else text.endswith(bare)

    def rejects(self, text: str) -> bool:
        """The visitor turns down the last answer: a rejection phrase near the opening of the
        normalized text ("no, I meant ...", いや人じゃなくて…), not one inside a question of its
        own ("what could be wrong", 何が違うの, 〜ファイルを送るんじゃなくて… deep in a long
        question), and not one an interrogative asks about ("what's wrong", どう違う)."""
        if self.word_boundaries:
            words = text.split()
            for phrase in self.rejection:
                size = len(phrase.split())
                for at in range(min(self.rejection_within, len(words) - size) + 1):
                    if words[at:at + size] == phrase.split() and not (
                            at and self._asks(words[at - 1].removesuffix("'s"))):
                        return True
            return False
        for phrase in self.rejection:
            at = text.find(phrase)
            if 0 <= at <= self.rejection_within and not self._asks(
                    text[:at].rstrip("がはともって")):
                return True
        return False

    def _asks(self, before: str) -> bool:
        """The words before end with an interrogative (what / 何, どう)."""
        if self.word_boundaries:
            return before in self.interrogatives
        return bool(before) and before.endswith(self.interrogatives)

    def distant_markers(self, text: str) -> list[str]:
        """The phrases that make a distant reference: anywhere ("from before", さっき), or
        opening the utterance ("about the parking, ...")."""
        found = self.find(text, self.distant) + self.opening(text, self.distant_starts)
        if self.recall and (not self.recall_openers or self.opening(text, self.recall_openers)):
            found += [p for p in self.recall if self._ends_with(text, f"{p}$")]
        return found

    def opening(self, text: str, phrases: tuple[str, ...]) -> list[str]:
        """The phrases the text opens with (English: word for word)."""
        if self.word_boundaries:
            words = text.split()
            return [p for p in phrases if words[:len(p.split())] == p.split()]
        return [p for p in phrases if text.startswith(p)]

    def points_at_screen(self, text: str) -> bool:
        """A proximal word that may mean the page on screen ("what's this chart", ここに書いて
        ある), not the place the visitor stands in ("is there sushi near here", この近く)."""
        return bool(self.find(self.strip(text, self.not_proximal), self.proximal))

    def names_shown_page(self, text: str) -> bool:
        """A proximal word with a page noun soon after it: "this chart page", このグラフの
        ページ. Such a page is the one on screen, as "this page" is."""
        if self.word_boundaries:
            words = text.split()
            return any(w in self.proximal and any(n in self.page_nouns
                                                  for n in words[i + 1:i + 1 + _PAGE_NOUN_WORDS])
                       for i, w in enumerate(words))
        for word in self.proximal:
            at = text.find(word)
            while at >= 0:
                after = text[at + len(word):at + len(word) + _PAGE_NOUN_CHARS]
                if any(noun in after for noun in self.page_nouns):
                    return True
                at = text.find(word, at + 1)
        return False

    def follow_up_shape(self, text: str) -> bool:
        """Starts or ends like a follow-up ("and for seniors", "特典は")."""
        if self.word_boundaries:
            words = text.split()
            return bool(self.opening(text, self.follow_up_starts)) or \
                any(words[-len(p.split()):] == p.split() for p in self.follow_up_ends if words)
        if self.names_both_compared(text):
            return False
        return bool(self.opening(text, self.follow_up_starts)) or text.endswith(
            self.follow_up_ends)

    def names_both_compared(self, text: str) -> bool:
        """"クリップとお気に入りの違いは" names both things it compares; "Bとの違いは" compares
        B with what was said before."""
        for end in self.comparison_ends:
            if text.endswith(end):
                before = text[: -len(end)]
                return any(j in before and not before.endswith(j) for j in self.comparison_joins)
        return False

    def cut_off_at_end(self, text: str) -> bool:
        """The normalized utterance stops mid-phrase: on a hesitation ("how long does uh"),
        or on a word a phrase never ends with ("for the")."""
        if self.word_boundaries:
            padded = f" {text}"
            return any(padded.endswith(f" {p}") for p in self.hesitations + self.cut_off)
        return text.endswith(self.hesitations) or text.endswith(self.cut_off)

    def strip(self, text: str, phrases: tuple[str, ...]) -> str:
        """The text with every listed phrase removed (longest first); one marked final ("$")
        only where the text ends with it."""
        for phrase in sorted(phrases, key=len, reverse=True):
            if phrase.endswith("$"):
                if self._ends_with(text, phrase):
                    text = text[:len(text) - len(phrase[:-1].rstrip())]
                    text = text.rstrip() if self.word_boundaries else text
                continue
            if self.word_boundaries:
                text = f" {text} ".replace(f" {phrase} ", " ").strip()
                text = " ".join(text.split())
            else:
                text = text.replace(phrase, "")
        return text

    def sounds_unfinished(self, text: str, tails: Collection[str] | None = None) -> bool:
        """The words so far stop where nobody ends a question ("what time does"), or on a
        hesitation ("the parking uh", 駐車場はえーと): the visitor is still looking for words.
        `tails`: the text's last one, two, three words joined, when an analyser split it
        (Japanese): the ending must be whole words then (なに does not end in the particle に)."""
        words = _norm(TRAILING_PUNCT.sub("", text))
        if self.word_boundaries:
            padded = f" {words}"
            return len(words.split()) >= 2 and any(padded.endswith(f" {p}")
                                                   for p in self.unfinished + self.hesitations)
        ends = self.unfinished + self.hesitations
        if tails is not None:
            return len(words) >= 2 and any(_norm(t) in ends for t in tails)
        return len(words) >= 2 and words.endswith(ends)

    def unmarked(self, text: str) -> bool:
        """The recognizer wrote no sentence end where this language's transcripts of a
        finished sentence have one ("Where can we eat" vs "Where can we eat lunch?")."""
        return bool(self.end_marks) and bool(text.strip()) and not text.rstrip().endswith(
            self.end_marks)

    def left_open(self, text: str, classes: tuple[str, ...]) -> bool:
        """The last word (its parts of speech: `classes`) ends a question only when said as
        one, and the recognizer did not mark it so ("月の石は" but not "月の石は?")."""
        return bool(set(classes) & set(self.open_classes)) and not text.rstrip().endswith(
            self.question_marks)

    def sounds_finished(self, text: str) -> bool:
        """The words end as only a finished sentence does ("...ありますか")."""
        words = _norm(TRAILING_PUNCT.sub("", text))
        return bool(self.finished) and not self.word_boundaries and words.endswith(self.finished)

    def function_phrases(self) -> tuple[str, ...]:
        """Every phrase that is about the conversation rather than about the venue."""
        out: list[str] = []
        for words in self.acts.values():
            out.extend(words)
        for group in (self.page, self.site, self.immediate, self.distant, self.first,
                      self.rejection, self.topic_nouns, self.not_deictic, self.repeat,
                      self.detail, self.verbs, self.interrogatives):
            out.extend(group)
        return tuple(out)


def _tuple(table: dict[str, object], key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"lexicon {where}.{key} must be a list of strings")
    return tuple(_norm(v) for v in value if v.strip())


def _text(table: dict[str, object], key: str, where: str) -> str:
    value = table.get(key, "")
    if not isinstance(value, str):
        raise ConfigError(f"lexicon {where}.{key} must be a string")
    return value


def _count(table: dict[str, object], key: str, where: str) -> int:
    value = table.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConfigError(f"lexicon {where}.{key} must be a whole number, 0 or more")
    return value


@lru_cache(maxsize=8)
def load_lexicon(lang: str, directory: Path = _DIR) -> Lexicon:
    path = directory / f"{lang}.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(
            f"no lexicon for language {lang!r} ({path})", "use one of: ja, en"
        ) from exc
    text = data.get("text", {})
    acts_t = data.get("acts", {})
    ref = data.get("reference", {})
    req = data.get("request", {})
    rep = data.get("replies", {})
    return Lexicon(
        lang=lang,
        word_boundaries=lang != "ja",
        stopwords=frozenset(_tuple(text, "stopwords", f"{lang}.text")),
        number_words=tuple((k, int(v)) for k, v in text.get("number_words", {}).items()),
        number_counters=_tuple(text, "number_counters", f"{lang}.text"),
        hesitations=_tuple(text, "hesitations", f"{lang}.text"),
        acts={act: _tuple(acts_t, act, f"{lang}.acts") for act in ACTS},
        act_fillers=_tuple(acts_t, "fillers", f"{lang}.acts"),
        page=_tuple(ref, "page", f"{lang}.reference"),
        site=_tuple(ref, "site", f"{lang}.reference"),
        site_mentions=_tuple(ref, "site_mentions", f"{lang}.reference"),
        site_structure=_tuple(ref, "site_structure", f"{lang}.reference"),
        immediate=_tuple(ref, "immediate", f"{lang}.reference"),
        proximal=_tuple(ref, "proximal", f"{lang}.reference"),
        distal=_tuple(ref, "distal", f"{lang}.reference"),
        page_nouns=_tuple(ref, "page_nouns", f"{lang}.reference"),
        not_proximal=_tuple(ref, "not_proximal", f"{lang}.reference"),
        distant=_tuple(ref, "distant", f"{lang}.reference"),
        distant_starts=_tuple(ref, "distant_starts", f"{lang}.reference"),
        first=_tuple(ref, "first", f"{lang}.reference"),
        recall=_tuple(ref, "recall", f"{lang}.reference"),
        recall_openers=_tuple(ref, "recall_openers", f"{lang}.reference"),
        rejection=_tuple(ref, "rejection", f"{lang}.reference"),
        rejection_within=_count(ref, "rejection_within", f"{lang}.reference"),
        topic_nouns=_tuple(ref, "topic_nouns", f"{lang}.reference"),
        clue_ends=_tuple(ref, "clue_ends", f"{lang}.reference"),
        topic_closers=_tuple(ref, "topic_closers", f"{lang}.reference"),
        anaphors=_tuple(ref, "anaphors", f"{lang}.reference"),
        not_deictic=_tuple(ref, "not_deictic", f"{lang}.reference"),
        follow_up_starts=_tuple(ref, "follow_up_starts", f"{lang}.reference"),
        follow_up_ends=_tuple(ref, "follow_up_ends", f"{lang}.reference"),
        comparison_ends=_tuple(ref, "comparison_ends", f"{lang}.reference"),
        comparison_joins=_tuple(ref, "comparison_joins", f"{lang}.reference"),
        repeat=_tuple(req, "repeat", f"{lang}.request"),
        cut_off=_tuple(req, "cut_off", f"{lang}.request"),
        detail=_tuple(req, "detail", f"{lang}.request"),
        verbs=_tuple(req, "verbs", f"{lang}.request"),
        interrogatives=_tuple(req, "interrogatives", f"{lang}.request"),
        repair_markers=_tuple(rep, "repair_markers", f"{lang}.replies"),
        clarification_markers=_tuple(rep, "clarification_markers", f"{lang}.replies"),
        not_repair=_tuple(rep, "not_repair", f"{lang}.replies"),
        dangling=_tuple(data.get("answer", {}), "dangling", f"{lang}.answer"),
        droppable=_tuple(data.get("answer", {}), "droppable", f"{lang}.answer"),
        stands_alone=_tuple(data.get("answer", {}), "stands_alone", f"{lang}.answer"),
        opening_only=_tuple(data.get("answer", {}), "opening_only", f"{lang}.answer"),
        announces=_tuple(data.get("answer", {}), "announces", f"{lang}.answer"),
        points=_tuple(data.get("answer", {}), "points", f"{lang}.answer"),
        ahead=_tuple(data.get("answer", {}), "ahead", f"{lang}.answer"),
        clause_words=_tuple(data.get("answer", {}), "clause_words", f"{lang}.answer"),
        more_items=_text(data.get("answer", {}), "more_items", f"{lang}.answer"),
        asks_what=_tuple(data.get("answer", {}), "asks_what", f"{lang}.answer"),
        asks_when=_tuple(data.get("answer", {}), "asks_when", f"{lang}.answer"),
        months=_tuple(data.get("answer", {}), "months", f"{lang}.answer"),
        not_defining=_tuple(data.get("answer", {}), "not_defining", f"{lang}.answer"),
        refuse=_tuple(data.get("answer", {}), "refuse", f"{lang}.answer"),
        danger=_tuple(data.get("answer", {}), "danger", f"{lang}.answer"),
        emergency=_tuple(data.get("answer", {}), "emergency", f"{lang}.answer"),
        insults=_tuple(data.get("answer", {}), "insults", f"{lang}.answer"),
        language_requests={str(k): _tuple(data.get("language", {}).get("requests", {}), k,
                                          f"{lang}.language.requests")
                           for k in data.get("language", {}).get("requests", {})},
        other_languages=tuple(
            frame.replace("{}", name)
            for frame in _tuple(data.get("language", {}), "frames", f"{lang}.language")
            for name in _tuple(data.get("language", {}), "others", f"{lang}.language")),
        unfinished=_tuple(data.get("turn", {}), "unfinished", f"{lang}.turn"),
        finished=_tuple(data.get("turn", {}), "finished", f"{lang}.turn"),
        end_marks=_tuple(data.get("turn", {}), "end_marks", f"{lang}.turn"),
        unfinished_classes=_tuple(data.get("turn", {}), "unfinished_classes", f"{lang}.turn"),
        open_classes=_tuple(data.get("turn", {}), "open_classes", f"{lang}.turn"),
        question_marks=_tuple(data.get("turn", {}), "question_marks", f"{lang}.turn"),
        phrase_openers=_tuple(data.get("speech", {}), "phrase_openers", f"{lang}.speech"),
        question_frames=_tuple(data.get("speech", {}), "question_frames", f"{lang}.speech"),
        spelled_words=_tuple(data.get("speech", {}), "spelled_words", f"{lang}.speech"),
        acknowledgements=_tuple(data.get("speech", {}), "acknowledgements", f"{lang}.speech"),
        answer_cues={_norm(k): _tuple(data.get("answer_cues", {}), k, f"{lang}.answer_cues")
                     for k in data.get("answer_cues", {})},
        owners=_tuple(data.get("answer", {}), "owners", f"{lang}.answer"),
        before_list=_tuple(data.get("answer", {}), "before_list", f"{lang}.answer"),
        replies={k: v for k, v in rep.items() if isinstance(v, str)},
        say_as={str(k): str(v) for k, v in data.get("speech", {}).get("say_as", {}).items()},
        container_titles={str(k).lower(): str(v)
                          for k, v in data.get("site", {}).get("container_titles", {}).items()},
        seed={k: _tuple(data.get("seed", {}), k, f"{lang}.seed")
              for k in ("page", "site", "immediate", "distant")},
    )
