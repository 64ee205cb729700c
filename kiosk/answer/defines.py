""""What is X" / Xって何: the sentences whose topic is what was asked about."""

from __future__ import annotations

import re
from collections.abc import Iterator

from kiosk.answer.params import DEFAULT_PARAMS, AnswerParams
from kiosk.answer.runs import opens_section
from kiosk.answer.sentences import page_sentences
from kiosk.dialogue.lexicon import Lexicon, load_lexicon
from kiosk.dialogue.query import SearchQuery
from kiosk.dialogue.resolver import clean
from kiosk.retrieval.index import SiteIndex
from kiosk.text import opens_with

# (not a passive, "Most card sorts are performed with ...": it tells what is done with X)
_TOPIC = {"en": re.compile(r"^(.{1,80}?)\s(?:(?:is|are)\s(?!(?:\w+ly\s)?\w+ed\b)|means\s|"
                           r"refers to\s)", re.I),
          # は as the topic marker, not に・で + は ("設定するには"), nor とは of a comparison
          # ("ワードミュートとは異なり": unlike X)
          "ja": re.compile(r"^(.{1,25}?)(?:とは(?!異な|違|別|関係|限ら)|(?<![にでと])は)")}


_GLOSS = re.compile(r"\s*[(（][^()（）]*[)）]")


def _defining(sents: list[str], heads: list[str], asked: set[str], index: SiteIndex,
              lang: str, title: str = "", *, whole: bool = False) -> Iterator[bool]:
    """Per sentence, whether its topic is mostly the visitor's words: the words before its
    "is" / は, or, for the first sentence under a heading that has no such topic, the heading
    (a glossary: "### Home" then what it is); the page's opening sentence is under its title
    (a method card "KJ method" opens "A facilitated exercise in which ..."). `whole`: the
    topic must also hold most of what was asked ("the pros and cons of X" is not asked by
    defining X)."""
    def about(text: str) -> bool:
        # a gloss in brackets is no part of the topic: "The fediverse ("federated universe")"
        # (a heading's too)
        topic = index.search_terms(SearchQuery.of(_GLOSS.sub("", text)))
        held = sum(w for t, w in topic.items() if t in asked)
        if held <= 0.5 * sum(topic.values()):
            return False
        return not whole or len(asked & topic.keys()) > 0.5 * len(asked)

    not_defining = load_lexicon(lang).not_defining
    for i, sent in enumerate(sents):
        # (the gloss out first: its own は must not end the topic, Vue（発音は /vjuː/）は…)
        match = _TOPIC.get(lang, _TOPIC["en"]).match(_GLOSS.sub("", sent))
        if match is not None and _opens_undefined(match.group(1), not_defining, lang):
            # "Most card sorts are ...": some of X; "Because Mastodon is just software that
            # ...": a reason; neither says what X is
            match = None
        head = heads[i] or (title if i == 0 else "")
        first = head != "" and opens_section(heads, i)
        # a sentence with a topic of its own is about that topic, whatever its heading
        yield about(match.group(1)) if match is not None else first and about(head)


def _opens_undefined(topic: str, openers: tuple[str, ...], lang: str) -> bool:
    """The topic opens with a quantifier or a subordinating word (`[answer] not_defining`:
    "Most card sorts", "Because Mastodon", 多くの)."""
    low = topic.lower()
    if lang == "ja":
        return low.startswith(openers)
    return opens_with(low.split(), openers)


def defines(sents: list[str], heads: list[str], asked: set[str], index: SiteIndex,
            lang: str, title: str, params: AnswerParams) -> list[float]:
    """Per sentence, params.defines_weight when it defines what was asked about
    (`_defining`)."""
    return [params.defines_weight if d else 0.0
            for d in _defining(sents, heads, asked, index, lang, title)]


def page_defines(index: SiteIndex, page_id: str, utterance: str, lex: Lexicon,
                 params: AnswerParams = DEFAULT_PARAMS) -> bool:
    """Whether a page holds a sentence that defines what a "what is X" question asks about,
    all of it (`defines`); True for any other question, which wants no definition."""
    if not lex.find(clean(utterance), lex.asks_what):
        return True
    asked = set(index.search_terms(SearchQuery.of(utterance)))
    if not asked:
        return True
    sents, heads = page_sentences(index, page_id, params)
    info = index.page(page_id)
    title = info.title if info is not None else ""
    return any(_defining(sents, heads, asked, index, lex.lang, title, whole=True))
