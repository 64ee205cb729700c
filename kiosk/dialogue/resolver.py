"""Deixis-aware query construction: what the visitor's words refer to, and what to search.

Two pure steps, so the whole decision is testable without an index or a clock:
`analyze` reads the utterance against the history (act, reference kind, detail flag, strength);
`decide` turns that, plus the retrieval confidence of the bare utterance when the brain measured
it, into a Resolution with the search query. The visitor's words are never rewritten: context
rides along as weighted segments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import NamedTuple

from kiosk.dialogue.history import Exchange, History
from kiosk.dialogue.lexicon import ACTS, Lexicon, load_lexicon
from kiosk.dialogue.query import QuerySegment, SearchQuery
from kiosk.text import (
    bigrams,
    content_strength,
    content_terms,
    normalize,
    overlap,
    word_overlap,
)

# Reference kinds
ACT = "act"
PAGE = "situational_page"
SITE = "situational_site"
IMMEDIATE = "immediate"
REPEAT = "repeat"
DISTANT = "distant"
ELLIPSIS = "ellipsis"
INDEPENDENT = "independent"
KINDS = (ACT, PAGE, SITE, IMMEDIATE, REPEAT, DISTANT, ELLIPSIS, INDEPENDENT)

_ACT_PRIORITY = ("stop", "farewell", "thanks", "personal", "clock", "greeting", "ack")
_PUNCT = re.compile(r"[^\w\s'’]")


@dataclass(frozen=True)
class ResolverParams:
    """Weights of context relative to the utterance (whose own terms weigh 1 in all)."""

    # "that" / "it" / "there": the words point back, so the previous exchange rides strongly.
    deictic_weight_bare: float = 1.0  # utterance has no content of its own ("explain that")
    deictic_weight_own: float = 0.5  # utterance has content ("how much does it cost")
    # No deictic word, but the bare utterance is weak: context only breaks ties.
    ellipsis_weight_bare: float = 1.0
    ellipsis_weight_own: float = 0.5
    reply_share_bare: float = 0.5  # share of an exchange's weight given to the avatar's reply
    reply_share_own: float = 0.3
    # An utterance without content of its own ("who made it") weighs this much beside its
    # context: its few words (a verb stem) must not pull the search on their own.
    bare_utterance_weight: float = 0.3
    inherit_decay: float = 0.5  # context an exchange itself carried, passed on at this factor
    min_segment_weight: float = 0.05
    distant_weight: float = 0.8
    # A distant reference that asks a new question beside its clue ("about the cemetery thing
    # from before, is there any money for the funeral home"): the question is searched whole
    # and the utterance as spoken, clue and all, at this weight.
    distant_clue_weight: float = 0.6
    distant_min_overlap: float = 0.34
    # Meaning beside the 2-grams: how much it weighs, and the lead the best exchange needs when
    # the 2-grams alone are not enough.
    distant_meaning_weight: float = 1.0
    distant_margin: float = 0.1
    # The bare utterance counts as weak when its best page scores below gate_confidence or
    # leads the second page by less than gate_margin (relative): its words fit many pages.
    gate_confidence: float = 0.25
    gate_margin: float = 0.0
    # When the utterance has content enough of its own (pool_min_strength), its bare search
    # picks the candidate pages and the context only reorders them: context can break ties,
    # never drag in an old topic.
    pool_min_strength: float = 2.0
    # A follow-up by its shape alone ("ロッカーを使うには", 写真を撮るときのルールは, "and the
    # lockers": no deictic word) is also how a visitor opens a new topic. With words enough
    # of its own (pool_min_strength), it is a question of its own when those words find one
    # page by this relative lead over the next (and the best scores gate_confidence): its
    # words name the topic. Follow-ups of the six sets whose words find another page than the
    # one they continue lead by 0.10 at most; topic switches written for the demo site and
    # seen on a documentation site, by 0.25 and more (README).
    shaped_lead: float = 0.2
    pool_deictic: int = 5
    pool_ellipsis: int = 3
    # Without a deictic word, a page only enters the pool when the bare utterance scores it
    # near the best one (this share of the best score): context breaks ties, no more.
    ellipsis_band: float = 0.75
    # On a kiosk the page of the exchange pointed at, and the page on screen for "this/here",
    # are the first candidates: they join the ranking whatever the bare words found, with this
    # much added to their score (page scores run 0..1; a clear answer is ~0.5). The visitor's
    # own words can still outrank them by more than that.
    anchor_immediate: float = 0.25
    anchor_immediate_own: float = 0.15  # ... when the utterance has words enough to stand alone
    anchor_distant: float = 0.15
    anchor_ellipsis: float = 0.0
    anchor_screen: float = 0.25
    # An anchor keeps this share of its bonus whatever share of the visitor's words it holds:
    # the page on screen (the visitor looks at it) and the page the conversation points at
    # (a follow-up's words are often not the page's: "is it busy at lunch" after the cafe).
    # Once only the page on screen kept it: CAsT 2022 lost 2.2 points with it for every
    # anchor, while its previous passage, said whole, still won; since that page gives way
    # (said_left), the floor for every anchor gains on the demo and CAsT (README).
    seen_floor: float = 0.5
    anchor_floor: float = 0.5
    # Pages an anchor page links to (its next steps: "after you apply", the rates page) join
    # the candidates with this share of its bonus.
    anchor_link_share: float = 0.5
    # An anchor whose page was a weak answer (it scored low) counts this much of its bonus.
    weak_anchor: float = 0.5
    # A follow-up to a weak answer holding less than this share of its words on that answer's
    # page leans on nothing: it is judged as a question alone (it may be declined).
    weak_follow_up_held: float = 0.5
    # A page whose words a reply of the conversation already said, all but this share of its
    # distinct terms, has nothing left to tell a follow-up: its score shrinks in proportion
    # (a short page said whole; on CAsT the previous passage, which the context pulls first).
    said_left: float = 0.2
    # A follow-up that points back ("do I have to go into an office for that") asks about the
    # exchange's topic: every page's score is scaled by how well that exchange alone finds it
    # (relative to the page it finds best), to this power, so a page that fits only the
    # follow-up's own words (another service's "office") does not outrank the topic's pages.
    # Small: CAsT's follow-ups often move on to a new passage of the topic (README).
    topic_power: float = 0.15


@dataclass(frozen=True)
class Analysis:
    lang: str
    utterance: str  # as spoken: what the query and the reply are built on
    text: str  # normalized, for matching the lexicon
    act: str | None
    kind: str  # candidate reference kind
    detail: bool
    rejection: bool
    strength: float = 0.0  # see text.content_strength
    distant_index: int | None = None  # exchange chosen for a distant reference
    proximal: bool = False  # "this" / "here" / この / ここ: may point at the page on screen
    cut_off: bool = False  # stops mid-phrase ("... for the", 〜はえっと): to be heard again
    # a follow-up by its shape alone ("…は", "and for seniors"), without a deictic word
    shaped: bool = False

    @property
    def has_own_content(self) -> bool:
        """Content that can carry a search: a word or a noun, not a verb stem like 作っ."""
        return self.strength >= 1.0

    @property
    def needs_confidence(self) -> bool:
        """Whether `decide` wants the bare utterance's retrieval confidence."""
        return ((self.kind == INDEPENDENT or (self.kind == IMMEDIATE and self.shaped))
                and self.has_own_content and not self.rejection)


class Anchor(NamedTuple):
    """A page the reference points at, the score it may gain, and what the avatar already said
    from it (a page that has said all it holds cannot answer a follow-up); `seen`: the page is
    on screen."""

    page_id: str
    bonus: float
    said: str = ""
    seen: bool = False


@dataclass(frozen=True)
class Resolution:
    lang: str
    act: str | None
    kind: str
    detail: bool
    query: SearchQuery | None  # None: nothing is searched (acts, this page, site listing)
    context_from: tuple[int, ...] = ()  # history positions whose text rides in the query
    avoid_page: str | None = None  # the page a bare rejection ("not that one") turns away from
    pool: int = 0  # > 0: rerank only the bare utterance's top `pool` pages with the query
    band: float = 0.0  # ... and of those, only pages scoring >= band x the best bare score
    # Pages the reference points at (exchange's page, page on screen); they always join the
    # candidates.
    anchors: tuple[Anchor, ...] = ()
    # > 0: page scores are scaled by (context-only score / best context-only score) ** this
    topic_power: float = 0.0


def clean(text: str) -> str:
    # Numbers stay spelled as spoken here: the lexicon's phrases are words ("もう一回言って").
    text = _PUNCT.sub(" ", normalize(text))
    return " ".join(text.split())


def classify_act(text: str, lex: Lexicon) -> str | None:
    """An act only when nothing but act words, fillers and no request/question remains."""
    found = [act for act in _ACT_PRIORITY if lex.find(text, lex.acts[act])]
    if not found:
        return None
    rest = lex.strip(text, tuple(p for a in ACTS for p in lex.acts[a]) + lex.act_fillers)
    if content_terms(rest):
        return None
    if not lex.word_boundaries and len(rest.replace(" ", "")) > 2:
        # Substring matches need a guard: はい inside それはいくら is no "yes".
        return None
    request = (lex.detail + lex.verbs + lex.interrogatives + lex.page + lex.site + lex.distant)
    if lex.find(rest, request):
        return None
    return found[0]


def is_repair(reply: str, lex: Lexicon) -> bool:
    """An apology or a clarification request: not sympathy ("I'm sorry for your loss") nor an
    apology that the answer follows."""
    return bool(lex.find(lex.strip(clean(reply), lex.not_repair), lex.repair_markers))


def is_clarification(reply: str, lex: Lexicon) -> bool:
    """A repair that asks which of some pages the visitor meant (not an apology)."""
    return bool(lex.find(clean(reply), lex.clarification_markers))


def _usable(ex: Exchange) -> bool:
    """An exchange whose words can carry a topic: not an act, something was said about the venue."""
    return ex.act is None and (ex.page_id is not None or bool(content_terms(ex.user)))


def _clue_words(words: list[str], ends: tuple[str, ...], skip: tuple[str, ...] = ()) -> list[str]:
    """The run of words up to the first end word, after any `skip` words it opens with."""
    out: list[str] = []
    for word in words:
        if not out and word in skip:
            continue
        if word in ends:
            break
        out.append(word)
    return out


def _clue_head(text: str, lex: Lexicon) -> str:
    """The words beside the distant marker that name the topic ("about the dinosaur thing from
    before, is there a guided tour" -> "about the dinosaur"; さっきの恐竜の化石の話だけど… ->
    の恐竜の化石): the rest of the utterance is the new question, not the clue. After the
    marker first; before it when nothing stands after."""
    markers = lex.distant_markers(text)
    if lex.word_boundaries:
        # the longest marker where several start at one word: "you mentioned first" is one
        # marker, or "first" would be taken for the topic ("the map one you mentioned first")
        markers = sorted(dict.fromkeys([*markers, *lex.find(text, lex.first)]),
                         key=lambda m: -len(m.split()))
        words = text.split()
        for start in range(len(words)):
            for marker in markers:
                size = len(marker.split())
                if words[start:start + size] == marker.split():
                    following = _clue_words(words[start + size:], lex.clue_ends)
                    if content_terms(" ".join(following)):
                        return " ".join(following)
                    # "the dinosaur thing from before": back past the topic noun
                    return " ".join(reversed(_clue_words(words[:start][::-1], lex.clue_ends,
                                                         lex.topic_nouns)))
        return ""
    at, marker = min((text.find(m), m) for m in markers)
    after = text[at + len(marker):].lstrip("の ")
    cut = min([after.find(e) for e in lex.clue_ends if after.find(e) > 0] + [len(after)])
    if content_terms(after[:cut]):
        return after[:cut]
    before = text[:at].rstrip("の ")
    cut = max([before.rfind(e) + len(e) for e in lex.clue_ends if e in before] + [0])
    return before[cut:]


def distant_question(text: str, lex: Lexicon) -> str | None:
    """What a distant reference asks beside its clue ("about the cemetery thing from before is
    there any money for the funeral" -> "is there any money for the funeral"; さっきの広告の話
    だけど自分のサーバーに広告を出すには -> 自分のサーバーに広告を出すには), or None when nothing
    stands alone: no words of its own, or words that lean on the clue ("X was mentioned
    earlier, how is it related", "you mentioned three periods, what about the first one",
    さっきの話だけどそれって). Japanese asks it after the connective that closes the topic
    (〜けど, 〜ですが); English around the clue."""
    found = _beside_clue(text, lex)
    if found is None:
        return None
    question, leaning = found
    return None if leaning else question


def distant_asked(text: str, lex: Lexicon) -> str | None:
    """What a distant reference asks of the exchange its clue names, leaning on it or not
    ("the evaluation one from earlier does that involve the public at all" -> "does that
    involve the public at all"): the clue found the page; the answer on it is to the rest.
    None without words of its own."""
    found = _beside_clue(text, lex)
    return None if found is None else found[0]


def _beside_clue(text: str, lex: Lexicon) -> tuple[str, bool] | None:
    """The words of a distant reference beside its clue and markers, and whether they lean
    on the clue (`distant_question`); None when there are none with content, or no clue (a
    question already said apart from it)."""
    if not lex.distant_markers(text):
        return None
    head = _clue_head(text, lex)
    if not head.strip():
        return None
    at = text.find(head)
    if lex.word_boundaries:
        rest = f"{text[:at]} {text[at + len(head):]}"
        question = lex.strip(rest, tuple(lex.distant_markers(text)) + lex.topic_nouns)
    else:
        rest = text[at + len(head):]
        cuts = [rest.find(c) + len(c) for c in lex.topic_closers if c in rest]
        if not cuts:
            return None
        question = rest[min(cuts):].strip("、, ")
    if not content_terms(question):
        return None
    # read before the markers go: "the first one" is one, and leans on the clue
    leaning = lex.find(lex.strip(rest, lex.not_deictic), lex.immediate + lex.anaphors)
    return question, bool(leaning)


def distant_clue(text: str, lex: Lexicon) -> str | None:
    """The words a distant reference gives to find its exchange ("the dinosaur thing from
    before" -> "dinosaur"), or None when the utterance makes no distant reference. The words
    beside the marker when they name something, else every content word."""
    if not lex.distant_markers(text):
        return None
    head = content_terms(lex.strip(_clue_head(text, lex), lex.topic_nouns))
    return " ".join(head or content_terms(lex.strip(text, lex.topic_nouns)))


def _pick_distant(clue: str, history: History, want_first: bool, params: ResolverParams,
                  similarity: tuple[float, ...] | None, by_words: bool = False) -> int | None:
    """The earlier exchange the clue names: character 2-grams of the clue found in the
    exchange (`by_words`, for languages written with spaces: its words, matched by their
    2-grams), and, where the brain measured it, the utterance's meaning (`similarity`, 0..1
    per exchange), so a paraphrase ("the drawing one" for a page on sketches) is found too.

    The last exchange is what "that" names: "the X from before" looks past it first, and takes
    it only when the clue's words are found in no earlier exchange ("back to the ads from
    earlier" after a question on ad blockers means the ads). An exchange the avatar did not
    answer ("sorry, say that again") holds nothing to go back to: the visitor said it again."""
    usable = [i for i, ex in enumerate(history) if _usable(ex)]
    answered = [i for i in usable if not history[i].repair] or usable
    if not answered:
        return None
    if want_first and not bigrams(clue):
        return answered[0]
    if len(answered) > 1:
        # by the clue's words alone: a lead in meaning over the last exchange is no evidence
        earlier = _clue_found(clue, history, answered[:-1], params, None, by_words,
                              ties=similarity)
        if earlier is not None:
            return earlier
    found = _clue_found(clue, history, answered, params, similarity, by_words)
    if found is None and want_first and len(answered) > 1:
        # "the expert review you described first": its words name no exchange (the avatar
        # said "heuristic evaluation"), but "first" does
        return answered[0]
    return found


def _clue_found(clue: str, history: History, candidates: list[int], params: ResolverParams,
                similarity: tuple[float, ...] | None, by_words: bool,
                ties: tuple[float, ...] | None = None) -> int | None:
    """The one of `candidates` the clue names: its words found in it enough, or (with
    `similarity`) its lead over the next by a margin; None when neither holds. `ties`: the
    meaning that only breaks a tie of the clue's words ("back to paying people": "people" is
    in the question about recruiting and the one about compensating them)."""
    clue_grams = bigrams(clue)

    def found(text: str) -> float:
        return word_overlap(clue, text) if by_words else overlap(clue_grams, bigrams(text))

    scored: list[tuple[float, float, int]] = []
    for i in candidates:
        ex = history[i]
        user_score = found(ex.user + " " + ex.page_title)
        reply_score = 0.0 if ex.repair else found(ex.reply)
        lexical = max(user_score, 0.5 * user_score + 0.5 * reply_score)
        meaning = similarity[i] if similarity is not None else 0.0
        scored.append((lexical + params.distant_meaning_weight * meaning, lexical, i))
    # Ties go to the closer in meaning (`ties`), then to the earliest exchange: the one that
    # introduced the topic.
    scored.sort(key=lambda t: (-t[0], -(ties[t[2]] if ties is not None else 0.0), t[2]))
    best, lexical, index = scored[0]
    # The lead is over the best exchange of another page: two exchanges on one page (a
    # question and its follow-up) hold the same page's meaning and would tie, and either one
    # means that page.
    page = history[index].page_id
    runner_up = next((t[0] for t in scored[1:]
                      if page is None or history[t[2]].page_id != page), 0.0)
    if lexical >= params.distant_min_overlap:
        return _on_topic_page(scored, history)
    if similarity is not None and best - runner_up >= params.distant_margin:
        return index
    return None


def _on_topic_page(scored: list[tuple[float, float, int]], history: History) -> int:
    """"The X talk" is the page the conversation talked about X on: the clue's words are
    summed over each page's exchanges (an exchange of no page stands alone), and that page's
    best exchange is the one meant (an exchange of another page that names X once in passing
    does not take the topic from two exchanges about it)."""
    def page(i: int) -> str:
        return history[i].page_id or f"#{i}"

    held: dict[str, float] = {}
    for _, lexical, i in scored:
        held[page(i)] = held.get(page(i), 0.0) + lexical
    # max keeps the first of equal sums, and `scored` runs best exchange first
    topic = max(held, key=lambda p: held[p])
    return next(i for _, _, i in scored if page(i) == topic)


def asks_structure(text: str, history: History, lex: Lexicon) -> bool:
    """"How is this site organized", or "how is it organized" right after a question about the
    site: what its overview says, not a page that holds the word."""
    if not lex.find(text, lex.site_structure):
        return False
    if lex.find(text, lex.site_mentions):
        return True
    return bool(history) and bool(lex.find(clean(history[-1].user), lex.site))


def analyze(utterance: str, history: History, lex: Lexicon,
            params: ResolverParams = ResolverParams(),
            similarity: tuple[float, ...] | None = None,
            nouns: frozenset[str] = frozenset()) -> Analysis:
    """`similarity`: for a distant reference, how close in meaning the utterance is to each
    exchange of the history (0..1), when the brain measured it; `nouns`: the site's nouns
    written in hiragana, which count in the utterance's strength (さくらのほうは)."""
    spoken = clean(utterance)
    text = lex.strip(spoken, lex.hesitations)
    strength = content_strength(text, nouns)
    detail = bool(lex.find(text, lex.detail))
    cut_off = lex.cut_off_at_end(spoken)

    def found(kind: str, *, act: str | None = None, rejection: bool = False,
              distant: int | None = None, shaped: bool = False) -> Analysis:
        return Analysis(lex.lang, utterance, text, act, kind, detail and act is None, rejection,
                        strength, distant, lex.points_at_screen(text),
                        cut_off and act is None, shaped)

    act = classify_act(text, lex)
    if act is not None:
        return found(ACT, act=act)
    if lex.find(text, lex.danger):
        return found(ACT, act="emergency")  # whom to tell: no page answers it
    if lex.find(text, lex.insults):
        return found(ACT, act="insult")  # a calm line: no page answers it
    if history and lex.find(text, lex.repeat):
        return Analysis(lex.lang, utterance, text, None, REPEAT, False, False, strength)
    rejection = lex.rejects(text)
    site = lex.find(text, lex.site)
    # "このサイトの画面": the site's screen, not the page on it
    shown = bool(lex.find(text, lex.page)
                 or lex.names_shown_page(lex.strip(text, lex.site_mentions)))
    # "このグラフのページって何が見られるの": what the page shown holds, not the site's
    if site and not shown and not (set(site) <= set(lex.site_mentions) and strength >= 1):
        return found(SITE, rejection=rejection)
    if not shown and asks_structure(text, history, lex):
        return found(SITE, rejection=rejection)
    if shown:
        return found(PAGE, rejection=rejection)
    if rejection:
        return found(INDEPENDENT, rejection=True)
    if history and lex.distant_markers(text):
        want_first = bool(lex.find(text, lex.first))
        chosen = _pick_distant(distant_clue(text, lex) or "", history, want_first, params,
                               similarity, lex.word_boundaries)
        if chosen is not None:
            return found(DISTANT, distant=chosen)
    if history and lex.find(lex.strip(text, lex.not_deictic), lex.immediate):
        return found(IMMEDIATE)
    if history and lex.follow_up_shape(text):
        return found(IMMEDIATE, shaped=True)
    return found(INDEPENDENT)


def _merge(segs: list[QuerySegment]) -> list[QuerySegment]:
    """One segment per text: a reply inherited and repeated must not count twice as much."""
    merged: dict[str, QuerySegment] = {}
    for seg in segs:
        old = merged.get(seg.text)
        merged[seg.text] = seg if old is None else QuerySegment(
            seg.text, max(old.weight, seg.weight), old.role)
    return list(merged.values())


def _exchange_segments(ex: Exchange, weight: float, reply_share: float,
                       params: ResolverParams) -> list[QuerySegment]:
    segs: list[QuerySegment] = []
    user_has_content = bool(content_terms(ex.user))
    # A weak answer (its page scored low) may be the wrong page: its words are not built on,
    # and what it leaned on passes on undiminished.
    use_reply = not ex.repair and not ex.weak and ex.reply.strip() != ""
    user_w = weight * (1.0 - reply_share) if use_reply else weight
    reply_w = weight * reply_share if user_has_content else weight
    if user_has_content:
        segs.append(QuerySegment(ex.user, user_w, "user"))
    if use_reply:
        segs.append(QuerySegment(ex.reply, reply_w, "reply"))
    # What this exchange itself leaned on (an "explain that" two turns back) is passed on, fading.
    inherit = weight * params.inherit_decay
    if not segs or ex.weak:
        inherit = weight  # nothing of its own (or nothing sure): it stands for its context
    for seg in ex.context:
        w = seg.weight * inherit
        if w >= params.min_segment_weight:
            segs.append(QuerySegment(seg.text, w, "inherited"))
    return _merge(segs)


def _previous_answer(history: History) -> int | None:
    """The last exchange whose reply said something (not an apology) and can be said again."""
    for i in range(len(history) - 1, -1, -1):
        if history[i].act is None and not history[i].repair and history[i].reply:
            return i
    return None


def _previous_usable(history: History) -> int | None:
    for i in range(len(history) - 1, -1, -1):
        if _usable(history[i]):
            return i
    return None


def _answered(history: History) -> int | None:
    """The last exchange that answered from a page: an apology or a clarification is no
    answer, and the visitor who repeats a question after one still means the topic before."""
    for i in range(len(history) - 1, -1, -1):
        ex = history[i]
        if ex.act is None and not ex.repair and ex.page_id is not None:
            return i
    return None


def _tapped_to(screen_page: str, history: History, a: Analysis) -> bool:
    """"What's this", これについて教えて after the visitor tapped to another page than the last
    answer's: "this" with nothing of its own is the page they look at now. "That" / それ still
    names the answer (`[reference] distal`)."""
    answered = _answered(history)
    if answered is None or history[answered].page_id == screen_page:
        return False
    lex = load_lexicon(a.lang)
    return not lex.find(lex.strip(a.text, lex.not_deictic), lex.distal)


def _anchors(*found: tuple[str | None, float, str],
             screen: str | None) -> tuple[Anchor, ...]:
    """(page, bonus, said) without empty pages or bonuses; a page named twice keeps the larger
    bonus; the page on screen is marked seen."""
    out: dict[str, Anchor] = {}
    for page, bonus, said in found:
        if page is not None and bonus > 0 and bonus > out.get(page, Anchor(page, 0.0)).bonus:
            out[page] = Anchor(page, bonus, said, page == screen)
    return tuple(out.values())


def decide(analysis: Analysis, history: History, params: ResolverParams,
           bare_confidence: tuple[float, float] | None = None,
           screen_page: str | None = None, screen_home: bool = False) -> Resolution:
    """The search for this turn. `bare_confidence`: (best page score, relative lead over the
    second page) of the bare utterance, when `analysis.needs_confidence` asked for it;
    `screen_page`: the page on the touchscreen, which "this/here" points at, unless it is
    the site's home page (`screen_home`): then "is there something on here about X" asks
    the site, and the home page, which only sums the site up, is no answer to prefer."""
    a = analysis
    base = SearchQuery.of(a.utterance)
    if a.kind == ACT:
        return Resolution(a.lang, a.act, ACT, False, None)
    if a.kind == REPEAT:
        said = _previous_answer(history)
        return Resolution(a.lang, None, REPEAT, False, None,
                          (said,) if said is not None else ())
    if a.kind == PAGE:
        query = base if a.has_own_content else None
        return Resolution(a.lang, None, a.kind, a.detail, query)
    if a.kind == SITE:
        # "what else is on this site" lists the site; a topic beside the site words is searched
        # ("how is this site organized" asks for the list)
        query = (base if a.strength >= params.pool_min_strength
                 and not asks_structure(a.text, history, load_lexicon(a.lang)) else None)
        return Resolution(a.lang, None, a.kind, a.detail, query)
    # "what is this for" / これって何に使うの: "this" and nothing to search for but the page
    # the visitor is looking at.
    if (a.proximal and not a.has_own_content and not a.rejection and screen_page is not None
            and (a.kind == INDEPENDENT or (a.kind == IMMEDIATE
                                           and _tapped_to(screen_page, history, a)))):
        return Resolution(a.lang, None, PAGE, a.detail, None)
    # "this" / "here" with a page on screen: the screen is the first candidate.
    screen_anchor = (screen_page, params.anchor_screen if a.proximal and not screen_home
                     else 0.0, "")
    prev = _previous_usable(history)
    if a.rejection and prev is not None:
        # The visitor rejects the answer, not the question: "no, I mean for children" keeps
        # the previous question and drops the reply; "no, not that one" also turns away from
        # the page just given.
        ex = history[prev]
        segs = _exchange_segments(replace(ex, reply="", repair=True),
                                  params.deictic_weight_own, 0.0, params)
        avoid = None if a.has_own_content else ex.page_id
        return Resolution(a.lang, None, INDEPENDENT, a.detail,
                          SearchQuery(base.segments + tuple(segs)), (prev,),
                          avoid_page=avoid)
    own = a.has_own_content
    share = params.reply_share_own if own else params.reply_share_bare
    pooled = a.strength >= params.pool_min_strength
    if a.kind == DISTANT and a.distant_index is not None:
        ex = history[a.distant_index]
        segs = _exchange_segments(ex, params.distant_weight, share, params)
        head = base.segments
        question = distant_question(a.text, load_lexicon(a.lang))
        if question is not None:
            # "about the X from before, <question>": the exchange brings the topic X; said
            # whole, the clue's words would find X's page a second time.
            head = (QuerySegment(question, 1.0, "utterance"),
                    QuerySegment(a.utterance, params.distant_clue_weight, "utterance"))
        return Resolution(a.lang, None, DISTANT, a.detail,
                          SearchQuery(head + tuple(segs)), (a.distant_index,),
                          pool=params.pool_deictic if pooled else 0,
                          anchors=_anchors((ex.page_id, params.anchor_distant, ex.reply),
                                           screen=screen_page))
    kind = a.kind
    answered = _answered(history)
    answered_page = history[answered].page_id if answered is not None else None
    answered_said = history[answered].reply if answered is not None else ""
    trust = params.weak_anchor if answered is not None and history[answered].weak else 1.0
    if (kind == IMMEDIATE and a.shaped and pooled and bare_confidence is not None
            and bare_confidence[0] >= params.gate_confidence
            and bare_confidence[1] >= params.shaped_lead):
        return Resolution(a.lang, None, INDEPENDENT, a.detail, base,
                          anchors=_anchors(screen_anchor, screen=screen_page))
    if kind == IMMEDIATE:
        weight = params.deictic_weight_own if own else params.deictic_weight_bare
        pool = params.pool_deictic if pooled else 0
        bonus = trust * (params.anchor_immediate_own if pooled else params.anchor_immediate)
    else:
        weak = not pooled  # too little of its own to stand alone
        if bare_confidence is not None:
            best, lead = bare_confidence
            weak = weak or best < params.gate_confidence or lead < params.gate_margin
        if answered is None or not weak:
            # Ellipsis leans on a topic: an exchange that answered from a page. After an
            # apology or a declined question there is none to lean on.
            return Resolution(a.lang, None, INDEPENDENT, a.detail, base,
                              anchors=_anchors(screen_anchor, screen=screen_page))
        kind = ELLIPSIS
        weight = params.ellipsis_weight_own if own else params.ellipsis_weight_bare
        pool = params.pool_ellipsis if pooled else 0
        bonus = trust * params.anchor_ellipsis
    if prev is None:
        return Resolution(a.lang, None, kind, a.detail, base,
                          anchors=_anchors(screen_anchor, screen=screen_page))
    if (history[prev].repair and answered is not None
            and not is_clarification(history[prev].reply, load_lexicon(a.lang))):
        # After "sorry, I didn't catch that" the visitor says it again: the exchange meant is
        # the one before the apology, not the garbled words. (After "do you mean A or B?" the
        # visitor answers the question: that exchange stays.)
        prev = answered
    segs = _exchange_segments(history[prev], weight, share, params)
    band = params.ellipsis_band if kind == ELLIPSIS else 0.0
    head = base.segments if own else (
        QuerySegment(a.utterance, params.bare_utterance_weight, "utterance"),)
    if kind == IMMEDIATE and screen_page not in (None, answered_page) and not screen_home:
        # The visitor tapped to another page since that answer: "that" may be what they are
        # looking at now. It competes as the answer's page does, on its own trust.
        own_bonus = params.anchor_immediate_own if pooled else params.anchor_immediate
        screen_anchor = (screen_page, max(screen_anchor[1], own_bonus), "")
    return Resolution(a.lang, None, kind, a.detail, SearchQuery(head + tuple(segs)),
                      (prev,), pool=pool, band=band,
                      anchors=_anchors((answered_page, bonus, answered_said), screen_anchor,
                                       screen=screen_page),
                      topic_power=params.topic_power if kind == IMMEDIATE else 0.0)
