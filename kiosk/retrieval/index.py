"""The site index: chunk vectors + BM25 postings + page metadata in one file, and hybrid search.

Built incrementally (chunks whose text hash is unchanged keep their vectors), written atomically
(a failed build leaves the previous file untouched).
"""

from __future__ import annotations

import io
import json
import logging
import re
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from kiosk.dialogue.query import SearchQuery
from kiosk.errors import SiteIndexError
from kiosk.fsutil import atomic_write_bytes
from kiosk.retrieval.embedder import Embedder, Vectors
from kiosk.retrieval.lexical import LexicalIndex
from kiosk.retrieval.loanwords import KATAKANA_WORD, Loanwords
from kiosk.retrieval.sections import Chunk, Page
from kiosk.retrieval.site import LoadProblem, chunk_page, load_site
from kiosk.text import is_whole_word_term, normalize, query_weights, site_nouns, terms

log = logging.getLogger(__name__)

FORMAT_VERSION = 8  # 2: pages keep the links; 3: katakana words whole, English inflections
# folded; 4: chunks name their sentences that are links, and question headings have vectors
# (older files: none unsaid, headings embedded when first asked); 5: pages keep their links'
# words (older files: none, so no reply follows a sentence's link); 6: the site's nouns written
# in hiragana (older files: none, so a query's hiragana is searched for nothing, as before);
# 7: chunks name their sentences in a box and its title (older files: none boxed); 8: pages
# keep the day they were published (older files: none, so no reply says a post's date)
# Files this version reads: a version 1 file has no links (the next build from the site adds
# them) and its vectors are reused, so an upgrade does not embed the whole site again. The
# terms of a file before version 3 are not today's: its BM25 postings are rebuilt from its
# chunks on load.
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6, 7, 8)
OVERVIEW_STEMS = ("index", "home", "sitemap", "top", "readme", "overview")
# A page's language written into its file name, as site generators translate a page
# ("index._en.md": Jekyll's polyglot, "index.en.md": Hugo, "about.ja.md"): no part of its stem.
_LANG_SUFFIX = re.compile(r"\.[_-]?(?:en|ja|fr|de|es|it|pt|nl|zh|ko|ru|ar|hi|vi|th|id|pl|sv|"
                          r"tr|uk)(?:[-_][a-z]{2,4})?$")
# Query texts whose scores over every chunk are remembered: a turn's context is the texts of
# the last exchanges, scored already when they were said (8 bytes a chunk each: 0.12 MB at
# the brain bench's 15,000 chunks).
SEGMENTS_REMEMBERED = 32
# A section retells another page (`_retold`) when it is a blurb: this many chunks at most. A
# longer section under another page's title is a page's own account (a quick start's
# "Creating a Vue Application" steps, a blog post's "Plugins").
RETELLING_CHUNKS = 2
CHANGELOG_VERSIONS = 5
# Sentences embedded as passages kept in memory (`SiteIndex.passage_vectors`): 384 floats
# each, about 6 MB.
PASSAGES_KEPT = 4096
# A version number that heads a release's notes: "2026.5.4", "v1.2.0 (2024-01-05)", "12.95.0",
# "[1.0.0] - 2017-06-20". (Only a heading over text of its own is a chunk's: Misskey's notes
# give each release's date under its number.)
_VERSION_HEADING = re.compile(r"^\s*(?:version\s*|バージョン\s*)?\[?v?\d+\.\d+(?:\.\d+)*\b", re.I)


@dataclass(frozen=True)
class PageInfo:
    page_id: str
    title: str
    lang: str
    content_hash: str
    first_chunk: int
    n_chunks: int
    links: tuple[str, ...] = ()  # the site's pages this page links to
    anchors: tuple[tuple[str, str], ...] = ()  # (a link's words, its page): `Page.anchors`
    date: str = ""  # the day a post was published (`Page.date`)


@dataclass(frozen=True)
class RankWeights:
    dense: float = 0.5
    lexical: float = 0.5
    other_lang_factor: float = 0.7  # a bilingual site answers in the visitor's language
    # A section whose heading is another page's title retells that page (a landing page's
    # feature list, a glossary entry, a hub's blurb): its score counts for that page too, and
    # for its own page at this share, so the page it retells answers a question they both
    # match (misskey-ja: the home page's "テーマ" blurb no longer answers for the theme page).
    retelling_yield: float = 0.95
    # A page of release notes (`CHANGELOG_VERSIONS` version headings) names every feature in
    # a line of its own ("Fix: ログインできない問題を修正"): it answers at this share, so the
    # feature's own page answers a visitor's question about it.
    changelog_factor: float = 0.8


@dataclass(frozen=True)
class Evidence:
    """How strongly anything on the site answers a query, beside the scores themselves: an
    off-topic question finds its best chunk barely above the rest, and few of its words."""

    peak: float  # best chunk's cosine above the mean chunk's, in standard deviations
    dense: float  # best chunk's rescaled cosine (0..1)
    lexical: float  # best chunk's BM25 share of the best possible (0..1)


def _evidence(cosine: npt.NDArray[np.float32], dense: npt.NDArray[np.float32],
              lexical: npt.NDArray[np.float32], mine: npt.NDArray[np.bool_]) -> Evidence:
    """Over the chunks in the visitor's language (all of them on a one-language site)."""
    if not mine.any():
        mine = np.ones(len(cosine), dtype=np.bool_)
    own = cosine[mine]
    spread = float(own.std())
    peak = float((own.max() - own.mean()) / spread) if spread > 0 else 0.0
    return Evidence(peak, float(dense[mine].max()), float(lexical[mine].max()))


@dataclass(frozen=True)
class Scores:
    page: npt.NDArray[np.float32]  # per page position
    chunk: npt.NDArray[np.float32]  # per chunk
    evidence: Evidence | None = None


@dataclass(frozen=True)
class _SegmentScores:
    """One query text against every chunk. A query's segments combine linearly: its vector
    is their weighted sum (then normalized) and its BM25 weights are their weighted terms, so
    a query's scores are these, weighed, without another pass over the chunks."""

    embedder: Embedder
    vector: Vectors
    dot: npt.NDArray[np.float32]  # per chunk: the chunk's vector . the text's
    lexical: npt.NDArray[np.float32]  # per chunk: BM25 of the text's terms (weights sum to 1)
    upper: float  # the best BM25 score a chunk could reach for them


@dataclass(frozen=True)
class PageHit:
    page_id: str
    score: float
    chunk: int  # best chunk of the page


@dataclass
class SiteIndex:
    model: str
    pages: list[PageInfo]
    chunks: list[Chunk]
    vectors: Vectors
    lexical: LexicalIndex
    problems: list[LoadProblem] = field(default_factory=list)
    # Question headings ("What if I need care while traveling?") embedded as questions: the
    # answer matches the visitor's question to them (`answer`).
    questions: dict[str, Vectors] = field(default_factory=dict)
    # The nouns the site writes in hiragana (さくら, かばん): a query's hiragana is searched
    # for them, the rest of it being particles and endings (`text.site_nouns`).
    nouns: frozenset[str] = frozenset()
    _page_pos: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _chunk_page: npt.NDArray[np.int32] = field(
        default_factory=lambda: np.zeros(0, dtype=np.int32), init=False, repr=False)
    _page_lang_en: npt.NDArray[np.bool_] = field(
        default_factory=lambda: np.zeros(0, dtype=np.bool_), init=False, repr=False)
    _langs: frozenset[str] = field(default_factory=frozenset, init=False, repr=False)
    _segments: OrderedDict[str, _SegmentScores] = field(default_factory=OrderedDict,
                                                        init=False, repr=False)
    _passages: OrderedDict[str, Vectors] = field(default_factory=OrderedDict, init=False,
                                                 repr=False)

    def __post_init__(self) -> None:
        self._page_pos = {p.page_id: i for i, p in enumerate(self.pages)}
        owner = np.zeros(len(self.chunks), dtype=np.int32)
        for i, p in enumerate(self.pages):
            owner[p.first_chunk:p.first_chunk + p.n_chunks] = i
        self._chunk_page = owner
        self._page_lang_en = np.array([p.lang == "en" for p in self.pages], dtype=np.bool_)
        self._langs = frozenset(p.lang for p in self.pages)

    # ------------------------------------------------------------ lookup

    def reads_as(self, other: SiteIndex) -> bool:
        """The same pages read into the same titles and chunks by the same model: nothing to
        save. (A new version of the reader changes them from files that did not change.)"""
        return (self.model == other.model and self.chunks == other.chunks
                and [(p.page_id, p.content_hash, p.title) for p in self.pages]
                == [(p.page_id, p.content_hash, p.title) for p in other.pages])

    def page(self, page_id: str) -> PageInfo | None:
        pos = self._page_pos.get(page_id)
        return None if pos is None else self.pages[pos]

    def position(self, page_id: str) -> int:
        return self._page_pos[page_id]

    def page_chunks(self, page_id: str) -> list[Chunk]:
        info = self.page(page_id)
        if info is None:
            return []
        return self.chunks[info.first_chunk:info.first_chunk + info.n_chunks]

    def langs(self) -> frozenset[str]:
        return self._langs

    @cached_property
    def _overviews(self) -> tuple[PageInfo, ...]:
        # Found once: a declined question or a site listing asks for them, and a look at every
        # page name costs ~8 ms on a 5,000-page site.
        return tuple(p for p in self.pages if _is_overview(p.page_id))

    @cached_property
    def _sections(self) -> dict[str, tuple[tuple[str, PageInfo], ...]]:
        # Read once per language, as the overview pages are.
        return {lang: _section_pages([p for p in self.pages if p.lang == lang])
                for lang in self._langs}

    def sections(self, lang: str) -> list[tuple[str, PageInfo]]:
        """The site's sections, as (folder, the page that stands for it): each folder's own
        page (its index or README, or the page named as the folder beside it), top folders
        first, larger sections first; the site's home page is none of them. What "I can
        tell you about..." names: a section each, not the first pages of one folder."""
        found = self._sections.get(lang)
        return list(_section_pages(self.pages) if found is None else found)

    def section_pages(self, lang: str) -> list[PageInfo]:
        """The pages of `sections`, in their order."""
        return [page for _, page in self.sections(lang)]

    def overview_pages(self, lang: str) -> list[PageInfo]:
        """Home / index pages: the natural answer to 'what is on this site'."""
        return sorted(self._overviews,
                      key=lambda p: (p.lang != lang, p.page_id.count("/"), p.page_id))

    # ------------------------------------------------------------ search

    @staticmethod
    def query_terms(query: SearchQuery) -> dict[str, float]:
        """Each segment spreads its weight over its terms, so context never outweighs by length."""
        return SiteIndex._segment_terms(query, query_weights)

    def search_terms(self, query: SearchQuery) -> dict[str, float]:
        """`query_terms`, with katakana loanwords the site spells in Latin letters searched by
        that spelling (パイソン -> python)."""
        return SiteIndex._segment_terms(query, self._weights_with_loanwords)

    @cached_property
    def _katakana_words(self) -> frozenset[str]:
        """Every katakana word the site writes (read once, on the first query that needs it:
        ~0.3 s for 15,000 Japanese chunks)."""
        found: set[str] = set()
        for chunk in self.chunks:
            found.update(KATAKANA_WORD.findall(normalize(f"{chunk.heading}\n{chunk.text}")))
        for page in self.pages:
            found.update(KATAKANA_WORD.findall(normalize(page.title)))
        return frozenset(found)

    @cached_property
    def loanwords(self) -> Loanwords:
        return Loanwords(t for t in self.lexical.vocab if t.isascii() and t.isalpha())

    def links(self, page_id: str) -> tuple[str, ...]:
        """The indexed pages a page links to."""
        info = self.page(page_id)
        return tuple(t for t in info.links if t in self._page_pos) if info else ()

    def _weights_with_loanwords(self, text: str) -> dict[str, float]:
        weights = query_weights(text, self.nouns)
        for word in [t for t in weights if is_whole_word_term(t) and t not in self.lexical.vocab]:
            # A katakana word the site never writes (or a misheard one, エック for えっ詳しく)
            # tells nothing its 2-grams do not: they carry its whole weight.
            share = weights.pop(word)
            grams = [word[i:i + 2] for i in range(len(word) - 1)]
            for gram in grams:
                weights[gram] = weights.get(gram, 0.0) + share / len(grams)
        for word in KATAKANA_WORD.findall(normalize(text)):
            spellings = self.loanwords.spellings(word)
            # Only a word with a Latin spelling asks whether the site writes it in katakana
            # too (then its 2-grams find it): that reads the whole site once, so not before.
            if not spellings or word in self._katakana_words:
                continue
            grams = [word[i:i + 2] for i in range(len(word) - 1)]
            # The katakana word's own share (whole and in 2-grams) goes to its Latin spelling.
            grams_share = 1.0 - weights.pop(word, 0.0)
            for gram in grams:
                left = weights.get(gram, 0.0) - grams_share / len(grams)
                if left > 1e-6:
                    weights[gram] = left
                else:
                    weights.pop(gram, None)
            for spelling in spellings:
                weights[spelling] = weights.get(spelling, 0.0) + 1.0 / len(spellings)
        return weights

    @staticmethod
    def _segment_terms(query: SearchQuery,
                       weigh: Callable[[str], dict[str, float]]) -> dict[str, float]:
        weights: dict[str, float] = {}
        for seg in query.segments:
            found = weigh(seg.text)
            total = sum(found.values())
            if not total:
                continue
            for term, w in found.items():
                weights[term] = weights.get(term, 0.0) + seg.weight * w / total
        return weights

    @cached_property
    def page_lexical(self) -> LexicalIndex:
        """BM25 postings with each page as one document (built from the chunks' on first use)."""
        return self.lexical.grouped(self._chunk_page, len(self.pages))

    def coverage(self, text: str) -> npt.NDArray[np.float32]:
        """Per page, the share of the text's query-term weight that occurs on it (0..1)."""
        weights = self._weights_with_loanwords(text)
        total = sum(weights.values())
        out = np.zeros(len(self.pages), dtype=np.float32)
        if total <= 0:
            return out
        for term, weight in weights.items():
            out[self.page_lexical.postings(term)[0]] += weight / total
        return out

    @cached_property
    def _page_vocabulary(self) -> npt.NDArray[np.int64]:
        """Per page, how many distinct terms it has."""
        return np.bincount(self.page_lexical.post_chunk, minlength=len(self.pages))

    def unsaid(self, said: str) -> npt.NDArray[np.float32]:
        """Per page, the share (0..1) of its distinct terms that `said` does not hold: what
        the page has left to tell after a reply took that much from it (0 for a page with no
        terms)."""
        found = [self.page_lexical.postings(term)[0] for term in set(terms(said))]
        held = (np.bincount(np.concatenate(found), minlength=len(self.pages)) if found
                else np.zeros(len(self.pages), dtype=np.int64))
        size = np.maximum(self._page_vocabulary, 1)
        out: npt.NDArray[np.float32] = np.where(self._page_vocabulary > 0, 1.0 - held / size,
                                                0.0).astype(np.float32)
        return out

    def page_lexical_scores(self, query: SearchQuery) -> npt.NDArray[np.float32]:
        """Whole-page BM25 scaled by the best possible score (0..1)."""
        lex, upper = self.page_lexical.score(self.search_terms(query))
        out: npt.NDArray[np.float32] = (lex / upper if upper > 0 else lex).astype(np.float32)
        return out

    def _segment(self, text: str, embedder: Embedder) -> _SegmentScores:
        """A query text's scores over every chunk, remembered (`SEGMENTS_REMEMBERED`)."""
        known = self._segments.get(text)
        if known is not None and known.embedder is embedder:
            self._segments.move_to_end(text)
            return known
        vector = embedder.embed_queries([text])[0]
        lexical, upper = self.lexical.score(self.search_terms(SearchQuery.of(text)))
        scored = _SegmentScores(embedder, vector, (self.vectors @ vector).astype(np.float32),
                                lexical, upper)
        self._segments[text] = scored
        while len(self._segments) > SEGMENTS_REMEMBERED:
            self._segments.popitem(last=False)
        return scored

    def question_vectors(self, headings: tuple[str, ...], embedder: Embedder) -> Vectors:
        """These question headings' vectors: built with the index, or embedded now and kept
        (an index file older than its format 4, or another embedder than the index's)."""
        if embedder.name != self.model:
            return embedder.embed_queries(list(headings))
        for heading in headings:
            if heading not in self.questions:
                self.questions[heading] = _asked(embedder, heading)
        return np.stack([self.questions[h] for h in headings])

    def passage_vectors(self, texts: list[str], embedder: Embedder) -> Vectors:
        """These texts of the site's pages (sentences a reply chooses among) embedded as
        passages, the last PASSAGES_KEPT kept: a kiosk is asked about the same pages again,
        and a conversation reads one page at several turns."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._passages]
        if missing:
            for text, vector in zip(missing, embedder.embed_passages(missing), strict=True):
                self._passages[text] = vector
        for text in texts:
            self._passages.move_to_end(text)
        while len(self._passages) > PASSAGES_KEPT:
            self._passages.popitem(last=False)
        return np.stack([self._passages[t] for t in texts])

    def prepare(self, texts: Iterable[str], embedder: Embedder) -> None:
        """Score these texts now (a reply while it is spoken), for a later query that holds
        them."""
        for text in texts:
            if text.strip():
                self._segment(text, embedder)

    def forget(self, texts: Iterable[str] | None = None) -> None:
        """Drop remembered query texts (all, or these): benchmarks time fresh queries."""
        if texts is None:
            self._segments.clear()
        for text in texts or ():
            self._segments.pop(text, None)

    def _chunk_scores(self, query: SearchQuery, embedder: Embedder, weights: RankWeights
                      ) -> tuple[npt.NDArray[np.float32], ...]:
        """Per chunk: the cosine, its rescaled dense score, the scaled BM25 score and the
        hybrid of the two; combined from the query's segments."""
        combined = np.zeros(self.vectors.shape[1], dtype=np.float32)
        dot = np.zeros(len(self.chunks), dtype=np.float32)
        lex = np.zeros(len(self.chunks), dtype=np.float32)
        upper = 0.0
        for seg in query.segments:
            if not seg.text.strip():
                continue
            part = self._segment(seg.text, embedder)
            combined += seg.weight * part.vector
            dot += seg.weight * part.dot
            lex += seg.weight * part.lexical
            upper += seg.weight * part.upper
        norm = float(np.linalg.norm(combined))
        cosine = dot / norm if norm > 0 else dot
        floor = embedder.score_floor
        dense = np.maximum((cosine - floor) / (1.0 - floor), 0.0)
        lex_norm = lex / upper if upper > 0 else lex
        chunk = (weights.dense * dense + weights.lexical * lex_norm).astype(np.float32)
        return cosine, dense, lex_norm, chunk

    def _other_lang(self, lang: str) -> npt.NDArray[np.bool_] | None:
        """Per page, whether it is in another language than the visitor's (None: the site
        has one language)."""
        if len(self._langs) <= 1:
            return None
        other: npt.NDArray[np.bool_] = self._page_lang_en if lang == "ja" else ~self._page_lang_en
        return other

    @cached_property
    def _changelog(self) -> npt.NDArray[np.bool_]:
        """Per page, whether it is release notes: this many distinct version headings."""
        versions: list[set[str]] = [set() for _ in self.pages]
        for pos, chunk in enumerate(self.chunks):
            if _VERSION_HEADING.match(chunk.heading):
                versions[int(self._chunk_page[pos])].add(chunk.heading)
        return np.array([len(v) >= CHANGELOG_VERSIONS for v in versions], dtype=np.bool_)

    @cached_property
    def _retold(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Chunks of a short section (`RETELLING_CHUNKS`) whose heading is another page's
        title (that title held by one page only, so "Overview" retells nothing), and the page
        each retells."""
        titled: dict[str, list[int]] = {}
        for pos, page in enumerate(self.pages):
            titled.setdefault(title_key(page.title), []).append(pos)
        chunks: list[int] = []
        pages: list[int] = []
        for run in _sections_of(self.chunks):
            head = self.chunks[run[0]]
            found = titled.get(title_key(head.heading), []) if head.heading.strip() else []
            if (len(run) <= RETELLING_CHUNKS and len(found) == 1
                    and self.pages[found[0]].page_id != head.page_id):
                chunks.extend(run)
                pages.extend([found[0]] * len(run))
        return np.array(chunks, dtype=np.int64), np.array(pages, dtype=np.int64)

    def _page_best(self, chunk: npt.NDArray[np.float32], lang: str,
                   weights: RankWeights) -> npt.NDArray[np.float32]:
        """Every page's score: its best chunk's, or a retelling's (`_retold`), discounted for
        pages in another language than the visitor's when the site has both."""
        page = np.full(len(self.pages), -1.0, dtype=np.float32)
        retelling, retold = self._retold
        if len(retelling):
            own = chunk.copy()
            own[retelling] *= weights.retelling_yield
            np.maximum.at(page, self._chunk_page, own)
            np.maximum.at(page, retold, chunk[retelling])
        else:
            np.maximum.at(page, self._chunk_page, chunk)
        other = self._other_lang(lang)
        if other is not None:
            page = np.where(other, page * weights.other_lang_factor, page)
        if self._changelog.any():
            page = np.where(self._changelog, page * weights.changelog_factor, page)
        return page.astype(np.float32)

    def score(self, query: SearchQuery, embedder: Embedder, lang: str,
              weights: RankWeights) -> Scores:
        """Every chunk's hybrid score; every page's (`_page_best`); and the evidence that
        any page answers at all."""
        cosine, dense, lex_norm, chunk = self._chunk_scores(query, embedder, weights)
        mine = np.ones(len(self.chunks), dtype=np.bool_)
        other = self._other_lang(lang)
        if other is not None:
            mine = ~other[self._chunk_page]
        return Scores(self._page_best(chunk, lang, weights), chunk,
                      _evidence(cosine, dense, lex_norm, mine))

    def page_scores(self, query: SearchQuery, embedder: Embedder, lang: str,
                    weights: RankWeights,
                    positions: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """`score`'s page scores for the pages at these positions, in their order: a
        combination of remembered texts' scores (a context's texts were scored when they were
        said), with no evidence to gather."""
        chunk = self._chunk_scores(query, embedder, weights)[3]
        return self._page_best(chunk, lang, weights)[positions]

    def rank(self, scores: Scores, top: int = 10,
             only: list[str] | None = None) -> list[PageHit]:
        """Best pages first; `only` restricts the ranking to these pages."""
        page_best = scores.page
        if only is not None:
            positions = np.array([self._page_pos[p] for p in only], dtype=np.int64)
            order = positions[np.argsort(-page_best[positions], kind="stable")][:top]
        else:
            # a stable sort of every page: tied pages keep the site's order on every machine
            # (argpartition and the default sort are SIMD code that orders ties by the CPU:
            # page_lexical's MRR moved 0.013 between x86-64 and arm64)
            order = np.argsort(-page_best, kind="stable")[:top]
        hits: list[PageHit] = []
        for pos in order:
            info = self.pages[int(pos)]
            local = scores.chunk[info.first_chunk:info.first_chunk + info.n_chunks]
            hits.append(PageHit(info.page_id, float(page_best[pos]),
                                info.first_chunk + int(np.argmax(local))))
        return hits

    def search(self, query: SearchQuery, embedder: Embedder, lang: str,
               weights: RankWeights = RankWeights(), top: int = 10,
               only: list[str] | None = None) -> list[PageHit]:
        return self.rank(self.score(query, embedder, lang, weights), top, only)

    # ------------------------------------------------------------ persistence

    def save(self, path: Path) -> None:
        meta = {
            "version": FORMAT_VERSION,
            "model": self.model,
            "pages": [p.__dict__ for p in self.pages],
            "chunks": [[c.page_id, c.heading, c.text, c.code, list(c.unsaid),
                        [list(b) for b in c.boxed]]
                       for c in self.chunks],
            "vocab": list(self.lexical.vocab),
            "questions": list(self.questions),
            "nouns": sorted(self.nouns),
        }
        buf = io.BytesIO()
        np.savez(
            buf,
            meta=np.frombuffer(json.dumps(meta, ensure_ascii=False).encode(), dtype=np.uint8),
            vectors=self.vectors.astype(np.float16),
            indptr=self.lexical.indptr, post_chunk=self.lexical.post_chunk,
            post_tf=self.lexical.post_tf, chunk_len=self.lexical.chunk_len,
            idf=self.lexical.idf,
            # full precision (few rows): a lead of 0.01 in cosine decides between two headings
            questions=_stacked(self.questions.values(), self.vectors.shape[1]),
        )
        atomic_write_bytes(path, buf.getvalue())

    @classmethod
    def load(cls, path: Path) -> SiteIndex:
        if not path.is_file():
            raise SiteIndexError(f"no site index at {path}",
                                 f"build it: kiosk index SITE --out {path}")
        try:
            with np.load(path, allow_pickle=False) as data:
                meta: dict[str, Any] = json.loads(bytes(data["meta"]).decode())
                if meta.get("version") not in READABLE_VERSIONS:
                    raise SiteIndexError(
                        f"site index {path} has format {meta.get('version')}, "
                        f"this version reads {', '.join(map(str, READABLE_VERSIONS))}",
                        "rebuild it with kiosk index")
                lexical = LexicalIndex(
                    vocab={t: i for i, t in enumerate(meta["vocab"])},
                    indptr=data["indptr"], post_chunk=data["post_chunk"],
                    post_tf=data["post_tf"], chunk_len=data["chunk_len"], idf=data["idf"])
                vectors = data["vectors"].astype(np.float32)
                asked = (data["questions"].astype(np.float32) if "questions" in data.files
                         else np.zeros((0, vectors.shape[1]), dtype=np.float32))
        except SiteIndexError:
            raise
        except Exception as exc:  # zip, JSON and numpy each raise their own
            raise SiteIndexError(f"site index {path} is unreadable ({exc})",
                                 "rebuild it with kiosk index") from exc
        pages = [PageInfo(**{**p, "links": tuple(p.get("links", ())),
                                "anchors": tuple((w, t) for w, t in p.get("anchors", ()))})
                 for p in meta["pages"]]
        # (an index saved before chunks knew their link lines has four fields: none unsaid)
        # (and one saved before they knew their boxes, five: none boxed)
        chunks = [Chunk(c[0], c[1], c[2], c[3], tuple(c[4]) if len(c) > 4 else (),
                        tuple((t, b) for t, b in c[5]) if len(c) > 5 else ())
                  for c in meta["chunks"]]
        if meta["version"] < 3:
            log.info("index: %s has format %s; its terms are rebuilt (the next sync saves "
                     "format %d)", path, meta["version"], FORMAT_VERSION)
            lexical = _lexical_index(pages, chunks)
        questions = dict(zip(meta.get("questions", []), asked, strict=True))
        return cls(str(meta["model"]), pages, chunks, vectors, lexical, questions=questions,
                   nouns=frozenset(meta.get("nouns", ())))


QUESTION_MARKS = ("?", "？")


def title_key(text: str) -> str:
    """A title as compared with a heading or a line that may repeat it: width, case and
    spacing aside."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _sections_of(chunks: list[Chunk]) -> Iterator[list[int]]:
    """Positions of the chunks of each section: consecutive chunks of one page under one
    heading."""
    run: list[int] = []
    for pos, chunk in enumerate(chunks):
        if run and (chunks[run[-1]].page_id != chunk.page_id
                    or chunks[run[-1]].heading != chunk.heading):
            yield run
            run = []
        run.append(pos)
    if run:
        yield run


def is_question(heading: str) -> bool:
    return heading.strip().endswith(QUESTION_MARKS)


def _asked(embedder: Embedder, heading: str) -> Vectors:
    """A heading embedded alone, as the visitor's question is: a quantized model's vectors
    depend on the batch they are computed in (its activations' scale is the batch's), and
    a lead of 0.01 in cosine decides between two headings."""
    vector: Vectors = embedder.embed_queries([heading])[0].astype(np.float32)
    return vector


def _stacked(vectors: Iterable[Vectors], dim: int) -> Vectors:
    rows = list(vectors)
    return np.stack(rows) if rows else np.zeros((0, dim), dtype=np.float32)


def _stem(page_id: str) -> str:
    """The page's file name without its extension and language, lower-case ("README.md" ->
    "readme", "index._en.md" -> "index")."""
    return _LANG_SUFFIX.sub("", page_id.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower())


def _is_overview(page_id: str) -> bool:
    """A home / index / README page, by its file name."""
    return _stem(page_id) in OVERVIEW_STEMS


def _section_pages(pages: list[PageInfo]) -> tuple[tuple[str, PageInfo], ...]:
    size: dict[str, int] = {}
    for p in pages:
        parts = p.page_id.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            size[folder] = size.get(folder, 0) + 1
    # A folder's own page: an overview inside it (index before README, as OVERVIEW_STEMS
    # orders them), else the page named as the folder beside it ("records.md").
    own: dict[str, PageInfo] = {}
    inside = [p for p in pages if "/" in p.page_id and _is_overview(p.page_id)]
    for p in sorted(inside, key=lambda p: OVERVIEW_STEMS.index(_stem(p.page_id))):
        own.setdefault(p.page_id.rsplit("/", 1)[0], p)
    for p in pages:
        folder = _LANG_SUFFIX.sub("", p.page_id.rsplit(".", 1)[0])
        if folder in size:
            own.setdefault(folder, p)
    found = sorted((f.count("/"), -size[f], f) for f in own)
    return tuple((f, own[f]) for *_, f in found)


def _lexical_text(page: PageInfo | Page, chunk: Chunk) -> str:
    # what its boxes say on top is the page's text, as a heading is ("the warning here")
    boxes = "\n".join(dict.fromkeys(title for _, title in chunk.boxed))
    return f"{page.title}\n{chunk.heading}\n{boxes}\n{chunk.text}\n{chunk.code}"


def _lexical_index(pages: list[PageInfo], chunks: list[Chunk]) -> LexicalIndex:
    page_of = {p.page_id: p for p in pages}
    return LexicalIndex.build(
        (terms(_lexical_text(page_of[c.page_id], c)) for c in chunks), len(chunks))


def build_index(
    site: Path,
    embedder: Embedder,
    previous: SiteIndex | None = None,
    progress: Callable[[Iterable[Any], int], Iterable[Any]] | None = None,
) -> SiteIndex:
    """Index a site folder; vectors of chunks unchanged since `previous` are reused."""
    pages, problems = load_site(site)
    for problem in problems:
        log.warning("site: %s: %s", problem.path, problem.message)
    # A vector is its passage's, the page's title included: a title changed in the front
    # matter alone changes every passage of the page, not one chunk's own text.
    reuse: dict[str, Vectors] = {}
    if previous is not None and previous.model == embedder.name:
        for i, chunk in enumerate(previous.chunks):
            title = previous.pages[int(previous._chunk_page[i])].title
            reuse[chunk.passage(title)] = previous.vectors[i]
    infos: list[PageInfo] = []
    chunks: list[Chunk] = []
    passages: list[str] = []
    for page in pages:
        page_chunks = chunk_page(page)
        infos.append(PageInfo(page.page_id, page.title, page.lang, page.content_hash,
                              len(chunks), len(page_chunks), page.links, page.anchors,
                              page.date))
        chunks.extend(page_chunks)
        passages.extend(c.passage(page.title) for c in page_chunks)
    vectors = np.zeros((len(chunks), embedder.dim), dtype=np.float32)
    todo = [i for i, text in enumerate(passages) if text not in reuse]
    for i, text in enumerate(passages):
        if text in reuse:
            vectors[i] = reuse[text]
    log.info("index: %d pages, %d chunks, %d to embed (%d reused)", len(infos), len(chunks),
             len(todo), len(chunks) - len(todo))
    batch = 32
    starts: Iterable[int] = range(0, len(todo), batch)
    if progress is not None and todo:
        starts = progress(starts, (len(todo) + batch - 1) // batch)
    for start in starts:
        ids = todo[start:start + batch]
        vectors[ids] = embedder.embed_passages([passages[i] for i in ids])
    # At the precision the file keeps (float16): a site answers the same just after it was
    # indexed as after a restart loads the file (a near tie could go either way before).
    vectors = vectors.astype(np.float16).astype(np.float32)
    known = previous.questions if previous is not None and previous.model == embedder.name else {}
    questions = {h: known[h] if h in known else _asked(embedder, h)
                 for h in dict.fromkeys(c.heading for c in chunks) if is_question(h)}
    page_of = {p.page_id: p for p in infos}
    nouns = site_nouns(_lexical_text(page_of[c.page_id], c) for c in chunks
                       if page_of[c.page_id].lang == "ja")
    return SiteIndex(embedder.name, infos, chunks, vectors, _lexical_index(infos, chunks),
                     problems, questions, nouns)
