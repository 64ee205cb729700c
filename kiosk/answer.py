"""Extractive replies: a few sentences of the best page, short enough to speak. No LLM.

The reply is in the visitor's language; with the detail flag it goes on where the last reply
from the same page stopped instead of repeating it; when retrieval is unsure it asks which of
the two best pages the visitor means, never a bare apology.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from kiosk.dialogue.history import History
from kiosk.dialogue.lexicon import Lexicon, load_lexicon
from kiosk.dialogue.query import QuerySegment, SearchQuery
from kiosk.dialogue.resolver import ACT, DISTANT, PAGE, REPEAT, SITE, Resolution, clean
from kiosk.retrieval.embedder import Embedder
from kiosk.retrieval.index import Evidence, PageHit, PageInfo, SiteIndex, is_question
from kiosk.text import SENTENCE_END_EN as _END_EN
from kiosk.text import SENTENCE_END_JA as _END_JA
from kiosk.text import content_terms, lower_first, sentences, terms

MAX_REPLY_CHARS = {"ja": 140, "en": 260}
# A sentence that leans on one it cannot take along yields to a candidate this close to it
# (in units of the best sentence's word match): reply F1 +0.005 on vagov-en, the same on
# misskey-ja.
_ORPHAN_PENALTY = 0.5
# A sentence of the shape asked for (a clock time for "what time") gains this much, in units of
# the best sentence's word match: the demo's "what time does the robot show start" found the
# lab's introduction ("shows how robots see") before. More than the word match and the search's
# chunk (chunk_prior) together: "where do I mail it" wants the address, not the sentence with
# "mail" in the chunk the search found.
_SHAPE_WEIGHT = 1.3
# A heading's words, for the sentence that opens its section and for those after it. The
# opening answers the heading ("What if I need care while traveling?" -> "Let us know in
# advance so we can plan your care ..."); the sentences after it go on from it and win only by
# their own words ("For more information, contact the Traveling Veteran Coordinator"). Equal
# halves for all of them before: reply F1 0.372 / 0.372 -> 0.374 / 0.384 on vagov-en /
# misskey-ja (0.5 / 0.25: 0.372 / 0.377; 1.0 / 0.5: 0.373 / 0.381; 1.5 / 0.25: 0.376 / 0.380).
_HEAD_OPENS = 1.0
_HEAD_UNDER = 0.25
# A sentence's place in the page breaks ties (earlier ones introduce): at most this much, for
# the last. At 0.01 a sentence, an answer 70 sentences into a long page lost to its opening.
_PLACE_WEIGHT = 0.1


@dataclass(frozen=True)
class AnswerParams:
    # Top page score under this: ask which of two pages instead of answering. Off: it turned
    # 13-15% of answerable real-site questions into a question back (see README).
    clarify_below: float = 0.0
    # Top page score under this: answer, but remember the answer as weak, so that the next
    # turn does not build on it as on a sure one (a wrong first answer cascades otherwise).
    weak_below: float = 0.30
    # Bonus, in units of the best sentence's match, for the sentences of the chunk that the
    # search found best: the chunk was ranked with the whole query and by meaning, a sentence
    # only by its words. Reply F1 +0.01 / +0.02 on the real-site sets (README).
    chunk_prior: float = 0.3
    max_sentences: int = 3
    listing_titles: int = 5
    # A question asking for an amount, a time or a length whose best page holds none (nor a
    # word of such an answer) is answered from the first page holding one among this many
    # best (`Brain._shaped`): vagov-en top-1 0.841 -> 0.864, CAsT 2022 0.320 -> 0.324, the
    # other sets unchanged; among ten, one more turn of CAsT 2022 lost and one MRR of vagov-en.
    shape_reach: int = 5
    # A page's question headings ("What if I need care while traveling?") are asked of the
    # embedder as the visitor's question is: the one closest in meaning, by this lead in
    # cosine over the next, lends its first sentence this bonus (in units of the best word
    # match). A question heading says in the site's words what the visitor says in theirs
    # ("if my doctor quits" -> "What happens if my primary care provider leaves VA?"). Reply
    # F1 vagov-en 0.379 -> 0.397, misskey-ja (few question headings) 0.386 -> 0.385; with
    # distant references too (`compose`), 0.388. Headings embedded a page at a time instead
    # of one by one (a quantized model's vectors move a little with their batch): 0.399 with
    # distant references, and there bonus 0.5 / 2.0 gave 0.394 / 0.394, lead 0 / 0.02
    # 0.391 / 0.392 (README). A closer lead lends a share of the bonus (lead 0.008: 0.8 of
    # it; "what do i need to apply" -> "What do I need to apply for a Veteran ID Card?",
    # 0.915 against "What if I have questions or need help with my application?", 0.907):
    # 0.399 -> 0.403, misskey-ja 0.3963 -> 0.3969, the other four sets unchanged (the
    # share's full lead at 0.005 / 0.0075 / 0.015 / 0.02: 0.399 / 0.403 / 0.400 / 0.398).
    question_heading: float = 1.0
    question_heading_lead: float = 0.01
    # A heading that is all the visitor's words (a bare name asked after a reply: "フォロワー
    # は" on the page of a note's visibility, under "フォロワー") lends its first sentence this
    # bonus. Headings that hold the words among others (アプリ, 広告: the page's own topic)
    # lend nothing: lent to them too, reply F1 misskey-ja 0.391 -> 0.382, vagov-en 0.399 ->
    # 0.399; as it is, 0.391 -> 0.396 (one turn), the other five sets unchanged.
    named_heading: float = 1.0
    # A question no page answers (weather, a joke, a restaurant in town) is declined when all
    # three say so: its best chunk stands little above the rest (in standard deviations of
    # the site's chunks), it matches few of its words, and it is far in meaning. Set on the
    # demo's off-topic questions against the page questions of three sites (see README).
    scope_peak_below: float = 3.4
    scope_lexical_below: float = 0.08
    scope_dense_below: float = 0.35
    # A question that stands alone (no reference, no "this"), whose best chunk does not stand
    # out (peak as above) and whose best page scores under this, is declined. Page scores are
    # half rescaled cosine, half BM25 share of the best possible: the scale does not depend on
    # the site. Set on the demo's off-topic questions against the page turns of all six sets
    # (0.28 starts refusing real questions; see README).
    scope_page_below: float = 0.25
    # ... and under this it is declined however its best chunk stands out: a peak speaks for
    # a long story around a real question (CAsT's openings score 0.19-0.27), not for a
    # question almost none of whose words or meaning the site holds (page questions that
    # stand alone score 0.15 and up on all six sets; "who won the football game" 0.07).
    scope_page_floor: float = 0.10
    # ... and under scope_page_below it is declined however its best chunk stands out when
    # that chunk is also this far in meaning (rescaled cosine): on a site of one subject a
    # shared word makes a chunk stand out ("what's the weather going to be like tomorrow" ->
    # the burial flag's weather damage, peak 3.7); page questions that stand alone and score
    # under 0.25 are 0.30 and up on all six sets (CAsT's long openings), off-topic questions
    # asked of the real sites 0.08-0.26.
    scope_dense_floor: float = 0.28


@dataclass(frozen=True)
class Reply:
    text: str
    page_id: str | None = None
    page_title: str = ""
    spoken: tuple[int, ...] = ()
    repair: bool = False
    weak: bool = False  # answered from a page that scored low: not to be built on


def _join_titles(titles: list[str], lex: Lexicon) -> str:
    quoted = [f"「{t}」" if lex.lang == "ja" else f'"{t}"' for t in titles]
    if len(quoted) <= 1:
        return "".join(quoted)
    join, last = lex.replies["list_join"], lex.replies["list_last"]
    return join.join(quoted[:-1]) + last + quoted[-1]


# A link is not said; an e-mail address or a handle (@syuilo@misskey.io) is: it is how to reach
# someone, as a telephone number is (reply F1 +0.004 / +0.008 on the real-site sets).
# Nor is a path ("/api/v1/scheduled_statuses": slashes and underscores read aloud); a
# pronunciation between slashes is ("Vue（発音は /vjuː/、…）").
_URL = re.compile(r"\w+://|www\.|(?<!\S)/[\w.-]+/[\w.-]+")
_CODE_NAME = re.compile(r"\$[A-Za-z_]")  # $ref, $HOME: code; $127 is a price
# A run of letters and digits no voice can say: a hash, a key, a wallet's address (0xF112…).
_TOKEN = re.compile(r"(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{20,}")
# A comma right before the sentence's end: an object literal's line ("typeは'object',。"), no prose.
_CODE_COMMA = re.compile(r"[,，]\s*[。.]$")
# Japanese script: a Japanese page's sentence without any is a link's or a label's text ("App
# Store。" from "[App Store](…)。"), unless it is a labelled field ("Python：Misskey.py。").
_JA_SCRIPT = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uff66-\uff9f]")
# A sentence ends with its mark, and perhaps a closing bracket or quote after it: a line that
# ends with a bracket alone is a list item ("Vascular disease (diseases that affect ...)") or a
# cited title (「…を探しているなら…『Misskey』へようこそ」), not a sentence.
# "Note: ...", "Tip: ...", "注意：...": a typographic label before a sentence, not words to say.
_LABEL = re.compile(r"^(?:note|tip|important|warning|caution|注意|ヒント|補足|メモ)\s*[:：]\s*",
                    re.I)


# "Time required: 1-2 weeks", "料金：500円": a field a page renders with its label.
_FIELD_EN = re.compile(r"^([A-Za-z][A-Za-z ]{0,30}?)\s*:\s+(\S.*)$")
_FIELD_JA = re.compile(r"^([^\s:：、。]{1,12})[:：]\s*(\S.*)$")
_ASKING_LABELS = frozenset({"what", "who", "when", "where", "why", "how", "which"})


def _field_as_sentence(text: str, lang: str) -> str:
    """A labelled field said as a sentence: "Time required: 1-2 weeks" -> "Time required is
    1-2 weeks."; a label that is a question word ("What: ...") is dropped."""
    match = (_FIELD_JA if lang == "ja" else _FIELD_EN).match(text)
    if match is None or len(match.group(1).split()) > 4:
        return text
    label, value = match.group(1).strip(), match.group(2).strip()
    if (_END_JA if lang == "ja" else _END_EN).search(value) and label.lower() not in \
            _ASKING_LABELS:
        return text  # a sentence with a lead-in, not a field
    if load_lexicon(lang).sounds_unfinished(label):
        # "You may qualify for: Dental services ..." is a sentence cut by a list, not a label.
        joined = f"{label}{value}" if lang == "ja" else f"{label} {lower_first(value)}"
        return joined if (_END_JA if lang == "ja" else _END_EN).search(joined) else joined + (
            "。" if lang == "ja" else ".")
    if lang == "ja":
        said = f"{label}{value}" if label.endswith("は") else f"{label}は{value}"
        return said if _END_JA.search(said) else said + "。"
    if label.lower() in _ASKING_LABELS:
        said = value[:1].upper() + value[1:]
    else:
        said = f"{label} is {value}"
    return said if _END_EN.search(said) else said + "."


# A cited work: its quoted title, then only names, a year or a source ("\"User-centered design
# at 18F\" Chris Cairns, Michelle Hertzfeld, Nick Bristow."): a reference list's line.
_CITATION = re.compile(r"^[\"“][^\"“”]{3,}[\"”]\s*"
                       r"(?:(?:[A-Z][\w.'’-]*|\d{4}|and|et al\.?|[,&();:—–-])\s*)*\.?$")


# A menu path in prose ("設定 > ミュートとブロックから", "Preferences > Appearance"): where to
# tap, said as the path it is; any other ">" is code.
_MENU_STEP = re.compile(r"(?<=[^\W\d_]) [>›] (?=[^\W\d_])")


def speakable(sentence: str, lang: str) -> str | None:
    """The sentence as it can be spoken, or None when it is not prose: an address, a link or a
    label (no sentence end), a heading or list item, an introduction to a list (ends with a
    colon), or code. A labelled field is said as a sentence."""
    text = _LABEL.sub("", sentence.strip())
    if not text or _URL.search(text) or text.endswith((":", "：")) or _CITATION.match(text):
        return None
    text = _field_as_sentence(text, lang)
    if text.endswith((":", "：")):
        return None
    text = _MENU_STEP.sub("の" if lang == "ja" else ", ", text)
    if (any(ch in text for ch in "{}<>=|`") or _CODE_NAME.search(text)
            or _CODE_COMMA.search(text) or _TOKEN.search(text)):
        return None
    if lang == "ja":
        if not _END_JA.search(text) or len(text) < 8:
            return None
        if not _JA_SCRIPT.search(text) and not _FIELD_JA.match(text):
            return None
    elif not _END_EN.search(text) or len(text.split()) < 4:
        return None
    if text.rstrip("\"”’)）」』").endswith(("?", "？")):
        return None  # a page's question is a heading or a list of them, never the answer
    return text


def page_sentences(index: SiteIndex, page_id: str) -> tuple[list[str], list[str]]:
    """The page's speakable sentences in order, and the heading each stands under."""
    out, heads, _ = _page_sentences(index, page_id)
    return out, heads


LIST_ITEMS = (2, 8)  # a list joined into its lead-in's sentence: this many items
LIST_ITEM_WORDS = 25  # ... each at most this long (English words; Japanese: 2.5 x characters)


def _item(line: str, lang: str) -> bool:
    """A list item that is no sentence of its own: short, no sentence end (a closing quote
    or bracket is no end: "The playing of “Taps”")."""
    bare = line.rstrip("”’\"」』)）")
    if (not bare or (_END_JA if lang == "ja" else _END_EN).search(bare) or _URL.search(line)
            or bare.endswith((":", "："))):  # the lead-in of another list
        return False
    size = len(line) / 2.5 if lang == "ja" else len(line.split())
    return size <= LIST_ITEM_WORDS


_EXAMPLES = ("like", "including")  # a list of examples after these may be said in part
# A list item that pairs a label with its value: "Monday: Tutorials", 月曜日：ワークショップ.
_LABELLED = re.compile(r"^[^:：]{1,60}[:：]\s*\S")
_CONJUNCTION_END = re.compile(r"[,;]?\s+(and|or)$", re.I)


def _join_items(items: list[str], lang: str, lead: str, more: str = "") -> str:
    """The items said as the end of their lead-in's sentence; `more`: the list goes on past
    them, said with these words (no "and" before the last item then)."""
    items = [i.strip().rstrip("、,;；") for i in items]
    if lang == "ja":
        return "、".join(items) + more
    if (not more and lead.split()[-1].lower() in ("to", "at")
            and any(ch.isdigit() for ch in "".join(items))):
        return ", ".join(items)  # the lines of an address ("Send the form to:"), no "and"
    # an item may carry the list's own conjunction ("..., and" / "..., or")
    said = [_CONJUNCTION_END.search(i) for i in items]
    joiner = next((m.group(1).lower() for m in said if m is not None), "and")
    # (a label keeps its capital: "Monday: Tutorials" is a name, not the sentence's word)
    items = [_CONJUNCTION_END.sub("", i) for i in items]
    items = [i if _LABELLED.match(i) else lower_first(i) for i in items]
    if more:
        return ", ".join(items) + more
    if len(items) == 1:
        return items[0]
    if len(items) == 2:
        return f"{items[0]} {joiner} {items[1]}"
    return ", ".join(items[:-1]) + f", {joiner} {items[-1]}"


def lists_as_sentences(lines: list[str], lang: str) -> list[str]:
    """A sentence a page cuts into a list ("People attending a military funeral may:" and
    two items, "Military funeral honors include:" and four) is said as the one sentence it is:
    the lead-in, the items joined, an end. Only a lead-in that sounds unfinished ("may",
    "include", "を") leads such a sentence: "Related pages:" and a list of links stays out,
    as list introductions and bare items are not said."""
    return [text for text, _ in _list_sentences(lines, lang)]


def _list_sentences(lines: list[str], lang: str) -> list[tuple[str, int]]:
    """`lists_as_sentences`, each line out with the position of the first line it says."""
    lex = load_lexicon(lang)
    out: list[tuple[str, int]] = []
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        lead = line[:-1].rstrip() if line.endswith((":", "：")) else ""
        # a finished sentence that points at the list after it ("Try the following
        # settings.") leads into it as a colon does: alone it says nothing
        ahead = not lead and _points_ahead(line, lang, lex)
        if ahead:
            k = i + 1
            while k < len(lines) and _item(lines[k].strip(), lang):
                k += 1
            # (labelled items are each said as a sentence of their own: "1,000円以上は…")
            ahead = not all(_LABELLED.match(x.strip()) for x in lines[i + 1:k])
            lead = line[:-1].rstrip() if ahead else ""
        # a colon inside is a table's header row ("If you're ... and: Your MAPR amount is:")
        if lead and ":" not in lead and "：" not in lead:
            j = i + 1
            while j < len(lines) and _item(lines[j].strip(), lang):
                j += 1
            # the lead-in stops unfinished ("... may:"), or the items carry the sentence's own
            # "and"/"or" ("Both of these must be true:" / "You're the parent, and" / ...):
            # the latter keeps its colon, a pause before the items
            unfinished = _leads_in(lead, lang, lex)
            # examples ("..., like:") may be said in part; a list of conditions may not
            some = lang != "ja" and lead.lower().split()[-1] in _EXAMPLES
            unfinished = unfinished or some
            # ... or every item pairs a label with its value, as a timetable does ("Monday &
            # Tuesday (14 & 15 July): Tutorials & Workshops"): the answer is in the items
            joined = unfinished or ahead or any(
                _CONJUNCTION_END.search(x.strip()) for x in lines[i + 1:j - 1]) or (
                j - i - 1 >= LIST_ITEMS[0]
                and all(_LABELLED.match(x.strip()) for x in lines[i + 1:j]))
            # ... or its one item is how to reach someone ("please contact the sponsoring
            # team:" / "sponsoring@europython.eu"): the answer is the address
            reach = j == i + 2 and bool(_SHAPES["<phone>"].search(lines[i + 1]))
            # a finished sentence pointing at a list too long to say whole says the list's
            # first items and that it goes on (`[answer] more_items`): alone it says nothing
            partial = ahead and bool(lex.more_items)
            count = j - i - 1
            if ((joined and count >= LIST_ITEMS[0] and (partial or count <= LIST_ITEMS[1]))
                    or reach):
                colon = "" if unfinished else ("：" if lang == "ja" else ":")
                # items said at the least
                fewest = LIST_ITEMS[0] if some or partial else j - i - 1
                said = ""
                for end in range(j, i + fewest, -1):
                    items = _join_items([x.strip() for x in lines[i + 1:end]], lang, lead,
                                        lex.more_items if end < j and partial else "")
                    candidate = (f"{lead}{colon}{items}" if lang == "ja"
                                 else f"{lead}{colon} {items}") + ("。" if lang == "ja" else ".")
                    if len(candidate) <= MAX_REPLY_CHARS.get(lang, 260):  # one reply at most
                        # (items no voice can say, a wallet's address, leave the lines as
                        # they are)
                        said = candidate if speakable(candidate, lang) else ""
                        break
                if said:
                    out.append((said, i))
                    i = j
                    continue
            each = _items_with_lead(lead, lines[i + 1:j], lang, lex)
            if each is not None:
                # too many items to say as one sentence: each is a sentence of its own with
                # the words that lead into it ("You:" ... "Served at Camp Lejeune ..." ->
                # "You served at Camp Lejeune ..."), so a question about one can hear it
                before, each_item = each
                out.extend((text, i) for text in before)
                out.extend((text, i + 1 + k) for k, text in enumerate(each_item))
                i = j
                continue
        out.append((line, i))
        i += 1
    return out


def _points_ahead(line: str, lang: str, lex: Lexicon) -> bool:
    """The line's last sentence is finished and points at what follows it (`[answer] ahead`)."""
    if not line.endswith((".", "。")):
        return False
    last = sentences(line)
    return bool(last) and bool(lex.find(clean(last[-1]), lex.ahead))


def _leads_in(lead: str, lang: str, lex: Lexicon) -> bool:
    """A list's lead-in that its items finish: it stops unfinished ("... may"), or is one
    English word ("You:" and what you must be)."""
    return lex.sounds_unfinished(lead) or (lang != "ja" and len(lead.split()) < 2)


def _items_with_lead(lead: str, items: list[str], lang: str,
                     lex: Lexicon) -> tuple[list[str], list[str]] | None:
    """A long list's items, each said with the unfinished end of its lead-in, and the lead's
    own finished sentences before them; None when the lead-in does not lead into its items."""
    parts = sentences(lead)
    if not parts or len(items) < LIST_ITEMS[0] or not _leads_in(parts[-1], lang, lex):
        return None
    tail = parts[-1]
    end = "。" if lang == "ja" else "."
    said: list[str] = []
    for item in items:
        item = _CONJUNCTION_END.sub("", item.strip().rstrip("、,;；.。"))
        said.append(f"{tail}{item}{end}" if lang == "ja" else f"{tail} {lower_first(item)}{end}")
    return parts[:-1], said


def _page_sentences(index: SiteIndex,
                    page_id: str) -> tuple[list[str], list[str], list[int]]:
    sents, heads, owner, _ = _page_reading(index, page_id)
    return sents, heads, owner


def _page_reading(index: SiteIndex, page_id: str
                  ) -> tuple[list[str], list[str], list[int], frozenset[int]]:
    """The page's speakable sentences, their headings and chunks (`_page_sentences`), and
    its gaps: the sentences that come after something not said under their heading (a list,
    a lead-in, a label). A reply's run stops before a gap, since what it goes on from was
    not said ("And many more, including personal websites!" after the definition, the list
    of servers between them unsaid)."""
    info = index.page(page_id)
    if info is None:
        return [], [], [], frozenset()
    chunks = tuple((c.text, c.heading, c.unsaid, c.boxed) for c in index.page_chunks(page_id))
    out, heads, at, gaps = _chunk_sentences(info.lang, chunks)
    # A field headed "What" says what the page's subject is (a method card's "What: A
    # categorization exercise in which ..."): it stands under the page's title.
    titled = [info.title if head.strip().lower() == "what" else head for head in heads]
    return list(out), titled, [info.first_chunk + pos for pos in at], gaps


@lru_cache(maxsize=256)
def _chunk_sentences(lang: str, chunks: tuple[tuple[str, str, tuple[str, ...],
                                                 tuple[tuple[str, str], ...]], ...]
                     ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[int, ...],
                                frozenset[int]]:
    """A page's speakable sentences, their headings and chunk positions, and those that
    follow something unsaid under their heading (`_page_reading`), remembered: the page of a
    conversation is read again at every turn that answers from it."""
    out: list[str] = []
    heads: list[str] = []
    at: list[int] = []
    gaps: set[int] = set()
    # The chunks of one heading are read as one text: a list cut by a chunk's length keeps
    # its lead-in ("At least one of these must be true. You:" and its twelve items).
    pos = 0
    while pos < len(chunks):
        stop = pos + 1
        while stop < len(chunks) and chunks[stop][1] == chunks[pos][1]:
            stop += 1
        lines: list[str] = []
        line_chunk: list[int] = []
        for k in range(pos, stop):
            for line in chunks[k][0].splitlines():
                if line not in chunks[k][2]:  # a link is where to click, not what to say
                    lines.append(line)
                    line_chunk.append(k)
        # (a line that is no sentence and is not said: an item, a lead-in, a label; not a
        # question or a short sentence a paragraph holds, "What is it?")
        group, unsaid = len(out), False
        ends = _END_JA if lang == "ja" else _END_EN
        # a sentence in a box (`::: warning`) stands under what the box says on top: "the
        # warning here" is answered from it
        boxed = {said: title for k in range(pos, stop) for said, title in chunks[k][3]}
        for said, first in _list_sentences(lines, lang):
            before = len(out)
            for sentence in sentences(said):
                spoken = speakable(sentence, lang)
                if spoken is None:
                    continue
                if unsaid and len(out) > group:
                    gaps.add(len(out))
                unsaid = False
                out.append(spoken)
                heads.append(boxed.get(sentence, chunks[pos][1]))
                at.append(line_chunk[first])
            unsaid = unsaid or (len(out) == before and bool(said.strip())
                                and not ends.search(said.strip()))
        pos = stop
    if not out:
        # Nothing but names under headings (a list of libraries by language): each heading
        # with its names is said as one sentence ("Python: Misskey.py, MiPA, MiPAC."), rather
        # than "that's all the page says" about a page that says something.
        lex = load_lexicon(lang)
        for pos, (text, heading, *_) in enumerate(chunks):
            names = [line.strip() for line in text.splitlines() if line.strip()]
            if heading.strip() and 1 <= len(names) <= LIST_ITEMS[1]:
                colon, end = ("：", "。") if lang == "ja" else (": ", ".")
                out.append(f"{heading.strip()}{colon}{lex.replies['list_join'].join(names)}{end}")
                heads.append(heading)
                at.append(pos)
    return tuple(out), tuple(heads), tuple(at), frozenset(gaps)


def _fits(lang: str, chosen: list[str], extra: str) -> bool:
    sep = "" if lang == "ja" else " "
    return len(sep.join([*chosen, extra])) <= MAX_REPLY_CHARS.get(lang, 260)


def _run_from(sents: list[str], heads: list[str], start: int, lang: str,
              limit: int, stops: frozenset[int] = frozenset()) -> tuple[int, ...]:
    """Consecutive sentences from start under the same heading, as many as fit the spoken
    length (at least one). A sentence that says again what one picked said (a page's
    description, then its first line in other words) is passed over; one of `stops` after
    the first ends the run."""
    picked: list[int] = []
    for i in range(start, len(sents)):
        full = len(picked) >= limit or not _fits(lang, [sents[j] for j in picked], sents[i])
        if picked and (full or heads[i] != heads[start] or i in stops):
            break
        if not any(_restates(sents[i], sents[j], lang) for j in picked):
            picked.append(i)
    return tuple(picked)


@lru_cache(maxsize=4096)
def _terms_of(text: str) -> frozenset[str]:
    """A sentence's terms, remembered: a page's sentences are weighed again at every turn
    that answers from it, and the replies of the conversation at every turn after them."""
    return frozenset(terms(text))


def _restates(sentence: str, said: str, lang: str) -> bool:
    """The two sentences say one thing: three in four words of the shorter are the other's
    ("A PMC is an engraved paper certificate ..." after "A Presidential Memorial Certificate
    (PMC) is an engraved paper certificate ..."); in Japanese, whose terms are character
    2-grams, nine in ten of both ("…を登録するには…を押します" and "…を解除するには…を押します"
    share most of theirs and say two things)."""
    a, b = _terms_of(sentence), _terms_of(said)
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
            if _opens_with(words, (phrase,)):
                # "There are two types of card sorting": it introduces, it leans on nothing
                words = words[len(phrase.split()):]
                break
        # a connective leans back only as the opening word ("And ..."; not "Identifying and
        # gathering people"); a pronoun may come a word or two in ("All of them")
        found = lex.find(" ".join(words[:3]), lex.dangling)
        return any(w not in lex.opening_only or _opens_with(words, (w,)) for w in found)
    return any(first.startswith(w) for w in lex.dangling)


def _announces(sentence: str, lex: Lexicon) -> bool:
    """Tells what a page holds ("Find out how to apply ...", 〜を紹介します) rather than
    saying it: a page's description or a link's blurb."""
    low = sentence.lower()
    if lex.word_boundaries:  # English opens with it; Japanese says it at the end
        return _opens_with(low.split(), lex.announces)
    return any(p in low for p in lex.announces)


def _opens_with(words: list[str], phrases: tuple[str, ...]) -> bool:
    return any(words[:len(p.split())] == p.split() for p in phrases)


def _with_antecedent(sents: list[str], heads: list[str], start: int, lex: Lexicon,
                     limit: int) -> int:
    """A sentence that leans on the one before it starts there, when it stands under the same
    heading; and so on back ("... these organizations ..." <- "But we do work with agencies
    ..."), as long as the reply still reaches it."""
    first = start
    while (first > 0 and leans_back(sents[first], lex) and heads[first - 1] == heads[first]
           and (first == start or start in _run_from(sents, heads, first - 1, lex.lang, limit))):
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


def _opens_section(heads: list[str], i: int) -> bool:
    """The sentence at i is the first under its heading."""
    return i == 0 or heads[i - 1] != heads[i]


def _orphans(sents: list[str], heads: list[str], lex: Lexicon) -> list[bool]:
    """Sentences that yield to the next candidate in an answer: those that lean on one they
    cannot take along (the first under their heading), and those that announce what the page
    holds or send the reader elsewhere for it instead of saying it."""
    return [(leans_back(sent, lex) and _opens_section(heads, i))
            or _announces(sent, lex) or _sends_on(sent, lex) for i, sent in enumerate(sents)]


def _sends_on(sentence: str, lex: Lexicon) -> bool:
    """Opens by sending the reader elsewhere ("For more information, call ..."): English says
    it first; Japanese sends on at the end (詳しくは…をご覧ください), which `announces` holds."""
    return lex.word_boundaries and _opens_with(clean(sentence).split(), lex.points)


# Shapes of answers a lexicon cue can name in angle brackets: "what time" = ["<time>", ...].
_SHAPES = {
    "<time>": re.compile(r"\b\d{1,2}:\d{2}\b|\b\d{1,2}\s?(?:a\.?m\.?|p\.?m\.?)(?!\w)|\d{1,2}時",
                         re.I),
    "<money>": re.compile(r"[$€£¥]\s?\d|\d\s?(?:円|yen\b|dollars?\b)", re.I),
    # a telephone number (grouped digits: 1-800-827-1000, (03) 1234-5678) or an e-mail address
    "<phone>": re.compile(r"(?<![\w-])(?:\+?\d{1,3}[-. ])?(?:\(\d{2,4}\)\s?|\d{2,4}[-. ])"
                          r"\d{3,4}[-. ]\d{3,4}(?![\d-])|[\w.+-]+@[\w-]+\.\w+"),
    # a postal address: a street number and a street, a PO box, a postcode
    "<address>": re.compile(
        r"\b\d{1,6}\s+(?:[A-Z][a-z]+\s){1,3}(?:Road|Rd|Street|St|Avenue|Ave|Boulevard|Blvd|"
        r"Drive|Dr|Lane|Ln|Way|Place|Pl|Court|Ct|Parkway|Pkwy)\b|\bP\.?\s?O\.?\s?Box\b|"
        r"\b[A-Z]{2}\s\d{5}(?:-\d{4})?\b|〒\s?\d{3}-\d{4}|\d+丁目|番地"),
    # a calendar date or year
    "<date>": re.compile(
        r"\b(?:January|February|March|April|May|June|July|August|September|October|November|"
        r"December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?\s+\d{1,2}\b|"
        r"\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b(?:19|20)\d\d\b|\d{1,2}月\d{1,2}日|\d{4}年"),
    # a day of the calendar, not a year alone: what "when is the conference" asks for
    "<day>": re.compile(
        r"\b(?:January|February|March|April|May|June|July|August|September|October|November|"
        r"December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?\s+\d{1,2}(?:st|nd|rd|th)?"
        r"\b|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:January|February|March|April|May|June|July|August|"
        r"September|October|November|December)\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\d{1,2}月\d{1,2}日"),
    # a length of time
    "<duration>": re.compile(
        r"\b\d+(?:\s?(?:-|–|to)\s?\d+)?\s(?:minutes?|hours?|days?|weeks?|months?|years?)\b|"
        r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|a few|several)\s(?:minutes?|"
        r"hours?|days?|weeks?|months?|years?)\b|\d+\s?(?:分間?|時間|日間|週間|か月|ヶ月|カ月|年間)",
        re.I),
}


# A sentence whose topic (what comes before "is" / は) is what the visitor asked about
# defines it: "what is X" / Xって何 gains this much for it, in units of the best word match
# (0.5 on the real-site sets: the glossary entry under the heading "ホーム" lost to a sentence
# that names ホーム in passing).
_DEFINES_WEIGHT = 1.0
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
        first = head != "" and _opens_section(heads, i)
        # a sentence with a topic of its own is about that topic, whatever its heading
        yield about(match.group(1)) if match is not None else first and about(head)


def _opens_undefined(topic: str, openers: tuple[str, ...], lang: str) -> bool:
    """The topic opens with a quantifier or a subordinating word (`[answer] not_defining`:
    "Most card sorts", "Because Mastodon", 多くの)."""
    low = topic.lower()
    if lang == "ja":
        return low.startswith(openers)
    return _opens_with(low.split(), openers)


def _defines(sents: list[str], heads: list[str], asked: set[str], index: SiteIndex,
             lang: str, title: str) -> list[float]:
    """Per sentence, _DEFINES_WEIGHT when it defines what was asked about (`_defining`)."""
    return [_DEFINES_WEIGHT if d else 0.0
            for d in _defining(sents, heads, asked, index, lang, title)]


def page_defines(index: SiteIndex, page_id: str, utterance: str, lex: Lexicon) -> bool:
    """Whether a page holds a sentence that defines what a "what is X" question asks about,
    all of it (`_defines`); True for any other question, which wants no definition."""
    if not lex.find(clean(utterance), lex.asks_what):
        return True
    asked = set(index.search_terms(SearchQuery.of(utterance)))
    if not asked:
        return True
    sents, heads, _ = _page_sentences(index, page_id)
    info = index.page(page_id)
    title = info.title if info is not None else ""
    return any(_defining(sents, heads, asked, index, lex.lang, title, whole=True))


# A sentence the conversation has said already yields to one it has not, unless it answers by
# this much more (in units of the best word match): a follow-up asks for something new. (0.5
# moved more replies of the demo's own dialogues away from what the visitor asked again;
# scaled down by how many of the visitor's words the sentence holds, it moved none on the
# real-site sets.)
_SAID_PENALTY = 0.35
_SAID_SHARE = 0.8  # ... said: this share of its terms were in one earlier reply


def _said_before(sents: list[str], history: History) -> list[bool]:
    """Per sentence, whether a reply of the conversation said it (nearly all its terms in
    one reply: the visitor heard it, whatever the positions of this reply's sentences)."""
    replies = [_terms_of(ex.reply) for ex in history
               if ex.act is None and not ex.repair and ex.reply]
    out: list[bool] = []
    for sent in sents:
        own = _terms_of(sent)
        out.append(bool(own) and any(len(own & said) >= _SAID_SHARE * len(own)
                                     for said in replies))
    return out


def _cue_terms(text: str, lex: Lexicon) -> set[str]:
    """Words an answer to this kind of question tends to contain ("how much" -> yen, cost),
    and shapes (a clock time, an amount of money)."""
    cues: set[str] = set()
    for phrase, words in lex.answer_cues.items():
        if lex.find(text, (phrase,)):
            for word in words:
                cues.update([word] if word in _SHAPES else (terms(word) or [word]))
    return cues


def _shapes(sentence: str) -> set[str]:
    return {name for name, shape in _SHAPES.items() if shape.search(sentence)}


def asked_shapes(utterance: str, lex: Lexicon) -> tuple[set[str], set[str]]:
    """The shapes an answer to this question holds (an amount for "how much", a clock time
    for "what time") and the words it tends to hold; no shapes: it asks for none."""
    cues = _cue_terms(clean(utterance), lex)
    return cues & _SHAPES.keys(), cues - _SHAPES.keys()


def page_holds(index: SiteIndex, page_id: str, shapes: set[str],
               words: frozenset[str] | set[str] = frozenset()) -> bool:
    """Whether a sentence of the page has one of these shapes or words."""
    sents = _page_sentences(index, page_id)[0]
    return any(shapes & _shapes(s) or words & _terms_of(s) for s in sents)


def _sentence_query(query: SearchQuery, index: SiteIndex) -> dict[str, float]:
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


def _best_start(sents: list[str], heads: list[str], query_terms: dict[str, float],
                cues: set[str], prior: list[float] | None = None,
                orphans: list[bool] | None = None, said: list[bool] | None = None) -> int:
    """The sentence that best answers the query. Terms are weighted by how rare they are on
    this page: the page's own topic (in nearly every sentence) tells sentences apart least.
    A sentence also owns the words of its heading ("Tickets for the planetarium"): the
    section's opening sentence as its own (`_HEAD_OPENS`), the sentences after it at a
    quarter (`_HEAD_UNDER`)."""
    own = [_terms_of(sent) | (_shapes(sent) if cues else set()) for sent in sents]
    headed = [_terms_of(head) - words for head, words in zip(heads, own, strict=True)]
    n = len(sents)
    df: dict[str, int] = {}
    for words, head_words in zip(own, headed, strict=True):
        for t in words | head_words:
            df[t] = df.get(t, 0) + 1
    head_weight = [_HEAD_OPENS if _opens_section(heads, i) else _HEAD_UNDER for i in range(n)]
    raw = [sum(w * math.log((n + 1) / (df[t] + 0.5)) * (1.0 if t in words else head_weight[i])
               for t, w in query_terms.items() if t in words or t in head_words)
           for i, (words, head_words) in enumerate(zip(own, headed, strict=True))]
    top = max(raw, default=0.0) or 1.0
    best, best_score = 0, -1.0
    word_cues, shape_cues = cues - _SHAPES.keys(), cues & _SHAPES.keys()
    for i, (words, head_words) in enumerate(zip(own, headed, strict=True)):
        score = raw[i] / top
        score += 0.5 * len(word_cues & (words | head_words)) / max(len(word_cues), 1)
        # the shape of the answer asked for (a clock time for "what time") weighs as much as
        # the best sentence's words
        score += _SHAPE_WEIGHT * bool(shape_cues & words)
        if prior is not None:
            score += prior[i]
        if orphans is not None and orphans[i]:
            score -= _ORPHAN_PENALTY  # yields to the next candidate unless far ahead
        if said is not None and said[i]:
            score -= _SAID_PENALTY  # said already: a follow-up asks for something new
        # earlier sentences introduce: prefer them on ties, by their place in the page, so
        # that on a long page the answer 70 sentences in is not outweighed by its place
        score -= _PLACE_WEIGHT * i / n
        if score > best_score:
            best, best_score = i, score
    return best


def _speak(sents: list[str], picked: tuple[int, ...], lang: str) -> str:
    sep = "" if lang == "ja" else " "
    return sep.join(sents[i] for i in picked)


def _points_to(sentence: str, page_id: str, index: SiteIndex,
               lex: Lexicon) -> PageInfo | None:
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


def _announcing(sents: list[str], lex: Lexicon) -> frozenset[int]:
    return frozenset(i for i, sent in enumerate(sents) if _announces(sent, lex))


def _say_from(sents: list[str], heads: list[str], start: int, lex: Lexicon,
              limit: int, gaps: frozenset[int] = frozenset()) -> tuple[tuple[int, ...], str]:
    """The run a reply says from its best sentence: with the sentence it leans on, and
    without a leading connective whose sentence is not said; it stops before a sentence
    after something unsaid (`gaps`). Positions and text."""
    start = _with_antecedent(sents, heads, start, lex, limit)
    # what announces a page's content ("Find out if you can get this benefit.", 詳しくは…を
    # ご覧ください) ends the answer before it: it says nothing, and what comes after it is
    # another paragraph (reply F1 +0.001 / +0.001 on the real-site sets; passed over instead,
    # the run went on into the next paragraph: -0.002 / 0)
    picked = _run_from(sents, heads, start, lex.lang, limit, _announcing(sents, lex) | gaps)
    said = list(sents)
    said[start] = _without_connective(sents[start], lex)
    return picked, _speak(said, picked, lex.lang)


def _topic_titles(index: SiteIndex, lex: Lexicon, count: int) -> str:
    """What the site covers, in a few titles: its sections' own pages first (a site in
    folders), then its pages in order (a flat site), never the home page."""
    pages = [p for p in index.pages if p.lang == lex.lang] or index.pages
    overview = {p.page_id for p in index.overview_pages(lex.lang)}
    # The home page (the shallowest overview) stands for no section; a folder's index does.
    depth = min((p.count("/") for p in overview), default=0)
    home = {p for p in overview if p.count("/") == depth}
    sections = [p for p in index.section_pages(lex.lang) if p.page_id not in home]
    named = {p.page_id for p in sections}
    chosen = sections + [p for p in pages if p.page_id not in overview | named]
    return _join_titles([p.title for p in chosen if p.title.strip()][:count], lex)


def listing(index: SiteIndex, lex: Lexicon, count: int) -> str:
    return lex.replies["site_listing"].format(titles=_topic_titles(index, lex, count))


def out_of_scope(evidence: Evidence | None, text: str, lex: Lexicon,
                 params: AnswerParams, best_page: float | None = None) -> bool:
    """Whether no page should answer: something never answered (how to build a bomb), or
    retrieval evidence that nothing on the site is about it: the best page of a question that
    stands alone scores low, or its best chunk is weak in every way."""
    if lex.find(text, lex.refuse):
        return True
    if best_page is not None and best_page < params.scope_page_floor:
        return True
    if (best_page is not None and evidence is not None and best_page < params.scope_page_below
            and evidence.dense < params.scope_dense_floor):
        return True
    if (best_page is not None and evidence is not None and best_page < params.scope_page_below
            and evidence.lexical <= 0.0):
        # none of its words is on the site: a chunk that stands out does so by meaning alone,
        # which on a site of one subject is a guess (駐車場はありますか -> the timeline, 3.9)
        return True
    if evidence is None or evidence.peak >= params.scope_peak_below:
        # Its best chunk stands out from the site: something here is about it, however its
        # words are diluted (a long story around a question).
        return False
    if best_page is not None and best_page < params.scope_page_below:
        return True
    return (evidence.lexical < params.scope_lexical_below
            and evidence.dense < params.scope_dense_below)


def decline(index: SiteIndex, lex: Lexicon) -> Reply:
    """Said in the visitor's language, with what the site does cover and a person to ask."""
    return Reply(lex.replies["out_of_scope"].format(titles=_topic_titles(index, lex, 3)),
                 repair=True)


def compose(
    resolution: Resolution,
    hits: list[PageHit],
    index: SiteIndex,
    history: History,
    screen_page: str | None,
    lex: Lexicon,
    params: AnswerParams = AnswerParams(),
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
        return Reply(listing(index, lex, params.listing_titles),
                     home.page_id if home else None, home.title if home else "")
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
                       embedder=None if r.kind == DISTANT else embedder)
    return replace(reply, weak=top.score < params.weak_below)


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
    first, second = np.argsort(-cosine)[:2]
    gap = float(cosine[first] - cosine[second])
    return questions[int(first)], 1.0 if lead <= 0 else min(1.0, gap / lead)


def _asked_as(utterance: str, sents: list[str], heads: list[str], index: SiteIndex,
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
    return [params.question_heading * share if heads[i] == asked_as and _opens_section(heads, i)
            else 0.0 for i in range(len(sents))]


def _labelled_by_asking(spoken: str, heads: list[str], params: AnswerParams
                        ) -> list[float] | None:
    """Per sentence, the bonus of the one that opens a section labelled by the question word
    the visitor asks with: "why should I use it" -> a method card's "Why" field ("To
    identify a group's collective priorities."), not a later sentence that shares a word.
    None when no heading is such a label. It outweighs the best word match in the chunk the
    search ranked best: the visitor asked for what the label holds."""
    asking = {w.strip(":：").lower() for w in set(heads)} & _ASKING_LABELS
    if not asking:
        return None
    asked = asking & set(re.findall(r"[a-z]+", spoken.lower()))
    if not asked:
        return None
    bonus = params.question_heading + params.chunk_prior
    return [bonus if heads[i].strip(":：").lower() in asked
            and _opens_section(heads, i) else 0.0 for i in range(len(heads))]


def _named_heading(utterance: str, heads: list[str], title: str, params: AnswerParams
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
    return [params.named_heading if heads[i] in named and _opens_section(heads, i) else 0.0
            for i in range(len(heads))]


def _plus(prior: list[float] | None, extra: list[float] | None) -> list[float] | None:
    """Two per-sentence bonuses added; either may be None (none)."""
    if extra is None:
        return prior
    if prior is None:
        return extra
    return [a + b for a, b in zip(prior, extra, strict=True)]


def _from_page(r: Resolution, page_id: str, title: str, index: SiteIndex, history: History,
               lex: Lexicon, params: AnswerParams, *, summary: bool,
               chunk: int | None = None, embedder: Embedder | None = None,
               follow: bool = True) -> Reply:
    """The reply said from one page. An answer whose best sentence sends the reader to
    another page (`_points_to`) is said from that page instead, once (`follow`)."""
    lang = lex.lang
    sents, heads, owner, gaps = _page_reading(index, page_id)
    if not sents:
        return Reply(lex.replies["detail_end"].format(title=title), page_id, title, repair=False)
    already: set[int] = set()
    for ex in history:
        if ex.page_id == page_id:
            already.update(ex.spoken)
    if r.detail and already:
        # going on from where the last reply stopped, past what only announces the page (the
        # sentence an answer stopped before: "Find out how to apply for this burial honor.")
        announcing = _announcing(sents, lex)
        start = max(already) + 1
        while start in announcing:
            start += 1
        if start >= len(sents):
            return Reply(lex.replies["detail_end"].format(title=title), page_id, title,
                         tuple(sorted(already)))
        picked = _run_from(sents, heads, start, lang, params.max_sentences, announcing)
        return Reply(lex.replies["detail_more"].format(body=_speak(sents, picked, lang)),
                     page_id, title, picked)
    if summary:
        if r.query is not None:
            start = _best_start(sents, heads, _sentence_query(r.query, index), set(),
                                _asked_as(r.query.segments[0].text, sents, heads, index,
                                          params, embedder))
        else:
            start = 0
        picked, body = _say_from(sents, heads, start, lex, params.max_sentences, gaps)
        return Reply(lex.replies["page_summary"].format(title=title, summary=body),
                     page_id, title, picked)
    assert r.query is not None
    utterance = r.query.segments[0].text
    prior = None
    if chunk is not None and params.chunk_prior:
        prior = [params.chunk_prior if c == chunk else 0.0 for c in owner]
    spoken = clean(utterance)  # as the lexicon is written: "Where can I ..." from Whisper
    scored_heads = heads
    if lex.find(spoken, lex.asks_what):
        asked = set(index.search_terms(SearchQuery.of(utterance)))
        prior = _plus(prior, _defines(sents, heads, asked, index, lang, title))
        # the page's opening under no heading stands under its title, whose words it defines
        # ("Personas": "User archetypes based on conversations with real people.")
        lead = next((i for i, head in enumerate(heads) if head), len(heads))
        scored_heads = [title] * lead + heads[lead:]
    prior = _plus(prior, _asked_as(utterance, sents, heads, index, params, embedder))
    prior = _plus(prior, _labelled_by_asking(spoken, heads, params))
    prior = _plus(prior, _named_heading(utterance, heads, title, params))
    start = _best_start(sents, scored_heads, _sentence_query(r.query, index),
                        _cue_terms(spoken, lex), prior, _orphans(sents, heads, lex),
                        _said_before(sents, history))
    target = _points_to(sents[start], page_id, index, lex) if follow else None
    if target is not None:
        there = _from_page(r, target.page_id, target.title, index, history, lex, params,
                           summary=False, embedder=embedder, follow=False)
        if there.spoken:
            return there
    picked, body = _say_from(sents, heads, start, lex, params.max_sentences, gaps)
    return Reply(lex.replies["answer"].format(body=body), page_id, title, picked)
