"""Loading a site folder: pages (.md / .html) reduced to titled sections of plain text, then chunks.

HTML goes through a real parser (the standard library's tokenizer), never regular expressions.
Template tags and the front matter that steers a static-site generator are metadata, not
text; the front-matter fields a layout renders as prose (a description, a card's "why") are.
"""

from __future__ import annotations

import hashlib
import html
import logging
import os
import posixpath
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import yaml

from kiosk.dialogue.lexicon import load_lexicon
from kiosk.errors import SiteError
from kiosk.retrieval.tables import html_tables_said, markdown_table_lines
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
class Section:
    heading: str
    text: str  # speakable prose, one sentence or block per line
    code: str = ""  # code blocks: searchable, never spoken
    # lines that are one link each ("Find a medical center near you."): searchable, never
    # spoken (`_LINK_LINE`)
    unsaid: tuple[str, ...] = ()
    # lines inside a box (`::: warning`) and what the box says on top: searched with the
    # section and its title, answered as if under that title (`Chunk.boxed`)
    boxed: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Page:
    page_id: str
    title: str
    lang: str
    sections: tuple[Section, ...]
    content_hash: str
    links: tuple[str, ...] = ()  # the site's pages this one links to (page ids)
    # (the words a link is said with, the page it leads to): which page a sentence that
    # sends the reader on ("see [the guide](…) for details") means
    anchors: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Chunk:
    page_id: str
    heading: str
    text: str
    code: str
    unsaid: tuple[str, ...] = ()  # its sentences that are links (`Section.unsaid`)
    boxed: tuple[tuple[str, str], ...] = ()  # its sentences in a box, and the box's title

    def passage(self, title: str) -> str:
        head = title if not self.heading or self.heading == title else f"{title} / {self.heading}"
        return f"{head}\n{self.text}"


@dataclass(frozen=True)
class LoadProblem:
    path: str
    message: str


# ---------------------------------------------------------------- markdown

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.S)
_TEMPLATE_TAG = re.compile(r"\{%.*?%\}|\{\{.*?\}\}", re.S)
# MDX's module lines (import Tabs from '@theme/Tabs'; export const x = ...) are code.
_MODULE_LINE = re.compile(r"^(?:import\s.*\bfrom\s+['\"][^'\"]+['\"]|import\s+['\"][^'\"]+['\"]"
                          r"|export\s+(?:const|let|var|default|function)\b.*);?\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
# (a link's text may hold one bracketed note, "[The Paperwork Reduction Act [Digital.gov]](…)",
# "[Annual report [PDF]](…)": the site's mark of where the link goes, not words of the text)
_LINK_WORDS = r"(?:[^\[\]]|\[[^\[\]]*\])"
_LINK = re.compile(rf"\[({_LINK_WORDS}*)\]\([^)]*\)")
_LINK_NOTE = re.compile(r"\s*\[[^\[\]]*\]")
_REF_LINK = re.compile(r"\[([^\]]*)\]\[[^\]]*\]")
_EMPHASIS = re.compile(r"(\*\*|__|\*|`)")
# _emphasis_ by single underscores, at word boundaries (never inside snake_case)
_UNDERSCORED = re.compile(r"(?<![\w\\])_(?=[^\s_])(.+?)(?<=[^\s_])_(?!\w)")
# A heading's attribute block (Pandoc, kramdown, Hugo, VitePress: "## Links {#links}"): markup.
# A setext heading's underline: the paragraph line above it is a heading ("Setup" / "-----"
# level 2, "=====" level 1); Misskey Hub's install guides are written so.
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_HEADING_ATTRS = re.compile(r"\s*\{\s*[#.][^{}]*\}\s*$")
# A backslash before ASCII punctuation is CommonMark's escape: the character as itself, kept
# out of the markup's way (a private-use stand-in) until the markup is gone.
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_STAND_IN = re.compile("[\ue000-\ue07f]")
# A code span: literal text, whatever it holds ("`<textarea>` 内の補間" names the element).
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_TAG_IN_CODE = re.compile(r"</?([A-Za-z][\w-]*)[^<>]*?/?>")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")
# A container (markdown-it / VitePress / VuePress `::: warning`, Docusaurus `:::tip[Title]`,
# MyST `:::{note}`) opens a box with its kind or its own title on top, and `:::` closes it:
# the box is a titled part of the page, under that title ("the warning here" finds it;
# `container_titles`).
_CONTAINER = re.compile(r"^\s*:{3,}\s*(?:\{?(?P<kind>[A-Za-z][\w-]*)\}?(?P<title>.*))?$")
# The same box as a GitHub alert ("> [!WARNING]", to the quote's end) and as a MkDocs
# admonition ('!!! warning "Title"', '??? note': its indented lines).
_ALERT = re.compile(r"^\s*>\s*\[!(?P<kind>[A-Za-z]+)\]\s*$")
_ADMONITION = re.compile(
    r'^(?:!!!|\?\?\?\+?)\s*(?P<kind>[A-Za-z][\w-]*)(?:\s+"(?P<title>[^"]*)")?\s*$')
# A line that is one link and its full stop ("[Find a medical center near you](/find-locations/).",
# "<a href=…>Find your facility's phone number</a>."): where to click next on a screen, not
# an answer to say. A telephone or mail link is how to reach someone: said.
_LINK_LINE = re.compile(
    rf"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:<p>)?\s*(?:\[{_LINK_WORDS}+\]\((?P<md_to>[^)]*)\)|"
    r"<a\s[^>]*?href\s*=\s*[\"'](?P<a_to>[^\"']*)[\"'][^>]*>[^<]+</a>)"
    r"\s*[.。]?\s*(?:<br\s*/?>|</p>)*\s*$", re.I)


def _is_link_line(line: str) -> bool:
    match = _LINK_LINE.match(line)
    if match is None:
        return False
    target = (match.group("md_to") or match.group("a_to") or "").strip().lower()
    return not target.startswith(("tel:", "mailto:"))


# Where front matter names its page: the title, or for a page without one what its layout
# shows as such (an FAQ entry's "question: アカウントを削除したい", Hugo's "linkTitle").
_TITLE_FIELDS = ("title", "display_title", "linktitle", "heading", "question")


def _front_matter_title(block: str) -> str:
    found: dict[str, str] = {}
    for line in block.splitlines():
        key, colon, value = line.partition(":")
        key = key.strip().lower()
        if colon and key in _TITLE_FIELDS and key not in found and line[:1] not in " \t":
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            found[key] = value.strip()
    return next((found[k] for k in _TITLE_FIELDS if found.get(k)), "")


# Front-matter fields that a static site renders as the page's own prose.
_TEXT_FIELDS = ("description", "summary", "excerpt", "lead", "intro", "subtitle", "tagline")
# A front-matter item with one of these is a link to another page (a card, a related link):
# its words describe that page, not this one.
_LINK_FIELDS = ("url", "href", "link", "links", "path", "to")


def _front_matter_sections(block: str) -> list[Section]:
    """The prose a page's front matter renders: its top-level description, and blocks with a
    title and a description (a landing page's feature list); link cards are left out."""
    try:
        data = yaml.safe_load(block)
    except yaml.YAMLError:
        return []
    if not isinstance(data, dict):
        return []
    sections: list[Section] = []
    top = [html_to_text(data[k]) for k in _TEXT_FIELDS if isinstance(data.get(k), str)]
    if any(top):
        sections.append(Section("", "\n".join(t for t in top if t)))

    def walk(node: object) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            if any(k in node for k in _LINK_FIELDS):
                return
            text = node.get("description")
            if isinstance(text, str) and isinstance(node.get("title"), str):
                sections.append(Section(html_to_text(node["title"]), html_to_text(text)))
            for value in node.values():
                walk(value)

    for key, value in data.items():
        if key not in _TEXT_FIELDS:
            walk(value)
    said = {s.text for s in sections}
    for key, value in data.items():
        field = _rendered_field(str(key), value)
        if field is not None and field.text not in said:
            sections.append(field)
            said.add(field.text)
    return [s for s in sections if s.text]


# A page's own front-matter field a layout renders under its name (18F's method cards: "what",
# "why", "timeRequired"): a sentence, or a short value with a number ("1–2 hours"). Fields
# that steer the generator are never said, whatever their value.
_GENERATOR_FIELDS = frozenset({
    "title", "layout", "template", "permalink", "slug", "id", "type", "lang", "language",
    "locale", "date", "lastmod", "lastupdate", "updated", "published", "draft", "weight",
    "order", "image", "thumbnail", "icon", "cover", "banner", "hero", "author", "authors",
    "tags", "categories", "category", "keywords", "version", "collection", "hub", "spoke",
    "children", "parent", "body_class", "outline", "display_title", "heading", "aliases",
    "redirect_from", "redirect_to", "canonical", "sitemap", "toc", "sidebar", "nav", "menu"})
_SENTENCE_VALUE = re.compile(r"^(?:\S+\s+){3,}\S*[.!?]\s*$|"
                             r"^.*[\u3040-\u30ff\u4e00-\u9fff].{9,}[。！？]\s*$", re.S)
_SHORT_VALUE = re.compile(r"^(?=.*\d)(?=.*[^\W\d_])[^/@<>{}]{1,40}$")


def _field_label(key: str) -> str:
    """"timeRequired" / "time_required" -> "Time required"."""
    words = re.sub(r"(?<=[a-z])(?=[A-Z])|[_-]+", " ", key).split()
    return " ".join(words).capitalize()


def _rendered_field(key: str, value: object) -> Section | None:
    # (a field that names the page is its title, not a section: an FAQ entry's "question")
    if not isinstance(value, str) or key.lower() in _GENERATOR_FIELDS \
            or key.lower() in _TEXT_FIELDS or key.lower() in _TITLE_FIELDS \
            or not re.fullmatch(r"[A-Za-z][\w-]*", key):
        return None
    text = html_to_text(value).strip()
    label = _field_label(key)
    if _SENTENCE_VALUE.search(text):
        return Section(label, text)
    if _SHORT_VALUE.match(text) and "\n" not in text:
        return Section(label, f"{label}: {text}")
    return None


def _code_span(match: re.Match[str]) -> str:
    """A code span's text, an HTML element in it said by its name ("`<textarea>`" ->
    "textarea"): the tag stripper after this would drop it, and the sentence around it with
    it would name nothing."""
    return _TAG_IN_CODE.sub(lambda m: m.group(1), match.group(2).strip())


def _inline_markdown(line: str) -> str:
    line = _ESCAPED.sub(lambda m: chr(0xE000 + ord(m.group(1))), line)
    line = _CODE_SPAN.sub(_code_span, line)
    line = _IMAGE.sub(lambda m: m.group(1), line)
    line = _LINK.sub(lambda m: _LINK_NOTE.sub("", m.group(1)), line)
    line = _REF_LINK.sub(lambda m: m.group(1), line)
    if "<" in line and ">" in line:
        line = html_to_text(line)
    elif "&" in line:
        line = html.unescape(line)  # an entity in markdown prose ("Settings &gt; Account")
    line = _UNDERSCORED.sub(lambda m: m.group(1), line)
    line = _EMPHASIS.sub("", line)
    line = _LIST_MARK.sub("", line)
    if line.lstrip().startswith(">"):
        line = line.lstrip()[1:]
    if "|" in line:
        line = " ".join(cell.strip() for cell in line.strip().strip("|").split("|"))
    return _STAND_IN.sub(lambda m: chr(ord(m.group(0)) - 0xE000), line).strip()


_CJK_CHAR = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff01-\uff60]")
# A source line that starts a block of its own (an item, a quote, a table row, HTML or JSX):
# never the rest of the line before it.
_BLOCK_START = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|>|\||<|:{3,}|#)")
# How a line that ends its sentence ends: a full stop (perhaps inside a closing bracket or
# quote), a colon or a semicolon.
_LINE_ENDS = re.compile(r"(?:[.!?。！？:：;；]|[.!?。！？][)\"”’」』）]*)$")


# A source wrapped by hand cuts its paragraphs at a column, 72-80 as a rule: a line that
# reaches that far without ending its sentence goes on in the next line. A shorter line ends
# where the author meant (an address, a label and its value: "5109 Russell Road"); a longer
# one is a paragraph of its own.
_WRAP_WIDTHS = (60, 100)


def _width(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def _wraps(raw_line: str, said: str, *, wider: bool = False) -> bool:
    """Whether a paragraph's source line was cut by the author's wrap mid-sentence, so that
    the next source line goes on with it: it is as wide as a wrapped line is (`wider`: or
    wider still), has no end mark and no hard break (two spaces, a backslash), and is no
    line of HTML or JSX."""
    low, high = _WRAP_WIDTHS
    if not low <= _width(raw_line.rstrip()) <= (10**6 if wider else high):
        return False
    if raw_line.endswith(("  ", "\\")) or raw_line.lstrip().startswith(("<", "|")):
        return False
    return bool(said) and not _LINE_ENDS.search(said)


def _joined(before: str, after: str) -> str:
    """Two source lines of one paragraph as one: a space between words, none between two
    Japanese characters (a wrapped Japanese sentence has no space)."""
    if _CJK_CHAR.match(before[-1:]) and _CJK_CHAR.match(after[:1]):
        return before + after
    return f"{before} {after}"


# What a page holds but never shows: a comment, a style sheet, a script (outside code blocks,
# where `<script setup>` is an example to read).
_HIDDEN = re.compile(r"<!--.*?-->|<(style|script|template)\b[^>]*>.*?</\1\s*>", re.S | re.I)


def _hidden_out(source: str) -> str:
    blocks: list[list[str]] = [[]]
    in_fence = False
    for line in source.split("\n"):
        if _FENCE.match(line):
            if not in_fence:
                blocks.append([])
            blocks[-1].append(line)
            if in_fence:
                blocks.append([])
            in_fence = not in_fence
            continue
        blocks[-1].append(line)
    # blocks alternate: prose, fenced code, prose, ...
    return "\n".join(_HIDDEN.sub("", "\n".join(b)) if i % 2 == 0 else "\n".join(b)
                     for i, b in enumerate(blocks))


def _box_title(kind: str, title: str, lang: Callable[[], str]) -> str:
    """What a rendered box says on top: its own title, unless that only names its kind
    ("WARNING", "tip": the theme's words, in the page's language), or the kind's. `lang`:
    the page's language, asked only when a page has a box (finding it is a pass over the
    page, which most pages need not pay)."""
    titles = load_lexicon(lang()).container_titles
    return titles.get(title.lower(), title) if title else titles.get(kind, "")


def _container_title(kind: str, title: str, lang: Callable[[], str]) -> str:
    """What a container's box says on top: its own title (`::: details More`, `:::tip[Hint]`)
    or its kind in the page's language (`::: warning` -> Warning / 注意)."""
    own = title.strip().removeprefix("[").removesuffix("]").strip()
    if own:
        return _inline_markdown(own)
    return _box_title(kind.lower(), "", lang)


def _box_ends(line: str, within: str) -> bool:
    """Whether this line is past a box whose lines start with `within`: an alert's quote ends
    at a line out of it, a blank one too; an admonition's indented lines at an unindented
    line of text. A container ("") ends only at its `:::`."""
    if within == ">":
        return not line.lstrip().startswith(">")
    if within:
        return bool(line.strip()) and not line.startswith((within, "\t"))
    return False


def parse_markdown(source: str, lang: str | None = None) -> tuple[str, list[Section]]:
    """A Markdown page's title and sections; `lang`: the page's language (by its text if not
    given), for what a container's box says on top."""
    page_source = source
    page_lang = cache(lambda: lang or detect_lang(page_source))
    title = ""
    rendered: list[Section] = []
    match = _FRONT_MATTER.match(source)
    if match:
        title = _front_matter_title(match.group(1))
        rendered = _front_matter_sections(match.group(1))
        source = source[match.end():]
    source = html_tables_said(_TEMPLATE_TAG.sub(" ", _hidden_out(source)), as_markdown=True)
    sections: list[Section] = []
    heading = ""
    prose: list[str] = []
    code: list[str] = []
    links: list[str] = []
    in_fence = False
    # the open boxes, innermost last: what each says on top and what its lines start with
    # ("" for a container, which `:::` closes); the prose lines in a box, by position
    boxes: list[tuple[str, str]] = []
    boxed: dict[int, str] = {}

    def flush() -> None:
        text = "\n".join(p for p in prose if p)
        if text or code:
            sections.append(Section(heading, text, "\n".join(code), tuple(links), tuple(
                (prose[at], title) for at, title in boxed.items()
                if at < len(prose) and prose[at])))
        boxed.clear()

    # whether the last line of prose goes on in the next source line (a paragraph wrapped
    # in the source: "the ticket can be converted" / "into a standard ticket.")
    open_line = open_wide = False
    paragraph = False  # the line before was a paragraph's (a setext underline may follow)
    for raw_line in markdown_table_lines(source.splitlines(), _inline_markdown):
        after_paragraph, paragraph = paragraph, False
        while boxes and not in_fence and _box_ends(raw_line, boxes[-1][1]):
            boxes.pop()
            open_line = open_wide = paragraph = after_paragraph = False
        setext = _SETEXT.match(raw_line)
        if setext and after_paragraph and prose:
            named = prose.pop()
            if links and links[-1] == named:
                links.pop()
            flush()
            prose, code, links = [], [], []
            open_line = open_wide = False
            heading = named
            if not title and setext.group(1).startswith("="):
                title = heading
            continue
        if _FENCE.match(raw_line):
            in_fence = not in_fence
            open_line = open_wide = False
            continue
        if in_fence:
            code.append(raw_line)
            continue
        head = _HEADING.match(raw_line)
        if head:
            flush()
            prose, code, links = [], [], []
            open_line = open_wide = False
            heading = _inline_markdown(_HEADING_ATTRS.sub("", head.group(2)))
            if not title and len(head.group(1)) == 1:
                title = heading
            continue
        box = (_CONTAINER.match(raw_line) or _ALERT.match(raw_line)
               or _ADMONITION.match(raw_line))
        if box is not None:
            open_line = open_wide = False
            if box["kind"]:
                titled = _container_title(box["kind"], box.groupdict().get("title") or "",
                                          page_lang)
                boxes.append((titled or (boxes[-1][0] if boxes else ""),
                              "" if box.re is _CONTAINER else ">" if box.re is _ALERT
                              else "    "))
            elif boxes and not boxes[-1][1]:  # `:::` closes the innermost container
                boxes.pop()
            continue
        if (_TABLE_RULE.match(raw_line) or _MODULE_LINE.match(raw_line)
                or raw_line.lstrip().startswith(":::")):  # markup of a box of no kind
            open_line = open_wide = False
            continue
        link_line = _is_link_line(raw_line)
        # a trailing backslash is a hard line break
        line = _inline_markdown(raw_line.rstrip().removesuffix("\\"))
        # (a line wrapped wider than most goes on where the next one starts in lower case:
        # "..., also provides convenient" / "access by public transport from ...")
        going_on = open_line or (open_wide and line[:1].islower() and line[:1].isascii())
        if line and going_on and not _BLOCK_START.match(raw_line):
            # (a link the wrap put at a line's start is in the sentence, not a line to click)
            prose[-1] = _joined(prose[-1], line)
            link_line = False
        elif line:
            prose.append(line)
            if link_line:
                links.append(line)
            if boxes and boxes[-1][0]:
                boxed[len(prose) - 1] = boxes[-1][0]
        paragraph = bool(line) and not _BLOCK_START.match(raw_line)
        open_line = bool(line) and not link_line and _wraps(raw_line, prose[-1] if prose else "")
        open_wide = bool(line) and not link_line and _wraps(raw_line, prose[-1] if prose else "",
                                                            wider=True)
    flush()
    if not title:
        for section in sections:
            if section.heading:
                title = section.heading
                break
    return title, rendered + sections


# ---------------------------------------------------------------- html

_SKIP_TAGS = {"script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form",
              "svg", "button", "select"}
_BLOCK_TAGS = {"p", "div", "li", "ul", "ol", "br", "tr", "table", "section", "article", "main",
               "dd", "dt", "dl", "blockquote", "pre", "figure", "figcaption", "td", "th", "hr"}
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_VOID = {"br", "hr", "img", "meta", "link", "input", "area", "base", "col", "embed", "source",
         "track", "wbr"}
# A box as site generators render it (the HTML of `::: warning` and its kin): VitePress and
# VuePress `custom-block`, MkDocs and Sphinx `admonition`, Docusaurus `theme-admonition` (and
# its hashed `admonition_…`), GitHub `markdown-alert`, Bootstrap `alert`, USWDS `usa-alert`,
# GitBook `hint`, and `callout` / `notice` of many themes.
_BOX_CLASSES = {"custom-block", "admonition", "theme-admonition", "markdown-alert", "alert",
                "usa-alert", "hint", "callout", "notice"}
_BOX_TAGS = {"div", "aside", "section", "details", "blockquote"}
# what a box says on top: an element of the box whose class names a title or heading
# ("custom-block-title", "admonition-title", Docusaurus "admonitionHeading_…"), or <summary>;
# not a heading element (USWDS's h4 "usa-alert-heading"), which heads a section as anywhere
_BOX_TITLE_CLASS = re.compile(r"title|heading", re.I)
_CLASS_PART = re.compile(r"[-_]+")
# the kinds a class names ("theme-admonition-tip", "alert-warning", "usa-alert--info"): the
# lexicon's `container_titles`
_BOX_KINDS = {"tip", "note", "info", "important", "warning", "caution", "danger", "details"}


def _box_of(tag: str, attrs: dict[str, str | None]) -> str | None:
    """The kind of box this element opens ("warning", "" when it names none), or None. A
    `<details>` that names no box is an accordion (a FAQ's question and its answer): its
    summary stays a line of the page, searched with it."""
    classes = (attrs.get("class") or "").lower().split()
    kinds = [p for c in classes for p in _CLASS_PART.split(c) if p in _BOX_KINDS]
    if tag not in _BOX_TAGS or not (any(
            c in _BOX_CLASSES or c.startswith("admonition_") for c in classes)
            or (tag == "details" and kinds)):
        return None
    return kinds[0] if kinds else ""


@dataclass
class _OpenBox:
    depth: int  # the tag stack's depth with the box's element on it
    kind: str
    title: str = ""


class _HtmlExtractor(HTMLParser):
    """Collects title, headings and block text; prefers <main>/<article> when a page has one."""

    def __init__(self, *, boxes: bool = True) -> None:
        """`boxes`: whether boxes are told apart (a page's), or their titles are text (a
        fragment's, `html_to_text`)."""
        super().__init__(convert_charrefs=True)
        self._find_boxes = boxes
        self.title = ""
        self.first_h1 = ""
        self._in_title = False
        self._skip_depth = 0
        self._stack: list[str] = []
        self._main_depth = 0
        self.saw_main = False
        # (in_main, heading or None, text, the box it is in: (kind, title) or None)
        self.blocks: list[tuple[bool, str | None, str, tuple[str, str] | None]] = []
        self._boxes: list[_OpenBox] = []  # innermost last
        self._box_title_depth = 0  # inside the element that titles the innermost box
        self._buf: list[str] = []
        self._heading_tag: str | None = None
        # A block whose only words are a link's ("<p><a href=…>Find your facility</a>.</p>"):
        # where to click, not prose (`_LINK_LINE`); its index in `blocks`.
        self.link_blocks: set[int] = set()
        self._link_depth = 0
        self._link_said = False  # a telephone or mail link: its words are said
        self._linked = False  # the block holds a link's words
        self._outside: list[str] = []  # the block's words outside any link

    def _flush(self) -> None:
        text = " ".join("".join(self._buf).split())
        link_only = self._linked and not "".join(self._outside).strip(" \t\n.。")
        self._buf, self._outside, self._linked = [], [], False
        if not text:
            return
        if self._box_title_depth:
            self._boxes[-1].title = f"{self._boxes[-1].title} {text}".strip()
            return
        in_main = self._main_depth > 0
        if self._heading_tag:
            self.blocks.append((in_main, text, "", None))
            if self._heading_tag == "h1" and not self.first_h1:
                self.first_h1 = text
        else:
            if link_only:
                self.link_blocks.add(len(self.blocks))
            box = (self._boxes[-1].kind, self._boxes[-1].title) if self._boxes else None
            self.blocks.append((in_main, None, text, box))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
            return
        if tag in _VOID:
            if tag == "br":
                self._buf.append(" ")
                self._flush()
            return
        self._stack.append(tag)
        if self._skip_depth or tag in _SKIP_TAGS:
            self._skip_depth += 1
            return
        named = dict(attrs)
        if tag == "a":
            self._link_depth += 1
            href = (named.get("href") or "").strip().lower()
            self._link_said = href.startswith(("tel:", "mailto:"))
        kind = _box_of(tag, named) if self._find_boxes else None
        if kind is not None:
            self._flush()
            self._boxes.append(_OpenBox(len(self._stack), kind))
            return
        if (self._boxes and not self._boxes[-1].title and not self._box_title_depth
                and tag not in _HEADINGS
                and (tag == "summary" or _BOX_TITLE_CLASS.search(named.get("class") or ""))):
            self._flush()
            self._box_title_depth = len(self._stack)
            return
        if tag in ("main", "article"):
            self._flush()
            self._main_depth += 1
            self.saw_main = True
        if tag in _HEADINGS:
            self._flush()
            self._heading_tag = tag
        elif tag in _BLOCK_TAGS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
            return
        if tag in _VOID or tag not in self._stack:
            return
        # close up to the matching tag (tolerates unclosed children)
        while self._stack:
            open_tag = self._stack.pop()
            if self._skip_depth:
                self._skip_depth -= 1
            elif open_tag == "a":
                self._link_depth = max(0, self._link_depth - 1)
            elif open_tag in _HEADINGS:
                self._flush()
                self._heading_tag = None
            elif open_tag in ("main", "article"):
                self._flush()
                self._main_depth = max(0, self._main_depth - 1)
            elif open_tag in _BLOCK_TAGS:
                self._flush()
            if self._box_title_depth > len(self._stack):
                self._flush()
                self._box_title_depth = 0
            if self._boxes and self._boxes[-1].depth > len(self._stack):
                self._flush()
                self._boxes.pop()
            if open_tag == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if self._skip_depth:
            return
        self._buf.append(data)
        if self._link_depth and not self._link_said:
            self._linked = self._linked or bool(data.strip())
        else:
            self._outside.append(data)

    def close(self) -> None:
        super().close()
        self._flush()


def html_to_text(fragment: str) -> str:
    parser = _HtmlExtractor(boxes=False)
    parser.feed(fragment)
    parser.close()
    return " ".join(text for _, _, text, _ in parser.blocks if text)


def parse_html(source: str) -> tuple[str, list[Section]]:
    parser = _HtmlExtractor()
    parser.feed(html_tables_said(_TEMPLATE_TAG.sub(" ", source), as_markdown=False))
    parser.close()
    blocks = [(pos, b) for pos, b in enumerate(parser.blocks) if b[0] or not parser.saw_main]
    page_lang = cache(lambda: detect_lang("\n".join(text for _, (_, _, text, _) in blocks)))
    sections: list[Section] = []
    heading = ""
    lines: list[str] = []
    links: list[str] = []
    boxed: list[tuple[str, str]] = []
    for pos, (_, head, text, box) in blocks:
        if head is not None:
            if lines:
                sections.append(Section(heading, "\n".join(lines), unsaid=tuple(links),
                                        boxed=tuple(boxed)))
            heading, lines, links, boxed = head, [], [], []
        else:
            lines.append(text)
            if pos in parser.link_blocks:
                links.append(text)
            said_on_top = _box_title(*box, page_lang) if box else ""
            if said_on_top:
                boxed.append((text, said_on_top))
    if lines:
        sections.append(Section(heading, "\n".join(lines), unsaid=tuple(links),
                                boxed=tuple(boxed)))
    title = " ".join(parser.title.split()) or parser.first_h1
    return title, sections


# ---------------------------------------------------------------- pages and chunks


_LINK_TARGET = re.compile(r"\]\(\s*<?([^)\s>]+)|href\s*=\s*[\"']([^\"']+)", re.I)
_SCHEME = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.I)


def link_targets(source: str) -> list[str]:
    """Every link target a page's source names (markdown links and HTML hrefs), as written."""
    return [m.group(1) or m.group(2) for m in _LINK_TARGET.finditer(source)]


_ANCHOR = re.compile(rf"(?<!!)\[({_LINK_WORDS}+)\]\(\s*<?([^)\s>]+)[^)]*\)"
                     r"|<a\s[^>]*?href\s*=\s*[\"']([^\"']+)[\"'][^>]*>(.*?)</a>", re.I | re.S)


def link_anchors(source: str) -> list[tuple[str, str]]:
    """(the words a link is said with, its target as written) for every link of a page's
    source, markdown or HTML; the words as the page's text gives them."""
    found: list[tuple[str, str]] = []
    for match in _ANCHOR.finditer(source):
        if match.group(1) is not None:
            words = _inline_markdown(_LINK_NOTE.sub("", match.group(1)))
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
    if path.suffix.lower() in HTML_SUFFIXES:
        title, sections = parse_html(source)
    else:
        title, sections = parse_markdown(source)
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
