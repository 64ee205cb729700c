"""Loading a site folder: pages (.md / .html) reduced to titled sections of plain text, then chunks.

HTML goes through a real parser (the standard library's tokenizer), never regular expressions.
Template tags and the front matter that steers a static-site generator are metadata, not
text; the front-matter fields a layout renders as prose (a description, a card's "why") are.
"""

from __future__ import annotations

import hashlib
import logging
import os
import posixpath
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote

from kiosk.errors import SiteError
from kiosk.retrieval.frontmatter import file_date
from kiosk.retrieval.html import html_to_text, parse_html
from kiosk.retrieval.markdown import (
    LINK_NOTE,
    LINK_WORDS,
    inline_markdown,
    markdown_date,
    parse_markdown,
)
from kiosk.retrieval.sections import Chunk, Page
from kiosk.text import detect_lang, sentences

log = logging.getLogger(__name__)

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")  # .mdx: Docusaurus and kin
HTML_SUFFIXES = (".html", ".htm")
PAGE_SUFFIXES = MARKDOWN_SUFFIXES + HTML_SUFFIXES
# A giant page is cut here (and said so): one page must not swamp the index.
MAX_PAGE_CHARS = 200_000
# Chosen by measurement with e5-small-int8 (`kiosk eval`; build time of the CAsT 2021 index):
# ja/en 140/300, 280/600 and 560/1200 characters answer the demo dialogues equally (resolved
# top-1 0.954 / 0.954 / 0.962 en, 0.954 ja); 280/600 builds fastest (12.6 / 11.9 / 14.7 s):
# short chunks are many, long ones cost more each (attention grows with tokens). CAsT, whose
# pages are single passages, prefers whole-page chunks (raw MRR 2021: 0.530 at 280/600, 0.558
# at 560/1200); kiosk pages are sections of a venue's site, so the cheaper size stays.
CHUNK_CHARS = {"ja": 280, "en": 600}
# A line of prose that most pages carry ("Was this page helpful?", a footer's opening hours
# outside any <footer>) is the site's frame, not a page's content: it would match a question
# on every page alike and be read as an answer. Dropped when at least this share of the
# site's pages, and this many, hold it word for word.
FRAME_SHARE = 0.5
FRAME_MIN_PAGES = 5


@dataclass(frozen=True)
class LoadProblem:
    path: str
    message: str


_LINK_TARGET = re.compile(r"\]\(\s*<?([^)\s>]+)|href\s*=\s*[\"']([^\"']+)", re.I)
_SCHEME = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.I)


def link_targets(source: str) -> list[str]:
    """Every link target a page's source names (markdown links and HTML hrefs), as written."""
    return [m.group(1) or m.group(2) for m in _LINK_TARGET.finditer(source)]


_ANCHOR = re.compile(rf"(?<!!)\[({LINK_WORDS}+)\]\(\s*<?([^)\s>]+)[^)]*\)"
                     r"|<a\s[^>]*?href\s*=\s*[\"']([^\"']+)[\"'][^>]*>(.*?)</a>", re.I | re.S)


def link_anchors(source: str) -> list[tuple[str, str]]:
    """(the words a link is said with, its target as written) for every link of a page's
    source, markdown or HTML; the words as the page's text gives them."""
    found: list[tuple[str, str]] = []
    for match in _ANCHOR.finditer(source):
        if match.group(1) is not None:
            words = inline_markdown(LINK_NOTE.sub("", match.group(1)))
            target = match.group(2)
        else:
            words, target = html_to_text(match.group(4)), match.group(3)
        words = " ".join(words.split())
        if words and target:
            found.append((words, target))
    return found


def resolve_link(target: str, from_page: str, page_ids: frozenset[str]) -> str | None:
    """The page id a link of page `from_page` leads to, or None (another site, a phone number,
    a file the site folder does not hold). A relative link is tried against the page's folder
    and against the page itself served as a folder (/a/b/ for a/b.md), as sites publish both."""
    if _SCHEME.match(target):
        return None
    path = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if not path:
        return None
    if path.startswith("/"):
        bases = [""]
    else:
        bases = [posixpath.dirname(from_page), posixpath.splitext(from_page)[0]]
    for base in bases:
        joined = posixpath.normpath(posixpath.join(base, path.lstrip("/")))
        if joined.startswith(".."):
            continue
        joined = "" if joined == "." else joined
        stem, ext = posixpath.splitext(joined)
        names = [joined] if ext.lower() in PAGE_SUFFIXES else []
        names += [stem + suffix for suffix in PAGE_SUFFIXES]
        names += [posixpath.join(joined, "index" + suffix) for suffix in PAGE_SUFFIXES]
        for name in names:
            if name in page_ids:
                return name
    return None


def page_id_for(path: Path, root: Path) -> str:
    return unicodedata.normalize("NFC", path.relative_to(root).as_posix())


def load_page(path: Path, root: Path) -> Page:
    raw = path.read_bytes()
    try:
        source = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SiteError(
            f"page {path} is not UTF-8 text (byte {exc.start})",
            "save it as UTF-8, or remove it from the site folder",
        ) from exc
    control = sum(1 for ch in source if ord(ch) < 32 and ch not in "\n\r\t")
    if "\0" in source or control > 0.01 * len(source):
        raise SiteError(
            f"page {path} is not text ({control} control characters in {len(source)})",
            "replace it with the page's text, or remove it from the site folder",
        )
    if len(source) > MAX_PAGE_CHARS:
        log.warning("page %s has %d characters; indexing the first %d", path, len(source),
                    MAX_PAGE_CHARS)
        source = source[:MAX_PAGE_CHARS]
    date = file_date(path.name)
    if path.suffix.lower() in HTML_SUFFIXES:
        title, sections = parse_html(source)
    else:
        title, sections = parse_markdown(source)
        date = markdown_date(source) or date
    title = title or path.stem.replace("-", " ").replace("_", " ")
    body = "\n".join(s.text for s in sections)
    return Page(
        page_id=page_id_for(path, root),
        title=title,
        lang=detect_lang(title + "\n" + body),
        sections=tuple(sections),
        content_hash=hashlib.sha256(raw).hexdigest()[:24],
        # as written: resolved once every page is known
        links=tuple(link_targets(source)),
        anchors=tuple(link_anchors(source)),
        date=date,
    )


def list_page_files(root: Path, problems: list[LoadProblem] | None = None) -> list[Path]:
    """The page files under root, hidden ones left out. A sub-folder that cannot be read is
    reported in `problems` (or logged) instead of vanishing from the site unnoticed."""
    if root.exists() and not root.is_dir():
        raise SiteError(f"site {root} is a file, not a folder",
                        f"pass the folder that holds the pages (perhaps {root.parent})")
    if not root.is_dir():
        raise SiteError(f"site folder {root} does not exist", "pass the folder of .md/.html pages")

    def unreadable(exc: OSError) -> None:
        problem = LoadProblem(str(exc.filename or root),
                              f"folder cannot be read ({exc.strerror}); its pages are left "
                              "out: give the service's user read access (chmod -R a+rX)")
        if problems is None:
            log.warning("site: %s: %s", problem.path, problem.message)
        else:
            problems.append(problem)

    files = []
    for folder, subfolders, names in os.walk(root, onerror=unreadable):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
        files += [Path(folder, name) for name in names
                  if not name.startswith(".") and Path(name).suffix.lower() in PAGE_SUFFIXES
                  and Path(folder, name).is_file()]
    files.sort()
    if not files:
        raise SiteError(
            f"site folder {root} has no .md or .html pages",
            "point --site at the folder that holds the venue's pages",
        )
    return files


def load_site(root: Path) -> tuple[list[Page], list[LoadProblem]]:
    """Every readable page of a folder; unreadable ones are reported, never silently dropped."""
    pages: list[Page] = []
    problems: list[LoadProblem] = []
    seen: dict[str, Path] = {}
    for path in list_page_files(root, problems):
        pid = page_id_for(path, root)
        if pid in seen:
            problems.append(LoadProblem(
                str(path), f"duplicate page id {pid!r} (also {seen[pid]}); this copy is skipped"))
            continue
        seen[pid] = path
        try:
            page = load_page(path, root)
        except SiteError as exc:
            problems.append(LoadProblem(str(path), exc.describe()))
            continue
        except OSError as exc:
            problems.append(LoadProblem(str(path), f"cannot read: {exc}"))
            continue
        if not any(s.text or s.code for s in page.sections):
            problems.append(LoadProblem(str(path), "page has no text; indexed by its title only"))
        pages.append(page)
    if not pages:
        raise SiteError(f"no readable page in {root}",
                        "; ".join(f"{p.path}: {p.message}" for p in problems[:5]))
    pages = without_frame(pages)
    ids = frozenset(p.page_id for p in pages)
    resolved = []
    for page in pages:
        found = (resolve_link(t, page.page_id, ids) for t in page.links)
        links = tuple(dict.fromkeys(pid for pid in found if pid and pid != page.page_id))
        anchors = tuple(dict.fromkeys(
            (words, to) for words, target in page.anchors
            if (to := resolve_link(target, page.page_id, ids)) and to != page.page_id))
        resolved.append(replace(page, links=links, anchors=anchors))
    return resolved, problems


def without_frame(pages: list[Page]) -> list[Page]:
    """The pages without the lines of prose that most of them repeat (`FRAME_SHARE`)."""
    def lines(page: Page) -> set[str]:
        return {line.strip() for s in page.sections for line in s.text.splitlines()
                if line.strip()}

    held = Counter(line for page in pages for line in lines(page))
    least = max(FRAME_MIN_PAGES, FRAME_SHARE * len(pages))
    frame = {line for line, count in held.items() if count >= least}
    if not frame:
        return pages
    log.info("site: %d lines most pages repeat are left out (the site's frame)", len(frame))
    return [replace(page, sections=tuple(
        replace(s, text="\n".join(line for line in s.text.splitlines()
                                   if line.strip() not in frame))
        for s in page.sections)) for page in pages]


def _chunk(page_id: str, heading: str, said: list[str], code: str, links: set[str],
           boxed: dict[str, str]) -> Chunk:
    return Chunk(page_id, heading, "\n".join(said), code,
                 tuple(dict.fromkeys(x for x in said if x in links)),
                 tuple(dict.fromkeys((x, boxed[x]) for x in said if x in boxed)))


def chunk_page(page: Page) -> list[Chunk]:
    """Chunks by heading, then by length at sentence boundaries. A page always has one chunk."""
    limit = CHUNK_CHARS.get(page.lang, 600)
    chunks: list[Chunk] = []
    for section in page.sections:
        current: list[str] = []
        size = 0
        code = section.code
        links = {said for line in section.unsaid for said in sentences(line)}
        boxed = {said: title for line, title in section.boxed for said in sentences(line)}
        for sentence in sentences(section.text):
            if current and size + len(sentence) > limit:
                chunks.append(_chunk(page.page_id, section.heading, current, code, links,
                                     boxed))
                code = ""
                current, size = [], 0
            current.append(sentence)
            size += len(sentence)
        if current or code:
            chunks.append(_chunk(page.page_id, section.heading, current, code, links, boxed))
    if not chunks:
        chunks.append(Chunk(page.page_id, "", page.title, ""))
    return chunks
