"""The reply to a resolved turn: which page, which sentences, in which words."""

from __future__ import annotations

import re
from dataclasses import replace

from kiosk.answer.abbreviations import defined, spelled_out
from kiosk.answer.choose import (
    asked_as,
    best_start,
    by_meaning,
    heard_in,
    labelled_by_asking,
    named_heading_bonus,
    plus,
    points_to,
    said_before,
    sentence_query,
)
from kiosk.answer.declines import NAME_WORDS, join_titles, listing, menu, site_overview
from kiosk.answer.defines import defines
from kiosk.answer.params import DEFAULT_PARAMS, AnswerParams, Reply
from kiosk.answer.runs import announcing, orphans, run_from, say_from, speak
from kiosk.answer.sentences import page_leads, page_reading, terms_of
from kiosk.answer.shapes import asked_shapes, cue_terms, shapes_of
from kiosk.dialogue.history import History
from kiosk.dialogue.lexicon import Lexicon
from kiosk.dialogue.query import SearchQuery
from kiosk.dialogue.resolver import (
    ACT,
    DISTANT,
    INDEPENDENT,
    PAGE,
    REPEAT,
    SITE,
    Resolution,
    clean,
    distant_asked,
    distant_clue,
)
from kiosk.retrieval.embedder import Embedder
from kiosk.retrieval.index import PageHit, SiteIndex
from kiosk.text import content_terms


def compose(
    resolution: Resolution,
    hits: list[PageHit],
    index: SiteIndex,
    history: History,
    screen_page: str | None,
    lex: Lexicon,
    params: AnswerParams = DEFAULT_PARAMS,
    embedder: Embedder | None = None,
) -> Reply:
    """The reply to a resolved turn. `embedder` (the index's) matches the visitor's question
    to the page's question headings; without it, words alone choose the sentence."""
    r = resolution
    if r.kind == ACT and r.act:
        return Reply(lex.replies[r.act])
    if r.kind == REPEAT:
        if not r.context_from:
            return Reply(lex.replies["nothing"], repair=True)
        said = history[r.context_from[0]]
        return Reply(said.reply, said.page_id, said.page_title, said.spoken)
    if r.kind == PAGE:
        if screen_page is None:
            text = lex.replies["no_screen_page"].format(
                listing=listing(index, lex, params.listing_titles))
            return Reply(text, repair=True)
        info = index.page(screen_page)
        if info is None:
            text = lex.replies["off_site"].format(
                listing=listing(index, lex, params.listing_titles))
            return Reply(text, repair=True)
        return _from_page(r, info.page_id, info.title, index, history, lex, params, summary=True,
                          embedder=embedder)
    if r.kind == SITE and r.query is None:
        # Said from the site's overview page (the brain's hit), which the screen can show.
        home = index.page(hits[0].page_id) if hits else None
        # (a menu of the site, no topic: a follow-up picks from it, it does not lean on it)
        return Reply(site_overview(index, lex, params.listing_titles),
                     home.page_id if home else None, home.title if home else "", weak=True)
    if not hits:
        return Reply(lex.replies["nothing"], repair=True)
    top = hits[0]
    if top.score < params.clarify_below:
        titles = [index.page(h.page_id).title for h in hits[:2] if index.page(h.page_id)]  # type: ignore[union-attr]
        if len(titles) >= 2:
            text = lex.replies["clarify"].format(first=titles[0], second=titles[1])
        else:
            text = lex.replies["clarify_one"].format(first=titles[0])
        return Reply(text, repair=True)
    info = index.page(top.page_id)
    assert info is not None
    # A distant reference names its earlier topic ("going back to the grief counseling, how
    # do I reach them"): matched by meaning, its words find the heading that introduces the
    # topic, not the one asked about (vagov-en reply F1 0.388 with them, 0.397 without).
    reply = _from_page(r, info.page_id, info.title, index, history, lex, params,
                       summary=False, chunk=top.chunk,
                       embedder=None if r.kind == DISTANT else embedder, meaning=embedder)
    return replace(reply, weak=top.score < params.weak_below)


def _from_page(r: Resolution, page_id: str, title: str, index: SiteIndex, history: History,
               lex: Lexicon, params: AnswerParams, *, summary: bool,
               chunk: int | None = None, embedder: Embedder | None = None,
               follow: bool = True, meaning: Embedder | None = None) -> Reply:
    """The reply said from one page. An answer whose best sentence sends the reader to
    another page (`points_to`) is said from that page instead, once (`follow`)."""
    lang = lex.lang
    sents, heads, owner, gaps = page_reading(index, page_id, params)
    if not sents:
        return Reply(lex.replies["detail_end"].format(title=title), page_id, title, repair=False)
    # what the visitor heard of this page: the sentences replies said, by position, and by
    # their words those of the exchanges the turn leans on (a reply said from another page's
    # hit, or given from outside: evaluation's reference replies carry no positions)
    already: set[int] = set(heard_in(sents, history, r.context_from, params))
    for ex in history:
        if ex.page_id == page_id:
            already.update(ex.spoken)
    if r.detail and already:
        # going on from where the last reply stopped, past what only announces the page (the
        # sentence an answer stopped before: "Find out how to apply for this burial honor.")
        announces = announcing(sents, lex)
        start = max(already) + 1
        while start in announces:
            start += 1
        if start >= len(sents):
            return Reply(lex.replies["detail_end"].format(title=title), page_id, title,
                         tuple(sorted(already)))
        picked = run_from(sents, heads, start, lang, params, announces)
        body = _spelled(speak(sents, picked, lang), index, page_id, lex)
        return Reply(lex.replies["detail_more"].format(body=body),
                     page_id, title, picked)
    if summary:
        start = 0
        question = False  # words of a question beside those that point at the page
        if r.query is not None:
            # (what the page says, though the visitor heard some of it: no penalty for what
            # was said, and the title's words are no "what is X" to define)
            # (the words that point at the page, "this chart page", このグラフのページ, are
            # no words of the question: "page" would find "the server info page" in it)
            words = lex.strip(clean(r.query.segments[0].text), lex.page + lex.page_nouns)
            query = SearchQuery.of(words) if words.strip() else r.query
            question = bool(content_terms(words))
            start = _asked_sentence(query, sents, heads, owner, title, index, None, lex,
                                    params, None, embedder, defining=False)
        # (what the page says, unasked: its opening and the next section's, not one section)
        picked, body = say_from(sents, heads, start, lex, params, gaps,
                                across=r.query is None)
        body = _spelled(body, index, page_id, lex, title)
        if question and r.query is not None:
            # a question about the page on screen ("how long does the method on this page
            # take") is answered, with the page's name where the answer does not say it; "this
            # page says" is for what it says as a whole ("what is this page", 何のページ)
            template = "titled" if picked and _unnamed(
                sents, heads, picked[0], title, r.query.segments[0].text, history) else "answer"
            return Reply(lex.replies[template].format(title=title, body=body), page_id, title,
                         picked)
        return Reply(lex.replies["page_summary"].format(title=title, summary=body),
                     page_id, title, picked)
    assert r.query is not None
    start = _asked_sentence(r.query, sents, heads, owner, title, index,
                            said_before(sents, history, params), lex, params, chunk, embedder,
                            words=_asked_words(r, lex))
    utterance = r.query.segments[0].text
    if meaning is not None and not (asked_shapes(utterance, lex)[0] & shapes_of(sents[start])):
        # (a start of the shape asked for, "3 to 6 months" for "how long", was chosen for
        # that, not for the words)
        start = by_meaning(utterance, start, sents, heads, index, meaning, params)
    target = points_to(sents[start], page_id, index, lex) if follow else None
    if target is not None:
        there = _from_page(r, target.page_id, target.title, index, history, lex, params,
                           summary=False, embedder=embedder, follow=False, meaning=meaning)
        if there.spoken:
            return there
    picked, body = say_from(sents, heads, start, lex, params, gaps,
                            leads=page_leads(index, page_id, params))
    body = _spelled(body, index, page_id, lex)
    spoken = clean(utterance)  # as the lexicon is written
    if picked and (r.kind == INDEPENDENT or owner[picked[0]] == owner[0]) and not lex.find(
            spoken, lex.asks_what) and _unnamed(
            sents, heads, picked[0], title, utterance, history):
        # (a new topic, or the page's opening; "what is X" named what it asks about)
        body = lex.replies["titled"].format(title=title, body=body)
    posted = _posted(index, page_id, lex)
    if posted and lex.find(spoken, lex.asks_when) and not (
            shapes_of(body) & {"<date>", "<day>", "<time>"}):
        # "when did the official site open": a post's answer is its day
        body = lex.replies["dated"].format(date=posted, body=body)
    if picked and lex.find(spoken, lex.site_mentions):
        # "which methods does this site have for testing": what the site has is its pages
        asked = terms_of(lex.strip(spoken, lex.site_mentions))
        offered = menu(index, page_id, owner[picked[-1]], asked)
        if offered:
            body = lex.replies["menu"].format(
                body=body, titles=join_titles(offered[:params.listing_titles], lex))
    return Reply(lex.replies["answer"].format(body=body), page_id, title, picked)


def _posted(index: SiteIndex, page_id: str, lex: Lexicon) -> str:
    """The day the page was published, as said ("September 11, 2021", 2021年9月11日); "" for
    a page of no date."""
    info = index.page(page_id)
    if info is None or not info.date:
        return ""
    year, month, day = (int(part) for part in info.date.split("-"))
    if lex.lang == "ja":
        return f"{year}年{month}月{day}日"
    # (the lexicon keeps its phrases in lower case)
    name = (lex.months[month - 1].capitalize() if len(lex.months) == 12 and 1 <= month <= 12
            else str(month))
    return f"{name} {day}, {year}"


def _spelled(body: str, index: SiteIndex, page_id: str, lex: Lexicon, heard: str = "") -> str:
    """The body with the abbreviations its page defines said in full at their first use,
    unless the words said before it (`heard`: the page's title) spell them out (English: a
    Japanese page writes its names out)."""
    if not lex.word_boundaries:
        return body
    text = "\n".join(c.text for c in index.page_chunks(page_id))
    return spelled_out(body, defined(text), heard)


def _unnamed(sents: list[str], heads: list[str], first: int, title: str, utterance: str,
             history: History) -> bool:
    """The reply names nothing of the page's title (a card's description, "A quick way to
    find common, large usability problems"; a step of it, "Give each person three dots"), and
    neither the visitor nor a reply of the conversation named it: said alone, the visitor
    hears what the thing does and never what it is called ("how can a big group agree on
    priorities": "Dot voting: ...")."""
    named = terms_of(title)
    if (not named or title.rstrip().endswith(("?", "？"))
            or len(title.split()) > NAME_WORDS or any(c.isdigit() for c in title)
            or not content_terms(title.split()[0]) or _LABEL.match(title)
            or _LABEL.match(sents[first])
            or named & terms_of(sents[first])
            or named & terms_of(utterance)):
        # (a title that asks, tells or numbers something, or opens with a word that names
        # nothing, "I'm having trouble ...", is no name to say; a headline's label, "NEWS:
        # ...", or a sentence that opens with one of its own, "Python: ...", takes no other)
        return False
    return not any(named & terms_of(ex.reply) for ex in history if ex.reply)


# A label before a colon ("Python: Misskey.py", "NEWS: 「Misskey」の…").
_LABEL = re.compile(r"^[^:：]{1,40}[:：]\s*\S")


def _asked_words(r: Resolution, lex: Lexicon) -> SearchQuery | None:
    """The query whose words a distant reference's answer is chosen by: what it asks beside
    its clue ("the evaluation one from earlier does that involve the public at all" -> "does
    that involve the public at all"). The clue's words found the page; on it they find the
    sentence that names the topic ("... write an evaluation about each competitor"), not the
    answer. None for any other turn (its query's words as they are)."""
    if r.kind != DISTANT or r.query is None:
        return None
    first = r.query.segments[0]
    text = clean(first.text)
    asked = distant_asked(text, lex)
    # (a clue of many words holds the question too: "going back to the glasses my eyes got a
    # lot worse after my stroke | does that count")
    if asked is None or (lex.word_boundaries
                         and len((distant_clue(text, lex) or "").split()) > CLUE_WORDS):
        return None  # (Japanese closes its clue: さっきの話だけど | ...)
    return SearchQuery((replace(first, text=asked), *r.query.segments[1:]))


# A distant reference's clue names its topic in this many words at most ("the sticky note
# one", "the flow diagram").
CLUE_WORDS = 3


def _asked_sentence(query: SearchQuery, sents: list[str], heads: list[str], owner: list[int],
                    title: str, index: SiteIndex, said: list[bool] | None, lex: Lexicon,
                    params: AnswerParams, chunk: int | None, embedder: Embedder | None,
                    defining: bool = True, words: SearchQuery | None = None) -> int:
    """The sentence of the page that answers the visitor's question (`best_start` with every
    cue: the shape asked for, the heading it means, what the conversation said), whether the
    page was found by searching or is the one on the screen ("how long is the code on this
    page good for"). `words`: the query whose words weigh the sentences, when not `query`
    (`_asked_words`)."""
    utterance = query.segments[0].text
    prior = None
    if chunk is not None and params.chunk_prior:
        prior = [params.chunk_prior if c == chunk else 0.0 for c in owner]
    spoken = clean(utterance)  # as the lexicon is written: "Where can I ..." from Whisper
    scored_heads = heads
    if defining and lex.find(spoken, lex.asks_what):
        asked = set(index.search_terms(SearchQuery.of(utterance)))
        prior = plus(prior, defines(sents, heads, asked, index, lex.lang, title, params))
        # the page's opening under no heading stands under its title, whose words it defines
        # ("Personas": "User archetypes based on conversations with real people.")
        lead = next((i for i, head in enumerate(heads) if head), len(heads))
        scored_heads = [title] * lead + heads[lead:]
    prior = plus(prior, asked_as(utterance, sents, heads, index, params, embedder))
    prior = plus(prior, labelled_by_asking(spoken, heads, params))
    prior = plus(prior, named_heading_bonus(utterance, heads, title, params))
    return best_start(sents, scored_heads, sentence_query(words or query, index),
                      cue_terms(spoken, lex), prior, orphans(sents, heads, lex),
                      said, params=params)
