"""The text brain: resolver -> retriever -> answerer for one visitor turn.

Synchronous and free of I/O once built; the voice loop runs it in its own executor.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Protocol

import numpy as np
import numpy.typing as npt

from kiosk.answer import (
    AnswerParams,
    Reply,
    asked_shapes,
    compose,
    decline,
    out_of_scope,
    page_defines,
    page_holds,
    prepare_meaning,
)
from kiosk.dialogue.gate import Gate, load_gate
from kiosk.dialogue.history import Exchange, History
from kiosk.dialogue.lexicon import Lexicon, load_lexicon
from kiosk.dialogue.query import QuerySegment, SearchQuery
from kiosk.dialogue.resolver import (
    ACT,
    DISTANT,
    ELLIPSIS,
    IMMEDIATE,
    INDEPENDENT,
    PAGE,
    REPEAT,
    SITE,
    Analysis,
    Anchor,
    Resolution,
    ResolverParams,
    analyze,
    clean,
    decide,
    distant_clue,
    is_repair,
)
from kiosk.retrieval.embedder import Embedder
from kiosk.retrieval.index import PageHit, PageInfo, RankWeights, Scores, SiteIndex
from kiosk.text import LANGS, content_terms, detect_lang, unstopped

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BrainParams:
    resolver: ResolverParams = field(default_factory=ResolverParams)
    rank: RankWeights = field(default_factory=RankWeights)
    answer: AnswerParams = field(default_factory=AnswerParams)
    top_pages: int = 10
    # whether a follow-up's context rides (kiosk/dialogue/gate.py; None: it always does)
    gate: Gate | None = field(default_factory=load_gate)
    # measure the gate's features even without a gate (fitting it: scripts/fit_gate.py)
    gate_features: bool = False


@dataclass(frozen=True)
class GateDecision:
    """What the gate saw of a follow-up and said: p(its words alone find the page better)."""

    features: dict[str, float]
    p_alone: float | None
    alone: bool
    shares: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class ScopeCheck:
    """Whether a question is one no page answers, and what the bare search said of it
    (kiosk.answer.declines.out_of_scope): its best chunk's peak, meaning and words, its best
    page's score (None: it points at something, so it is not judged alone) and its length."""

    declined: bool
    refused: bool = False  # a request never answered (`[answer] refuse`)
    peak: float | None = None
    dense: float | None = None
    lexical: float | None = None
    best_page: float | None = None
    tokens: int | None = None


@dataclass(frozen=True)
class TurnResult:
    utterance: str
    lang: str
    analysis: Analysis
    resolution: Resolution
    hits: list[PageHit]
    reply: Reply
    bare_confidence: tuple[float, float] | None
    elapsed_ms: float
    gate: GateDecision | None = None
    scope: ScopeCheck | None = None  # None: the question was not one the site may not cover

    @property
    def ranking(self) -> list[str]:
        """Pages in the order the turn put them (empty: nothing was searched or shown)."""
        return [h.page_id for h in self.hits]

    def exchange(self, reply_text: str | None = None) -> Exchange:
        """The exchange to remember; `reply_text` overrides what the avatar said (evaluation)."""
        lex = load_lexicon(self.lang)
        text = self.reply.text if reply_text is None else reply_text
        repair = self.reply.repair if reply_text is None else is_repair(reply_text, lex)
        context: tuple[QuerySegment, ...] = ()
        if self.resolution.query is not None:
            context = tuple(s for s in self.resolution.query.segments if s.role != "utterance")
        return Exchange(
            user=self.utterance, reply=text, lang=self.lang, act=self.resolution.act,
            page_id=self.reply.page_id or (self.ranking[0] if self.ranking else None),
            page_title=self.reply.page_title, repair=repair, context=context,
            spoken=self.reply.spoken if reply_text is None else (),
            # A reply given from outside (evaluation's reference) is taken as sure.
            weak=self.reply.weak if reply_text is None else False,
        )


def _leading(hits: list[PageHit], page_id: str, index: SiteIndex) -> list[PageHit]:
    """The hits with `page_id` first (found among them, or added with the top's score)."""
    found = next((h for h in hits if h.page_id == page_id), None)
    if found is None:
        info = index.page(page_id)
        if info is None:
            return hits
        found = PageHit(page_id, hits[0].score, info.first_chunk)
    return [found, *(h for h in hits if h.page_id != page_id)]


def _last_about_venue(history: History) -> Exchange | None:
    """The last exchange about the venue (not a greeting or thanks)."""
    for ex in reversed(history):
        if ex.act is None:
            return ex
    return None


def confidence(hits: list[PageHit]) -> tuple[float, float]:
    """(best score, relative lead of the best page over the second)."""
    if not hits:
        return 0.0, 0.0
    best = hits[0].score
    second = hits[1].score if len(hits) > 1 else 0.0
    return best, (best - second) / best if best > 0 else 0.0


class Responder(Protocol):
    """What the turn loop asks of the brain."""

    def respond(self, history: History, utterance: str, screen_page: str | None = None,
                lang: str | None = None) -> TurnResult: ...

    def remember(self, exchange: Exchange) -> None:
        """Prepare for the next turn while the reply is spoken (off the visitor's wait)."""


class Brain:
    def __init__(self, index: SiteIndex, embedder: Embedder,
                 params: BrainParams | None = None,
                 clock: Callable[[], datetime] = datetime.now) -> None:
        self.index = index
        self.embedder = embedder
        self.params = params or BrainParams()
        self.clock = clock  # the local time of day, for "what time is it"

    def search(self, query: SearchQuery, lang: str, avoid_page: str | None = None) -> list[PageHit]:
        hits = self.index.search(query, self.embedder, lang, self.params.rank,
                                 self.params.top_pages + (1 if avoid_page else 0))
        if avoid_page is not None:
            hits = [h for h in hits if h.page_id != avoid_page]
        return hits[: self.params.top_pages]

    def remember(self, exchange: Exchange) -> None:
        """Score the reply just given over the site, as the next turn's context will: a
        follow-up then costs one short query, not the reply's long one. The loop calls this
        while the reply is spoken."""
        if exchange.act is None and not exchange.repair and exchange.reply.strip():
            self.index.prepare([exchange.reply], self.embedder)
            if exchange.page_id is not None:
                prepare_meaning(self.index, exchange.page_id, self.embedder,
                                self.params.answer)

    def forget(self, texts: list[str] | None = None) -> None:
        """Drop remembered query texts (all, or these): benchmarks time fresh queries."""
        self.index.forget(texts)
        forget = getattr(self.embedder, "forget", None)
        if forget is not None:
            forget(texts)

    def _distant_similarity(self, utterance: str, history: History,
                            lex: Lexicon) -> tuple[float, ...] | None:
        """For a distant reference: how close in meaning the utterance is to each earlier
        exchange (0..1, rescaled from the embedder's unrelated level): to the visitor's words
        then, or to the page it was answered from (its best chunk). Every vector exists already
        or is needed by the search anyway (the embedder remembers recent queries; chunk vectors
        are in the index). None for any other utterance."""
        if not history or not distant_clue(clean(utterance), lex):
            return None
        # The whole utterance, not the clue alone: its vector is the one the search embeds
        # anyway, so the meaning costs nothing more.
        vectors = self.embedder.embed_queries([utterance] + [ex.user for ex in history])
        query, users = vectors[0], vectors[1:] @ vectors[0]
        floor = self.embedder.score_floor
        out: list[float] = []
        for ex, user in zip(history, users, strict=True):
            best = float(user)
            info = self.index.page(ex.page_id) if ex.page_id else None
            if info is not None:
                chunks = self.index.vectors[info.first_chunk:info.first_chunk + info.n_chunks]
                best = max(best, float((chunks @ query).max()))
            out.append(float(np.clip((best - floor) / (1.0 - floor), 0.0, 1.0)))
        return tuple(out)

    def _words_held(self, utterance: str, scores: Scores) -> npt.NDArray[np.float32] | None:
        """Per page, 0..1: how much of the visitor's own words it holds, relative to the page
        that holds most of them among the best-scored ones. A follow-up that brings words the
        page pointed at lacks ("and its side effects?" after a page on the drug's history)
        turns to a page that has them; one without words of its own trusts the anchor fully."""
        coverage = self.index.coverage(utterance)
        if not coverage.any():
            return None
        top = np.argsort(-scores.page, kind="stable")[: self.params.top_pages]
        best = float(coverage[top].max())
        if best <= 0:
            return None
        out: npt.NDArray[np.float32] = np.clip(coverage / best, 0.0, 1.0).astype(np.float32)
        return out

    def _scope(self, history: History, analysis: Analysis, resolution: Resolution,
               lang: str, lex: Lexicon,
               bare: tuple[Scores, list[PageHit]] | None) -> ScopeCheck | None:
        """Whether a question is one no page answers, by the bare search's evidence. Only a
        question that carries its own words and points at nothing said before can tell:
        "how much is it" leans on the last exchange, a distant reference or a rejection names
        the conversation itself. A follow-up to a question the site did not answer ("will it
        rain this afternoon" after the weather), or answered only weakly (the zoo's admission
        -> a page that shares the word), leans on nothing here: it stands alone.
        Requests never answered (`[answer] refuse`) are declined whatever they point at.
        None: the question is not one to judge so."""
        if lex.find(analysis.text, lex.refuse):
            return ScopeCheck(declined=True, refused=True)
        orphan = resolution.kind in (IMMEDIATE, ELLIPSIS) and self._leans_on_nothing(
            _last_about_venue(history), analysis.utterance)
        # Without words of its own a question still stands alone when nothing said before
        # joins its search ("暇なの", "おなかすいた": no noun the site knows): the bare
        # search's evidence is the whole of what it would be answered from.
        searched_bare = (resolution.kind == INDEPENDENT
                         and resolution.query == SearchQuery.of(analysis.utterance))
        if ((resolution.kind not in (INDEPENDENT, ELLIPSIS) and not orphan)
                or analysis.rejection or not (analysis.has_own_content or searched_bare)):
            return None
        scores, hits = bare or self._bare(analysis.utterance, lang)
        # The best page's score speaks for a question that stands alone and points at nothing
        # (an ellipsis scores low by nature; "this" may mean the page on screen).
        alone = orphan or (resolution.kind == INDEPENDENT and not resolution.anchors)
        best = (hits[0].score if hits else 0.0) if alone else None
        tokens = self.embedder.token_count(analysis.utterance)
        evidence = scores.evidence
        return ScopeCheck(
            out_of_scope(evidence, analysis.text, lex, self.params.answer, best, tokens),
            peak=evidence.peak if evidence else None,
            dense=evidence.dense if evidence else None,
            lexical=evidence.lexical if evidence else None, best_page=best, tokens=tokens)

    def _leans_on_nothing(self, last: Exchange | None, utterance: str) -> bool:
        """Whether a follow-up's last exchange gives it nothing to lean on: it answered from no
        page (a question the site did not cover, or one not understood), or only weakly (its
        page scored low: maybe a page that merely shares a word with it) and the follow-up's
        own words are not on that page ("which theme park tomorrow" after the zoo's
        admission was answered from the parking page; "and the benefits?" after a weak answer
        from the membership page leans on it)."""
        if last is None:
            return False
        if last.page_id is None:
            return True
        if not last.weak:
            return False
        if self.index.page(last.page_id) is None:
            return True
        held = float(self.index.coverage(utterance)[self.index.position(last.page_id)])
        return held < self.params.resolver.weak_follow_up_held

    def _shaped(self, hits: list[PageHit], utterance: str, lex: Lexicon) -> list[PageHit]:
        """A question that asks for an amount, a time or a length ("how much is it") whose
        best page holds none of it, nor any word of such an answer (cost, free): the first
        page of the next few that holds one answers it (the rates page of the pension the
        conversation is about). A topic's figures often have a page of their own."""
        shapes, words = asked_shapes(utterance, lex)
        if not shapes or page_holds(self.index, hits[0].page_id, shapes, words,
                                    self.params.answer):
            return hits
        for hit in hits[1:self.params.answer.shape_reach]:
            if page_holds(self.index, hit.page_id, shapes, params=self.params.answer):
                return _leading(hits, hit.page_id, self.index)
        return hits

    def _shape_missing(self, hits: list[PageHit], utterance: str, lex: Lexicon) -> bool:
        """A question that stands alone asking for an amount, a time or a length ("how much
        is a book of stamps") that none of the best few pages states, in figures or in the
        words of such an answer (cost, free): the site does not answer it, whatever words it
        shares with it (the account settings page)."""
        shapes, words = asked_shapes(utterance, lex)
        return bool(shapes) and not any(
            page_holds(self.index, hit.page_id, shapes, words, self.params.answer)
            for hit in hits[:self.params.answer.shape_reach])

    def _defined(self, hits: list[PageHit], utterance: str, lex: Lexicon) -> list[PageHit]:
        """A question asking what something is ("what is the fediverse", Xって何) whose best
        page does not define it, while one of the next few does ("The fediverse is the name
        for ..."): that page answers it."""
        if page_defines(self.index, hits[0].page_id, utterance, lex, self.params.answer):
            return hits
        for hit in hits[1:self.params.answer.shape_reach]:
            if page_defines(self.index, hit.page_id, utterance, lex, self.params.answer):
                return _leading(hits, hit.page_id, self.index)
        return hits

    def _bare(self, utterance: str, lang: str) -> tuple[Scores, list[PageHit]]:
        scores = self.index.score(SearchQuery.of(utterance), self.embedder, lang,
                                  self.params.rank)
        return scores, self.index.rank(scores, self.params.top_pages)

    def _bare_if_alone(self, analysis: Analysis, resolution: Resolution,
                       lang: str) -> tuple[Scores, list[PageHit]] | None:
        """The bare search of a question whose query is its own words: it decides whether the
        site answers it and then serves as the ranking (one search, not two), with words of
        its own or without (`_scope` judges both)."""
        if resolution.query == SearchQuery.of(analysis.utterance):
            return self._bare(analysis.utterance, lang)
        return None

    def _linked(self, anchors: list[Anchor]) -> dict[str, float]:
        """The pages the anchors link to (not anchors themselves), with their share of the
        bonus: a follow-up often asks for the next step the page points to."""
        named = {a.page_id for a in anchors}
        share = self.params.resolver.anchor_link_share
        out: dict[str, float] = {}
        for anchor in anchors:
            for target in self.index.links(anchor.page_id):
                if target not in named:
                    out[target] = max(out.get(target, 0.0), anchor.bonus * share)
        return out

    def _without_said(self, scores: Scores, left: list[npt.NDArray[np.float32]]) -> Scores:
        """Scores with pages the conversation has already said (nearly) whole shrunk; `left`:
        per reply, what it left unsaid of each page (`SiteIndex.unsaid`)."""
        floor = self.params.resolver.said_left
        if not left or floor <= 0:
            return scores
        page = scores.page * np.minimum(1.0, np.minimum.reduce(left) / floor)
        return Scores(page.astype(np.float32), scores.chunk, scores.evidence)

    def _on_topic(self, scores: Scores, query: SearchQuery, lang: str, power: float,
                  named: list[str]) -> Scores:
        """Scores scaled by how well the context alone (the query without the visitor's
        words) finds each page, relative to the best such page, to `power` (0: unchanged).
        Measured on the pages that can still come first (the best few, `named` ones and the
        pages those link to); every other page takes the lowest fit found, so none rises."""
        context = tuple(s for s in query.segments if s.role != "utterance")
        if power <= 0 or not context:
            return scores
        top = np.argsort(-scores.page, kind="stable")[: 3 * self.params.top_pages]
        extra = [self.index.position(p) for a in named for p in (a, *self.index.links(a))]
        positions = np.unique(np.concatenate([top, np.array(extra, dtype=np.int64)]))
        alone = self.index.page_scores(SearchQuery(context), self.embedder, lang,
                                       self.params.rank, positions)
        best = float(alone.max())
        if best <= 0:
            return scores
        fit = np.clip(alone / best, 0.0, 1.0) ** power
        factor = np.full(len(scores.page), float(fit.min()), dtype=np.float32)
        factor[positions] = fit
        return Scores((scores.page * factor).astype(np.float32), scores.chunk, scores.evidence)

    def _ranked(self, query: SearchQuery, lang: str, resolution: Resolution,
                bare: tuple[Scores, list[PageHit]] | None) -> list[PageHit]:
        """The context query's ranking; anchors gain their bonus. With a pool, only the bare
        search's first pages (those within the band of its best) and the anchors compete, and
        the rest follow in bare order."""
        anchors = [a for a in resolution.anchors if self.index.page(a.page_id) is not None]
        scores = self._on_topic(self.index.score(query, self.embedder, lang, self.params.rank),
                                query, lang, resolution.topic_power, [a.page_id for a in anchors])
        # What each reply in play (riding in the query, or said from an anchor) left unsaid
        # of every page: computed once, for the anchors' bonus and for pages said whole.
        said = {seg.text for seg in query.segments if seg.role == "reply"}
        left = {text: self.index.unsaid(text) for text in said | {a.said for a in anchors}}
        if anchors:
            page = scores.page.copy()
            held = self._words_held(query.segments[0].text, scores)

            def fit(pos: int, floor: float = 0.0) -> float:
                share = 1.0 if held is None else float(held[pos])
                return floor + (1.0 - floor) * share

            for target, bonus in self._linked(anchors).items():
                pos = self.index.position(target)
                page[pos] += bonus * fit(pos)
            params = self.params.resolver
            for anchor in anchors:
                pos = self.index.position(anchor.page_id)
                floor = params.seen_floor if anchor.seen else params.anchor_floor
                page[pos] += anchor.bonus * fit(pos, floor) * float(left[anchor.said][pos])
            scores = Scores(page, scores.chunk, scores.evidence)
        scores = self._without_said(scores, [v for text, v in left.items() if text])
        if not resolution.pool or bare is None:
            hits = self.index.rank(scores, self.params.top_pages + 1)
            if resolution.avoid_page is not None:
                hits = [h for h in hits if h.page_id != resolution.avoid_page]
            return hits[: self.params.top_pages]
        bare_hits = bare[1]
        floor = resolution.band * bare_hits[0].score if bare_hits else 0.0
        candidates = [h.page_id for h in bare_hits[: resolution.pool] if h.score >= floor]
        candidates += [a.page_id for a in anchors if a.page_id not in candidates]
        head = self.index.rank(scores, len(candidates), only=candidates)
        chosen = set(candidates)
        return (head + [h for h in bare_hits if h.page_id not in chosen])[: self.params.top_pages]

    def respond(self, history: History, utterance: str, screen_page: str | None = None,
                lang: str | None = None) -> TurnResult:
        start = time.perf_counter()
        # (as typed: the recognizer's full stop is no word of the question)
        utterance = unstopped(utterance)
        lang = lang or detect_lang(utterance)
        asked = language_asked(utterance, lang)
        if asked is not None:
            # "English please" / 日本語で: said in the language asked for, and so on after it
            # (the turn loop keeps it: kiosk.app); "can we speak spanish": which languages it
            # does speak, in this one
            act, lang = asked
            return TurnResult(utterance, lang,
                              Analysis(lang, utterance, clean(utterance), act, ACT, False,
                                       False),
                              Resolution(lang, act, ACT, False, None), [],
                              Reply(load_lexicon(lang).replies[act]), None,
                              (time.perf_counter() - start) * 1000.0)
        lex = load_lexicon(lang)
        analysis = analyze(utterance, history, lex, self.params.resolver,
                           self._distant_similarity(utterance, history, lex), self.index.nouns)
        bare_conf: tuple[float, float] | None = None
        bare: tuple[Scores, list[PageHit]] | None = None
        if analysis.needs_confidence and history:
            bare = self._bare(analysis.utterance, lang)
            bare_conf = confidence(bare[1])
        home = screen_page is not None and screen_page == next(
            (p.page_id for p in self.index.overview_pages(lang)), None)
        resolution = decide(analysis, history, self.params.resolver, bare_conf, screen_page,
                            screen_home=home)
        gate: GateDecision | None = None
        if (self.params.gate is not None or self.params.gate_features) and self._gated(
                analysis, resolution, history):
            bare = bare or self._bare(analysis.utterance, lang)
            gate = self._gate(analysis, resolution, history, screen_page, bare)
            if gate.alone:
                # the words find their page on their own: the context does not ride
                resolution = replace(resolution, kind=INDEPENDENT,
                                     query=SearchQuery.of(analysis.utterance), context_from=(),
                                     pool=0, band=0.0, anchors=(), topic_power=0.0)
        hits: list[PageHit]
        declined = False
        scope: ScopeCheck | None = None
        if resolution.kind == REPEAT:
            said = history[resolution.context_from[0]] if resolution.context_from else None
            info = self.index.page(said.page_id) if said and said.page_id else None
            hits = [PageHit(info.page_id, 1.0, info.first_chunk)] if info else []
        elif resolution.kind == PAGE:
            info = self.index.page(screen_page) if screen_page else None
            hits = [PageHit(info.page_id, 1.0, info.first_chunk)] if info else []
        elif resolution.kind == SITE and resolution.query is None:
            overview = self.index.overview_pages(lang)
            hits = [PageHit(overview[0].page_id, 1.0, overview[0].first_chunk)] if overview else []
        elif resolution.query is None:
            hits = []
        elif (scope := self._scope(history, analysis, resolution, lang, lex,
                                   bare := bare or self._bare_if_alone(analysis, resolution,
                                                                       lang))) is not None \
                and scope.declined:
            declined, hits = True, []  # nothing on the site is about it: said so below
        elif (bare is not None and not resolution.anchors
              and resolution.query == SearchQuery.of(analysis.utterance)):
            hits = bare[1]
        else:
            if bare is None and resolution.pool:
                bare = self._bare(analysis.utterance, lang)
            hits = self._ranked(resolution.query, lang, resolution, bare)
        if hits and resolution.query is not None and resolution.kind in (
                INDEPENDENT, IMMEDIATE, ELLIPSIS, DISTANT):
            hits = self._shaped(hits, analysis.utterance, lex)
        if hits and resolution.query is not None and resolution.kind == INDEPENDENT:
            hits = self._defined(hits, analysis.utterance, lex)
            if not declined and not resolution.anchors and self._shape_missing(
                    hits, analysis.utterance, lex):
                declined, hits = True, []
        if analysis.cut_off:
            # Stopped mid-phrase ("... for the", 〜はえっと): an answer would guess the rest of
            # the question. It is asked again; the pages found stay ranked (the screen stays).
            reply = Reply(lex.replies["unclear"], repair=True)
        elif self._safety_unanswered(analysis, resolution, hits, lex, declined):
            # health or safety, and no page speaks of it: whom to tell, not a page's words
            reply = Reply(lex.replies["emergency"], repair=True)
            hits = []
        elif declined or (resolution.kind in (INDEPENDENT, ELLIPSIS) and not hits
                          and resolution.query is not None):
            reply = decline(self.index, lex)
        elif resolution.act == "clock":
            reply = Reply(lex.replies["clock"].format(time=clock_time(self.clock(), lex)))
        else:
            reply = compose(resolution, hits, self.index, history, screen_page, lex,
                            self.params.answer, self.embedder)
        if reply.page_id is not None and hits and reply.page_id != hits[0].page_id:
            # The answer followed its page's pointer ("see the guide for details") to the
            # page it names: that page is the one shown, first.
            hits = _leading(hits, reply.page_id, self.index)
        if reply.repair and resolution.kind not in (PAGE,):
            # A clarification is not an answer: nothing was found with confidence.
            reply = replace(reply, page_id=None)
        elapsed_ms = (time.perf_counter() - start) * 1000.0
        return TurnResult(utterance, lang, analysis, resolution, hits, reply, bare_conf,
                          elapsed_ms, gate, scope)

    def _safety_unanswered(self, analysis: Analysis, resolution: Resolution,
                           hits: list[PageHit], lex: Lexicon, declined: bool) -> bool:
        """A question of health or safety (`[answer] emergency`: "the nearest emergency
        room", 救急病院) that no page answers, or whose best page holds none of those words:
        the visitor is told whom to tell. A site that speaks of it (a health service's page on
        emergency care) answers it."""
        found = lex.find(analysis.text, lex.emergency) if resolution.query is not None else []
        if not found:
            return False
        if declined or not hits:
            return True
        pos = self.index.position(hits[0].page_id)
        return not any(float(self.index.coverage(phrase)[pos]) > 0.0 for phrase in found)

    @staticmethod
    def _gated(analysis: Analysis, resolution: Resolution, history: History) -> bool:
        """A follow-up of the last exchange, or a question leaning on its topic, with words of
        its own to search alone: the gate may say its context does not ride. Not a distant
        reference ("the X from earlier" names its exchange), a request for more detail ("tell
        me more about the engines": the article's whole previous exchange), a rejection or
        "this" (the page on screen), nor a follow-up of no page."""
        return (resolution.kind in (IMMEDIATE, ELLIPSIS) and resolution.query is not None
                and analysis.has_own_content and not analysis.rejection and not analysis.detail
                and not analysis.proximal and bool(resolution.context_from)
                and history[resolution.context_from[0]].page_id is not None)

    def _gate(self, analysis: Analysis, resolution: Resolution, history: History,
              screen_page: str | None, bare: tuple[Scores, list[PageHit]]) -> GateDecision:
        features = self._gate_features(analysis, resolution, history, screen_page, bare)
        gate = self.params.gate
        if gate is None:
            return GateDecision(features, None, False)
        return GateDecision(features, round(gate.p_alone(features), 3), gate.alone(features),
                            tuple(gate.shares(features)[:4]))

    def _gate_features(self, analysis: Analysis, resolution: Resolution, history: History,
                       screen_page: str | None,
                       bare: tuple[Scores, list[PageHit]]) -> dict[str, float]:
        """kiosk.dialogue.gate.FEATURES of a follow-up: its reading, and what the bare search
        of its words says of the page the context points at. Every vector is one the bare
        search computed (the embedder remembers it) or the index holds."""
        scores, hits = bare
        page_id = history[resolution.context_from[0]].page_id
        best, lead = confidence(hits)
        top_id = hits[0].page_id if hits else None
        info = self.index.page(page_id) if page_id else None
        features = {"immediate": float(resolution.kind == IMMEDIATE),
                    "deictic": float(analysis.kind == IMMEDIATE and not analysis.shaped),
                    "strength": min(analysis.strength, 5.0) / 5.0,
                    "bare_best": best, "bare_lead": lead,
                    "prev_top": float(top_id == page_id),
                    "prev_share": 0.0, "held": 0.0, "meaning_gap": 0.0,
                    "on_screen": float(screen_page is not None and screen_page == page_id)}
        if info is None or top_id is None:
            return features
        pos, top = self.index.position(info.page_id), self.index.position(top_id)
        if best > 0:
            features["prev_share"] = float(np.clip(scores.page[pos] / best, 0.0, 1.0))
        coverage = self.index.coverage(analysis.utterance)
        features["held"] = float(np.clip(coverage[pos] / coverage[top], 0.0, 1.0)) \
            if coverage[top] > 0 else 1.0
        query = self.embedder.embed_queries([analysis.utterance])[0]

        def meaning(page: PageInfo) -> float:
            chunks = self.index.vectors[page.first_chunk:page.first_chunk + page.n_chunks]
            return float((chunks @ query).max()) if len(chunks) else 0.0

        top_info = self.index.page(top_id)
        assert top_info is not None
        floor = self.embedder.score_floor
        features["meaning_gap"] = (meaning(top_info) - meaning(info)) / (1.0 - floor)
        return features


def clock_time(now: datetime, lex: Lexicon) -> str:
    """The time of day as the language says it (`[replies] clock_time`: "2:05 pm", 14時5分)."""
    hour12 = now.hour % 12 or 12
    return lex.replies["clock_time"].format(hour=now.hour, hour12=hour12, minute=now.minute,
                                            ampm="am" if now.hour < 12 else "pm")


def language_asked(utterance: str, lang: str) -> tuple[str, str] | None:
    """A request about the language spoken, when that is all the utterance asks: ("language",
    the language asked for) for "English please", 日本語で, "in English" (the one spoken already
    too: it is said so); ("other_language", `lang`) for one the avatar does not speak ("can we
    speak spanish", 中国語で). Read with every language's own phrases (a Japanese visitor may
    say "English please")."""
    for code in (lang, *[c for c in LANGS if c != lang]):
        lex = load_lexicon(code)
        text = lex.strip(clean(utterance), lex.hesitations + lex.act_fillers)
        asks = [("language", target, phrases) for target, phrases in lex.language_requests.items()]
        for act, target, phrases in [*asks, ("other_language", lang, lex.other_languages)]:
            found = lex.find(text, phrases)
            if found and not content_terms(lex.strip(text, tuple(found))):
                return act, target
    return None
