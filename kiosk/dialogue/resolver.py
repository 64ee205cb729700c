"""Deixis-aware query construction: what the visitor's words refer to, and what to search.

Two pure steps, so the whole decision is testable without an index or a clock:
`analyze` reads the utterance against the history (act, reference kind, detail flag, content);
`decide` turns that, plus the retrieval confidence of the bare utterance when the brain measured
it, into a Resolution with the search query. The visitor's words are never rewritten: context
rides along as weighted segments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kiosk.dialogue.history import Exchange, History
from kiosk.dialogue.lexicon import ACTS, Lexicon
from kiosk.dialogue.query import QuerySegment, SearchQuery
from kiosk.text import bigrams, content_terms, normalize, overlap, spell_numbers

# Reference kinds
ACT = "act"
PAGE = "situational_page"
SITE = "situational_site"
IMMEDIATE = "immediate"
DISTANT = "distant"
ELLIPSIS = "ellipsis"
INDEPENDENT = "independent"

_ACT_PRIORITY = ("stop", "farewell", "thanks", "greeting", "ack")
_PUNCT = re.compile(r"[^\w\s'’]")


@dataclass(frozen=True)
class ResolverParams:
    """Weights of context relative to the utterance (whose own terms weigh 1)."""

    context_weight_bare: float = 1.0  # utterance has no content of its own ("explain that")
    context_weight_own: float = 0.4  # utterance has content ("how much is it for children")
    reply_share_bare: float = 0.5  # share of the exchange's weight given to the avatar's reply
    reply_share_own: float = 0.3
    inherit_decay: float = 0.5  # context an exchange itself carried, passed on at this factor
    min_segment_weight: float = 0.05
    distant_weight: float = 0.8
    distant_min_overlap: float = 0.34
    gate_confidence: float = 0.45  # bare-utterance confidence below this counts as weak


@dataclass(frozen=True)
class Analysis:
    lang: str
    text: str  # normalized utterance
    act: str | None
    kind: str  # candidate reference kind
    detail: bool
    rejection: bool
    content: tuple[str, ...]  # the utterance's own content terms
    distant_index: int | None = None  # exchange chosen for a distant reference

    @property
    def needs_confidence(self) -> bool:
        """Whether `decide` wants the bare utterance's retrieval confidence."""
        return self.kind == INDEPENDENT and bool(self.content)


@dataclass(frozen=True)
class Resolution:
    lang: str
    act: str | None
    kind: str
    detail: bool
    query: SearchQuery | None  # None: nothing is searched (acts, this page, site listing)
    context_from: tuple[int, ...] = ()  # history positions whose text rides in the query
    avoid_page: str | None = None  # the page a rejection turned away from
    content: tuple[str, ...] = ()


def _clean(text: str) -> str:
    text = _PUNCT.sub(" ", normalize(text))
    return spell_numbers(" ".join(text.split()))


def classify_act(text: str, lex: Lexicon) -> str | None:
    """An act only when nothing but act words, fillers and no request/question remains."""
    found = [act for act in _ACT_PRIORITY if lex.find(text, lex.acts[act])]
    if not found:
        return None
    rest = lex.strip(text, tuple(p for a in ACTS for p in lex.acts[a]) + lex.act_fillers)
    if content_terms(rest):
        return None
    request = (lex.detail + lex.verbs + lex.interrogatives + lex.page + lex.site + lex.distant)
    if lex.find(rest, request):
        return None
    return found[0]


def is_repair(reply: str, lex: Lexicon) -> bool:
    return bool(lex.find(_clean(reply), lex.repair_markers))


def _usable(ex: Exchange) -> bool:
    """An exchange whose words can carry a topic: not an act, something was said about the venue."""
    return ex.act is None and (ex.page_id is not None or bool(content_terms(ex.user)))


def _pick_distant(clue: tuple[str, ...], history: History, want_first: bool,
                  params: ResolverParams) -> int | None:
    clue_grams = bigrams(" ".join(clue))
    candidates = [i for i, ex in enumerate(history) if _usable(ex)]
    if not candidates:
        return None
    if want_first and not clue_grams:
        return candidates[0]
    best: tuple[float, int] | None = None
    for i in candidates:
        ex = history[i]
        user_score = overlap(clue_grams, bigrams(ex.user + " " + ex.page_title))
        reply_score = 0.0 if ex.repair else overlap(clue_grams, bigrams(ex.reply))
        score = max(user_score, 0.5 * user_score + 0.5 * reply_score)
        # The exchange that introduced a topic wins ties over later ones that repeat it,
        # unless the visitor asked for the first one, when the earliest wins ties anyway.
        if best is None or score > best[0] + 1e-9:
            best = (score, i)
    if best is None or best[0] < params.distant_min_overlap:
        return None
    return best[1]


def analyze(utterance: str, history: History, lex: Lexicon,
            params: ResolverParams = ResolverParams()) -> Analysis:
    text = _clean(utterance)
    content = tuple(content_terms(text))
    detail = bool(lex.find(text, lex.detail))
    act = classify_act(text, lex)
    if act is not None:
        return Analysis(lex.lang, text, act, ACT, False, False, content)
    rejection = bool(lex.find(text, lex.rejection))
    if lex.find(text, lex.site) and not lex.find(text, lex.page):
        return Analysis(lex.lang, text, None, SITE, detail, rejection, content)
    if lex.find(text, lex.page):
        return Analysis(lex.lang, text, None, PAGE, detail, rejection, content)
    if rejection:
        return Analysis(lex.lang, text, None, INDEPENDENT, detail, True, content)
    if history and lex.find(text, lex.distant):
        want_first = bool(lex.find(text, lex.first))
        chosen = _pick_distant(content, history, want_first, params)
        if chosen is not None:
            return Analysis(lex.lang, text, None, DISTANT, detail, False, content, chosen)
    if history and lex.find(text, lex.immediate):
        return Analysis(lex.lang, text, None, IMMEDIATE, detail, False, content)
    return Analysis(lex.lang, text, None, INDEPENDENT, detail, False, content)


def _exchange_segments(ex: Exchange, weight: float, reply_share: float,
                       params: ResolverParams) -> list[QuerySegment]:
    segs: list[QuerySegment] = []
    user_has_content = bool(content_terms(ex.user))
    use_reply = not ex.repair and ex.reply.strip() != ""
    user_w = weight * (1.0 - reply_share) if use_reply else weight
    reply_w = weight * reply_share if user_has_content else weight
    if user_has_content:
        segs.append(QuerySegment(ex.user, user_w, "user"))
    if use_reply:
        segs.append(QuerySegment(ex.reply, reply_w, "reply"))
    # What this exchange itself leaned on (an "explain that" two turns back) is passed on, fading.
    inherit = weight * params.inherit_decay
    if not segs:
        inherit = weight  # nothing of its own: it stands for its context entirely
    for seg in ex.context:
        w = seg.weight * inherit
        if w >= params.min_segment_weight:
            segs.append(QuerySegment(seg.text, w, "inherited"))
    return segs


def _previous_usable(history: History) -> int | None:
    for i in range(len(history) - 1, -1, -1):
        if _usable(history[i]):
            return i
    return None


def decide(analysis: Analysis, history: History, params: ResolverParams,
           bare_confidence: float | None = None) -> Resolution:
    a = analysis
    base = SearchQuery.of(a.text)
    if a.kind == ACT:
        return Resolution(a.lang, a.act, ACT, False, None)
    if a.kind in (PAGE, SITE):
        query = base if a.content else None
        return Resolution(a.lang, None, a.kind, a.detail, query, content=a.content)
    if a.rejection:
        prev = _previous_usable(history)
        avoid = history[prev].page_id if prev is not None else None
        return Resolution(a.lang, None, INDEPENDENT, a.detail, base if a.content else None,
                          avoid_page=avoid, content=a.content)
    own = bool(a.content)
    weight = params.context_weight_own if own else params.context_weight_bare
    share = params.reply_share_own if own else params.reply_share_bare
    if a.kind == DISTANT and a.distant_index is not None:
        ex = history[a.distant_index]
        segs = _exchange_segments(ex, params.distant_weight, share, params)
        return Resolution(a.lang, None, DISTANT, a.detail,
                          SearchQuery(base.segments + tuple(segs)), (a.distant_index,),
                          content=a.content)
    prev = _previous_usable(history)
    kind = a.kind
    if kind == INDEPENDENT:
        weak = not own or (bare_confidence is not None and bare_confidence < params.gate_confidence)
        if prev is None or not weak:
            return Resolution(a.lang, None, INDEPENDENT, a.detail, base, content=a.content)
        kind = ELLIPSIS
    if prev is None:
        return Resolution(a.lang, None, kind, a.detail, base if own else None, content=a.content)
    segs = _exchange_segments(history[prev], weight, share, params)
    return Resolution(a.lang, None, kind, a.detail, SearchQuery(base.segments + tuple(segs)),
                      (prev,), content=a.content)
