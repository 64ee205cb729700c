"""What a page's text offers to be spoken: its speakable sentences in order, the heading each
stands under, its chunk, and the gaps where something unsaid came between."""

from __future__ import annotations

from functools import lru_cache

from kiosk.answer.lists import ITEM, LEAD, list_sentences
from kiosk.answer.params import DEFAULT_PARAMS, AnswerParams
from kiosk.answer.shapes import shapes_of
from kiosk.answer.speakable import say_name, speakable
from kiosk.dialogue.lexicon import load_lexicon
from kiosk.dialogue.resolver import clean
from kiosk.retrieval.index import SiteIndex
from kiosk.text import SENTENCE_END_EN as _END_EN
from kiosk.text import SENTENCE_END_JA as _END_JA
from kiosk.text import sentences, terms


def page_sentences(index: SiteIndex, page_id: str, params: AnswerParams = DEFAULT_PARAMS
                   ) -> tuple[list[str], list[str]]:
    """The page's speakable sentences in order, and the heading each stands under."""
    out, heads, _, _ = page_reading(index, page_id, params)
    return out, heads


def page_reading(index: SiteIndex, page_id: str, params: AnswerParams
                 ) -> tuple[list[str], list[str], list[int], frozenset[int]]:
    """The page's speakable sentences, their headings and chunks, and its gaps: the
    sentences that come after something not said under their heading (a list, a lead-in, a
    label). A reply's run stops before a gap, since what it goes on from was not said ("And
    many more, including personal websites!" after the definition, the list of servers
    between them unsaid)."""
    info = index.page(page_id)
    if info is None:
        return [], [], [], frozenset()
    out, heads, at, gaps, _ = _chunk_sentences(info.lang, _chunks(index, page_id), params)
    # A field headed "What" says what the page's subject is (a method card's "What: A
    # categorization exercise in which ..."): it stands under the page's title.
    titled = [info.title if head.strip().lower() == "what" else head for head in heads]
    return list(out), titled, [info.first_chunk + pos for pos in at], gaps


# At most this many sentences before a list lead into it.
LEADS_BEFORE = 2

_Chunks = tuple[tuple[str, str, tuple[str, ...], tuple[tuple[str, str], ...]], ...]


def _chunks(index: SiteIndex, page_id: str) -> _Chunks:
    return tuple((c.text, c.heading, c.unsaid, c.boxed) for c in index.page_chunks(page_id))


def page_leads(index: SiteIndex, page_id: str, params: AnswerParams
               ) -> dict[int, tuple[int, ...]]:
    """For each sentence of `page_reading` that is one of a long list's items, said as a
    sentence of its own ("You're the spouse or child of a Veteran who's ..."), the sentences
    that lead into its list: the lead-in's own ("At least one of these must be true."), after
    the one before them when it points at the list ("You can only get health care through
    CHAMPVA if ... one of the descriptions below is true for you."). Said alone, an item is a
    condition without what it is a condition for."""
    info = index.page(page_id)
    if info is None:
        return {}
    return dict(_chunk_sentences(info.lang, _chunks(index, page_id), params)[4])


@lru_cache(maxsize=256)
def _chunk_sentences(lang: str, chunks: _Chunks, params: AnswerParams
                     ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[int, ...],
                                frozenset[int], tuple[tuple[int, tuple[int, ...]], ...]]:
    """A page's speakable sentences, their headings and chunk positions, those that follow
    something unsaid under their heading (`page_reading`), and the leads of list items
    (`page_leads`), remembered: the page of a conversation is read again at every turn that
    answers from it."""
    out: list[str] = []
    heads: list[str] = []
    at: list[int] = []
    gaps: set[int] = set()
    lead_of: list[tuple[int, tuple[int, ...]]] = []
    lex = load_lexicon(lang)
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
                if line not in chunks[k][2]:  # a link is where to click, a picture is seen
                    lines.append(line)
                    line_chunk.append(k)
        head = chunks[pos][1].strip()
        headed = head.endswith((":", "：")) and bool(lines) and lines[0].strip() != head
        if headed:
            # a heading that leads into the list under it ("We do not accept:" / "Military
            # IDs" ...) is its lead-in: said with its items, as a colon's line is
            lines.insert(0, head)
            line_chunk.insert(0, pos)
        # (a line that is no sentence and is not said: an item, a lead-in, a label; not a
        # question or a short sentence a paragraph holds, "What is it?")
        group, unsaid = len(out), False
        leads: list[int] | None = None  # of the list being read (None: no list)
        ends = _END_JA if lang == "ja" else _END_EN
        # a sentence in a box (`::: warning`) stands under what the box says on top: "the
        # warning here" is answered from it
        boxed = {said: title for k in range(pos, stop) for said, title in chunks[k][3]}
        for said, first, role in list_sentences(lines, lang, params, headed):
            before = len(out)
            if role and leads is None:
                # the sentences just before the list that point at it ("... one of the
                # descriptions below is true for you.", "At least one of these must be true.")
                leads = []
                k = before - 1
                while (k >= group and len(leads) < LEADS_BEFORE
                       and lex.find(clean(out[k]), lex.before_list)):
                    leads.insert(0, k)
                    k -= 1
            elif not role:
                leads = None
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
                if leads is not None and role == LEAD:
                    leads.append(len(out) - 1)
                elif leads is not None and role == ITEM and leads:
                    lead_of.append((len(out) - 1, tuple(leads)))
            unsaid = unsaid or (len(out) == before and bool(said.strip())
                                and not ends.search(said.strip()))
        pos = stop
    if not out:
        # Nothing but names under headings (a list of libraries by language): each heading
        # with its names is said as one sentence ("Python: Misskey.py, MiPA, MiPAC."), rather
        # than "that's all the page says" about a page that says something.
        lex = load_lexicon(lang)
        for pos, (text, heading, *_) in enumerate(chunks):
            # (a name with a dot, "Misskey.py", is said with it: "Misskey dot py")
            named = (say_name(line.strip(), lex.replies["name_dot"])
                     for line in text.splitlines() if line.strip())
            names = [name for name in named if name]
            if heading.strip() and 1 <= len(names) <= params.list_items_max:
                colon, end = ("：", "。") if lang == "ja" else (": ", ".")
                out.append(f"{heading.strip()}{colon}{lex.replies['list_join'].join(names)}{end}")
                heads.append(heading)
                at.append(pos)
    return tuple(out), tuple(heads), tuple(at), frozenset(gaps), tuple(lead_of)


@lru_cache(maxsize=4096)
def terms_of(text: str) -> frozenset[str]:
    """A sentence's terms, remembered: a page's sentences are weighed again at every turn
    that answers from it, and the replies of the conversation at every turn after them."""
    return frozenset(terms(text))


def page_holds(index: SiteIndex, page_id: str, shapes: set[str],
               words: frozenset[str] | set[str] = frozenset(),
               params: AnswerParams = DEFAULT_PARAMS) -> bool:
    """Whether a sentence of the page has one of these shapes or words; a dated post holds
    its day (a reply says it: "On September 11, 2021: ...")."""
    info = index.page(page_id)
    if info is not None and info.date and shapes & {"<date>", "<day>"}:
        return True
    sents = page_sentences(index, page_id, params)[0]
    return any(shapes & shapes_of(s) or words & terms_of(s) for s in sents)
