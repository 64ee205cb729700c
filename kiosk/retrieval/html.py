"""HTML -> title and titled sections of plain text, through a real parser (the standard
library's tokenizer), never regular expressions: what a page shows, without its navigation,
and the boxes a site generator rendered (warnings, tips, accordions) titled."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from html.parser import HTMLParser

from kiosk.retrieval.sections import TEMPLATE_TAG, Section, box_title
from kiosk.retrieval.tables import html_tables_said
from kiosk.text import detect_lang

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
    parser.feed(html_tables_said(TEMPLATE_TAG.sub(" ", source), as_markdown=False))
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
            said_on_top = box_title(*box, page_lang) if box else ""
            if said_on_top:
                boxed.append((text, said_on_top))
    if lines:
        sections.append(Section(heading, "\n".join(lines), unsaid=tuple(links),
                                boxed=tuple(boxed)))
    title = " ".join(parser.title.split()) or parser.first_h1
    return title, sections
