"""What a reply says from the sentence it starts at: the run under one heading that fits the
spoken length, with the sentence it leans on, without a connective that points at nothing."""

from __future__ import annotations

from kiosk.answer.params import AnswerParams
from kiosk.answer.sentences import terms_of
from kiosk.dialogue.lexicon import Lexicon, load_lexicon
from kiosk.dialogue.resolver import clean
from kiosk.text import opens_with


def _fits(lang: str, chosen: list[str], extra: str, limit: int) -> bool:
    sep = "" if lang == "ja" else " "
    return len(sep.join([*chosen, extra])) <= limit


def run_from(sents: list[str], heads: list[str], start: int, lang: str, params: AnswerParams,
             stops: frozenset[int] = frozenset(), gaps: frozenset[int] = frozenset(),
             across: bool = False) -> tuple[int, ...]:
    """Consecutive sentences from start under the same heading, as many as fit the spoken
    length and params.max_sentences (at least one). A sentence that says again what one
    picked said (a page's description, then its first line in other words) is passed over;
    one of `stops` after the first ends the run, and one of `gaps` (after something unsaid)
    ends it once it says half of what a reply may, or when it leans on what was unsaid ("And
    many more, ..."): a reply of one short sentence goes on past a list it could not say to
    what the section says next ("Create longer passwords ..."). `across`: the run is a
    summary of the page, not an answer from one section: it goes on into the next section
    while it says under half of what a reply may ("Wireframing: A simple visual
    representation of ... To prioritize substance and relationships over decoration ...")."""
    limit = params.max_reply_chars(lang)
    lex = load_lexicon(lang)
    picked: list[int] = []
    for i in range(start, len(sents)):
        chosen = [sents[j] for j in picked]
        full = len(picked) >= params.max_sentences or not _fits(lang, chosen, sents[i], limit)
        half = not _fits(lang, chosen, "", limit // 2)
        if picked and full and heads[i] == heads[start] and i not in stops \
                and _pointing_ahead(chosen, lex) \
                and _fits(lang, chosen, sents[i], int(limit * params.ahead_overrun)):
            # the run points at what follows ("... the requirements listed below.") and would
            # end before it: what it points at is said, a little past the length
            picked.append(i)
            break
        if (across and picked and not full and not half and i not in stops
                and heads[i] != heads[i - 1] and not leans_back(sents[i], lex)):
            if not any(_restates(sents[i], sents[j], lang) for j in picked):
                picked.append(i)
            start = i  # (its section's run goes on from there)
            continue
        if picked and (full or heads[i] != heads[start] or i in stops
                       or (i in gaps and (half or leans_back(sents[i], lex)))):
            break
        if not any(_restates(sents[i], sents[j], lang) for j in picked):
            picked.append(i)
    return tuple(picked)


def _pointing_ahead(chosen: list[str], lex: Lexicon) -> bool:
    """The run's last sentences point at what comes after them (`[answer] ahead`: "listed
    below", 以下の)."""
    return any(lex.find(clean(sent), lex.ahead) for sent in chosen[-2:])


def _restates(sentence: str, said: str, lang: str) -> bool:
    """The two sentences say one thing: three in four words of the shorter are the other's
    ("A PMC is an engraved paper certificate ..." after "A Presidential Memorial Certificate
    (PMC) is an engraved paper certificate ..."); in Japanese, whose terms are character
    2-grams, nine in ten of both ("…を登録するには…を押します" and "…を解除するには…を押します"
    share most of theirs and say two things)."""
    a, b = terms_of(sentence), terms_of(said)
    if not (a and b):
        return False
    if lang == "ja":
        return len(a & b) >= 0.9 * len(a | b)
    return len(a & b) >= 0.75 * min(len(a), len(b))


def leans_back(sentence: str, lex: Lexicon) -> bool:
    """Opens with a pronoun or a connective ("It is open from ...", "But ...", "しかし")."""
    first = sentence.lower()
    if lex.word_boundaries:
        words = first.split()
        for phrase in lex.stands_alone:
            if opens_with(words, (phrase,)):
                # "There are two types of card sorting": it introduces, it leans on nothing
                words = words[len(phrase.split()):]
                break
        # a connective leans back only as the opening word ("And ..."; not "Identifying and
        # gathering people"); a pronoun may come a word or two in ("All of them")
        found = lex.find(" ".join(words[:3]), lex.dangling)
        return any(w not in lex.opening_only or opens_with(words, (w,)) for w in found)
    return any(first.startswith(w) for w in lex.dangling)


def _announces(sentence: str, lex: Lexicon) -> bool:
    """Tells what a page holds ("Find out how to apply ...", 〜を紹介します) rather than
    saying it: a page's description or a link's blurb."""
    low = sentence.lower()
    if lex.word_boundaries:  # English opens with it; Japanese says it at the end
        return opens_with(low.split(), lex.announces)
    return any(p in low for p in lex.announces)


def _with_antecedent(sents: list[str], heads: list[str], start: int, lex: Lexicon,
                     params: AnswerParams) -> int:
    """A sentence that leans on the one before it starts there, when it stands under the same
    heading; and so on back ("... these organizations ..." <- "But we do work with agencies
    ..."), as long as the reply still reaches it."""
    first = start
    while (first > 0 and leans_back(sents[first], lex) and heads[first - 1] == heads[first]
           and (first == start
                or start in run_from(sents, heads, first - 1, lex.lang, params))):
        first -= 1
    if first != start and leans_back(sents[first], lex):
        # the lean cannot be followed back to a sentence that stands: a start that leans only
        # by a connective ("And if you're eligible ...") is said without it instead
        bare = _without_connective(sents[start], lex)
        if bare != sents[start] and not leans_back(bare, lex):
            return start
    return first


_LEAD_PUNCT = " ,、，"


def _without_connective(sentence: str, lex: Lexicon) -> str:
    """"But we do work with ..." -> "We do work with ...": said without the sentence it
    answered, a leading connective points at nothing; one that can be left out is."""
    low = sentence.lower()
    for word in sorted(lex.droppable, key=len, reverse=True):
        if not low.startswith(word):
            continue
        rest = sentence[len(word):]
        if lex.word_boundaries and rest[:1] not in ("", " ", ","):
            continue  # "Butterflies ...", "Sometimes ..."
        rest = rest.lstrip(_LEAD_PUNCT)
        if len(rest) < len(sentence) // 2:
            return sentence
        return rest[:1].upper() + rest[1:] if lex.word_boundaries else rest
    return sentence


def opens_section(heads: list[str], i: int) -> bool:
    """The sentence at i is the first under its heading."""
    return i == 0 or heads[i - 1] != heads[i]


def orphans(sents: list[str], heads: list[str], lex: Lexicon) -> list[bool]:
    """Sentences that yield to the next candidate in an answer: those that lean on one they
    cannot take along (the first under their heading), those that announce what the page
    holds or send the reader elsewhere for it instead of saying it, and those that end their
    section pointing at what no reply says (`points_at_unsaid`, without `gaps`: a gap also
    follows a lead-in line, "You:", whose items are said)."""
    return [(leans_back(sent, lex) and opens_section(heads, i))
            or _announces(sent, lex) or _sends_on(sent, lex)
            or points_at_unsaid(sents, heads, i, lex) for i, sent in enumerate(sents)]


def points_at_unsaid(sents: list[str], heads: list[str], i: int, lex: Lexicon,
                     gaps: frozenset[int] = frozenset()) -> bool:
    """The sentence points at what follows it (`[answer] ahead`: "note the following about
    every piece of content", 以下は各チャートの説明です) and nothing said follows: its section
    ends there (a table, code or links were all it pointed at), or (`gaps`) what comes next
    follows something unsaid. Heard, it points at what the listener cannot see."""
    if not lex.find(clean(sents[i]), lex.ahead):
        return False
    after = i + 1
    return after >= len(sents) or heads[after] != heads[i] or after in gaps


def _sends_on(sentence: str, lex: Lexicon) -> bool:
    """Opens by sending the reader elsewhere ("For more information, call ..."): English says
    it first; Japanese sends on at the end (詳しくは…をご覧ください), which `announces` holds."""
    return lex.word_boundaries and opens_with(clean(sentence).split(), lex.points)


def speak(sents: list[str], picked: tuple[int, ...], lang: str) -> str:
    sep = "" if lang == "ja" else " "
    return sep.join(sents[i] for i in picked)


def announcing(sents: list[str], lex: Lexicon) -> frozenset[int]:
    return frozenset(i for i, sent in enumerate(sents) if _announces(sent, lex))


def say_from(sents: list[str], heads: list[str], start: int, lex: Lexicon,
             params: AnswerParams, gaps: frozenset[int] = frozenset(), across: bool = False,
             leads: dict[int, tuple[int, ...]] | None = None
             ) -> tuple[tuple[int, ...], str]:
    """The run a reply says from its best sentence: with the sentence it leans on, and
    without a leading connective whose sentence is not said; it stops before a sentence
    after something unsaid (`gaps`). One of a list's items is said after what leads into its
    list (`leads`: `page_leads`). Positions and text."""
    start = _with_antecedent(sents, heads, start, lex, params)
    lead = (leads or {}).get(start, ())
    # what announces a page's content ("Find out if you can get this benefit.", 詳しくは…を
    # ご覧ください) ends the answer before it: it says nothing, and what comes after it is
    # another paragraph (reply F1 +0.001 / +0.001 on the real-site sets; passed over instead,
    # the run went on into the next paragraph: -0.002 / 0)
    picked = run_from(sents, heads, start, lex.lang, params, announcing(sents, lex), gaps,
                      across)
    while len(picked) > 1 and points_at_unsaid(sents, heads, picked[-1], lex, gaps):
        picked = picked[:-1]  # (it would end the reply pointing at nothing said)
    said = list(sents)
    said[start] = _without_connective(sents[start], lex)
    if lead:
        # (what leads in points at the items: said with them a little past the length, as a
        # run that points ahead is)
        limit = int(params.max_reply_chars(lex.lang) * params.ahead_overrun)
        kept = list(picked)
        while kept and not _fits(lex.lang, [sents[i] for i in (*lead, *kept)], "", limit):
            kept.pop()
        if kept:
            picked = (*lead, *kept)
    return picked, speak(said, picked, lex.lang)
