"""The article's method as written, for measuring the resolver against it (`kiosk eval`).

Rules (../shared/reference/deixis-article.en.txt): its word lists decide the kind; "this page"
answers with the page on screen; "this site" and everything else search the utterance alone
(interrogatives add nothing); an immediate word adds the whole previous exchange (visitor +
avatar); a distant word adds the one earlier exchange whose character 2-grams overlap the
utterance most. Pure; acts are classified as the resolver does, so that greetings are no search.
"""

from __future__ import annotations

from dataclasses import dataclass

from kiosk.dialogue.history import History
from kiosk.dialogue.lexicon import Lexicon
from kiosk.dialogue.query import QuerySegment, SearchQuery
from kiosk.dialogue.resolver import (
    ACT,
    DISTANT,
    IMMEDIATE,
    INDEPENDENT,
    PAGE,
    SITE,
    classify_act,
    clean,
)
from kiosk.text import bigrams, overlap


@dataclass(frozen=True)
class SeedDecision:
    kind: str
    act: str | None
    query: SearchQuery | None  # None: no search (an act, or the page on screen)
    context_from: int | None = None


def _exchange(history: History, i: int) -> tuple[QuerySegment, ...]:
    ex = history[i]
    return (QuerySegment(ex.user, 1.0, "user"), QuerySegment(ex.reply, 1.0, "reply"))


def seed_decide(utterance: str, history: History, lex: Lexicon) -> SeedDecision:
    text = clean(utterance)
    act = classify_act(text, lex)
    if act is not None:
        return SeedDecision(ACT, act, None)
    bare = SearchQuery.of(utterance)
    if lex.find(text, lex.seed["page"]):
        return SeedDecision(PAGE, None, None)
    if lex.find(text, lex.seed["site"]):
        return SeedDecision(SITE, None, bare)
    if history and lex.find(text, lex.seed["distant"]):
        clue = bigrams(lex.strip(text, lex.seed["distant"]))
        scores = [overlap(clue, bigrams(ex.user + " " + ex.reply)) for ex in history]
        best = max(range(len(history)), key=lambda i: (scores[i], i))
        if scores[best] > 0:
            return SeedDecision(DISTANT, None,
                                SearchQuery(bare.segments + _exchange(history, best)), best)
    if history and lex.find(text, lex.seed["immediate"]):
        last = len(history) - 1
        return SeedDecision(IMMEDIATE, None,
                            SearchQuery(bare.segments + _exchange(history, last)), last)
    return SeedDecision(INDEPENDENT, None, bare)
