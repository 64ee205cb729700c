"""Ranking a page's sentences for a question: its words weighted by rarity on the page, the shape
of answer asked for, the heading the question means, what the conversation has said."""

from __future__ import annotations

import math
import re

import numpy as np

from kiosk.answer.params import AnswerParams
from kiosk.answer.runs import opens_section
from kiosk.answer.sentences import page_reading, terms_of
from kiosk.answer.shapes import SHAPES, shapes_of
from kiosk.answer.speakable import ASKING_LABELS
from kiosk.dialogue.history import Exchange, History
from kiosk.dialogue.lexicon import Lexicon
from kiosk.dialogue.query import QuerySegment, SearchQuery
from kiosk.dialogue.resolver import clean
from kiosk.retrieval.embedder import Embedder
from kiosk.retrieval.index import PageInfo, SiteIndex, is_question
from kiosk.text import content_terms, terms


def said_before(sents: list[str], history: History, params: AnswerParams) -> list[bool]:
    """Per sentence, whether a reply of the conversation said it (nearly all its terms in
    one reply: the visitor heard it, whatever the positions of this reply's sentences)."""
    return _said_in(sents, [ex for ex in history if ex.reply], params)


def heard_in(sents: list[str], history: History, positions: tuple[int, ...],
             params: AnswerParams) -> tuple[int, ...]:
    """The sentences the replies at `positions` (the exchanges a follow-up leans on) said,
    by their words, as `said_before` tells."""
    leaned = [history[p] for p in positions if 0 <= p < len(history)]
    return tuple(i for i, heard in enumerate(_said_in(sents, leaned, params)) if heard)


def _said_in(sents: list[str], exchanges: list[Exchange], params: AnswerParams) -> list[bool]:
    """Per sentence, whether one of these answers' replies holds nearly all its terms
    (params.said_share)."""
    replies = [terms_of(ex.reply) for ex in exchanges if ex.act is None and not ex.repair]
    out: list[bool] = []
    for sent in sents:
        own = terms_of(sent)
        out.append(bool(own) and any(len(own & said) >= params.said_share * len(own)
                                     for said in replies))
    return out


def sentence_query(query: SearchQuery, index: SiteIndex) -> dict[str, float]:
    """What a sentence should answer: the visitor's own words first; the context that found
    the page only breaks ties (it matches the page's opening, already said or not). The terms
    are the search's (リノート is also sought as the page's "Renote")."""
    weights: dict[str, float] = {}
    for seg in query.segments:
        factor = 1.0 if seg.role == "utterance" else 0.2
        single = SearchQuery((QuerySegment(seg.text, seg.weight * factor, seg.role),))
        for term, w in index.search_terms(single).items():
            weights[term] = weights.get(term, 0.0) + w
    return weights


def best_start(sents: list[str], heads: list[str], query_terms: dict[str, float],
               cues: set[str], prior: list[float] | None = None,
               orphans: list[bool] | None = None, said: list[bool] | None = None, *,
               params: AnswerParams) -> int:
    """The sentence that best answers the query. Terms are weighted by how rare they are on
    this page: the page's own topic (in nearly every sentence) tells sentences apart least.
    A sentence also owns the words of its heading ("Tickets for the planetarium"): the
    section's opening sentence as its own (params.head_opens), the sentences after it at a
    quarter (params.head_under)."""
    own = [terms_of(sent) | (shapes_of(sent) if cues else set()) for sent in sents]
    headed = [terms_of(head) - words for head, words in zip(heads, own, strict=True)]
    n = len(sents)
    df: dict[str, int] = {}
    for words, head_words in zip(own, headed, strict=True):
        for t in words | head_words:
            df[t] = df.get(t, 0) + 1
    head_weight = [params.head_opens if opens_section(heads, i) else params.head_under
                   for i in range(n)]
    raw = [sum(w * math.log((n + 1) / (df[t] + 0.5)) * (1.0 if t in words else head_weight[i])
               for t, w in query_terms.items() if t in words or t in head_words)
           for i, (words, head_words) in enumerate(zip(own, headed, strict=True))]
    top = max(raw, default=0.0) or 1.0
    best, best_score = 0, -1.0
    word_cues, shape_cues = cues - SHAPES.keys(), cues & SHAPES.keys()
    for i, (words, head_words) in enumerate(zip(own, headed, strict=True)):
        score = raw[i] / top
        score += 0.5 * len(word_cues & (words | head_words)) / max(len(word_cues), 1)
        # the shape of the answer asked for (a clock time for "what time") weighs as much as
        # the best sentence's words
        score += params.shape_weight * bool(shape_cues & words)
        if prior is not None:
            score += prior[i]
        if orphans is not None and orphans[i]:
            score -= params.orphan_penalty  # yields to the next candidate unless far ahead
        if said is not None and said[i]:
            score -= params.said_penalty  # said already: a follow-up asks for something new
        # earlier sentences introduce: prefer them on ties, by their place in the page, so
        # that on a long page the answer 70 sentences in is not outweighed by its place
        score -= params.place_weight * i / n
        if score > best_score:
            best, best_score = i, score
    return best


def by_meaning(utterance: str, start: int, sents: list[str], heads: list[str],
               index: SiteIndex, embedder: Embedder, params: AnswerParams) -> int:
    """The start again, by meaning, when the visitor's words barely found it: under
    params.meaning_below of their weight in the chosen sentence and its heading, the
    sentence closest in meaning (e5, query against passage, with its heading) among those
    holding one of their words wins ("how can i reorder my pills without going to the
    pharmacy": "pharmacy" alone found a sentence on eligibility; "Use our VA prescription
    refill tool ..." says it). A sentence with none of their words is left out: short,
    general ones ("We're here to help.") sit close in meaning to anything."""
    asked = index.search_terms(SearchQuery.of(utterance))
    total = sum(asked.values())
    if not params.meaning_below or total <= 0:
        return start
    found = terms_of(sents[start]) | terms_of(heads[start])
    share = sum(w for t, w in asked.items() if t in found) / total
    if share <= 0 or share >= params.meaning_below:
        return start  # (none at all: the words ask nothing of the page, a bare follow-up)
    holding = [i for i, sent in enumerate(sents) if asked.keys() & terms_of(sent)]
    if len(holding) < 2:
        return start
    asked_vector = embedder.embed_queries([utterance])[0]  # (remembered from the search)
    vectors = index.passage_vectors([_passage(sents[i], heads[i]) for i in holding], embedder)
    return holding[int(np.argmax(vectors @ asked_vector))]


def _passage(sentence: str, head: str) -> str:
    return f"{head}: {sentence}" if head else sentence


def prepare_meaning(index: SiteIndex, page_id: str, embedder: Embedder,
                    params: AnswerParams) -> None:
    """Embed the sentences of the page a reply was just said from (while it is spoken): a
    follow-up's start chosen by meaning then costs no encoder call. A page longer than
    params.meaning_prepared sentences is left to the turns that need it."""
    if not params.meaning_below:
        return
    sents, heads, _, _ = page_reading(index, page_id, params)
    if 0 < len(sents) <= params.meaning_prepared:
        index.passage_vectors([_passage(s, h) for s, h in zip(sents, heads, strict=True)],
                              embedder)


def points_to(sentence: str, page_id: str, index: SiteIndex, lex: Lexicon) -> PageInfo | None:
    """The page a sentence sends the reader to for what it is about: it holds the words of
    one of its page's links and a pointer's ("For details, see Eligibility.", 作成方法について
    はこちらのドキュメントを参照してください). Said aloud it answers nothing: the link is what the
    author meant as the answer."""
    info = index.page(page_id)
    if info is None or not info.anchors or not lex.find(clean(sentence), lex.points):
        return None
    for words, target in info.anchors:
        there = index.page(target) if len(words) >= 2 and words in sentence else None
        if there is not None:
            return there
    return None


def _question_heading(index: SiteIndex, heads: list[str], utterance: str, embedder: Embedder,
                      lead: float) -> tuple[str, float] | None:
    """The page's question heading closest in meaning to the visitor's question, and how
    sure: its lead over the next in cosine as a share of `lead` (1 at or above it); None
    when the page has fewer than two (and then the question is not embedded: the page on
    screen's question had no search that did)."""
    questions = tuple(h for h in dict.fromkeys(heads) if is_question(h))
    if len(questions) < 2:
        return None
    # (the embedder remembers the visitor's question from its search)
    asked = embedder.embed_queries([utterance])[0]
    cosine = index.question_vectors(questions, embedder) @ asked
    first, second = np.argsort(-cosine, kind="stable")[:2]
    gap = float(cosine[first] - cosine[second])
    return questions[int(first)], 1.0 if lead <= 0 else min(1.0, gap / lead)


def asked_as(utterance: str, sents: list[str], heads: list[str], index: SiteIndex,
              params: AnswerParams, embedder: Embedder | None) -> list[float] | None:
    """Per sentence, the bonus of the one that opens the section under the question heading
    the visitor's question means (`_question_heading`), as sure as that is; None without
    one."""
    if embedder is None or not params.question_heading:
        return None
    found = _question_heading(index, heads, utterance, embedder, params.question_heading_lead)
    if found is None:
        return None
    asked_as, share = found
    return [params.question_heading * share if heads[i] == asked_as and opens_section(heads, i)
            else 0.0 for i in range(len(sents))]


# "How" asks for the way to do something when it asks how someone does it ("how do I audit
# a site", "how can we make personas") or how a thing works ("how do interviews work");
# "how is X different", "how many", "how does 18F use it" ask for something else.
_HOW_TO = re.compile(r"\bhow\s+(?:do|does|can|could|should|would|will)\s+(?:i|you|we|they|one|"
                     r"people|it)\b|\bhow\s+(?:do|does)\b.*\bwork\b")


def _asking_label(head: str) -> str | None:
    """The question word a heading labels its section with: a field's label ("Why", "What:")
    or a short heading that opens with one and asks nothing ("How to do it", "When to use
    it"); a question heading is matched by meaning instead (`asked_as`)."""
    words = head.strip(":：").lower().split()
    if not words or words[0] not in ASKING_LABELS or len(words) > 5:
        return None
    return None if head.rstrip().endswith(("?", "？")) else words[0]


def labelled_by_asking(spoken: str, heads: list[str], params: AnswerParams
                       ) -> list[float] | None:
    """Per sentence, the bonus of the one that opens a section labelled by the question word
    the visitor asks with: "why should I use it" -> a method card's "Why" field ("To
    identify a group's collective priorities."), "how do interviews work" -> its "How to do
    it" steps, not a later sentence that shares a word. None when no heading is such a
    label. It outweighs the best word match in the chunk the search ranked best: the visitor
    asked for what the label holds."""
    labels = [_asking_label(h) for h in heads]
    asking = {label for label in labels if label is not None}
    if not asking:
        return None
    said = set(re.findall(r"[a-z]+", spoken.lower()))
    if not _HOW_TO.search(spoken.lower()):
        said.discard("how")
    asked = asking & said
    if not asked:
        return None
    # (and its place in the page: the label outweighs a match that came before it)
    bonus = params.question_heading + params.chunk_prior + params.place_weight
    return [bonus if labels[i] in asked and opens_section(heads, i) else 0.0
            for i in range(len(heads))]


def named_heading_bonus(utterance: str, heads: list[str], title: str, params: AnswerParams
                   ) -> list[float] | None:
    """Per sentence, the bonus of the one that opens a section whose heading is all the
    visitor named ("フォロワーは", "and what about renotes"): a bare name asks for what the
    page says under it, where its words are in every section of the page and tell none apart.
    Not the page's title: its name asks for the page ("what else is in the museum shop").
    None when no heading is so named."""
    said = set(content_terms(utterance))
    if not said or not params.named_heading or said == set(terms(title, for_query=True)):
        return None
    named = {h for h in set(heads) if h and set(terms(h, for_query=True)) == said}
    if not named:
        return None
    return [params.named_heading if heads[i] in named and opens_section(heads, i) else 0.0
            for i in range(len(heads))]


def plus(prior: list[float] | None, extra: list[float] | None) -> list[float] | None:
    """Two per-sentence bonuses added; either may be None (none)."""
    if extra is None:
        return prior
    if prior is None:
        return extra
    return [a + b for a, b in zip(prior, extra, strict=True)]
