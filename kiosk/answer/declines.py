"""Off-topic and site questions: what the site covers, in a few titles, and the decline."""

from __future__ import annotations

from collections import Counter

from kiosk.answer.params import AnswerParams, Reply
from kiosk.answer.sentences import page_sentences, terms_of
from kiosk.dialogue.lexicon import Lexicon
from kiosk.retrieval.index import Evidence, PageInfo, SiteIndex, title_key


def join_titles(titles: list[str], lex: Lexicon) -> str:
    quoted = [f"「{t}」" if lex.lang == "ja" else f'"{t}"' for t in titles]
    if len(quoted) <= 1:
        return "".join(quoted)
    join, last = lex.replies["list_join"], lex.replies["list_last"]
    return join.join(quoted[:-1]) + last + quoted[-1]


def _home(index: SiteIndex, lang: str) -> PageInfo | None:
    """The site's home page: its shallowest overview page in the language."""
    overview = index.overview_pages(lang)
    return overview[0] if overview else None


def _home_headings(index: SiteIndex, home: PageInfo) -> list[str]:
    """The home page's own section headings, in order: on a flat site (a card deck, a blog)
    they are how the site is organised ("Discover", "Decide", "Make"); a heading repeated
    under each of them ("Methods include") names none."""
    heads = [c.heading.strip() for c in index.page_chunks(home.page_id) if c.heading.strip()]
    runs = [h for i, h in enumerate(heads) if i == 0 or heads[i - 1] != h]  # a section's chunks
    seen = Counter(runs)
    own = home.title.strip().lower()
    # (the page's own heading, "18F Methods" on the page titled "Methods", names the site)
    return [h for i, h in enumerate(dict.fromkeys(runs))
            if seen[h] == 1 and not (i == 0 and (own in h.lower() or h.lower() in own))]


def _topic_titles(index: SiteIndex, lex: Lexicon, count: int) -> str:
    """What the site covers, in a few titles: its sections' own pages (a site in folders), else
    the home page's headings (a flat site organised on its home page), else its pages in
    order; never the home page itself."""
    pages = [p for p in index.pages if p.lang == lex.lang] or index.pages
    overview = {p.page_id for p in index.overview_pages(lex.lang)}
    # The home page (the shallowest overview) stands for no section; a folder's index does.
    depth = min((p.count("/") for p in overview), default=0)
    home = {p for p in overview if p.count("/") == depth}
    folders = [(f, p) for f, p in index.sections(lex.lang) if p.page_id not in home]
    first = _home(index, lex.lang)
    if len(folders) < 2 and first is not None:
        headings = _home_headings(index, first)
        if len(headings) >= 2:
            return join_titles(headings[:count], lex)
    # A section inside another is part of it (an API's streaming API); a page inside a
    # section is one of its pages (a blog's posts). Between the two: the pages of no section
    # (a docs folder without an index page of its own), those other pages link to most first.
    top = [p for f, p in folders
           if p.title.strip() and not any(f.startswith(g + "/") for g, _ in folders)]
    if len(top) >= count:  # (a site of many sections: the rest is not read)
        return join_titles([p.title for p in top][:count], lex)
    nested = [p for _, p in folders if all(p.page_id != t.page_id for t in top)]
    named = {p.page_id for _, p in folders}
    linked = Counter(target for p in pages for target in set(p.links) if target != p.page_id)
    loose = sorted((p for p in pages if p.page_id not in overview | named
                    and not any(p.page_id.startswith(f + "/") for f, _ in folders)),
                   key=lambda p: (-linked[p.page_id], p.page_id.count("/")))
    listed = overview | named | {p.page_id for p in loose}
    inside = [p for p in pages if p.page_id not in listed]
    chosen = top + loose + nested + inside
    return join_titles([p.title for p in chosen if p.title.strip()][:count], lex)


def listing(index: SiteIndex, lex: Lexicon, count: int) -> str:
    return lex.replies["site_listing"].format(titles=_topic_titles(index, lex, count))


def site_overview(index: SiteIndex, lex: Lexicon, count: int) -> str:
    """"What is on this site": what the site is, in its home page's own first sentence, and
    its main sections (`_topic_titles`); without such a sentence, the sections alone."""
    home = _home(index, lex.lang)
    sentences = page_sentences(index, home.page_id)[0] if home is not None else []
    if not sentences:
        return listing(index, lex, count)
    about = sentences[0]
    name = _site_name(index, home, lex.lang) if home is not None else ""
    if name and name.casefold() not in about.casefold():
        about = lex.replies["site_named"].format(name=name, about=about)
    return lex.replies["site_overview"].format(about=about,
                                               titles=_topic_titles(index, lex, count))


# A name is a few words ("18F Methods", a page title said as a name: "Dot voting"), not a
# headline.
NAME_WORDS = 5


def _site_name(index: SiteIndex, home: PageInfo, lang: str) -> str:
    """The site's name: the home page's own first heading when it holds the page's title or
    the title holds it ("18F Methods" on the page titled "Methods"); a home page that opens
    with a headline or a greeting names nothing."""
    chunks = index.page_chunks(home.page_id)
    head = chunks[0].heading.strip() if chunks else ""
    own = home.title.strip().casefold()
    size = len(head) / 2.5 if lang == "ja" else len(head.split())
    if not head or not own or size > NAME_WORDS:
        return ""
    return head if own in head.casefold() or head.casefold() in own else ""


def menu(index: SiteIndex, page_id: str, chunk: int, asked: frozenset[str]) -> list[str]:
    """The site's pages a hub page offers as a menu, as their titles: lines or headings that
    are another page's title ("Methods include: Card sorting / Usability testing", a category
    page's "## Card sorting"), in most of its chunks (none for a page that is no hub).
    Those whose titles hold the rarest of the `asked` terms that two or more of them hold
    ("other mapping methods": Affinity mapping, Site mapping, ...); else the menu of the
    section the reply is said from (chunk: its position in the index), the titles from there
    until a section of other text; else the whole menu."""
    info = index.page(page_id)
    if info is None:
        return []
    titles = {title_key(p.title): p.title for p in index.pages
              if p.page_id != page_id and p.lang == info.lang and p.title.strip()}
    entries: list[tuple[int, str]] = []  # (chunk position, title)
    for pos, c in enumerate(index.page_chunks(page_id), start=info.first_chunk):
        for line in (c.heading, *c.unsaid):
            title = titles.get(title_key(line))
            if title is not None and title not in (t for _, t in entries):
                entries.append((pos, title))
    listed = {pos for pos, _ in entries}
    if len(entries) < 2 or 2 * len(listed) <= info.n_chunks:
        return []  # (a page of its own text that ends in "Related articles" is no hub)
    held = Counter(t for _, title in entries for t in terms_of(title))
    # (a word of one title names that page, not a kind of them; one of half of them, none)
    kinds = [t for t in asked if 2 <= held[t] < len(entries) / 2]
    if kinds:
        rarest = min(held[t] for t in kinds)
        words = {t for t in kinds if held[t] == rarest}
        return [title for _, title in entries if words & terms_of(title)]
    section: list[str] = []
    for pos in range(chunk, info.first_chunk + info.n_chunks):
        if pos != chunk and pos not in listed:
            break
        section.extend(title for at, title in entries if at == pos)
    return section if len(section) >= 2 else [title for _, title in entries]


def out_of_scope(evidence: Evidence | None, text: str, lex: Lexicon,
                 params: AnswerParams, best_page: float | None = None,
                 tokens: int | None = None) -> bool:
    """Whether no page should answer: something never answered (how to build a bomb), or
    retrieval evidence that nothing on the site is about it: the best page of a question that
    stands alone scores low, or its best chunk is weak in every way. `tokens`: the question's
    length in the encoder's tokens."""
    if lex.find(text, lex.refuse):
        return True
    if best_page is not None and best_page < params.scope_page_floor:
        return True
    if (best_page is not None and best_page < params.scope_page_below
            and tokens is not None and tokens < params.scope_story_tokens):
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
